"""Shared pytest configuration for the vpoc test suite.

Hypothesis profiles: ``ci`` (default; deadline=None, 60 examples), ``dev`` (fewer
examples, fast local iteration) and ``thorough`` (many examples). Select one with the
HYPOTHESIS_PROFILE environment variable.
"""

import os
import sys

from hypothesis import HealthCheck, settings

# The tests import the plain-NumPy reference as a top-level module; make that work under
# both pytest import modes (prepend and importlib).
_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

_common = dict(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.register_profile("ci", max_examples=60, **_common)
settings.register_profile("dev", max_examples=15, **_common)
settings.register_profile("thorough", max_examples=1000, **_common)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

"""Shared pytest configuration for the vpoc test suite.

Hypothesis profiles (select one with the HYPOTHESIS_PROFILE environment variable):

- ``ci`` (the default, and what CI runs, whether or not CI=true is set): reproducible.
  ``derandomize=True``: every run draws the same examples for a given test (the seed is a hash of
  the test's source), so a CI failure reproduces locally with the same command and a green run
  means the same thing every time; no example database; ``print_blob=True`` prints the
  ``@reproduce_failure`` blob of any failure; ``deadline=None`` (shared CI machines are slow).
- ``random``: the same settings with a fresh random seed on every run (and the local example
  database), to explore beyond the fixed examples: run it as a separate job or by hand,
  ``HYPOTHESIS_PROFILE=random pytest tests/``. A failure prints the seed
  (``pytest --hypothesis-seed=N`` replays it) and the blob.
- ``dev``: few examples, derandomized, for fast local iteration.
- ``thorough``: many examples, randomized.

An unknown HYPOTHESIS_PROFILE is an error (hypothesis raises InvalidArgument naming it).
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
settings.register_profile("ci", max_examples=60, derandomize=True, database=None, **_common)
settings.register_profile("random", max_examples=60, derandomize=False, **_common)
settings.register_profile("dev", max_examples=15, derandomize=True, database=None, **_common)
settings.register_profile("thorough", max_examples=1000, derandomize=False, **_common)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE") or "ci"
settings.load_profile(PROFILE)

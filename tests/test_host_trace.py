"""Host phase marks (vpoc/trace.hpp, _core.host_trace): off by default, in call order with VPOC_HOST_TRACE=1.

Contract: without the variable no mark is kept; with it a bar call's binding and dispatcher marks come back
once each, in order, with non-decreasing steady-clock times, and a second take is empty.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np

import vpoc
from vpoc import _core


def test_no_marks_without_the_variable():
    assert os.environ.get("VPOC_HOST_TRACE") != "1"
    vpoc.from_bars(np.array([2.0, 3.0]), np.array([1.0, 2.0]), np.array([1.5, 2.5]), np.array([1.0, 2.0]),
                   tick_size=0.5)
    assert _core.host_trace() == []


def test_marks_of_a_bar_call_in_order():
    code = textwrap.dedent("""
        import json
        import numpy as np
        import vpoc
        from vpoc import _core
        _core.host_trace()
        vpoc.from_bars(np.array([2.0, 3.0]), np.array([1.0, 2.0]), np.array([1.5, 2.5]), np.array([1.0, 2.0]),
                       tick_size=0.5)
        marks = _core.host_trace()
        print(json.dumps([m[0] for m in marks]))
        assert all(b[1] >= a[1] for a, b in zip(marks, marks[1:])), marks
        assert _core.host_trace() == []
        print("OK")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, VPOC_HOST_TRACE="1"))
    assert r.returncode == 0, r.stderr
    assert "OK" in r.stdout
    names = json.loads(r.stdout.splitlines()[0])
    assert names == ["bind.enter", "bind.inputs_read", "dispatch.validated", "bind.result"], names

"""SIGINT sent to a child interpreter in the middle of a long vpoc call (the tests of Ctrl-C).

Contract: ``sigint_mid_call(code, expect)`` runs ``code`` in a fresh interpreter, waits for its first
line ("started"), sends SIGINT after ``delay`` seconds and asserts the child exits 0 with ``expect``
in its output within ``timeout`` seconds (a call that ignores the signal fails the test, not hangs it).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest


def default_sigint() -> None:
    """In the child before exec: SIGINT back to its default action. A child that inherits SIGINT
    ignored (a test run started in the background by a non-interactive shell, as `cmd &` without job
    control does) would otherwise start Python with SIGINT ignored: no KeyboardInterrupt, no test."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def sigint_mid_call(code: str, expect: str, *, delay: float = 0.5, timeout: float = 30) -> None:
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=default_sigint)
    t0 = time.monotonic()
    try:
        assert p.stdout.readline().strip() == "started"
        time.sleep(delay)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        _, err = p.communicate()
        pytest.fail(f"the call was not interrupted by SIGINT within {timeout:.0f} s "
                    f"({time.monotonic() - t0:.1f} s since start); stderr: {err[-2000:]}")
    assert p.returncode == 0 and expect in out, (p.returncode, out, err)

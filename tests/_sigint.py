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


def _sanitized() -> bool:
    """Whether the imported vpoc is a sanitizer build (CI's ASan / TSan steps): 5-20x slower."""
    import vpoc

    return bool(vpoc._core.build_info().get("sanitize"))


def sigint_mid_call(code: str, expect: str, *, delay: float = 0.5, timeout: float = 30) -> None:
    # A sanitizer build on a loaded 2-core machine may take long to reach the next check and unwind
    # (CI's ASan step twice exceeded 30 s on a VM busy with compiles, while three reruns by hand took
    # 1.5-8 s); the calls these tests interrupt need minutes there, so 120 s still tells them apart.
    if _sanitized():
        timeout = max(timeout, 120.0)
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
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

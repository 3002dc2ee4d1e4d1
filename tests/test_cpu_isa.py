"""VPOC_CPU_ISA (cpu/isa.cpp, issue 25): every level's kernels give this process's results bit for bit, and NumPy's.

Contract: one subprocess per level runs every case of _isa_cases.py (trades float32/float64 prices x float32/int/
float64 volumes in long runs and busy, fractional volumes, bars close / uniform, bad volumes' error texts, the grid
prefilter; threads 1 and 2); a level the CPU lacks is skipped; a bad value raises ValueError naming the variable.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import vpoc

import _isa_cases as cases
from _compare import assert_matches_reference
from reference import ref_bars, ref_trades

LEVELS = ["scalar", "sse2", "avx2", "avx512", "avx512cd"]
HERE = Path(__file__).resolve().parent
PARENT = str(Path(vpoc.__file__).resolve().parent.parent)  # the child imports this process's vpoc


def _child(level: str, tmp_path: Path, code: str = "", args: tuple = ()) -> subprocess.CompletedProcess:
    env = dict(os.environ, VPOC_CPU_ISA=level)
    cmd = [sys.executable, str(HERE / "_isa_cases.py"), *args] if not code else [sys.executable, "-c", code]
    return subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def here():
    """This process's results (its own level: the CPU's best unless VPOC_CPU_ISA is set) and that level."""
    return cases.run_all(vpoc), vpoc._core.build_info()["cpu_isa"]


@pytest.fixture(scope="module")
def reference_checked(here):
    """This process's results against the NumPy reference (once; the levels are then held to them bit for bit)."""
    got, level = here
    for name, (kind, arrays, kw, whole) in cases.inputs().items():
        kw = dict(kw)
        off = kw.pop("offsets")
        ref = (ref_trades(*arrays, off, tick_size=cases.TICK) if kind == "trades"
               else ref_bars(*arrays, offsets=off, tick_size=cases.TICK, **kw))
        for t in cases.THREADS:
            prof = cases.call(vpoc, kind, arrays, {"offsets": off, **kw}, t)
            assert_matches_reference(prof, ref, exact=whole, value_area=0.70, va_method="cbot", poc_tie="center",
                                     ctx=f"{name}, threads={t}, level {level}")
    return True


@pytest.mark.parametrize("level", LEVELS)
def test_level_bit_identical(level, here, reference_checked, tmp_path):
    cpu = vpoc._core.build_info()["cpu_isa_cpu"]
    if LEVELS.index(level) > LEVELS.index(cpu):
        pytest.skip(f"this CPU's level is {cpu}: no {level} kernels to run")
    got, mine = here
    r = _child(level, tmp_path, args=(PARENT, str(tmp_path / "out.npz")))
    assert r.returncode == 0, r.stdout + r.stderr
    with np.load(tmp_path / "out.npz") as z:
        theirs = {k: z[k] for k in z.files}
    assert str(theirs.pop("level")) == level, f"VPOC_CPU_ISA={level}: the child ran at {theirs}"
    assert Path(str(theirs.pop("vpoc_file"))).resolve() == Path(vpoc.__file__).resolve()
    assert sorted(theirs) == sorted(got)
    for k, want in got.items():
        have = theirs[k]
        assert have.dtype == want.dtype and have.shape == want.shape, f"{k}: level {level} vs {mine}"
        assert have.tobytes() == want.tobytes(), (
            f"{k}: VPOC_CPU_ISA={level} (active {level}) differs from this process's level {mine}: "
            f"{have!r} vs {want!r}"[:2000])


@pytest.mark.parametrize("value", ["avx3", "AVX-512", "x86-64-v4", "native"])
def test_bad_value_refused(value, tmp_path):
    code = (f"import sys; sys.path.insert(0, {PARENT!r}); import numpy as np, vpoc\n"
            "info = vpoc._core.build_info()\n"
            "print('ERROR', info['cpu_isa_error'])\n"
            "for call in (lambda: vpoc.from_trades(np.array([1.0]), np.array([1.0]), tick_size=0.25),\n"
            "             lambda: vpoc.from_bars(np.array([1.0]), np.array([1.0]), np.array([1.0]), np.array([1.0]),"
            " tick_size=0.25)):\n"
            "    try:\n"
            "        call()\n"
            "        print('NO ERROR')\n"
            "    except ValueError as e:\n"
            "        print('RAISED', getattr(e, 'argument', None), e)\n")
    r = _child(value, tmp_path, code=code)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith(f"ERROR VPOC_CPU_ISA='{value}'"), r.stdout
    raised = [ln for ln in lines if ln.startswith("RAISED")]
    assert len(raised) == 2 and "NO ERROR" not in r.stdout, r.stdout + r.stderr
    for ln in raised:
        assert ln.startswith(f"RAISED VPOC_CPU_ISA VPOC_CPU_ISA='{value}' is not"), ln
        assert "scalar, sse2, avx2, avx512, avx512cd" in ln, ln


def test_build_info_reports_the_level(tmp_path):
    info = vpoc._core.build_info()
    assert info["cpu_isa_cpu"] in LEVELS and info["cpu_isa"] in LEVELS
    code = (f"import sys; sys.path.insert(0, {PARENT!r}); import vpoc\n"
            "i = vpoc._core.build_info()\n"
            "print(i['cpu_isa'], i['cpu_isa_cpu'], i['cpu_isa_capped'], i['cpu_isa_env'], i['cpu_isa_error'])\n")
    r = _child("Scalar", tmp_path, code=code)  # any case
    assert r.stdout.split() == ["scalar", info["cpu_isa_cpu"], str(info["cpu_isa_cpu"] != "scalar"), "Scalar",
                                "None"], r.stdout + r.stderr
    r = _child("", tmp_path, code=code)  # empty: unset, the CPU's best
    assert r.stdout.split() == [info["cpu_isa_cpu"], info["cpu_isa_cpu"], "False", "None", "None"], r.stderr
    r = _child("avx512cd", tmp_path, code=code)  # above or at the CPU's level: the CPU's own, not capped
    assert r.stdout.split() == [info["cpu_isa_cpu"], info["cpu_isa_cpu"], "False", "avx512cd", "None"], r.stderr


def test_doctor_names_the_level():
    from vpoc import _doctor

    b = {"cpu_isa": "avx2", "cpu_isa_cpu": "avx512cd", "cpu_isa_capped": True, "cpu_isa_env": "avx2",
         "cpu_isa_error": None}
    assert _doctor.isa_text(b) == "instruction set avx2, capped by VPOC_CPU_ISA=avx2 (the CPU has avx512cd)"
    b.update(cpu_isa="avx512cd", cpu_isa_capped=False, cpu_isa_env=None)
    assert _doctor.isa_text(b) == "instruction set avx512cd (the CPU's best)"
    b.update(cpu_isa_env="avx512cd")
    assert _doctor.isa_text(b) == "instruction set avx512cd (the CPU's best; VPOC_CPU_ISA=avx512cd)"


def test_doctor_fails_on_a_bad_value(tmp_path):
    code = (f"import sys; sys.path.insert(0, {PARENT!r}); from vpoc import cli\n"
            "sys.exit(cli.main(['doctor', '--no-gpu-tests']))")
    r = _child("avx3", tmp_path, code=code)
    assert r.returncode == 1, r.stdout + r.stderr
    cpu = vpoc._core.build_info()["cpu_isa_cpu"]
    assert f"cpu:     instruction set {cpu}, VPOC_CPU_ISA='avx3' refused (engine calls raise ValueError)" in r.stdout
    assert "[FAIL] VPOC_CPU_ISA: VPOC_CPU_ISA='avx3' is not an instruction-set level" in r.stdout, r.stdout

"""``vpoc doctor``: the reporting paths with simulated builds, GPUs and torch installs (no GPU needed),
the vendor rules for which GPU runs which build, and the real self-tests on a GPU machine."""

from __future__ import annotations

import json
import subprocess
import sys
import types

import pytest

import vpoc
from vpoc import _doctor, cli

from test_cli import _script  # the installed console script  # noqa: E402
import _deps  # noqa: E402

HAS_GPU = vpoc.gpu_available()


def fake_torch(flavour: str = "cuda", gpus: int = 1):
    version = types.SimpleNamespace(cuda="12.4" if flavour == "cuda" else None,
                                    hip="6.3.42131" if flavour == "hip" else None)
    cuda = types.SimpleNamespace(is_available=lambda: gpus > 0, device_count=lambda: gpus)
    return types.SimpleNamespace(__version__="2.6.0", version=version, cuda=cuda)


def simulate(monkeypatch, *, backend="hip", archs=("gfx1030", "gfx90a"), devices=(), torch=None,
             runtime=60342134, driver=60342134):
    build = {"backend": backend, "gpu_archs": list(archs), "gpu_compiler": "Clang 17", "cxx_compiler": "GNU 12",
             "sanitize": ""}
    monkeypatch.setattr(_doctor, "_build_info", lambda: build)
    monkeypatch.setattr(_doctor, "_gpu_versions", lambda: {"runtime": runtime, "driver": driver})
    monkeypatch.setattr(_doctor, "_gpu_devices", lambda: [dict(d) for d in devices])
    monkeypatch.setattr(_doctor, "_torch", lambda: torch)
    # every optional package present (the suite also runs without them)
    monkeypatch.setattr(_doctor, "_package_version", lambda name: "1.0")


def device(index=0, name="AMD Radeon RX 7900 XT", arch="gfx1100", has_code=False,
           error="hipErrorNoBinaryForGpu (no kernel image is available)"):
    return {"index": index, "name": name, "arch": arch, "total_memory": 20 << 30, "has_code": has_code,
            "binary_version": 0, "ptx_version": 0, "code_error": "" if has_code else error}


def doctor(capsys, *args):
    code = cli.main(["doctor", "--no-gpu-tests", *args])
    return code, capsys.readouterr().out


def test_hip_build_without_code_for_the_card(monkeypatch, capsys):
    simulate(monkeypatch, devices=[device()], torch=fake_torch("hip"))
    code, out = doctor(capsys)
    assert code == 1
    assert "runtime: hip 6.3.42134, driver 6.3.42134" in out
    assert "build:   backend hip, GPU architectures gfx1030, gfx90a" in out
    assert "torch:   2.6.0 (HIP 6.3.42131), 1 GPU(s) visible" in out
    assert "gpu:     cuda:0 AMD Radeon RX 7900 XT, gfx1100, 20.0 GiB" in out
    line = next(ln for ln in out.splitlines() if ln.startswith("[FAIL]"))
    assert "this build has no code for gfx1100" in line
    assert "code objects only for gfx1030, gfx90a" in line
    assert "hipErrorNoBinaryForGpu" in line
    assert line.endswith("rebuild with -Ccmake.define.VPOC_GPU_BACKEND=hip "
                         "-Ccmake.define.CMAKE_HIP_ARCHITECTURES=gfx1100")
    assert out.rstrip().endswith("result:  FAILED (see the FAIL lines)")


def test_hip_build_with_code(monkeypatch, capsys):
    simulate(monkeypatch, archs=("gfx1100", "gfx90a"),
             devices=[device(has_code=True), device(1, "AMD Instinct MI210", "gfx90a:sramecc+:xnack-",
                                                    has_code=True)],
             torch=fake_torch("hip", 2))
    code, out = doctor(capsys)
    assert code == 0, out
    assert "[ ok ] code for cuda:0 (AMD Radeon RX 7900 XT, gfx1100): code object for gfx1100" in out
    assert "[ ok ] code for cuda:1 (AMD Instinct MI210, gfx90a:sramecc+:xnack-): code object for gfx90a" in out
    assert out.rstrip().endswith("result:  ok")


def test_cuda_build_for_sm90_on_an_sm86_card(monkeypatch, capsys):
    simulate(monkeypatch, backend="cuda", archs=("90-real",), runtime=12040, driver=12060,
             devices=[device(name="NVIDIA GeForce RTX 3090", arch="sm_86",
                             error="cudaErrorNoKernelImageForDevice (no kernel image)")],
             torch=fake_torch("cuda"))
    code, out = doctor(capsys)
    assert code == 1
    assert "runtime: cuda 12.4, driver 12.6" in out
    assert ("this build has no code for sm_86: built for 90-real: no sm_8x code with minor <= 6 and no "
            "PTX <= compute_86") in out
    assert "rebuild with -Ccmake.define.VPOC_GPU_BACKEND=cuda -Ccmake.define.CMAKE_CUDA_ARCHITECTURES=86" in out


def test_torch_of_the_other_vendor(monkeypatch, capsys):
    simulate(monkeypatch, backend="cuda", archs=("80", "90"), runtime=12040, driver=12060,
             devices=[device(name="NVIDIA H200", arch="sm_90", has_code=True)], torch=fake_torch("hip"))
    code, out = doctor(capsys)
    assert code == 1
    assert "[ ok ] code for cuda:0 (NVIDIA H200, sm_90): sm_90 code" in out
    assert "torch 2.6.0 is a HIP build but vpoc's backend is cuda: tensors cannot be shared; install " \
           "torch for CUDA" in out


def test_no_torch_is_a_skip_not_a_failure(monkeypatch, capsys):
    simulate(monkeypatch, backend="cuda", archs=("90",), runtime=12040, driver=12060,
             devices=[device(name="NVIDIA H200", arch="sm_90", has_code=True)], torch=None)
    code, out = doctor(capsys)
    assert code == 0, out
    assert "torch:   not installed" in out
    assert "[skip] torch: torch is not installed: DLPack hand-off not checked (pip install torch, a CUDA build)" in out


def test_backend_without_gpu_or_driver(monkeypatch, capsys):
    simulate(monkeypatch, backend="cuda", archs=("90",), runtime=12040, driver=0, torch=None)
    code, out = doctor(capsys)
    assert code == 1
    assert "driver none (no driver)" in out
    assert "[FAIL] devices: the cuda runtime sees no GPU: no GPU driver is installed" in out
    simulate(monkeypatch, backend="hip", runtime=60342134, driver=60342134, torch=None)
    code, out = doctor(capsys)
    assert code == 1 and "'render' and 'video' groups" in out


def test_no_backend(monkeypatch, capsys):
    simulate(monkeypatch, backend="none", archs=(), torch=None)
    code, out = doctor(capsys)
    assert code == 0
    assert "[skip] build: CPU-only build" in out and "runtime:" not in out
    simulate(monkeypatch, backend="none", archs=(), torch=fake_torch("hip", 1))
    code, out = doctor(capsys)
    assert code == 1
    assert "this vpoc build has no GPU backend but torch sees 1 GPU(s)" in out
    assert "-Ccmake.define.VPOC_GPU_BACKEND=hip" in out


def test_json_output(monkeypatch, capsys):
    simulate(monkeypatch, devices=[device()], torch=None)
    code, out = doctor(capsys, "--json")
    data = json.loads(out)
    assert code == 1 and data["ok"] is False
    assert data["facts"]["devices"][0]["arch"] == "gfx1100"
    assert [c["status"] for c in data["checks"]] == ["ok", "FAIL", "skip"]  # vpoc profile, code, torch


@pytest.mark.parametrize("archs, dev, expect", [
    (["80", "90"], "sm_86", (True, "sm_80 code")),           # same major, higher minor: runs
    (["80", "90"], "sm_89", (True, "sm_80 code")),
    (["86-real"], "sm_80", (False, None)),                    # SASS never runs on a lower minor
    (["90-real"], "sm_100", (False, None)),                   # nor on another major
    (["90"], "sm_100", (True, "compute_90 PTX")),             # PTX is JIT-compiled forward
    (["90"], "sm_120", (True, "compute_90 PTX")),
    (["80-virtual"], "sm_89", (True, "compute_80 PTX")),
    (["100-virtual"], "sm_90", (False, None)),                # PTX never runs backwards
    (["90a-real"], "sm_90", (True, "sm_90a code")),
    (["native"], "sm_90", (None, "resolved at build time")),
    ([], "sm_90", (False, None)),
])
def test_cuda_rules(archs, dev, expect):
    ok, how = _doctor.arch_support("cuda", archs, dev)
    assert ok is expect[0], how
    if expect[1]:
        assert expect[1] in how


def test_hip_rules():
    assert _doctor.arch_support("hip", ["gfx1030", "gfx90a"], "gfx1100")[0] is False
    assert _doctor.arch_support("hip", ["gfx1100"], "gfx1101")[0] is False  # no cross-target code
    assert _doctor.arch_support("hip", ["gfx90a"], "gfx90a:sramecc+:xnack-")[0] is True
    assert _doctor.arch_support("hip", [], "gfx1100")[0] is None


def test_version_text():
    assert _doctor.version_text("cuda", 12040) == "12.4"
    assert _doctor.version_text("cuda", 13000) == "13.0"
    assert _doctor.version_text("hip", 50221151) == "5.2.21151"
    assert _doctor.version_text("hip", 0) == "none (no driver)"
    assert _doctor.version_text("cuda", -1) == "unknown"


def test_real_build_info():
    info = vpoc._core.build_info()
    assert info["backend"] == vpoc._core.gpu_backend()
    assert isinstance(info["gpu_archs"], list) and info["cxx_compiler"]
    versions = vpoc._core.gpu_versions()
    devices = vpoc._core.gpu_devices()
    if info["backend"] == "none":
        assert versions == {"runtime": -1, "driver": -1} and devices == []
    else:
        assert versions["runtime"] > 0 and len(devices) == vpoc._core.gpu_device_count()


@_deps.needs("pandas_market_calendars")
@pytest.mark.parametrize("module", [False, True])
def test_console_command(module):
    cmd = [sys.executable, "-m", "vpoc", "doctor"] if module else [_script(), "doctor"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert r.returncode == (0 if HAS_GPU or vpoc._core.gpu_backend() == "none" else 1), r.stdout + r.stderr
    assert r.stdout.startswith(f"vpoc {vpoc.__version__}\nbuild:   backend {vpoc._core.gpu_backend()}")


@_deps.needs("pandas_market_calendars")
@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="needs a vpoc GPU build and a GPU")
def test_doctor_on_the_gpu(capsys):
    code = cli.main(["doctor"])
    out = capsys.readouterr().out
    print(out)
    assert code == 0, out
    assert "[ ok ] cuda:0 GPU vs CPU" in out
    assert f"[ ok ] cuda:0 allocations: {_doctor.ALLOC_CALLS} calls after warm-up: 0 driver allocations" in out
    try:
        import torch
    except ImportError:
        return
    if torch.cuda.is_available():
        assert "[ ok ] cuda:0 DLPack to torch: tensor on cuda:0, values equal" in out


@pytest.mark.parametrize("missing", ["pandas", "pyarrow", "pandas_market_calendars"])
def test_23_10_doctor_fails_when_vpoc_profile_cannot_run(monkeypatch, capsys, missing):
    """Before: "result: ok" while vpoc profile could not read a file; now a FAIL naming the package
    and the extra, and every optional package listed with its version or "missing"."""
    simulate(monkeypatch, backend="none", devices=[], torch=None)
    monkeypatch.setattr(_doctor, "_package_version", lambda name: None if name == missing else "9.9")
    code, out = doctor(capsys)
    assert code == 1, out
    line = next(ln for ln in out.splitlines() if ln.startswith("[FAIL] vpoc profile"))
    assert f"{missing} missing" in line and 'pip install "vpoc[cli]"' in line
    for name, _, without in _doctor.OPTIONAL_PACKAGES:
        row = next(ln for ln in out.splitlines() if ln.split()[:1] == [name])
        assert ("missing" if name == missing else "9.9") in row and without in row
    assert out.rstrip().endswith("result:  FAILED (see the FAIL lines)")
    code, out = doctor(capsys, "--json")
    rep = json.loads(out)
    assert rep["ok"] is False and rep["facts"]["packages"][missing] is None


def test_23_10_doctor_ok_when_everything_is_there(monkeypatch, capsys):
    simulate(monkeypatch, backend="none", devices=[], torch=None)
    code, out = doctor(capsys)
    assert code == 0 and "[ ok ] vpoc profile" in out and out.rstrip().endswith("result:  ok")


def test_23_10_info_lists_every_optional_package():
    from importlib import metadata

    r = subprocess.run([_script(), "info", "--json"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    packages = json.loads(r.stdout)["packages"]
    names = ("numpy", "pandas", "pyarrow", "polars", "pandas_market_calendars", "tqdm", "torch", "dask",
             "distributed", "matplotlib")
    assert set(names) <= set(packages)
    for name in names:
        try:
            want = metadata.version(name)
        except metadata.PackageNotFoundError:
            want = None
        assert packages[name] == want, name
    r = subprocess.run([_script(), "info"], capture_output=True, text=True, timeout=120)
    for name in names[1:]:
        row = next(ln for ln in r.stdout.splitlines() if ln.split()[:1] == [name])
        assert (packages[name] or "missing") in row and "without it" in row

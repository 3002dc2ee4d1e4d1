"""``vpoc doctor``: what this install is (build, runtime, driver, torch, GPUs) and whether it works here.

Contract: prints one line per fact and per check (ok / FAIL / skip); every FAIL carries what to do.
Exit status 0 when nothing failed, 1 otherwise. Never raises for a broken GPU setup: it reports it.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from . import _core
from ._version import __version__

__all__ = ["OPTIONAL_PACKAGES", "Check", "Report", "arch_support", "collect", "package_versions",
           "run", "main"]

# Calls before the allocation check starts counting (workspace growth, pool warm-up), and calls
# it counts: a steady-state loop must not reach the driver's allocator at all.
WARMUP_CALLS = 20
ALLOC_CALLS = 1000
_SOURCE_BUILD = "pip install --no-binary vpoc vpoc (or pip install . in a checkout)"


@dataclass
class Check:
    name: str
    status: str  # "ok", "FAIL", "skip"
    detail: str


@dataclass
class Report:
    facts: Dict[str, Any]
    checks: List[Check] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(c.status == "FAIL" for c in self.checks)

    def add(self, name: str, status: str, detail: str) -> None:
        self.checks.append(Check(name, status, detail))


#: Every optional package vpoc uses: (distribution name, what needs it, what runs without it).
OPTIONAL_PACKAGES: Tuple[Tuple[str, str, str], ...] = (
    ("pandas", "vpoc profile / features / inspect, vpoc.io, vpoc.sessions, to_pandas()",
     "without it: the engine (from_bars / from_trades / Live / features on arrays), vpoc demo / bench / info / doctor"),
    ("pyarrow", "Parquet files (vpoc.io, vpoc profile IN.parquet or --out OUT.parquet)",
     "without it: everything but Parquet (CSV and legacy text read and write)"),
    ("polars", "polars DataFrames as input and output",
     "without it: everything but polars frames"),
    ("pandas_market_calendars", "CME holidays and early closes: vpoc profile / features (default "
     "--session globex, rth), vpoc.sessions.globex / rth",
     "without it: vpoc profile --calendar none (no holidays) or --session daily"),
    ("tqdm", "the progress bar of vpoc profile / features", "without it: the same commands, no bar"),
    ("torch", "to_torch(), vpoc.torch datasets, zero-copy hand-off", "without it: everything but torch"),
    ("dask", "vpoc.dask", "without it: everything but vpoc.dask"),
    ("distributed", "vpoc.dask on a cluster", "without it: vpoc.dask on the local scheduler"),
    ("matplotlib", "Profiles.plot()", "without it: everything but plots"),
    ("databento-dbn", "Databento DBN files (vpoc.io .dbn / .dbn.zst; .zst also needs pyarrow)",
     "without it: everything but DBN files"),
)
#: What ``vpoc profile`` needs to read CSV, Parquet and legacy text with CME sessions (the cli
#: extra, which the README's first command installs).
PROFILE_NEEDS = ("pandas", "pyarrow", "pandas_market_calendars")


# ------------------------------------------------------------------- facts (patched by the tests)


def _package_version(name: str) -> Optional[str]:
    """The installed version of distribution ``name``, or None when it is not installed."""
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def package_versions() -> Dict[str, Optional[str]]:
    """numpy and every optional package: version, or None when missing."""
    return {name: _package_version(name) for name in ("numpy", *(p[0] for p in OPTIONAL_PACKAGES))}


def _build_info() -> Dict[str, Any]:
    return dict(_core.build_info())


def _gpu_versions() -> Dict[str, int]:
    return dict(_core.gpu_versions())


def _gpu_devices() -> List[Dict[str, Any]]:
    return [dict(d) for d in _core.gpu_devices()]


def _torch() -> Any:
    """The torch module, or None when it is not installed (or does not import)."""
    try:
        import torch
    except Exception:  # noqa: BLE001 - a broken torch install is reported as "not usable"
        return None
    return torch


def version_text(backend: str, v: int) -> str:
    """A vendor-encoded runtime/driver version as text (CUDA 12040 -> 12.4; HIP 50221151 -> 5.2.21151)."""
    if v < 0:
        return "unknown"
    if v == 0:
        return "none (no driver)"
    if backend == "hip":
        return f"{v // 10_000_000}.{v // 100_000 % 100}.{v % 100_000}"
    return f"{v // 1000}.{v % 1000 // 10}"


# ------------------------------------------------------------------- architecture rules


def _cuda_cc(text: str) -> Optional[Tuple[int, int, str]]:
    """"sm_86" / "86" / "90a" -> (8, 6, suffix); None when not a compute capability."""
    m = re.fullmatch(r"(?:sm_|compute_)?(\d+)(\d)([af]?)", text)
    return None if m is None else (int(m.group(1)), int(m.group(2)), m.group(3))


def arch_support(backend: str, build_archs: List[str], device_arch: str) -> Tuple[Optional[bool], str]:
    """Whether code compiled for ``build_archs`` runs on a GPU of ``device_arch``, by the vendor's
    rules: (True/False, how), or (None, why unknown).

    CUDA (CMAKE_CUDA_ARCHITECTURES entries: "90" = sm_90 code + compute_90 PTX, "90-real" = code
    only, "90-virtual" = PTX only): sm_XY code runs on devices of the same major version with minor
    >= Y ("a"/"f" variants such as sm_90a only on exactly 9.0); PTX for compute_XY is compiled by the
    driver for any device of compute capability >= X.Y. HIP: a code object runs only on its own
    gfx target (gfx1100 code does not run on gfx1101 or gfx1030).
    """
    if backend == "hip":
        want = device_arch.split(":")[0]
        have = [a.split(":")[0] for a in build_archs]
        if want in have:
            return True, f"code object for {want}"
        if not have:
            return None, "the build does not record its GPU targets"
        return False, f"code objects only for {', '.join(have)}"
    dev = _cuda_cc(device_arch)
    if dev is None:
        return None, f"unrecognised device architecture {device_arch!r}"
    sass, ptx, unknown = [], [], []
    for entry in build_archs:
        base, _, kind = entry.partition("-")
        cc = _cuda_cc(base)
        if cc is None:  # "native", "all", "all-major": resolved by CMake, not recorded here
            unknown.append(entry)
            continue
        if kind in ("", "real"):
            sass.append(cc)
        if kind in ("", "virtual"):
            ptx.append(cc)
    major, minor, _ = dev
    for (M, m, suffix) in sass:
        if M == major and (m == minor if suffix == "a" else m <= minor):
            return True, f"sm_{M}{m}{suffix} code"
    for (M, m, suffix) in sorted(ptx, reverse=True):
        if (M, m) == (major, minor) or ((M, m) < (major, minor) and suffix != "a"):
            return True, f"compute_{M}{m}{suffix} PTX, compiled by the driver at first use (slow first call)"
    if unknown:
        return None, f"architectures {', '.join(unknown)} are resolved at build time"
    built = ", ".join(build_archs) or "none recorded"
    return False, f"built for {built}: no sm_{major}x code with minor <= {minor} and no PTX <= compute_{major}{minor}"


def rebuild_hint(backend: str, device_arch: str) -> str:
    if backend == "hip":
        target = device_arch.split(":")[0]
        return (f"rebuild with -Ccmake.define.VPOC_GPU_BACKEND=hip "
                f"-Ccmake.define.CMAKE_HIP_ARCHITECTURES={target}")
    cc = _cuda_cc(device_arch)
    digits = f"{cc[0]}{cc[1]}" if cc else device_arch
    return (f"rebuild with -Ccmake.define.VPOC_GPU_BACKEND=cuda "
            f"-Ccmake.define.CMAKE_CUDA_ARCHITECTURES={digits}")


# ------------------------------------------------------------------- report


def collect() -> Report:
    """Facts about the build, the runtime, torch and the GPUs, with the checks that need no GPU work."""
    build = _build_info()
    backend = str(build.get("backend", "none"))
    versions = _gpu_versions() if backend != "none" else {"runtime": -1, "driver": -1}
    devices = _gpu_devices() if backend != "none" else []
    torch = _torch()
    tinfo: Dict[str, Any] = {"installed": torch is not None}
    if torch is not None:
        tinfo["version"] = str(getattr(torch, "__version__", "?"))
        tv = getattr(torch, "version", None)
        tinfo["cuda"] = getattr(tv, "cuda", None)
        tinfo["hip"] = getattr(tv, "hip", None)
        try:
            tinfo["gpus"] = int(torch.cuda.device_count()) if torch.cuda.is_available() else 0
        except Exception:  # noqa: BLE001
            tinfo["gpus"] = 0
    packages = package_versions()
    facts = {"vpoc": __version__, "build": build, "runtime_version": versions.get("runtime", -1),
             "driver_version": versions.get("driver", -1), "torch": tinfo, "devices": devices,
             "packages": packages}
    rep = Report(facts)
    missing = [p for p in PROFILE_NEEDS if packages.get(p) is None]
    if missing:
        rep.add("vpoc profile", "FAIL", f"cannot read CSV, Parquet and legacy text with CME sessions: "
                f"{', '.join(missing)} missing; pip install \"vpoc[cli]\" (the engine, vpoc demo and "
                "vpoc bench run without them)")
    else:
        rep.add("vpoc profile", "ok", "pandas, pyarrow and pandas_market_calendars are installed "
                "(CSV, Parquet, legacy text; CME sessions)")
    if build.get("cpu_isa_error"):
        rep.add("VPOC_CPU_ISA", "FAIL", f"{build['cpu_isa_error']}: every engine call raises this ValueError")
    archs = [str(a) for a in build.get("gpu_archs", [])]
    if backend == "none":
        if tinfo.get("gpus"):
            rep.add("build", "FAIL", f"this vpoc build has no GPU backend but torch sees {tinfo['gpus']} "
                    "GPU(s): reinstall from source with -Ccmake.define.VPOC_GPU_BACKEND="
                    f"{'hip' if tinfo.get('hip') else 'cuda'} ({_SOURCE_BUILD})")
        else:
            rep.add("build", "skip", "CPU-only build: GPU checks skipped (for a GPU, reinstall from source "
                    "with -Ccmake.define.VPOC_GPU_BACKEND=cuda or =hip)")
        return rep
    driver = int(facts["driver_version"])
    if not devices:
        why = ("no GPU driver is installed" if driver == 0 else
               "check the driver, CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES, and "
               "(ROCm) that your user is in the 'render' and 'video' groups")
        rep.add("devices", "FAIL", f"the {backend} runtime sees no GPU: {why}")
        return rep
    for d in devices:
        where = f"cuda:{d['index']} ({d.get('name') or 'GPU'}, {d.get('arch') or '?'})"
        rule, how = arch_support(backend, archs, str(d.get("arch", "")))
        if d.get("has_code"):
            note = how if rule else "the runtime loads it"
            if rule is False:  # the runtime knows better than our reading of the arch list
                note = f"the runtime loads it ({how})"
            rep.add(f"code for {where}", "ok", note)
        else:
            err = d.get("code_error") or "no kernel image"
            rep.add(f"code for {where}", "FAIL",
                    f"this build has no code for {d.get('arch')}: {how}; the runtime says {err}; "
                    f"{rebuild_hint(backend, str(d.get('arch', '')))}")
    if torch is None:
        rep.add("torch", "skip", "torch is not installed: DLPack hand-off not checked "
                f"(pip install torch, a {'ROCm' if backend == 'hip' else 'CUDA'} build)")
    else:
        flavour = "hip" if tinfo.get("hip") else ("cuda" if tinfo.get("cuda") else "cpu")
        if flavour != backend:
            rep.add("torch", "FAIL", f"torch {tinfo['version']} is a {flavour.upper()} build but vpoc's "
                    f"backend is {backend}: tensors cannot be shared; install torch for "
                    f"{'ROCm' if backend == 'hip' else 'CUDA'}")
        elif not tinfo.get("gpus"):
            rep.add("torch", "FAIL", f"torch {tinfo['version']} sees no GPU while vpoc sees {len(devices)}")
    return rep


def _small_bars(seed: int) -> Tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    S, per = 16, 120
    low = 4000 + np.cumsum(rng.integers(-4, 5, S * per)) * 0.25
    high = low + rng.integers(0, 9, S * per) * 0.25
    close = low + np.round(rng.random(S * per) * (high - low) / 0.25) * 0.25
    volume = rng.integers(1, 500, S * per).astype(np.int64)
    offsets = np.arange(0, S * per + 1, per, dtype=np.int64)
    return high, low, close, volume, offsets


_FIELDS = ("offsets", "volume", "poc", "vah", "val", "poc_row", "vah_row", "val_row", "low_row",
           "n_rows", "total_volume", "va_volume")


def gpu_checks(rep: Report) -> None:
    """GPU-vs-CPU equality, DLPack to torch and the allocation check on every GPU with code."""
    from . import _api

    if rep.facts["build"].get("backend", "none") == "none":
        return
    high, low, close, volume, offsets = _small_bars(7)
    kw = dict(offsets=offsets, tick_size=0.25, distribute="close")  # integer volumes: exact sums
    cpu = _api.from_bars(high, low, close, volume, **kw)
    cpu_t = _api.from_trades(close, volume, offsets=offsets, tick_size=0.25, developing=True)
    torch = _torch()
    for d in rep.facts["devices"]:
        if not d.get("has_code"):
            continue
        dev = f"cuda:{d['index']}"
        try:
            gpu = _api.from_bars(high, low, close, volume, device=dev, **kw)
            gpu_t = _api.from_trades(close, volume, offsets=offsets, tick_size=0.25, developing=True,
                                     device=dev)
            bad = [k for k in _FIELDS if not np.array_equal(np.asarray(getattr(gpu.cpu(), k)),
                                                            np.asarray(getattr(cpu, k)))]
            bad += [f"trades {k}" for k in _FIELDS + ("dev_poc", "dev_vah", "dev_val")
                    if not np.array_equal(np.asarray(getattr(gpu_t.cpu(), k)),
                                          np.asarray(getattr(cpu_t, k)), equal_nan=True)]
        except Exception as e:  # noqa: BLE001 - a failing GPU call is the finding
            rep.add(f"{dev} GPU vs CPU", "FAIL", f"{type(e).__name__}: {e}")
            continue
        if bad:
            rep.add(f"{dev} GPU vs CPU", "FAIL", f"results differ from the CPU engine in {', '.join(bad)}; "
                    "please report this with the output of vpoc doctor --json")
        else:
            rep.add(f"{dev} GPU vs CPU", "ok", f"{cpu.n_sessions} bar sessions and {cpu_t.n_sessions} "
                    "trade sessions (developing series too) identical")
        if torch is not None and rep.facts["torch"].get("gpus"):
            try:
                t = torch.from_dlpack(gpu.poc)
                ok = (t.device.type == "cuda" and t.device.index == d["index"]
                      and np.array_equal(t.cpu().numpy(), np.asarray(cpu.poc)))
                rep.add(f"{dev} DLPack to torch", "ok" if ok else "FAIL",
                        f"tensor on {t.device}, values {'equal' if ok else 'DIFFER'}" +
                        ("" if ok else ": please report this"))
            except Exception as e:  # noqa: BLE001
                rep.add(f"{dev} DLPack to torch", "FAIL", f"torch.from_dlpack failed: {type(e).__name__}: {e}")
        try:
            for _ in range(WARMUP_CALLS):
                _api.from_bars(high, low, close, volume, device=dev, **kw)
            before = _api.memory_stats(dev)["driver_allocs"]
            for _ in range(ALLOC_CALLS):
                _api.from_bars(high, low, close, volume, device=dev, **kw)
            grew = _api.memory_stats(dev)["driver_allocs"] - before
        except Exception as e:  # noqa: BLE001
            rep.add(f"{dev} allocations", "FAIL", f"{type(e).__name__}: {e}")
            continue
        rep.add(f"{dev} allocations", "ok" if grew == 0 else "FAIL",
                f"{ALLOC_CALLS} calls after warm-up: {grew} driver allocations" +
                ("" if grew == 0 else " (expected 0: memory is not being reused; please report this)"))


def run(gpu: bool = True) -> Report:
    rep = collect()
    if gpu:
        gpu_checks(rep)
    return rep


def format_report(rep: Report) -> str:
    f = rep.facts
    b = f["build"]
    backend = b.get("backend", "none")
    lines = [f"vpoc {f['vpoc']}"]
    archs = ", ".join(b.get("gpu_archs", [])) or "-"
    lines.append(f"build:   backend {backend}, GPU architectures {archs}")
    lines.append(f"         C++ {b.get('cxx_compiler') or '?'}; GPU compiler {b.get('gpu_compiler') or '-'}"
                 + (f"; sanitizers {b['sanitize']}" if b.get("sanitize") else ""))
    if b.get("cpu_isa"):
        lines.append(f"cpu:     {isa_text(b)}")
    if backend != "none":
        lines.append(f"runtime: {backend} {version_text(backend, f['runtime_version'])}, "
                     f"driver {version_text(backend, f['driver_version'])}")
    t = f["torch"]
    if t["installed"]:
        flavour = f"CUDA {t['cuda']}" if t.get("cuda") else (f"HIP {t['hip']}" if t.get("hip") else "CPU only")
        lines.append(f"torch:   {t['version']} ({flavour}), {t.get('gpus', 0)} GPU(s) visible")
    else:
        lines.append("torch:   not installed")
    for d in f["devices"]:
        lines.append(f"gpu:     cuda:{d['index']} {d.get('name')}, {d.get('arch')}, "
                     f"{d.get('total_memory', 0) / (1 << 30):.1f} GiB")
    lines.extend(package_lines(f.get("packages", {})))
    for c in rep.checks:
        lines.append(f"[{c.status:^4}] {c.name}: {c.detail}")
    lines.append("result:  " + ("FAILED (see the FAIL lines)" if rep.failed else "ok"))
    return "\n".join(lines)


def isa_text(build: Dict[str, Any]) -> str:
    """The CPU engine's instruction-set level from build_info, and what VPOC_CPU_ISA did to it."""
    cpu, env = build.get("cpu_isa_cpu"), build.get("cpu_isa_env")
    if build.get("cpu_isa_error"):
        return f"instruction set {cpu}, VPOC_CPU_ISA={env!r} refused (engine calls raise ValueError)"
    if build.get("cpu_isa_capped"):
        return f"instruction set {build['cpu_isa']}, capped by VPOC_CPU_ISA={env} (the CPU has {cpu})"
    return f"instruction set {build['cpu_isa']} (the CPU's best" + (f"; VPOC_CPU_ISA={env})" if env else ")")


def package_lines(packages: Dict[str, Optional[str]]) -> List[str]:
    """One line per optional package: version or "missing", what needs it, what runs without it."""
    lines = [f"numpy:   {packages.get('numpy') or 'missing'}"]
    lines.append("optional packages:")
    width = max(len(p[0]) for p in OPTIONAL_PACKAGES)
    for name, needs, without in OPTIONAL_PACKAGES:
        version = packages.get(name)
        lines.append(f"  {name:<{width}}  {version or 'missing':<11} for {needs}; {without}")
    return lines


def main(json_output: bool = False, gpu: bool = True) -> int:
    rep = run(gpu=gpu)
    if json_output:
        print(json.dumps({"facts": rep.facts, "checks": [asdict(c) for c in rep.checks],
                          "ok": not rep.failed}, indent=2, default=str))
    else:
        print(format_report(rep))
    return 1 if rep.failed else 0

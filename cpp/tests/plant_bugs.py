"""Checks that the C++ unit tests catch bugs: plants one bug at a time in a COPY of cpp/src/core and reruns them.

Contract: never edits cpp/src; each planted bug must make at least one test case fail (exit 1 otherwise).
Usage: python cpp/tests/plant_bugs.py [--build-dir build/cpptests-plant] [--only NAME ...]
The copy lives in <build-dir>/planted/core and is searched before cpp/src (VPOC_TESTS_CORE_OVERRIDE).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["MUTATIONS", "main"]

ROOT = Path(__file__).resolve().parents[2]

# (name, header under core/, exact text, replacement[, text, replacement ...]): each a plausible slip in one rule.
MUTATIONS = [
    ("side letters 'B' / 'A' swapped", "side.hpp",
     "return b == 'B' ? int8_t(1) : b == 'A' ? int8_t(-1)", "return b == 'B' ? int8_t(-1) : b == 'A' ? int8_t(1)"),
    ("int8 side 2 taken as a side", "side.hpp",
     "static_cast<uint8_t>(s[i] + 1) > 2);", "static_cast<uint8_t>(s[i] + 1) > 3);"),
    ("poc centre tie takes the higher row", "levels.hpp",
     "return ai < ab || (ai == ab && i < best);", "return ai < ab || (ai == ab && i > best);"),
    ("poc 'low' takes the last tied row", "levels.hpp",
     "if (tie == PocTie::low) return i;", "if (tie == PocTie::low) best = i;"),
    ("poc ties exact only (no 1e-9 band)", "levels.hpp",
     "VPOC_HD bool at_max(double v, double mx) { return fabs(v - mx) <= kRelTie * mx; }",
     "VPOC_HD bool at_max(double v, double mx) { return v == mx; }"),
    ("value area D/U ties go down", "levels.hpp",
     "(n_dn > 0 && dn > up && !tied(dn, up))", "(n_dn > 0 && dn >= up)"),
    ("value area D/U compared without the tie band", "levels.hpp",
     "(n_dn > 0 && dn > up && !tied(dn, up))", "(n_dn > 0 && dn > up)"),
    ("value area stop without the 1e-9 band", "levels.hpp",
     "return running >= target || target - running <= kRelTie * target;", "return running >= target;"),
    ("greedy: equal volumes higher row first", "levels.hpp",
     "(v[a] == v[b] && a < b)", "(v[a] == v[b] && a > b)"),
    ("ladder rint half away from zero", "ladder.hpp",
     "return q >= 0.0 ? (q + kMaxTicks) - kMaxTicks : (q - kMaxTicks) + kMaxTicks;",
     "return q >= 0.0 ? floor(q + 0.5) : ceil(q - 0.5);"),
    ("ladder row = truncating division", "ladder.hpp",
     "VPOC_HD int64_t tick_to_row(int64_t t, int64_t ticks_per_row) { return floor_div(t, ticks_per_row); }",
     "VPOC_HD int64_t tick_to_row(int64_t t, int64_t ticks_per_row) { return t / ticks_per_row; }"),
    ("ladder p * (1/tick) without the exact fallback", "ladder.hpp",
     "return (0.5 - d <= fabs(q) * 4.5e-16) ? p / tick : q;", "return d < 0.0 ? p / tick : q;"),
    ("ladder accepts |p / tick| == 2**52", "ladder.hpp",
     "if (!(fabs(q) < kMaxTicks)) return false;  // also rejects NaN and inf",
     "if (fabs(q) > kMaxTicks || q != q) return false;"),
    ("ladder tick limit half a tick too high", "ladder.hpp",
     "return rows * tpr - 0.5;", "return rows * tpr;"),
    ("ladder row price is the row's top", "ladder.hpp",
     "return static_cast<double>(r) * row_size; }", "return static_cast<double>(r + 1) * row_size; }"),
    ("fixed volume 2**53 refused", "fixed.hpp",
     "(v >= kMinVolume && v <= kMaxTotal)", "(v >= kMinVolume && v < kMaxTotal)"),
    ("fixed over_max ignores the fraction", "fixed.hpp",
     "return f.hi > kMax || (f.hi == kMax && f.lo != 0);", "return f.hi > kMax;"),
    ("fixed times drops the middle carry", "fixed.hpp",
     "r.hi = f.hi * k + (p1 >> 32) + (mid >> 32);", "r.hi = f.hi * k + (p1 >> 32);"),
    ("fixed div_small without the upward correction", "fixed.hpp",
     "  while (r >= n) {\n    ++q;\n    r -= n;\n  }\n", ""),
    ("fixed add loses the carry", "fixed.hpp",
     "hi += b.hi + (lo < b.lo ? 1u : 0u);", "hi += b.hi;"),
    ("fixed from_double drops the low 32 fraction bits", "fixed.hpp",
     "f.lo = (static_cast<uint64_t>(a_hi) << 32) | static_cast<uint64_t>(a_lo);",
     "f.lo = (static_cast<uint64_t>(a_hi) << 32);"),
    ("split leftover units on the top ticks", "fixed.hpp",
     "VPOC_HD Fixed one(uint64_t k) const { return k < rem ? q + from_units(1) : q; }",
     "VPOC_HD Fixed one(uint64_t k) const { return k + rem >= n_ ? q + from_units(1) : q; }\n"
     "  uint64_t n_ = 0;",
     "s.q = divide(f, n, s.rem);", "s.q = divide(f, n, s.rem);\n    s.n_ = n;"),
    ("uniform row split off by one", "distribute.hpp",
     "const int64_t hi = th < r * tpr + tpr - 1 ? th : r * tpr + tpr - 1;",
     "const int64_t hi = th < r * tpr + tpr ? th : r * tpr + tpr;"),
    ("uniform difference array: -1 unit one tick late", "distribute.hpp",
     "add(tl + static_cast<int64_t>(split.rem), Fixed{} - unit);",
     "add(tl + static_cast<int64_t>(split.rem) + 1, Fixed{} - unit);"),
    ("legacy heaviest level = last of the largest weights", "distribute.hpp",
     "if (w > wmax) {", "if (w >= wmax) {"),
    ("legacy weight distance + 0.5", "distribute.hpp",
     "return 1.0 + 1.0 / (1.0 + fabs(level - close));", "return 1.0 + 1.0 / (1.5 + fabs(level - close));"),
    ("legacy range misses the last level", "distribute.hpp",
     "while (kb < K && level(kb + 1) <= mx) ++kb;", "while (kb < K && level(kb + 1) < mx) ++kb;"),
    ("to_tick multiplies by 1 / tick", "ladder.hpp",
     "const double q = p / tick_size;", "const double q = p * (1.0 / tick_size);"),
    ("legacy bar without a level goes to the ladder base", "distribute.hpp",
     "ladder::to_tick(close, L.tick, t);", "t = L.base;"),
    ("uniform ignores add() asking to stop", "distribute.hpp",
     "if (!add(t, split.one(static_cast<uint64_t>(t - tl)))) return false;",
     "add(t, split.one(static_cast<uint64_t>(t - tl)));"),
    ("hlc3 divides by 4", "source.hpp",
     "row_of((it.a + it.b + it.c) / 3.0), fixed::from_double", "row_of((it.a + it.b + it.c) / 4.0), fixed::from_double"),
    ("developing resumes from the last expansion state", "developing.hpp",
     "r = lo < n_path_ - 1 ? lo : n_path_ - 1;", "r = n_path_ - 1;"),
    ("developing forgets the tied-row overflow", "developing.hpp",
     "else overflow_ = true;", "else overflow_ = false;"),
    ("developing legacy never re-distributes the prefix", "developing.hpp",
     "if (moved && i > begin && !src.scale.exact) {", "if (false && moved && i > begin) {"),
    ("developing greedy order not kept sorted", "developing.hpp",
     "if (!levels::greedy_before(sc_.v, k, q)) break;", "break;"),
    ("windows across: the reach's low deque keeps the wrong end", "window_reach.hpp",
     "while (!lo.empty() && low_row[lo.back()] >= low_row[s]) lo.pop_back();",
     "while (!lo.empty() && low_row[lo.back()] <= low_row[s]) lo.pop_back();"),
    ("windows across: preload drops the tail's last row", "window.hpp",
     "for (int64_t i = begin; i < end; ++i)\n      if (!apply(src, L, i, i, false)) return false;\n    return true;",
     "for (int64_t i = begin; i + 1 < end; ++i)\n      if (!apply(src, L, i, i, false)) return false;\n    return true;"),
    ("windows across: max_rows compared off by one", "window.hpp",
     "if (last_ - first_ + 1 > opt_.max_rows)", "if (last_ - first_ > opt_.max_rows)"),
]


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=ROOT, text=True, capture_output=True, **kw)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build-dir", default="build/cpptests-plant")
    ap.add_argument("--only", nargs="*", help="names (substrings) of the mutations to plant")
    ap.add_argument("--jobs", default="2")
    args = ap.parse_args(argv)
    build = ROOT / args.build_dir
    planted = build / "planted"
    cmake_dir = run([sys.executable, "-m", "pybind11", "--cmakedir"]).stdout.strip()
    cfg = run(["cmake", "-S", ".", "-B", str(build), "-DVPOC_BUILD_TESTS=ON", "-DVPOC_GPU_BACKEND=none",
               f"-DVPOC_TESTS_CORE_OVERRIDE={planted}", f"-DPython_EXECUTABLE={sys.executable}",
               f"-Dpybind11_DIR={cmake_dir}"])
    if cfg.returncode:
        print(cfg.stdout + cfg.stderr)
        return 2
    exe = build / "cpp" / "tests" / "vpoc_cpp_tests"

    def plant(mutation) -> tuple[bool, str]:
        # The copy is synced file by file: a file is written (new mtime) only when its text changes,
        # so make rebuilds exactly what includes the mutated header and the one restored from the
        # previous mutation (a plain copytree keeps the originals' old mtimes, and make would then
        # keep objects built from the previous mutation).
        source = ROOT / "cpp" / "src" / "core"
        want = {f.name: f.read_text() for f in source.iterdir() if f.is_file()}
        if mutation is not None:
            header, pairs = mutation[1], mutation[2:]
            text = want[header]
            for old, new in zip(pairs[::2], pairs[1::2]):
                if text.count(old) != 1:
                    return False, f"text to replace found {text.count(old)} times in core/{header}: {old}"
                text = text.replace(old, new)
            want[header] = text
        (planted / "core").mkdir(parents=True, exist_ok=True)
        for name, text in want.items():
            path = planted / "core" / name
            if not path.exists() or path.read_text() != text:
                path.write_text(text)
        b = run(["cmake", "--build", str(build), "--target", "vpoc_cpp_tests", "-j", args.jobs])
        if b.returncode:
            return False, "build failed: " + (b.stdout + b.stderr)[-600:]
        # one process per test case (ctest): a case that crashes does not hide the others
        t = run(["ctest", "--test-dir", str(build), "-j", args.jobs], timeout=900)
        failed = sorted(set(re.findall(r"^\s*\d+ - (\S+) \(", t.stdout, flags=re.M)))
        failing.update(failed)
        return t.returncode != 0, ", ".join(failed) if failed else t.stdout[-300:]

    failing: set[str] = set()

    start = time.time()
    ok, detail = plant(None)
    if ok:
        print("the unplanted copy fails:", detail)
        return 2
    print(f"unplanted copy: all tests pass ({time.time() - start:.0f} s)")
    missed = 0
    chosen = [m for m in MUTATIONS if not args.only or any(o in m[0] for o in args.only)]
    for m in chosen:
        caught, detail = plant(m)
        missed += not caught
        print(f"{'caught' if caught else 'MISSED'}: {m[0]}\n    {detail}", flush=True)
    plant(None)  # leave the build matching cpp/src
    listed = run([str(exe), "--list-test-cases", "--no-colors"]).stdout
    cases = sorted(set(re.findall(r"^(24_5_\S+)$", listed, flags=re.M)))
    never = [c for c in cases if c not in failing]
    print(f"test cases failed by some planted bug: {len(cases) - len(never)} of {len(cases)}")
    for c in never:
        print(f"    never failed: {c}")
    print(f"{len(chosen) - missed} caught, {missed} missed of {len(chosen)} planted bugs ({time.time() - start:.0f} s)")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())

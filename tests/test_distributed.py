"""Sharding sessions over torch.distributed ranks: ``shard_sessions`` / ``shard_offsets`` against a
plain NumPy split, and 2 gloo processes on the CPU whose gathered shards equal one process's result.

Every multi-process run has a deadline: a hung collective fails the test instead of the suite.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any, List

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

torch = pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

import vpoc  # noqa: E402
from vpoc._torch_dist import gather_shards, shard_offsets, shard_sessions  # noqa: E402

pytestmark = pytest.mark.skipif(not (dist.is_available() and dist.is_gloo_available()),
                                reason="torch.distributed with gloo is not available")

ROOT = Path(__file__).resolve().parent.parent
DEADLINE = 180  # seconds for one multi-process run


# --------------------------------------------------------------------------- shard_sessions


@given(n=st.integers(0, 10_000), w=st.integers(1, 64))
def test_shards_match_numpy_array_split(n, w):
    """np.array_split gives the first n % w parts one more element: the same contract."""
    parts = np.array_split(np.arange(n), w)
    got = [shard_sessions(n, r, w) for r in range(w)]
    for r, (part, rng) in enumerate(zip(parts, got)):
        assert isinstance(rng, range) and rng.step == 1
        assert list(rng) == part.tolist(), (n, w, r)
    assert sum(len(r) for r in got) == n
    assert max(map(len, got)) - min(map(len, got)) <= 1
    assert all(a.stop == b.start for a, b in zip(got, got[1:]))


def test_shard_sessions_bad_arguments():
    with pytest.raises(ValueError, match="rank must be < world_size"):
        shard_sessions(10, 2, 2)
    with pytest.raises(ValueError, match="rank must be >= 0"):
        shard_sessions(10, -1, 2)
    with pytest.raises(ValueError, match="world_size must be >= 1"):
        shard_sessions(10, 0, 0)
    with pytest.raises(ValueError, match="n_sessions must be >= 0"):
        shard_sessions(-1, 0, 1)
    for bad in (1.0, "3", True, None):
        with pytest.raises(TypeError, match="n_sessions must be an integer"):
            shard_sessions(bad, 0, 1)
    with pytest.raises(TypeError, match="rank"):
        shard_sessions(3, np.float64(0), 1)
    assert shard_sessions(np.int64(5), np.int32(1), np.int64(2)) == range(3, 5)


@given(counts=st.lists(st.integers(0, 20), max_size=30), w=st.integers(1, 8))
def test_shard_offsets(counts, w):
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    rows = []
    for r in range(w):
        sessions, sl, local = shard_offsets(offsets, r, w)
        assert sessions == shard_sessions(len(counts), r, w)
        assert local[0] == 0 and local.shape == (len(sessions) + 1,)
        np.testing.assert_array_equal(np.diff(local), np.asarray(counts, dtype=np.int64)[sessions.start:sessions.stop])
        rows.extend(range(sl.start, sl.stop))
    assert rows == list(range(int(offsets[-1])))  # every row exactly once, in order


def test_shard_offsets_bad_arguments():
    with pytest.raises(ValueError, match="offsets"):
        shard_offsets(np.zeros((2, 2), dtype=np.int64), 0, 1)
    with pytest.raises(ValueError, match="offsets"):
        shard_offsets(np.array([0.0, 1.0]), 0, 1)
    with pytest.raises(ValueError, match="offsets"):
        shard_offsets(np.zeros(0, dtype=np.int64), 0, 1)


def test_gather_shards_needs_an_initialized_group():
    if dist.is_initialized():  # pragma: no cover - the test process never joins a group
        pytest.skip("a process group is already initialized here")
    with pytest.raises(RuntimeError, match="init_process_group"):
        gather_shards(torch.zeros(3))
    with pytest.raises(TypeError, match="torch.Tensor"):
        gather_shards(np.zeros(3))
    with pytest.raises(ValueError, match="at least one dimension"):
        gather_shards(torch.tensor(1.0))


# --------------------------------------------------------------------------- 2 gloo processes


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _profile_rows(prof: Any) -> "torch.Tensor":
    return torch.stack([torch.from_numpy(np.asarray(getattr(prof, k), dtype=np.float64))
                        for k in ("poc", "vah", "val", "total_volume", "va_volume")], dim=1)


def _index_rows(prof: Any) -> "torch.Tensor":
    return torch.stack([torch.from_numpy(np.asarray(getattr(prof, k)))
                        for k in ("poc_row", "vah_row", "val_row", "low_row", "n_rows")], dim=1)


def _check_rank(rank: int, world: int, n_sessions: int) -> int:
    """Profile this rank's sessions, gather, compare with one process; the shard size."""
    bars = vpoc.synth.es_bars(n_sessions, 50, seed=12)  # the same data on every rank
    sessions, rows, local = shard_offsets(bars.offsets, rank, world)
    mine = vpoc.from_bars(bars.high[rows], bars.low[rows], bars.close[rows], bars.volume[rows],
                          offsets=local, tick_size=0.25, threads=1)
    values = gather_shards(_profile_rows(mine))
    index = gather_shards(_index_rows(mine))
    hist = gather_shards(torch.from_numpy(np.asarray(mine.volume)))  # ragged: sizes differ
    labels = gather_shards(torch.from_numpy(bars.session_labels[sessions.start:sessions.stop]))
    one = vpoc.from_bars(bars.high, bars.low, bars.close, bars.volume, offsets=bars.offsets,
                         tick_size=0.25, threads=1)
    assert values.dtype == torch.float64 and index.dtype == torch.int64
    assert values.shape == (n_sessions, 5) and index.shape == (n_sessions, 5)
    assert torch.equal(values, _profile_rows(one)), "float fields differ"
    assert torch.equal(index, _index_rows(one)), "row fields differ"
    assert torch.equal(hist, torch.from_numpy(np.asarray(one.volume))), "histograms differ"
    assert labels.tolist() == bars.session_labels.tolist()
    return len(sessions)


def _worker(rank: int, world: int, port: int, cases: List[int], out_dir: str) -> None:
    """One rank of the gloo group: every case, then shards that must not gather."""
    import datetime

    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world, timeout=datetime.timedelta(seconds=60))
    try:
        sizes = [_check_rank(rank, world, n) for n in cases]
        # a rank whose tensor disagrees in dtype or trailing shape: every rank gets a ValueError
        for odd in (torch.zeros((2, 3), dtype=torch.float32 if rank else torch.float64),
                    torch.zeros((2, 3 + rank))):
            try:
                gather_shards(odd)
            except ValueError as e:
                assert "same dtype" in str(e)
            else:
                raise AssertionError("mismatched shards were gathered")
        Path(out_dir, f"ok{rank}").write_text(",".join(map(str, sizes)))
    except BaseException:
        Path(out_dir, f"error{rank}").write_text(traceback.format_exc())
        raise
    finally:
        dist.destroy_process_group()


def _spawn(world: int, cases: List[int], tmp_path: Path) -> List[List[int]]:
    ctx = mp.start_processes(_worker, args=(world, _free_port(), cases, str(tmp_path)),
                             nprocs=world, join=False, start_method="spawn")
    deadline = time.monotonic() + DEADLINE
    try:
        while not ctx.join(timeout=1.0):
            if time.monotonic() > deadline:
                pytest.fail(f"{world} gloo processes did not finish within {DEADLINE} s")
    except mp.ProcessRaisedException as e:
        errors = [p.read_text() for p in sorted(tmp_path.glob("error*"))]
        pytest.fail("a rank failed:\n" + ("\n".join(errors) or str(e)))
    finally:
        for p in ctx.processes:
            if p.is_alive():
                p.kill()
    return [[int(x) for x in (tmp_path / f"ok{r}").read_text().split(",")] for r in range(world)]


def test_two_gloo_ranks_gather_the_single_process_result(tmp_path):
    """23 sessions (12 + 11), 1 session (rank 1's shard is empty) and 0 sessions."""
    cases = [23, 1, 0]
    sizes = _spawn(2, cases, tmp_path)
    for i, n in enumerate(cases):
        assert [sizes[r][i] for r in range(2)] == [len(shard_sessions(n, r, 2)) for r in range(2)]


def test_example_under_torchrun():
    """examples/distributed_features.py on 2 CPU ranks: gathered features == one process."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
           str(ROOT / "examples" / "distributed_features.py"), "--sessions", "70", "--bars", "90",
           "--check", "--timeout", "60"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=DEADLINE, env=env,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "check: distributed == single process" in r.stdout, r.stdout
    assert "features: (70, " in r.stdout
    # the check is not vacuous: without enough history before a shard the features differ
    bad = subprocess.run(cmd + ["--halo", "2"], capture_output=True, text=True, timeout=DEADLINE,
                         env=env, stdin=subprocess.DEVNULL)
    assert bad.returncode != 0 and "check: MISMATCH" in bad.stdout, bad.stdout + bad.stderr

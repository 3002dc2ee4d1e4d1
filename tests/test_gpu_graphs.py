"""Speculative GPU calls replay their launches as two graphs (captured, updated in place, launched).

Contract: with graphs on (the default) a call gives the bits it gives with graphs off and the CPU's,
raises the same exception, a loop of one shape updates its graphs in place (``graph_builds`` flat,
``graph_launches`` two per call), another kernel sequence rebuilds them, and calls on a torch side
stream stay ordered. Skipped without a GPU build, a GPU and torch.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

vpoc = pytest.importorskip("vpoc")
if not (hasattr(vpoc, "gpu_available") and vpoc.gpu_available()):
    pytest.skip("needs a vpoc GPU build and a GPU", allow_module_level=True)
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():  # pragma: no cover - depends on the machine
    pytest.skip("needs PyTorch with a GPU", allow_module_level=True)

from vpoc import _core  # noqa: E402

from test_gpu_speculative import _bad, assert_same, call, data, fields, stats  # noqa: E402


def assert_as_cpu(g: dict, want: dict, ctx: str) -> None:
    """Rows and levels bit for bit, volumes to 1e-12 (as test_gpu_speculative compares with the CPU)."""
    for k in ("offsets", "n_rows", "low_row", "poc_row", "vah_row", "val_row", "poc", "vah", "val"):
        np.testing.assert_array_equal(g[k], want[k], err_msg=f"{k} [{ctx}]", strict=True)
    np.testing.assert_allclose(g["volume"], want["volume"], rtol=1e-12, atol=0, err_msg=ctx)


@contextlib.contextmanager
def graphs(enabled: bool):
    before = _core.gpu_graphs()
    _core.gpu_set_graphs(enabled)
    try:
        yield
    finally:
        _core.gpu_set_graphs(before)


def test_graphs_are_on_by_default():
    assert _core.gpu_graphs() is True


@pytest.mark.parametrize("api, volume", [("trades", "int"), ("trades", "frac"), ("uniform", "frac"),
                                         ("legacy", "int"), ("close", "int")])
def test_a_loop_of_one_shape_updates_its_graphs_in_place(api, volume):
    d, off = data(api, 15_000 + 3 * len(api), 7, seed=11, volume=volume)
    cpu = fields(call(api, d, off, "cpu"))
    with graphs(False):
        call(api, d, off, "cuda")
        before = stats()
        plain = fields(call(api, d, off, "cuda"))
        assert stats()["graph_launches"] == before["graph_launches"], "graphs off, yet replayed"
    with graphs(True):
        call(api, d, off, "cuda")  # may instantiate (another sequence of kernels ran before)
        before = stats()
        for k in range(5):
            assert_same(fields(call(api, d, off, "cuda")), plain, f"{api} replay {k} vs graphs off")
        after = stats()
    assert after["speculative_calls"] - before["speculative_calls"] == 5
    assert after["graph_launches"] - before["graph_launches"] == 10  # two phases per call
    assert after["graph_builds"] == before["graph_builds"], "a loop of one shape rebuilt its graphs"
    assert after["driver_allocs"] == before["driver_allocs"]
    assert_as_cpu(plain, cpu, f"{api} graphs off vs cpu")


def test_another_kernel_sequence_rebuilds_and_stays_right():
    """uniform and legacy bars run different kernels: alternating them rebuilds the graphs."""
    d, off = data("uniform", 9_001, 4, seed=12)
    want = {api: fields(call(api, d, off, "cpu")) for api in ("uniform", "legacy")}
    for api in ("uniform", "legacy"):
        call(api, d, off, "cuda")
    before = stats()
    for k in range(3):
        for api in ("uniform", "legacy"):
            assert_as_cpu(fields(call(api, d, off, "cuda")), want[api], f"{api} round {k}")
    after = stats()
    assert after["graph_builds"] > before["graph_builds"]


@pytest.mark.parametrize("api, case", [("trades", "nan_price"), ("uniform", "too_wide"),
                                       ("close", "negative_volume")])
def test_bad_input_raises_the_same_with_and_without_graphs(api, case):
    good, off = data(api, 3_000 + 11 * len(case), 3, seed=13)
    kw = {"max_rows": 2000} if case == "too_wide" else {}
    bad = _bad(api, good, case)
    msgs = []
    for on in (False, True):
        with graphs(on):
            call(api, good, off, "cuda", **kw)
            call(api, good, off, "cuda", **kw)
            with pytest.raises(ValueError) as e:
                call(api, bad, off, "cuda", **kw)
            msgs.append(str(e.value))
            assert_as_cpu(fields(call(api, good, off, "cuda", **kw)), fields(call(api, good, off, "cpu", **kw)),
                          f"after the error, graphs {on}")
    assert msgs[0] == msgs[1]


def test_replay_on_a_torch_side_stream_is_ordered():
    """Inputs written on a side stream, the call on it (torch's current stream), the result read on it."""
    d, off = data("uniform", 20_000, 8, seed=14)
    want = fields(call("uniform", d, off, "cpu"))
    side = torch.cuda.Stream()
    host = {k: torch.from_numpy(np.ascontiguousarray(v)).pin_memory() for k, v in d.items()}
    for k in range(4):
        with torch.cuda.stream(side):
            dev = {n: x.to("cuda", non_blocking=True) for n, x in host.items()}
            torch.cuda._sleep(2_000_000)  # the side stream is still busy when the call is queued
            p = vpoc.from_bars(dev["high"], dev["low"], dev["close"], dev["volume"], open=dev["open"],
                               offsets=off, tick_size=0.25, distribute="uniform", device="cuda")
            poc = torch.from_dlpack(p.poc).clone()
        side.synchronize()
        np.testing.assert_array_equal(poc.cpu().numpy(), want["poc"], err_msg=f"poc, call {k}", strict=True)
        assert_as_cpu(fields(p), want, f"side stream call {k}")

"""vpoc.torch datasets (``SessionFeatureDataset``, ``BarWindowDataset``) against plain NumPy
slicing: items, batches, targets, NaN handling, session boundaries, views, devices, DataLoader
workers, DistributedSampler sharding, pickling and bad input."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

torch = pytest.importorskip("torch")
vpoc = pytest.importorskip("vpoc")
from vpoc._torch_data import BarWindowDataset, SessionFeatureDataset  # noqa: E402

COLS = ("a", "b", "c", "d")


# --------------------------------------------------------------------------- NumPy references


def ref_session_items(values, target, shift, keep, dropna):
    """[(row, x, y)] by a loop over sessions: y = target[row + shift] (target per row, or None)."""
    out = []
    for s in range(values.shape[0]):
        x = values[s, keep]
        if target is None:
            if dropna == "any" and np.isnan(x).any():
                continue
            out.append((s, x, None))
            continue
        if s + shift >= values.shape[0]:
            continue
        y = target[s + shift]
        if dropna in ("target", "any") and np.isnan(y).any():
            continue
        if dropna == "any" and np.isnan(x).any():
            continue
        out.append((s, x, y))
    return out


def ref_windows(values, offsets, window, horizon, stride, target, keep, dropna):
    """[(last, x, y)] by a loop over sessions and window ends (target per row, or None)."""
    out = []
    ahead = horizon if target is not None else 0
    for a, b in zip(offsets[:-1], offsets[1:]):
        last = a + window - 1
        while last + ahead <= b - 1:
            x = values[last - window + 1:last + 1][:, keep]
            y = None if target is None else target[last + horizon]
            skip = (dropna != "none" and y is not None and np.isnan(y).any()) or \
                   (dropna == "any" and np.isnan(x).any())
            if not skip:
                out.append((last, x, y))
            last += stride
    return out


def check_items(ds, ref, batch=True):
    assert len(ds) == len(ref)
    for i, (_, x, y) in enumerate(ref):
        item = ds[i]
        if y is None:
            np.testing.assert_array_equal(item.numpy(), x)
        else:
            np.testing.assert_array_equal(item[0].numpy(), x)
            np.testing.assert_array_equal(item[1].numpy(), y)
    if batch and ref:
        idx = np.random.default_rng(0).permutation(len(ref))
        got = ds[idx.tolist()]
        xs = np.stack([ref[i][1] for i in idx])
        if ref[0][2] is None:
            np.testing.assert_array_equal(got.numpy(), xs)
        else:
            np.testing.assert_array_equal(got[0].numpy(), xs)
            np.testing.assert_array_equal(got[1].numpy(), np.stack([ref[i][2] for i in idx]))


def random_values(rng, n, f=4, nan_frac=0.1):
    v = rng.normal(size=(n, f)).astype(np.float32)
    v[rng.random((n, f)) < nan_frac] = np.nan
    return v


# --------------------------------------------------------------------------- SessionFeatureDataset


@pytest.mark.parametrize("shift", [0, 1, 3])
@pytest.mark.parametrize("dropna", ["target", "any", "none"])
def test_session_column_target(shift, dropna):
    rng = np.random.default_rng(shift)
    v = random_values(rng, 30)
    drop = ("c",) if shift == 0 else ()
    ds = SessionFeatureDataset(v, "c", target_shift=shift, columns=COLS, drop_columns=drop,
                               dropna=dropna)
    keep = [0, 1, 3] if drop else [0, 1, 2, 3]
    ref = ref_session_items(v, v[:, 2], shift, keep, dropna)
    check_items(ds, ref)
    assert ds.session_index.tolist() == [r for r, _, _ in ref]
    assert ds.columns == tuple(COLS[j] for j in keep)


def test_session_default_shift_is_next_session():
    v = np.arange(12, dtype=np.float32).reshape(6, 2)
    ds = SessionFeatureDataset(v, "p", columns=("p", "q"))
    assert ds.target_shift == 1 and len(ds) == 5
    x, y = ds[2]
    assert x.tolist() == [4.0, 5.0] and float(y) == 6.0  # p of session 3


@pytest.mark.parametrize("shift", [0, 1, 2])
def test_session_tensor_and_array_targets(shift):
    rng = np.random.default_rng(7)
    v = random_values(rng, 25, nan_frac=0.0)
    t1 = rng.normal(size=25)
    t1[[3, 10]] = np.nan
    t2 = rng.normal(size=(25, 3)).astype(np.float32)
    for t in (t1, torch.from_numpy(t1), t2):
        ds = SessionFeatureDataset(v, t, target_shift=shift)
        tn = t.numpy() if isinstance(t, torch.Tensor) else t
        check_items(ds, ref_session_items(v, tn, shift, [0, 1, 2, 3], "target"))


def test_session_integer_labels_keep_their_dtype():
    v = np.zeros((5, 2), dtype=np.float32)
    labels = np.array([0, 1, 1, 0, 1])
    ds = SessionFeatureDataset(v, labels)
    assert ds.y.dtype == torch.int64 and ds.y.tolist() == [1, 1, 0, 1]


def test_session_callable_target_gets_full_values_and_target_rows():
    rng = np.random.default_rng(3)
    v = random_values(rng, 20, nan_frac=0.0)
    seen = {}

    def direction(values, idx):
        seen["shape"], seen["idx"] = tuple(values.shape), idx.tolist()
        return (values[idx, 0] > values[idx - 1, 0]).to(torch.float32)

    ds = SessionFeatureDataset(v, direction, columns=COLS, drop_columns=("a",))
    assert seen["shape"] == (20, 4) and seen["idx"] == list(range(1, 20))
    ref_t = np.concatenate([[np.nan], (v[1:, 0] > v[:-1, 0]).astype(np.float32)])
    check_items(ds, ref_session_items(v, ref_t, 1, [1, 2, 3], "target"))


def test_session_no_target_and_dropna_any():
    rng = np.random.default_rng(5)
    v = random_values(rng, 15, nan_frac=0.2)
    check_items(SessionFeatureDataset(v), ref_session_items(v, None, 0, [0, 1, 2, 3], "target"))
    check_items(SessionFeatureDataset(v, dropna="any"),
                ref_session_items(v, None, 0, [0, 1, 2, 3], "any"))


@pytest.mark.filterwarnings("ignore:.*has 0 items:vpoc.DroppedRowsWarning")  # t6fix: 0 items now warn
@pytest.mark.parametrize("n", [0, 1, 2])
def test_session_tiny_inputs(n):
    v = np.ones((n, 3), dtype=np.float32)
    ds = SessionFeatureDataset(v, "x", columns=("x", "y", "z"))
    assert len(ds) == max(n - 1, 0)
    assert len(SessionFeatureDataset(v)) == n
    assert len(list(torch.utils.data.DataLoader(ds, batch_size=4))) == (1 if n == 2 else 0)


def test_session_items_are_views_and_numpy_input_is_shared():
    v = np.arange(20, dtype=np.float32).reshape(5, 4)
    ds = SessionFeatureDataset(v, "d", columns=COLS)
    x, y = ds[1]
    assert x._base is ds.x and y._base is ds.y
    assert ds.x.data_ptr() == v.ctypes.data  # float32 writable numpy: no copy at all
    v[1, 0] = 100.0
    assert float(ds[1][0][0]) == 100.0


def test_session_dtype_and_readonly_input():
    v = np.arange(12, dtype=np.float64).reshape(4, 3)
    v.setflags(write=False)
    ds = SessionFeatureDataset(v)  # no "non-writable array" warning (warnings are errors here)
    assert ds.x.dtype == torch.float32
    keep = SessionFeatureDataset(v, dtype=None)
    assert keep.x.dtype == torch.float64
    np.testing.assert_array_equal(keep.x.numpy(), v)


def test_strided_inputs_are_copied_once():
    v = np.arange(40, dtype=np.float32).reshape(10, 4)
    for view in (v[::-1], v[:, ::2], np.asfortranarray(v)):
        ds = BarWindowDataset(view, 3, columns=None)
        assert ds.x.is_contiguous()
        np.testing.assert_array_equal(ds[0].numpy(), view[:3])
        np.testing.assert_array_equal(ds[-1].numpy(), view[-3:])


def test_session_pandas_dataframe_input():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(9)
    v = random_values(rng, 12, nan_frac=0.1).astype(np.float64)
    df = pd.DataFrame(v, columns=list(COLS))
    ds = SessionFeatureDataset(df, "b", drop_columns=("d",))
    assert ds.columns == ("a", "b", "c")
    check_items(ds, ref_session_items(v.astype(np.float32), v[:, 1].astype(np.float32), 1,
                                      [0, 1, 2], "target"))
    with pytest.raises(TypeError, match="features"):
        SessionFeatureDataset(pd.DataFrame({"a": ["x", "y"]}))


def test_session_feature_table_input():
    if not hasattr(vpoc, "session_features"):
        pytest.skip("vpoc.session_features has not landed yet")
    bars = vpoc.synth.es_bars(n_sessions=8, bars_per_session=60, seed=2)
    ft = vpoc.session_features(bars.high, bars.low, bars.close, bars.volume, open=bars.open,
                               offsets=bars.offsets, tick_size=0.25)
    name = ft.columns[0]
    ds = SessionFeatureDataset(ft, name, dropna="none")
    values = np.asarray(ft.values)
    assert ds.columns == tuple(ft.columns) and len(ds) == 7
    check_items(ds, ref_session_items(values, values[:, 0], 1, list(range(values.shape[1])),
                                      "none"))
    np.testing.assert_array_equal(ds.session_labels, np.asarray(ft.session_labels)[:7])


def test_session_feature_table_duck_type_uses_to_torch():
    class Table:  # the FeatureTable interface the dataset relies on
        columns = ("u", "v")
        session_labels = np.array([20240102, 20240103, 20240104])
        values = np.arange(6, dtype=np.float32).reshape(3, 2)

        def to_torch(self, device=None):
            self.asked = device
            return torch.from_numpy(self.values)

    t = Table()
    ds = SessionFeatureDataset(t, "v")
    assert t.asked is None and ds.columns == ("u", "v")
    assert ds.session_labels.tolist() == [20240102, 20240103]
    assert [float(ds[i][1]) for i in range(2)] == [3.0, 5.0]
    SessionFeatureDataset(t, device="cpu")
    assert t.asked == "cpu"


# --------------------------------------------------------------------------- BarWindowDataset


@st.composite
def window_cases(draw):
    sizes = draw(st.lists(st.integers(0, 12), min_size=1, max_size=5))
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    n = int(offsets[-1])
    seed = draw(st.integers(0, 2**31 - 1))
    return dict(offsets=offsets, n=n, seed=seed,
                window=draw(st.integers(1, 5)), horizon=draw(st.integers(0, 3)),
                stride=draw(st.integers(1, 3)), dropna=draw(st.sampled_from(["target", "any", "none"])),
                kind=draw(st.sampled_from(["column", "tensor", "callable", "none"])),
                sessions=draw(st.booleans()))


@pytest.mark.filterwarnings("ignore:.*has 0 items:vpoc.DroppedRowsWarning")  # t6fix: 0 items now warn
@given(window_cases())
def test_windows_match_numpy_slicing(case):
    rng = np.random.default_rng(case["seed"])
    v = random_values(rng, case["n"], nan_frac=0.15)
    w, h, stride, dropna = case["window"], case["horizon"], case["stride"], case["dropna"]
    offsets = case["offsets"] if case["sessions"] else np.array([0, case["n"]])
    kind = case["kind"]
    keep = [0, 1, 2, 3]
    drop = ()
    if kind == "column":
        target, ref_t = "b", v[:, 1]
        if h == 0:
            drop, keep = ("b",), [0, 2, 3]
    elif kind == "tensor":
        ref_t = rng.normal(size=(case["n"], 2))
        ref_t[rng.random(ref_t.shape) < 0.1] = np.nan
        target = torch.from_numpy(ref_t)
    elif kind == "callable":
        ref_t = v[:, 0] * 2.0 + v[:, 3]
        target = lambda values, idx: values[idx, 0] * 2.0 + values[idx, 3]  # noqa: E731
    else:
        target, ref_t = None, None
    ds = BarWindowDataset(v, w, target=target, horizon=h, columns=COLS, drop_columns=drop,
                          session_offsets=case["offsets"] if case["sessions"] else None,
                          stride=stride, dropna=dropna)
    ref = ref_windows(v, offsets, w, h, stride, ref_t, keep, dropna)
    check_items(ds, ref)
    assert ds.window_end.tolist() == [last for last, _, _ in ref]


def test_windows_never_cross_sessions():
    v = np.arange(10, dtype=np.float32).reshape(10, 1)  # value == row
    ds = BarWindowDataset(v, 3, target=torch.arange(10.0), session_offsets=[0, 4, 4, 10],
                          columns=("r",))
    got = [(ds[i][0].flatten().tolist(), float(ds[i][1])) for i in range(len(ds))]
    assert got == [([0, 1, 2], 3.0), ([4, 5, 6], 7.0), ([5, 6, 7], 8.0), ([6, 7, 8], 9.0)]
    whole = BarWindowDataset(v, 3, target=torch.arange(10.0))  # one sequence: 7 windows
    assert len(whole) == 7 and whole[1][0].flatten().tolist() == [1, 2, 3]


def test_windows_are_views():
    v = np.random.default_rng(1).normal(size=(50, 3)).astype(np.float32)
    ds = BarWindowDataset(v, 8, target=np.zeros(50), stride=5)
    x, _ = ds[3]
    assert x._base is ds.x and x.data_ptr() == ds.x[15:].data_ptr()
    assert ds.x.data_ptr() == v.ctypes.data


@pytest.mark.filterwarnings("ignore:.*has 0 items:vpoc.DroppedRowsWarning")  # t6fix: 0 items now warn
def test_windows_empty_when_sessions_too_short():
    v = np.ones((6, 2), dtype=np.float32)
    ds = BarWindowDataset(v, 3, target=np.ones(6), session_offsets=[0, 3, 6])
    assert len(ds) == 0  # each session has 3 bars: a window of 3 leaves no target bar
    assert len(BarWindowDataset(v, 3, session_offsets=[0, 3, 6])) == 2  # no target: no horizon
    assert ds[[]][0].shape == (0, 3, 2)


# --------------------------------------------------------------------------- loaders, samplers, pickling


def test_dataloader_with_worker_processes():
    rng = np.random.default_rng(11)
    v = random_values(rng, 200, nan_frac=0.0)
    offsets = np.array([0, 70, 70, 150, 200])
    ds = BarWindowDataset(v, 6, target="a", columns=COLS, session_offsets=offsets, stride=2)
    ref = ref_windows(v, offsets, 6, 1, 2, v[:, 0], [0, 1, 2, 3], "target")
    loader = torch.utils.data.DataLoader(ds, batch_size=16, num_workers=2)
    xs, ys = zip(*loader)
    np.testing.assert_array_equal(torch.cat(xs).numpy(), np.stack([r[1] for r in ref]))
    np.testing.assert_array_equal(torch.cat(ys).numpy(), np.array([r[2] for r in ref]))
    sds = SessionFeatureDataset(v, "d", columns=COLS)
    batches = list(torch.utils.data.DataLoader(sds, batch_size=64, num_workers=2))
    np.testing.assert_array_equal(torch.cat([b[0] for b in batches]).numpy(), v[:-1])
    np.testing.assert_array_equal(torch.cat([b[1] for b in batches]).numpy(), v[1:, 3])


def test_batch_sampler_fetches_whole_batches():
    v = np.random.default_rng(2).normal(size=(40, 4)).astype(np.float32)
    ds = BarWindowDataset(v, 4, target="c", columns=COLS)
    sampler = torch.utils.data.BatchSampler(torch.utils.data.SequentialSampler(ds), 8, False)
    loader = torch.utils.data.DataLoader(ds, sampler=sampler, batch_size=None)
    xs, ys = zip(*loader)
    assert [x.shape for x in xs][:1] == [(8, 4, 4)]
    ref = ref_windows(v, [0, 40], 4, 1, 1, v[:, 2], [0, 1, 2, 3], "target")
    np.testing.assert_array_equal(torch.cat(xs).numpy(), np.stack([r[1] for r in ref]))
    np.testing.assert_array_equal(torch.cat(ys).numpy(), np.array([r[2] for r in ref]))


@pytest.mark.parametrize("n_items", [37, 38])
@pytest.mark.parametrize("shuffle", [False, True])
def test_distributed_sampler_partitions(n_items, shuffle):
    v = np.zeros((n_items + 1, 2), dtype=np.float32)
    ds = SessionFeatureDataset(v, np.arange(n_items + 1.0))
    assert len(ds) == n_items
    drop_last = n_items % 2 == 1  # an odd count: drop one item rather than repeat one
    ranks = [list(torch.utils.data.distributed.DistributedSampler(
        ds, num_replicas=2, rank=r, shuffle=shuffle, seed=4, drop_last=drop_last))
        for r in range(2)]
    a, b = set(ranks[0]), set(ranks[1])
    assert not a & b
    assert len(ranks[0]) == len(ranks[1]) == n_items // 2
    assert len(a | b) == 2 * (n_items // 2) and (a | b) <= set(range(n_items))
    if not drop_last:
        assert a | b == set(range(n_items))
    for r in range(2):  # each rank reads exactly its own sessions' targets
        assert [float(ds[i][1]) for i in ranks[r]] == [float(i + 1) for i in ranks[r]]


def test_pickles_cheaply_and_round_trips():
    v = np.random.default_rng(4).normal(size=(5000, 8)).astype(np.float32)
    ds = BarWindowDataset(v, 30, target="a", columns=tuple("abcdefgh"), stride=1)
    blob = pickle.dumps(ds)
    payload = ds.x.nbytes + ds.y.nbytes + ds.window_end.nbytes
    assert len(blob) < payload * 1.05 + 20_000  # the stored tensors once, nothing per item
    back = pickle.loads(blob)
    check_items(back, [(int(e), v[e - 29:e + 1], v[e + 1, 0]) for e in ds.window_end.tolist()],
                batch=True)
    sds = SessionFeatureDataset(v, "b", columns=tuple("abcdefgh"))
    assert len(pickle.dumps(sds)) < (sds.x.nbytes + sds.y.nbytes + sds.session_index.nbytes) * 1.05 + 20_000


# --------------------------------------------------------------------------- devices


def test_tensor_input_stays_and_device_argument_moves():
    v = torch.arange(24, dtype=torch.float64).reshape(6, 4)
    ds = SessionFeatureDataset(v, "a", columns=COLS, dtype=None)
    assert ds.device == v.device and ds.x.dtype == torch.float64
    assert ds.x.data_ptr() == v.data_ptr()  # no copy for a contiguous tensor of the right dtype
    assert ds[0][0].device == v.device
    moved = BarWindowDataset(v, 2, target="a", columns=COLS, device="cpu")
    assert moved.device.type == "cpu" and moved.x.dtype == torch.float32


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device for torch")
def test_cuda_tensors_stay_on_cuda():
    v = torch.randn(100, 4, device="cuda")
    ds = BarWindowDataset(v, 5, target="a", columns=COLS, session_offsets=[0, 40, 100])
    assert ds.x.device.type == "cuda" and ds.y.device.type == "cuda"
    x, y = ds[3]
    assert x.device.type == "cuda" and x._base is ds.x
    xb, yb = ds[[0, 5, 9]]
    assert xb.device.type == "cuda" and xb.shape == (3, 5, 4)
    ref = ref_windows(v.cpu().numpy(), [0, 40, 100], 5, 1, 1, v[:, 0].cpu().numpy(),
                      [0, 1, 2, 3], "target")
    np.testing.assert_array_equal(xb.cpu().numpy(), np.stack([ref[i][1] for i in (0, 5, 9)]))
    sds = SessionFeatureDataset(v, "b", columns=COLS)
    assert sds[0][0].device.type == "cuda"
    host = SessionFeatureDataset(v, "b", columns=COLS, device="cpu")
    assert host.device.type == "cpu"
    np.testing.assert_array_equal(host.x.numpy(), v.cpu().numpy())


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("kw, exc, match", [
    (dict(window=0), ValueError, "window must be >= 1"),
    (dict(window=2.0), TypeError, "window must be an integer"),
    (dict(window=True), TypeError, "window must be an integer"),
    (dict(window=2, horizon=-1), ValueError, "horizon must be >= 0"),
    (dict(window=2, stride=0), ValueError, "stride must be >= 1"),
    (dict(window=2, session_offsets=[1, 10]), ValueError, "session_offsets must start at 0"),
    (dict(window=2, session_offsets=[0, 9]), ValueError, "end at the number of rows 10"),
    (dict(window=2, session_offsets=[0, 6, 4, 10]), ValueError, r"session_offsets\[2\]=4"),
    (dict(window=2, session_offsets=[0.0, 10.0]), TypeError, "session_offsets must be an integer"),
    (dict(window=2, session_offsets=[[0, 10]]), ValueError, "session_offsets must be 1-D"),
    (dict(window=2, target="zz"), ValueError, "target='zz' is not a column"),
    (dict(window=2, target=3), TypeError, "target must be None, a column name"),
    (dict(window=2, target=np.zeros(9)), ValueError, r"target must have shape \[10\]"),
    (dict(window=2, target=lambda v, i: v[:, 0]), ValueError, "target callable must return"),
    (dict(window=2, target="a", horizon=0), ValueError, "would also be an input"),
    (dict(window=2, drop_columns=("q",)), ValueError, "drop_columns='q' is not a column"),
    (dict(window=2, drop_columns="a"), TypeError, "drop_columns must be a sequence"),
    (dict(window=2, dropna="all"), ValueError, "dropna must be one of"),
])
def test_bar_window_bad_input(kw, exc, match):
    v = np.zeros((10, 4), dtype=np.float32)
    with pytest.raises(exc, match=match):
        BarWindowDataset(v, columns=COLS, **kw)


@pytest.mark.parametrize("args, kw, exc, match", [
    ((np.zeros(5),), {}, ValueError, "features must be 2-D"),
    (("abc",), {}, TypeError, "features must be a vpoc FeatureTable"),
    ((np.array([["a"]]),), {}, TypeError, "features must be a numeric array"),
    ((np.zeros((3, 2)), "a"), {}, ValueError, "have no column names"),
    ((np.zeros((3, 2)),), dict(columns=("a",)), ValueError, "columns has 1 names"),
    ((np.zeros((3, 2)),), dict(columns=("a", "a")), ValueError, "columns must be unique"),
    ((np.zeros((3, 2)), "a"), dict(columns=("a", "b"), target_shift=0), ValueError, "would also be an input"),
    ((np.zeros((3, 2)), "a"), dict(columns=("a", "b"), target_shift=-1), ValueError,
     "target_shift must be >= 0"),
    ((np.zeros((3, 2)), torch.zeros(4)), {}, ValueError, r"target must have shape \[3\]"),
    ((np.zeros((3, 2)), torch.zeros(3, 2, 2)), {}, ValueError, r"target must have shape"),
])
def test_session_bad_input(args, kw, exc, match):
    with pytest.raises(exc, match=match):
        SessionFeatureDataset(*args, **kw)


def test_bad_item_indices():
    ds = SessionFeatureDataset(np.zeros((4, 2), dtype=np.float32), np.arange(4.0))
    assert len(ds) == 3
    with pytest.raises(IndexError, match="index 3 out of range"):
        ds[3]
    assert float(ds[-1][1]) == 3.0
    with pytest.raises(IndexError, match="out of range"):
        ds[[0, 5]]
    with pytest.raises(TypeError, match="index must be an integer"):
        ds[1.0]
    with pytest.raises(TypeError, match="indices must be integers"):
        ds[np.array([0.0, 1.0])]
    assert ds[torch.tensor(1)][1].item() == 2.0
    np.testing.assert_array_equal(ds[np.array([-1, 0])][1].numpy(), [3.0, 1.0])

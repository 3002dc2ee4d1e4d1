"""Silent behaviour found by the sixth new-user trial (datasets, CLI IB): each now refuses or warns.

Contract: every test here failed before its fix (dtype=, session order, default bar offsets,
same-session leakage identities, CLI dated IB, message nits); plain-NumPy references where numeric.
"""

import numpy as np
import pytest

import vpoc

torch = pytest.importorskip("torch")
from vpoc.torch import BarWindowDataset, SessionFeatureDataset  # noqa: E402


@pytest.fixture(scope="module")
def ft():
    return vpoc.session_features(vpoc.synth.es_bars(n_sessions=8), tick_size=0.25)


@pytest.fixture(scope="module")
def bt():
    return vpoc.bar_features(vpoc.synth.es_bars(n_sessions=3), tick_size=0.25)


# ---------------------------------------------------------------- 1. dtype= (finding 5)

@pytest.mark.parametrize("bad", [torch.int32, torch.int64, torch.bool, "int32", "device", 3])
def test_dtype_non_floating_refused(ft, bt, bad):
    with pytest.raises(TypeError, match="dtype"):
        SessionFeatureDataset(ft, "vpoc", dtype=bad)
    with pytest.raises(TypeError, match="dtype"):
        BarWindowDataset(bt, 10, dtype=bad)


@pytest.mark.parametrize("name,want", [("float32", torch.float32), ("float64", torch.float64),
                                       ("torch.float64", torch.float64)])
def test_dtype_string_mapped(ft, bt, name, want):
    ds = SessionFeatureDataset(ft, "vpoc", dtype=name)
    assert ds.x.dtype == want and ds.y.dtype == want
    ref = np.asarray(ft.values, dtype=np.float64)
    np.testing.assert_array_equal(ds.x.double().numpy(), ref.astype(str(want)[6:]).astype(np.float64))
    assert BarWindowDataset(bt, 10, dtype=name).x.dtype == want

"""from_* calls reuse the Options of an earlier call with the same arguments (value and type): a cached
Options never lets an argument through that the constructor refuses, and never mixes two calls' rules."""

from __future__ import annotations

import numpy as np
import pytest

vpoc = pytest.importorskip("vpoc")
from vpoc import _api  # noqa: E402

H = np.array([101.0, 102.0, 103.0])
L = H - 1.0
C = H - 0.5
V = np.array([10.0, 20.0, 30.0])


def test_same_arguments_share_one_options():
    _api._OPTIONS.clear()
    a = _api._options(None, dict(distribute="uniform"), True, None, None, 0.25, 1, 1000, None, False, False, False)
    b = _api._options(None, dict(distribute="uniform"), True, None, None, 0.25, 1, 1000, None, False, False, False)
    assert a[0] is b[0]
    c = _api._options(None, dict(distribute="close"), True, None, None, 0.25, 1, 1000, None, False, False, False)
    assert c[0] is not a[0] and c[0].distribute != a[0].distribute


@pytest.mark.parametrize("kw, error", [
    (dict(snap=1), TypeError),            # True is cached; 1 == True must still be refused
    (dict(developing=0), TypeError),      # False is cached; 0 == False
    (dict(tick_size=float("nan")), ValueError),
    (dict(ticks_per_row=1.0), TypeError),  # 1 is cached; 1.0 == 1
])
def test_a_cached_call_does_not_admit_an_equal_value_of_another_type(kw, error):
    base = dict(tick_size=0.25, snap=True, developing=False, ticks_per_row=1)
    vpoc.from_bars(H, L, C, V, **base)  # cached now
    with pytest.raises(error):
        vpoc.from_bars(H, L, C, V, **dict(base, **kw))


def test_results_follow_each_calls_own_rules():
    for _ in range(2):  # the second round is served from the cache
        u = vpoc.from_bars(H, L, C, V, tick_size=0.25, distribute="uniform")
        c = vpoc.from_bars(H, L, C, V, tick_size=0.25, distribute="close")
        t = vpoc.from_bars(H, L, C, V, tick_size=np.float64(0.5), distribute="close")
        assert np.asarray(u.volume).shape != np.asarray(c.volume).shape
        assert t.tick_size == 0.5 and c.tick_size == 0.25
        np.testing.assert_array_equal(np.asarray(c.poc), [102.5])


def test_an_unhashable_argument_is_named():
    with pytest.raises((TypeError, ValueError), match="tick_size"):
        vpoc.from_bars(H, L, C, V, tick_size=[0.25])
    assert len(_api._OPTIONS) <= 64


class _LooseStr(str):
    """A str whose == ignores case (as a user's enum-like class might): never served from the cache."""

    def __eq__(self, other):
        return str(self).lower() == str(other).lower()

    def __hash__(self):
        return hash(str(self).lower())


def test_only_plain_types_are_cached():
    vpoc.from_bars(H, L, C, V, tick_size=0.25, distribute=_LooseStr("close"))
    with pytest.raises(ValueError, match="distribute"):
        vpoc.from_bars(H, L, C, V, tick_size=0.25, distribute=_LooseStr("CLOSE"))
    assert not any(_LooseStr in k for k in _api._OPTIONS)


@pytest.mark.parametrize("device", ["cpu", "banana", "cuda:x", "cuda:\u00b2", "cuda:-1"])
def test_pool_controls_name_a_device_that_is_not_a_gpu(device):
    """memory_stats / empty_cache / set_pool_limit take 'cuda' or 'cuda:N': anything else is refused
    naming device (it was read as GPU 0), with or without a GPU build."""
    for call in (lambda: vpoc.memory_stats(device), lambda: vpoc.empty_cache(device),
                 lambda: vpoc.set_pool_limit(1 << 20, device)):
        with pytest.raises(ValueError, match="device must be 'cuda' or 'cuda:N'"):
            call()

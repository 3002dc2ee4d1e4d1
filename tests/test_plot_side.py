"""``Profiles.plot`` / ``plot_profile`` of a Profiles with aggressor sides (issue 27 item 7): buy, sell and
unknown-side layers stacked per row and the per-row delta, their widths equal to the buy / sell volumes summed
here by a plain NumPy loop over the trades; options and bad input."""

from __future__ import annotations

import numpy as np
import pytest

vpoc = pytest.importorskip("vpoc")
matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from vpoc._plot import DELTA_GID, plot_profile  # noqa: E402

TICK = 0.25


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def container(ax, label):
    found = [c for c in ax.containers if c.get_label() == label or c.get_label().startswith(label + " (")]
    assert len(found) <= 1
    return found[0] if found else None


def by_price(bars):
    """(centres, lefts, widths) of a BarContainer, sorted by price."""
    rects = list(bars)
    centres = np.array([r.get_y() + r.get_height() / 2 for r in rects])
    order = np.argsort(centres)
    return (centres[order], np.array([r.get_x() for r in rects])[order],
            np.array([r.get_width() for r in rects])[order])


def ref_rows(ticks, vol, side):
    """Per row of one session (lowest first): (prices, buy, sell, volume), by np.add.at."""
    lo = ticks.min()
    n = ticks.max() - lo + 1
    out = [np.zeros(n) for _ in range(3)]
    for k, mask in enumerate((side == 1, side == -1, np.ones_like(side, dtype=bool))):
        np.add.at(out[k], ticks[mask] - lo, vol[mask])
    return (np.arange(lo, lo + n) * TICK, *out)


@pytest.mark.parametrize("with_unknown", [True, False])
def test_buy_sell_layers_and_delta_match_the_trades(with_unknown):
    rng = np.random.default_rng(4)
    n = 300
    ticks = rng.integers(18000, 18025, n)
    vol = rng.integers(1, 40, n).astype(np.float64)
    side = rng.choice([1, -1, 0] if with_unknown else [1, -1], n).astype(np.int8)
    prof = vpoc.from_trades(ticks * TICK, vol, offsets=[0, 120, n], tick_size=TICK, side=side)
    s = 1
    ax = prof.plot(s)
    prices, buy, sell, volume = ref_rows(ticks[120:], vol[120:], side[120:])
    got_buy, got_sell, got_unknown = (container(ax, k) for k in ("buy", "sell", "unknown side"))
    assert container(ax, "volume") is None
    assert len(got_buy) == len(got_sell) == prices.shape[0]  # one bar per row and layer
    c, left, width = by_price(got_buy)
    np.testing.assert_allclose(c, prices)
    np.testing.assert_array_equal(width, buy)
    np.testing.assert_array_equal(left, 0.0)
    c, left, width = by_price(got_sell)
    np.testing.assert_array_equal(width, sell)
    np.testing.assert_array_equal(left, buy)  # stacked after the buy volume
    if with_unknown:
        c, left, width = by_price(got_unknown)
        np.testing.assert_array_equal(left, buy + sell)
        np.testing.assert_array_equal(left + width, volume)  # the stack is the row's volume
    else:
        assert got_unknown is None
        np.testing.assert_array_equal(buy + sell, volume)
    delta = container(ax, "delta")
    assert delta.get_label() == f"delta (session {buy.sum() - sell.sum():+g})"
    assert all(r.get_gid() == DELTA_GID for r in delta)
    c, left, width = by_price(delta)
    np.testing.assert_array_equal(width, buy - sell)
    np.testing.assert_array_equal(left, 0.0)
    assert ax.get_xlim()[0] <= min(0.0, float((buy - sell).min()))
    assert ax.get_xlim()[1] >= volume.max()
    # the POC line and value-area band are still drawn, with the side layers in the legend
    labels = ax.get_legend_handles_labels()[1]
    assert "buy" in labels and "sell" in labels and any(x.startswith("POC ") for x in labels)


def test_bars_with_buy_sell_columns():
    bars = vpoc.synth.es_bars(n_sessions=2, bars_per_session=60, seed=3)
    rng = np.random.default_rng(0)
    buy = np.floor(bars.volume * rng.random(bars.volume.shape[0]))
    sell = np.floor((bars.volume - buy) * rng.random(bars.volume.shape[0]))
    prof = vpoc.from_bars(bars.high, bars.low, bars.close, bars.volume, offsets=bars.offsets, tick_size=TICK,
                          buy_volume=buy, sell_volume=sell)
    ax = plot_profile(prof, 0)
    a, b = int(prof.offsets[0]), int(prof.offsets[1])
    # fractional volumes (spread over each bar's ticks): a stacked layer's width may round at 1e-16 relative
    np.testing.assert_array_equal(by_price(container(ax, "buy"))[2], np.asarray(prof.buy_volume)[a:b])
    np.testing.assert_allclose(by_price(container(ax, "sell"))[2], np.asarray(prof.sell_volume)[a:b], rtol=1e-12)
    np.testing.assert_allclose(by_price(container(ax, "delta"))[2],
                               np.asarray(prof.buy_volume)[a:b] - np.asarray(prof.sell_volume)[a:b])


def test_side_options():
    price = np.array([0, 1, 1, 2, 4]) * TICK
    vol = np.array([1.0, 2, 3, 1, 1])
    sided = vpoc.from_trades(price, vol, tick_size=TICK, side=[1, -1, 1, 0, -1])
    plain = vpoc.from_trades(price, vol, tick_size=TICK)
    ax = plot_profile(sided, 0, side=False)  # the plain volume bars
    assert container(ax, "volume") is not None and container(ax, "buy") is None
    np.testing.assert_array_equal(by_price(container(ax, "volume"))[2], [1, 5, 1, 0, 1])
    fig, ax = plt.subplots()
    plot_profile(sided, 0, ax, show_delta=False, legend=False)
    assert container(ax, "delta") is None and container(ax, "buy") is not None
    np.testing.assert_array_equal(by_price(container(ax, "buy"))[2], [1, 3, 0, 0, 0])
    np.testing.assert_array_equal(by_price(container(ax, "unknown side"))[2], [0, 0, 1, 0, 0])
    ax = plot_profile(plain, 0)  # no sides: as before
    assert [c.get_label() for c in ax.containers] == ["volume"]
    with pytest.raises(ValueError, match="side=True"):
        plot_profile(plain, 0, side=True)
    with pytest.raises(TypeError, match="side must be"):
        plot_profile(sided, 0, side="yes")
    empty = vpoc.from_trades(price, vol, offsets=[0, 0, 5], tick_size=TICK, side=[1, -1, 1, 0, -1])
    ax = plot_profile(empty, 0)
    assert not ax.containers and "empty session" in ax.get_title()

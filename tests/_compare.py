"""Comparison helpers shared by the engine tests (engine result vs. reference dict)."""

from __future__ import annotations

import numpy as np

from reference import NO_ROW, exact_rows, exact_session_units, profile_stats

ROW_FIELDS = ("poc_row", "vah_row", "val_row", "low_row", "n_rows")
FLOAT_FIELDS = ("poc", "vah", "val", "total_volume", "va_volume")
ALL_FIELDS = ROW_FIELDS + FLOAT_FIELDS + ("offsets", "volume")


def as_np(x):
    """Engine arrays are numpy arrays (or expose __array__); never copy-sensitive here."""
    return np.asarray(x)


def _ctx(ctx):
    return "" if not ctx else f" [{ctx}]"


def check_structure(prof, S: int, ctx=""):
    """Shapes, dtypes and internal invariants of an engine result."""
    c = _ctx(ctx)
    assert prof.n_sessions == S, f"n_sessions {prof.n_sessions} != {S}{c}"
    assert len(prof) == S
    for k in ROW_FIELDS:
        a = as_np(getattr(prof, k))
        assert a.dtype == np.int64, f"{k} dtype {a.dtype}{c}"
        assert a.shape == (S,), f"{k} shape {a.shape}{c}"
    for k in FLOAT_FIELDS:
        a = as_np(getattr(prof, k))
        assert a.dtype == np.float64, f"{k} dtype {a.dtype}{c}"
        assert a.shape == (S,), f"{k} shape {a.shape}{c}"
    off = as_np(prof.offsets)
    vol = as_np(prof.volume)
    assert off.dtype == np.int64 and off.shape == (S + 1,), f"offsets {off.dtype} {off.shape}{c}"
    assert vol.dtype == np.float64 and vol.ndim == 1
    assert off[0] == 0 and off[-1] == vol.size
    n_rows = as_np(prof.n_rows)
    np.testing.assert_array_equal(np.diff(off), n_rows, err_msg=f"offsets vs n_rows{c}")
    empty = n_rows == 0
    for k in ("poc_row", "vah_row", "val_row", "low_row"):
        a = as_np(getattr(prof, k))
        assert np.all(a[empty] == NO_ROW), f"{k} of empty sessions != NO_ROW{c}"
    for k in ("poc", "vah", "val"):
        a = as_np(getattr(prof, k))
        assert np.all(np.isnan(a[empty])), f"{k} of empty sessions not NaN{c}"
        assert not np.any(np.isnan(a[~empty])), f"{k} NaN for non-empty session{c}"
    assert np.all(as_np(prof.total_volume)[empty] == 0)
    assert np.all(as_np(prof.va_volume)[empty] == 0)
    # prices are row * row_size exactly
    row_size = float(prof.tick_size) * int(prof.ticks_per_row)
    assert float(prof.row_size) == row_size
    for k in ("poc", "vah", "val"):
        rows = as_np(getattr(prof, k + "_row"))[~empty]
        np.testing.assert_array_equal(as_np(getattr(prof, k))[~empty],
                                      rows.astype(np.float64) * row_size,
                                      err_msg=f"{k} != {k}_row * row_size{c}")
    # rows inside the profile
    low = as_np(prof.low_row)[~empty]
    high = low + n_rows[~empty] - 1
    for k in ("poc_row", "vah_row", "val_row"):
        a = as_np(getattr(prof, k))[~empty]
        assert np.all((a >= low) & (a <= high)), f"{k} outside the profile{c}"
    assert np.all(as_np(prof.val_row)[~empty] <= as_np(prof.vah_row)[~empty])
    assert np.all(vol >= 0)


def _fields(prof):
    return {k: as_np(getattr(prof, k)) for k in ALL_FIELDS}


def assert_matches_reference(prof, ref, *, exact: bool, value_area: float, va_method: str,
                             poc_tie: str, ctx=""):
    """Compare an engine result with a reference dict.

    exact=True: every field bit-equal (NaN == NaN).
    exact=False (fractional or float volumes): histogram layout and row fields exactly
    equal, float fields within rtol=1e-12; in addition the POC / value-area rules are
    replayed on the engine's own histogram and total_volume, which must reproduce the
    engine's poc_row / val_row / vah_row / va_volume exactly (the rules are exact given
    the histogram). Sessions where the pure reference sits within ~1e-11 of a decision
    boundary ('fragile') are only held to the replay, not to the pure reference's rows.
    """
    c = _ctx(ctx)
    S = ref["poc"].shape[0]
    check_structure(prof, S, ctx)
    got = _fields(prof)
    if va_method in ("cbot", "single"):
        ne = got["n_rows"] > 0
        assert np.all(got["val_row"][ne] <= got["poc_row"][ne])
        assert np.all(got["poc_row"][ne] <= got["vah_row"][ne])

    if exact:
        for k in ALL_FIELDS:
            np.testing.assert_array_equal(got[k], ref[k], err_msg=f"field {k}{c}", strict=True)
        return

    # layout is exact
    for k in ("n_rows", "low_row", "offsets"):
        np.testing.assert_array_equal(got[k], ref[k], err_msg=f"field {k}{c}", strict=True)
    # Every share is a whole number of 2**-64 units (docs/contract.md "Exact sums"): a row of a
    # few shares may sit that many units from the float reference, whatever its size.
    # The legacy split's heaviest share takes the rest of the bar's volume, so the rounding of its
    # other shares lands there: hold rows to 1e-12 of the largest session total, too.
    vscale = float(np.max(ref["total_volume"])) if ref["total_volume"].size else 0.0
    quantum = 64 * 2.0**-64 + 1e-12 * vscale
    np.testing.assert_allclose(got["volume"], ref["volume"], rtol=1e-12, atol=quantum,
                               err_msg=f"field volume{c}")
    np.testing.assert_allclose(got["total_volume"], ref["total_volume"], rtol=1e-12, atol=quantum,
                               err_msg=f"field total_volume{c}")

    # replay the rules on the engine's histogram: must be exact
    off = got["offsets"]
    for s in range(S):
        if got["n_rows"][s] == 0:
            continue
        h = got["volume"][off[s]:off[s + 1]]
        st = profile_stats(h, int(got["low_row"][s]), value_area=value_area,
                           va_method=va_method, poc_tie=poc_tie,
                           total=float(got["total_volume"][s]))
        for k in ("poc_row", "val_row", "vah_row", "va_volume"):
            assert got[k][s] == st[k], (
                f"session {s}: {k} = {got[k][s]!r}, but the rules replayed on the engine's "
                f"own histogram give {st[k]!r}{c}\nhist={h.tolist()} "
                f"low_row={got['low_row'][s]} total={got['total_volume'][s]!r}")

    # against the pure reference where no decision is within rounding of flipping
    ok = ~ref["fragile"]
    for k in ("poc_row", "vah_row", "val_row"):
        np.testing.assert_array_equal(got[k][ok], ref[k][ok], err_msg=f"field {k}{c}")
    for k in ("poc", "vah", "val"):
        np.testing.assert_allclose(got[k][ok], ref[k][ok], rtol=1e-12, atol=0,
                                   err_msg=f"field {k}{c}")
    np.testing.assert_allclose(got["va_volume"][ok], ref["va_volume"][ok], rtol=1e-12, atol=quantum,
                               err_msg=f"field va_volume{c}")


def assert_profiles_identical(a, b, ctx=""):
    """Bit-identical results (NaN payloads included), plus identical metadata."""
    c = _ctx(ctx)
    assert a.n_sessions == b.n_sessions
    for k in ALL_FIELDS:
        x, y = as_np(getattr(a, k)), as_np(getattr(b, k))
        assert x.dtype == y.dtype and x.shape == y.shape, f"{k}{c}"
        assert x.tobytes() == y.tobytes(), f"field {k} differs{c}"


def dev_levels(prof):
    """A developing series as [3, N]: dev_poc, dev_vah, dev_val."""
    return np.vstack([np.asarray(prof.dev_poc), np.asarray(prof.dev_vah), np.asarray(prof.dev_val)])


def check_windows(prof, starts, batch, ref, cols, exact, ctx):
    """prof's rolling-window series against vpoc's batch call on each row's window (rows starts[i]..i
    of ``cols``, bit for bit) and the NumPy reference ``ref`` where it is not fragile (or ``exact``)."""
    got = dev_levels(prof)
    assert got.shape == (3, starts.size), ctx
    for i, a in enumerate(starts.tolist()):
        win = [None if x is None else x[a:i + 1] for x in cols]
        b = batch(*win)
        want = np.array([b.poc[0], b.vah[0], b.val[0]])
        assert np.array_equal(got[:, i], want), f"{ctx}: row {i} window {a}..{i}: {got[:, i]} != batch {want}"
        r = ref(*win)
        if exact or not r["fragile"][0]:
            assert np.array_equal(got[:, i], [r["poc"][0], r["vah"][0], r["val"][0]]), f"{ctx}: row {i}: reference"


def assert_exact_trade_rows(prof, price, vol, offsets, tick):
    """Trades: each session's lowest row and row sums equal the contract's exact sums of the reference."""
    got, off = np.asarray(prof.volume), np.asarray(prof.offsets)
    for s in range(len(offsets) - 1):
        a, b = offsets[s], offsets[s + 1]
        lo, rows, _ = exact_rows(exact_session_units("trades", (price[a:b], vol[a:b]), tick))
        assert prof.low_row[s] == lo, s
        np.testing.assert_array_equal(got[off[s]:off[s + 1]], rows, err_msg=f"session {s}")

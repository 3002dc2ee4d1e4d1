"""Silent behaviour the third new-user trial found (notes/trial3_findings.md 1-5, 7; brief t3silent).

Contract: each test fails before its fix: bar buy/sell columns are read, the CLI keeps the side, a bad
volume is blamed before the side check, float side text is read, a bad side names its first row.
"""

from __future__ import annotations

import numpy as np
import pytest

vpoc = pytest.importorskip("vpoc")
pd = pytest.importorskip("pandas")

from vpoc._side import aggressor_side  # noqa: E402

WHAT = r"give \+1"


def _trades_csv(path, sides):
    rows = [f"2024-01-02T15:00:{k:02d}Z,{100 + 0.25 * (k % 3)},{k + 1},{s}" for k, s in enumerate(sides)]
    path.write_text("timestamp,price,volume,side\n" + "\n".join(rows) + "\n")
    return path


# --------------------------------------------------------------------------- 4. float side text


def test_float_side_text_is_read_as_its_exact_value(tmp_path):
    """read_trades reads '1.0' / '-1.0' / '0.0' (a float column written out) as from_trades reads
    the floats 1.0 / -1.0 / 0.0, and still refuses '0.5', 'nan', 'inf' naming their line."""
    sides = ["1.0", "-1.0", "0.0", "+1.0", " -0 ", "1"]
    t = vpoc.io.read_trades(_trades_csv(tmp_path / "f.csv", sides))
    ref = aggressor_side(np.array([1.0, -1.0, 0.0, 1.0, -0.0, 1.0]))
    np.testing.assert_array_equal(t.side, ref)
    assert t.side.dtype == np.int8
    np.testing.assert_array_equal(aggressor_side(np.array(sides, dtype=object)), ref)
    for bad in ("0.5", "nan", "inf", "2.0", "1e300"):
        with pytest.raises(ValueError, match=rf"line 3: side = '{bad}'; {WHAT}"):
            vpoc.io.read_trades(_trades_csv(tmp_path / "b.csv", ["1.0", bad, "0.0"]))
    # the same values as floats through from_trades: the same profile
    p = vpoc.from_trades(t, session="daily", tick_size=0.25)
    q = vpoc.from_trades(t.price, t.volume, tick_size=0.25, side=np.array([1.0, -1.0, 0.0, 1.0, 0.0, 1.0]))
    np.testing.assert_array_equal(p.delta, q.delta)


# --------------------------------------------------------------------------- 5. first bad row


@pytest.mark.parametrize("sides, row", [(["X", "B", "A", "Buy"], 0), (["Bid", "Ask"], 0),
                                        (["B", "Sell", "A", "Ask", "B"], 1), (["1", "0", "-1", "+1", "zz"], 4),
                                        ([b"B", b"AA", b"A", b"!!"], 1)])
def test_bad_text_side_names_the_first_offending_row(sides, row):
    with pytest.raises(ValueError, match=rf"side\[{row}\]: side = {sides[row]!r}"):
        aggressor_side(np.array(sides))
    with pytest.raises(ValueError, match=rf"side\[{row}\]"):
        vpoc.from_trades(np.full(len(sides), 100.0), np.ones(len(sides)), tick_size=0.25,
                         side=np.array(sides, dtype=object))


def test_bad_text_side_names_the_first_offending_line(tmp_path):
    sides = ["B", "Sell"] + ["A"] * 7 + [""]  # '' (line 11) sorts before 'Sell' (line 3)
    with pytest.raises(ValueError, match=r"line 3: side = 'Sell'"):
        vpoc.io.read_trades(_trades_csv(tmp_path / "s.csv", sides))


def test_first_bad_row_random_against_numpy():
    """Random text columns with a few bad values: the row named is NumPy's first bad position."""
    rng = np.random.default_rng(3)
    good = np.array(["B", "A", "N", "1", "-1", "0", "+1", "1.0"])
    bad_values = np.array(["Buy", "Ask", "", "0.5", "x", "BB"])
    for _ in range(20):
        n = int(rng.integers(1, 60))
        col = rng.choice(good, n).astype(object)
        k = rng.choice(n, size=int(rng.integers(1, min(n, 4) + 1)), replace=False)
        col[k] = rng.choice(bad_values, k.size)
        first = int(np.min(k))
        with pytest.raises(ValueError, match=rf"^side\[{first}\]: side = {col[first]!r}"):
            aggressor_side(col)

"""vpoc.diff on Profiles that carry .rules (preset= / the peer-rule keywords): the differing rule keyword is named.

Contract checked: docs/presets.md + vpoc.diff's docstring: rule / reason name each peer rule both sides record and that differs, beside the row-level words; settings list them.
"""

from __future__ import annotations

import numpy as np
import pytest

import vpoc

ALT = dict(va_rows=("all", "touched"), va_compare=("tie_up", "zero_absent"), va_stop=("reaches", "exceeds"),
           tie_tol=(1e-9, 0.0), va_target=("float", "decimal"))


def trades(seed, n_sessions=30, per=25):
    rng = np.random.default_rng(seed)
    n = n_sessions * per
    price = (400 + rng.integers(0, 12, size=n) + np.where(rng.random(n) < 0.2, 8, 0)) * 0.25
    vol = rng.integers(0, 4, size=n) * 10.0
    return price, vol, np.arange(0, n + 1, per)


@pytest.mark.parametrize("key", sorted(ALT))
def test_one_peer_rule_differing_is_named(key):
    price, vol, off = trades(sorted(ALT).index(key), n_sessions=150)
    base = dict(va_method="single", poc_tie="mid_n2", va_rows="touched", va_compare="zero_absent",
                va_stop="exceeds", tie_tol=0.0)
    x, y = ALT[key]
    a = vpoc.from_trades(price, vol, offsets=off, tick_size=0.25, **dict(base, **{key: x}))
    b = vpoc.from_trades(price, vol, offsets=off, tick_size=0.25, **dict(base, **{key: y}))
    d = vpoc.diff(a, b)
    assert d.settings[key] == (x, y)
    levels = d.poc_differs | d.vah_differs | d.val_differs
    assert not d.histogram_differs.any()
    for s in range(d.n_sessions):
        if levels[s]:
            assert d.rule[s] == key, (s, d.rule[s], d.reason[s])
            assert f"{key}: {x!r} vs {y!r}" in d.reason[s]
        else:
            assert d.rule[s] == "" and not d.differs[s]
    if key in ("va_stop", "va_rows", "va_compare"):
        assert levels.any()  # the random sessions do show the rule


def test_presets_marketprofile_vs_lean_name_poc_tie_and_the_target():
    price, vol, off = trades(5)
    a = vpoc.from_trades(price, vol, offsets=off, tick_size=0.25, preset="marketprofile")
    b = vpoc.from_trades(price, vol, offsets=off, tick_size=0.25, preset="lean")
    d = vpoc.diff(a, b)
    assert d.settings["preset"] == ("marketprofile", "lean")
    assert d.settings["price_label"] == ("product", "decimal")
    for s in np.flatnonzero(d.differs):
        names = set(d.rule[s].split("+"))
        assert names <= {"poc_tie", "va_target", "price_label"}, d.rule[s]
        assert "preset: 'marketprofile' vs 'lean'" in d.reason[s]
    assert d.differs.any()


def test_peer_rule_beside_the_histogram_words():
    rng = np.random.default_rng(9)
    n = 300
    c = (400 + rng.integers(0, 12, size=n)) * 0.25
    h, lo, v = c + 0.5, c - 0.5, rng.integers(1, 5, size=n) * 10.0
    off = np.arange(0, n + 1, 30)
    a = vpoc.from_bars(h, lo, c, v, offsets=off, tick_size=0.25, preset="marketprofile")
    b = vpoc.from_bars(h, lo, c, v, offsets=off, tick_size=0.25, preset="marketprofile", distribute="uniform",
                       va_stop="reaches")
    d = vpoc.diff(a, b)
    s = int(np.flatnonzero(d.poc_differs | d.vah_differs | d.val_differs)[0])
    assert d.rule[s].startswith("distribute") and "va_stop" in d.rule[s]
    assert "histogram rows differ" in d.reason[s] and "va_stop: 'exceeds' vs 'reaches'" in d.reason[s]


def test_one_side_without_rules_names_no_peer_rule():
    price, vol, off = trades(3)
    a = vpoc.from_trades(price, vol, offsets=off, tick_size=0.25, va_stop="exceeds", tie_tol=0.0)
    b = vpoc.from_trades(price, vol, offsets=off, tick_size=0.25)
    d = vpoc.diff(a, b)
    assert b.rules is None and "va_stop" not in d.settings or d.settings["va_stop"] == ("exceeds", None)
    assert not any("va_stop" in r for r in d.rule)


def test_identical_ruled_profiles_do_not_differ():
    price, vol, off = trades(4)
    a = vpoc.from_trades(price, vol, offsets=off, tick_size=0.25, preset="lean")
    d = vpoc.diff(a, vpoc.from_trades(price, vol, offsets=off, tick_size=0.25, preset="lean"))
    assert not d.differs.any() and set(d.rule) == {""}

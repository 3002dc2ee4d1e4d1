"""vpoc.Live under interruption (issue 28): every update is all or nothing under any exception,
state_dict() is a deep snapshot that round-trips through JSON and .npz, volumes are checked as
exact integers, large array updates answer SIGINT, IB boundaries match the batch.

Contract: an update (or close()) that raises anything, KeyboardInterrupt and MemoryError included,
leaves the Live equal to the Live before it, and retrying it gives the state one successful
update gives; checked against an uninterrupted run of the same feed, bit for bit.
"""

import io
import json
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import vpoc
from _sigint import default_sigint
import vpoc.live._live as vlive

MIN = 60 * 10**9
T0 = int(np.datetime64("2024-03-04T14:00", "ns").astype(np.int64))  # a Monday, 08:00 Chicago


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype.kind == "f" or b.dtype.kind == "f":
        return bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))
    return bool(np.array_equal(a, b))


def same_state(a, b):
    """Two flat states equal key by key (config compared as the JSON it is)."""
    assert set(a) == set(b)
    for k in a:
        assert same(a[k], b[k]), k
    return True


def one_bar_sessions(n, seed=0, dropped=3):
    """n bars, each its own session (session_starts = their timestamps), plus `dropped` rows
    before the first session (left out, counted)."""
    rng = np.random.default_rng(seed)
    close = 6000.0 + np.cumsum(rng.integers(-4, 5, n + dropped)) * 0.25
    high = close + rng.integers(0, 6, n + dropped) * 0.25
    low = close - rng.integers(0, 6, n + dropped) * 0.25
    opn = np.clip(close + rng.integers(-3, 4, n + dropped) * 0.25, low, high)
    vol = rng.integers(1, 500, n + dropped).astype(np.int64)
    ts = T0 + np.arange(n + dropped, dtype=np.int64) * MIN
    return (high, low, close, opn, vol, ts), ts[dropped:]


def plan(n, seed):
    """The feed as updates: (a, b, one_row) slices, one-row updates and arrays of 2..8 rows."""
    rng = np.random.default_rng(seed)
    out, i = [], 0
    while i < n:
        if rng.random() < 0.5:
            out.append((i, i + 1, True))
            i += 1
        else:
            k = int(rng.integers(2, 9))
            out.append((i, min(n, i + k), False))
            i += k
    return out


def apply(live, cols, a, b, one):
    h, lo, c, o, v, ts = cols
    if one:
        return live.update(float(h[a]), float(lo[a]), float(c[a]), int(v[a]), open=float(o[a]),
                           timestamp=int(ts[a]))
    return live.update(h[a:b], lo[a:b], c[a:b], v[a:b], open=o[a:b], timestamp=ts[a:b])


def new_live(starts, **kw):
    kw.setdefault("on_outside", "drop")  # the feeds start before session_starts[0] on purpose
    return vpoc.Live(tick_size=0.25, session_starts=starts,
                     features=dict(lookbacks=(1, 2), composite_sessions=2), **kw)


def cheap(live):
    """What a half-done update changes first: counters, levels, session, rows."""
    return (len(live), live.n_rows, live.n_dropped, live.session_label, live.session_rows,
            live.levels, len(live._ts), None if live._run is None else list(live._run))


class Injector:
    """Raises KeyboardInterrupt or MemoryError at random calls of wrapped internal steps, before
    the step or after it (its changes made), with a fixed seed."""

    def __init__(self, seed, rate):
        self.rng = np.random.default_rng(seed)
        self.rate = rate
        self.on = False
        self.raised = 0

    def maybe(self):
        if self.on and self.rng.random() < self.rate:
            self.raised += 1
            raise KeyboardInterrupt() if self.rng.random() < 0.6 else MemoryError("injected")

    def wrap(self, fn):
        def wrapper(*args, **kwargs):
            self.maybe()
            out = fn(*args, **kwargs)
            self.maybe()
            return out
        return wrapper


# internal steps of an update: a session's end (profile, features, context), its start, the rows
STEPS = ("_finish", "_close_features", "_next_context", "_begin", "_start_core", "_append_rows",
         "_advance_one", "_advance_many", "_flush", "_session_row")


def test_28_1_injected_interrupts_equal_the_uninterrupted_run(monkeypatch):
    """Stress test: 3,000 one-bar sessions fed as one-row and array updates, thousands of
    KeyboardInterrupt / MemoryError raised inside the update's steps (fixed seed); each
    interrupted update leaves the Live as it was and is retried. Finished sessions, their
    features, every bar-feature row and the final state equal the uninterrupted run exactly.
    Before: 3,000 sessions came out as more (duplicated on retry) or the feed broke for good
    ("zero-size array to reduction operation")."""
    n = 3000
    cols, starts = one_bar_sessions(n, seed=1)
    steps = plan(len(cols[0]), seed=2)
    ref = new_live(starts)
    ref_out = []
    for a, b, one in steps:
        lv = apply(ref, cols, a, b, one)
        ref_out.append((lv, ref.bar_features_row() if ref.session_rows else None))
    ref.close()

    inj = Injector(seed=3, rate=0.02)
    for name in STEPS:
        monkeypatch.setattr(vlive.Live, name, inj.wrap(getattr(vlive.Live, name)))
    monkeypatch.setattr(vlive, "from_bars", inj.wrap(vlive.from_bars))
    live = new_live(starts)
    interrupted = 0
    for k, (a, b, one) in enumerate(steps):
        while True:
            before = cheap(live)
            full = live.state_dict(flat=True) if interrupted % 97 == 0 else None
            inj.on = True
            try:
                lv = apply(live, cols, a, b, one)
                inj.on = False
                break
            except (KeyboardInterrupt, MemoryError):
                inj.on = False
                interrupted += 1
                assert cheap(live) == before, (k, a, b, one)
                if full is not None:
                    same_state(live.state_dict(flat=True), full)
        assert lv == ref_out[k][0]
        if ref_out[k][1] is not None:
            assert same(live.bar_features_row(), ref_out[k][1])
    while True:
        inj.on = True
        try:
            live.close()
            inj.on = False
            break
        except (KeyboardInterrupt, MemoryError):
            inj.on = False
            interrupted += 1
    print(f"injected {inj.raised} exceptions, {interrupted} interrupted updates retried")
    assert interrupted >= 1000 and inj.raised >= 1000, (interrupted, inj.raised)
    assert len(live) == len(ref) == n
    assert np.array_equal(live.labels, ref.labels)
    for name in ("poc", "vah", "val", "poc_row", "low_row", "n_rows", "offsets", "volume",
                 "total_volume", "va_volume"):
        assert same(getattr(live.profiles, name), getattr(ref.profiles, name)), name
    inj.on = False
    assert same(live.session_table().values, ref.session_table().values)
    same_state(live.state_dict(flat=True), ref.state_dict(flat=True))


@pytest.mark.parametrize("step", ["_begin", "_close_features", "_next_context", "_append_rows"])
@pytest.mark.parametrize("exc", [KeyboardInterrupt, MemoryError])
def test_28_1_interrupt_at_a_session_end_changes_nothing(monkeypatch, step, exc):
    """One exception in the step between a session's end and the next one's start: the Live is
    as before (no session added, counters unmoved), and the retried update gives exactly the
    state of one successful update. Before: the retry duplicated the session, and an interrupt
    between _finish and _begin made every later update raise 'zero-size array'."""
    cols, starts = one_bar_sessions(12, seed=4, dropped=2)
    for one in (True, False):
        ref, live = new_live(starts), new_live(starts)
        for x in (ref, live):
            apply(x, cols, 0, 6, False)
        want_before = live.state_dict(flat=True)
        name = "_advance_one" if one and step == "_append_rows" else step
        orig = getattr(vlive.Live, name)
        calls = []

        def boom(self, *a, **k):
            if not calls:
                calls.append(1)
                orig(self, *a, **k)  # the step's own changes are made, then the interrupt
                raise exc()
            return orig(self, *a, **k)
        monkeypatch.setattr(vlive.Live, name, boom)
        a, b = (6, 7) if one else (6, 10)
        with pytest.raises(exc):
            apply(live, cols, a, b, one)
        monkeypatch.setattr(vlive.Live, name, orig)
        same_state(live.state_dict(flat=True), want_before)
        apply(live, cols, a, b, one)
        apply(ref, cols, a, b, one)
        apply(live, cols, b, 14, False)
        apply(ref, cols, b, 14, False)
        same_state(live.state_dict(flat=True), ref.state_dict(flat=True))
        assert len(live) == len(ref)


def test_28_1_bad_row_in_a_later_chunk_changes_nothing(monkeypatch):
    """An array update is checked chunk by chunk: a bad row in a later chunk (after sessions
    ended and rows were appended) still leaves the Live as it was, the row named by its position
    in the update."""
    monkeypatch.setattr(vlive, "_CHUNK", 4)
    cols, starts = one_bar_sessions(40, seed=5, dropped=0)
    h, lo, c, o, v, ts = (x.copy() for x in cols)
    live = new_live(starts[::10])
    apply(live, (h, lo, c, o, v, ts), 0, 7, False)
    before = live.state_dict(flat=True)
    h[33] = np.nan
    with pytest.raises(ValueError, match=r"high\[26\]"):
        apply(live, (h, lo, c, o, v, ts), 7, 40, False)
    same_state(live.state_dict(flat=True), before)


_SIGINT_CHILD = r"""
import json, os, signal, sys, threading, time
import numpy as np, vpoc
sys.path.insert(0, {here!r})
from test_live_atomic import one_bar_sessions, plan, apply, new_live

n = {n}
cols, starts = one_bar_sessions(n, seed=7)
steps = plan(len(cols[0]), seed=8)
ref = new_live(starts)
for a, b, one in steps:
    apply(ref, cols, a, b, one)
ref.close()

armed = [False]
def handler(sig, frame):  # the default handler's KeyboardInterrupt, only while an update runs
    if armed[0]:
        raise KeyboardInterrupt
signal.signal(signal.SIGINT, handler)
stop = [False]
def sender():
    rng = np.random.default_rng(9)
    while not stop[0]:
        time.sleep(float(rng.uniform(0.001, 0.02)))
        os.kill(os.getpid(), signal.SIGINT)
live = new_live(starts)
seen = [0]
for a, b, one in steps:
    seen.append(seen[-1] + b - a)
threading.Thread(target=sender, daemon=True).start()
k = interrupts = 0
while k < len(steps):
    a, b, one = steps[k]
    try:
        armed[0] = True
        apply(live, cols, a, b, one)
        armed[0] = False
        k += 1
    except KeyboardInterrupt:
        armed[0] = False
        interrupts += 1
        got = live.n_rows + live.n_dropped
        if got == seen[k + 1]:  # it landed after update() returned: the update is done
            k += 1
        elif got != seen[k]:
            print(json.dumps(dict(error=f"update {{k}} half done: {{got}} rows")))
            sys.exit(1)
stop[0] = True
while True:
    try:
        live.close()
        break
    except KeyboardInterrupt:
        interrupts += 1
signal.signal(signal.SIGINT, signal.SIG_IGN)
a, b = live.state_dict(flat=True), ref.state_dict(flat=True)
diff = [x for x in a if not np.array_equal(np.asarray(a[x]), np.asarray(b[x]),
                                           equal_nan=np.asarray(a[x]).dtype.kind == "f")]
print(json.dumps(dict(sessions=len(live), want=len(ref), interrupts=interrupts, diff=diff)))
"""


def test_28_1_real_sigint_over_a_session_rolling_feed():
    """Real SIGINTs (a thread signals the process every 1-20 ms) over 600 one-bar sessions;
    each interrupted update is retried. Before: more finished sessions than bars (3,369 of
    3,000 in the audit) or a broken feed; now exactly the uninterrupted run."""
    here = os.path.dirname(os.path.abspath(__file__))
    code = _SIGINT_CHILD.format(here=here, n=600)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                       preexec_fn=default_sigint)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-4000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["sessions"] == out["want"] == 600, out
    assert out["diff"] == [], out
    assert out["interrupts"] >= 20, out


# =============================================================================== 28.2


def fed_live(kind="bars", n_sessions=8):
    b = vpoc.synth.es_bars(n_sessions, 40, seed=1)
    n = int(b.offsets[-2]) + 5
    if kind == "bars":
        live = vpoc.Live(tick_size=0.25, session_starts=b.timestamp[b.offsets[:-1]],
                         features=dict(lookbacks=(1, 2), composite_sessions=2))
        live.update(b.high[:n], b.low[:n], b.close[:n], b.volume[:n].astype(np.int64),
                    open=b.open[:n], timestamp=b.timestamp[:n])
    else:
        live = vpoc.Live(tick_size=0.25, kind="trades", session_starts=b.timestamp[b.offsets[:-1]])
        live.update(b.close[:n], b.volume[:n].astype(np.int64), timestamp=b.timestamp[:n])
    return live, b, n


def rest(live, b, n, kind="bars"):
    if kind == "bars":
        live.update(b.high[n:], b.low[n:], b.close[n:], b.volume[n:].astype(np.int64),
                    open=b.open[n:], timestamp=b.timestamp[n:])
    else:
        live.update(b.close[n:], b.volume[n:].astype(np.int64), timestamp=b.timestamp[n:])
    live.close()


def _ids(x, out):
    """ids of every mutable object (lists, dicts, arrays) in a nested state."""
    if isinstance(x, dict):
        out.add(id(x))
        for v in x.values():
            _ids(v, out)
    elif isinstance(x, list):
        out.add(id(x))
        for v in x:
            _ids(v, out)
    elif isinstance(x, np.ndarray):
        out.add(id(x))
        if x.base is not None:
            out.add(id(x.base))
    return out


@pytest.mark.parametrize("kind", ["bars", "trades"])
def test_28_2_state_dict_is_a_snapshot(kind):
    """A checkpoint kept in memory does not follow the feed: the feed goes on, the checkpoint
    restores the feed as it was then and continues exactly. Before: state_dict() returned the
    Live's own lists; restoring it gave extra sessions with stale counters."""
    live, b, n = fed_live(kind)
    state = live.state_dict()
    flat_then = vpoc.Live.from_state(state).state_dict(flat=True)
    objs = set()
    for v in vars(live).values():
        _ids(v, objs)
    assert not (_ids(state, set()) - {id(None)}) & objs
    rest(live, b, n, kind)  # the feed goes on
    same_state(vpoc.Live.from_state(state).state_dict(flat=True), flat_then)
    again = vpoc.Live.from_state(state)
    rest(again, b, n, kind)
    same_state(again.state_dict(flat=True), live.state_dict(flat=True))


def test_28_2_checkpoint_thread_never_sees_a_torn_state():
    """A thread taking checkpoints while another feeds the Live: each checkpoint restores (taken
    under the instance's lock). Before: "state['comp'] has 33 entries, expected 34"."""
    cols, starts = one_bar_sessions(400, seed=11)
    live = new_live(starts)
    errors, states = [], []
    done = threading.Event()

    def checkpoints():
        while not done.is_set():
            states.append(live.state_dict())

    t = threading.Thread(target=checkpoints)
    t.start()
    try:
        for a, b, one in plan(len(cols[0]), seed=12):
            apply(live, cols, a, b, one)
    finally:
        done.set()
        t.join()
    assert len(states) >= 5
    for st in states[:: max(1, len(states) // 20)]:
        try:
            vpoc.Live.from_state(st)
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))
    assert errors == []


@pytest.mark.parametrize("kind", ["bars", "trades"])
def test_28_2_flat_state_round_trips_through_npz_and_json(kind):
    """state_dict(flat=True): np.savez + np.load(allow_pickle=False) and JSON both restore a
    Live that continues exactly. Before: np.load needed allow_pickle=True and from_state
    rejected the 0-d arrays it gave."""
    live, b, n = fed_live(kind)
    st = live.state_dict(flat=True)
    for v in st.values():  # plain numeric / string arrays and scalars only
        assert isinstance(v, (int, str, np.ndarray)) and not isinstance(v, bool)
        assert not isinstance(v, np.ndarray) or v.dtype.kind in "iufU"
    f = io.BytesIO()
    np.savez(f, **st)
    f.seek(0)
    from_npz = vpoc.Live.from_state(np.load(f, allow_pickle=False))
    from_json = vpoc.Live.from_state(json.loads(json.dumps({k: np.asarray(v).tolist()
                                                            for k, v in st.items()})))
    for x in (from_npz, from_json):
        same_state(x.state_dict(flat=True), st)
        rest(x, b, n, kind)
    rest(live, b, n, kind)
    for x in (from_npz, from_json):
        same_state(x.state_dict(flat=True), live.state_dict(flat=True))
    # the nested layout keeps working with JSON too (arrays as lists)
    nested = live.state_dict()

    def plain(x):
        if isinstance(x, dict):
            return {k: plain(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [plain(v) for v in x]
        return x.tolist() if isinstance(x, np.ndarray) else x
    same_state(vpoc.Live.from_state(json.loads(json.dumps(plain(nested)))).state_dict(flat=True),
               live.state_dict(flat=True))


def _tamper(st, key, fn):
    st = dict(st)
    st[key] = fn(np.array(st[key], copy=True))
    return st


@pytest.mark.parametrize("key, fn, match", [
    ("tail_high", lambda a: np.where(np.arange(a.size) == 3, a + 0.25, a), r"state\['tail'\]\[0\]"),
    ("tail_volume", lambda a: a * 2, r"state\['tail'\]\[0\] is not the bars of state\['done'\]"),
    ("comp", lambda a: a + np.where(np.isnan(a), 0, 0.25), r"state\['comp'\]\[\d\]"),
    ("done_volume", lambda a: np.r_[a[:-1], a[-1] + 1.0], r"state\['done'\]\[6\]"),
    ("done_n_rows", lambda a: a + 1, r"state\['done_volume'\] has length"),
    ("tail_rows", lambda a: a[:-1], r"state\['tail_\w+'\] has length"),
    ("has_open", lambda a: np.int64(7), r"state\['has_open'\]"),
    ("config", lambda a: np.str_("{"), r"state\['config'\] is not JSON"),
    ("session_columns", lambda a: a[:-1], r"state\['session_rows'\]\[0\] has length"),
])
def test_28_2_tampered_flat_state_raises_naming_the_field(key, fn, match):
    live, b, n = fed_live("bars")
    st = live.state_dict(flat=True)
    with pytest.raises((ValueError, TypeError), match=match):
        vpoc.Live.from_state(_tamper(st, key, fn))


def test_28_2_tampered_nested_tail_and_comp_raise():
    """from_state checks the kept bars and the composites against the finished sessions (the
    nested layout too). Before: a changed tail or comp was taken silently."""
    live, b, n = fed_live("bars")
    st = live.state_dict()
    st["tail"][-1]["high"] = st["tail"][-1]["high"] + 1.0
    with pytest.raises(ValueError, match=r"state\['tail'\]\[2\] is not the bars of state\['done'\]\[6\]"):
        vpoc.Live.from_state(st)
    st = live.state_dict()
    st["comp"][4] = (st["comp"][4][0] + 0.25,) + tuple(st["comp"][4][1:])
    with pytest.raises(ValueError, match=r"state\['comp'\]\[4\] = .* is not the composite"):
        vpoc.Live.from_state(st)


# =============================================================================== 28.5


@pytest.mark.parametrize("vol", [2**53 + 1, np.int64(2**53 + 1), np.uint64(2**63 + 5), 2**70])
def test_28_5_volume_above_2_53_refused_as_the_exact_integer(vol):
    """Before: 2**53+1 became 2**53 (float64) and was accepted (2**70: 'does not fit in int64')."""
    for kind in ("bars", "trades"):
        live = vpoc.Live(tick_size=0.25, kind=kind)
        args = (6000.0, 6000.0, 6000.0) if kind == "bars" else (6000.0,)
        with pytest.raises(ValueError, match=r"volume\[0\]=\d+ is above 2\*\*53 \(9007199254740992\)"):
            live.update(*args, vol, timestamp=T0)
        assert live.n_rows == 0 and live.session_label is None
        if isinstance(vol, (int, np.int64)) and vol < 2**63:
            with pytest.raises(ValueError, match=r"volume\[1\]=9007199254740993 is above 2\*\*53"):
                live.update(*(np.full(2, a) for a in args), np.array([1, vol], dtype=np.int64),
                            timestamp=np.array([T0, T0 + MIN]))
        live.update(*args, 2**53, timestamp=T0)  # the limit itself is fine
        assert live.total_volume == 2.0**53


@pytest.mark.parametrize("bad, err, match", [
    (True, TypeError, "volume must be a number, got bool"),
    (np.bool_(False), TypeError, "volume must be a number, got bool"),
    (None, TypeError, "volume must be a number, got NoneType"),
    ("5", TypeError, "volume must be a number, got str"),
])
def test_28_5_volume_types(bad, err, match):
    """Before: a bool volume was taken as 1/0 and None gave pybind11's 'incompatible function
    arguments' dump."""
    live = vpoc.Live(tick_size=0.25)
    with pytest.raises(err, match=match):
        live.update(6000.0, 6000.0, 6000.0, bad, timestamp=T0)
    with pytest.raises(TypeError, match="low must be a number, got NoneType"):
        live.update(6000.0, None, 6000.0, 1, timestamp=T0)
    assert live.n_rows == 0


# =============================================================================== 28.6

_BIG_CHILD = r"""
import json, os, signal, threading, time
import numpy as np, vpoc
n = 10_000_000
rng = np.random.default_rng(0)
c = 6000 + np.cumsum(rng.integers(-1, 2, n)) * 0.25
h, l, v = c + 0.5, c - 0.5, rng.integers(1, 100, n)
ts = {t0} + np.arange(n, dtype=np.int64) * 10**9
live = vpoc.Live(tick_size=0.25, session_features=False, max_rows=10**7)
live.update(6000.0, 6000.0, 6000.0, 5, timestamp={t0} - 10**9)
before = live.state_dict(flat=True)
sent = []
def kill():
    sent.append(time.perf_counter())
    os.kill(os.getpid(), signal.SIGINT)
threading.Timer({delay}, kill).start()
try:
    live.update(h, l, c, v, timestamp=ts)
    out = dict(interrupted=False)
except KeyboardInterrupt:
    out = dict(interrupted=True, latency=time.perf_counter() - sent[0])
after = live.state_dict(flat=True)
out["unchanged"] = all(np.array_equal(np.asarray(before[k]), np.asarray(after[k]),
                                      equal_nan=np.asarray(before[k]).dtype.kind == "f") for k in before)
live.update(h[:1000], l[:1000], c[:1000], v[:1000], timestamp=ts[:1000])
out["rows"] = live.n_rows
print(json.dumps(out))
"""


@pytest.mark.parametrize("delay", [0.3, 4.0])
def test_28_6_large_array_update_answers_sigint_and_rolls_back(delay):
    """A 1e7-row update answers SIGINT within about a second, 2.5 s under load (engine calls in chunks), and the
    interrupted update leaves the Live as it was. Before (2-core VM): SIGINT at 4 s was taken
    after 8.45 s, with the Live's last timestamp already moved (every retry refused)."""
    code = _BIG_CHILD.format(t0=T0, delay=delay)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                       preexec_fn=default_sigint)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["interrupted"] and out["unchanged"], out
    # a chunk of the update is well under a second alone; under a loaded suite (8 workers on the H200's host:
    # 1.14 s once) it can take longer. An unchunked update answers only at its end (8.45 s before the fix).
    assert out["latency"] < 2.5, out
    assert out["rows"] == 1001


# =============================================================================== 28.7


def _ib_bars():
    """An RTH-like day in Chicago, one bar a minute from 08:00 to 10:30 CT; the bar opening at
    exactly 09:30 (+60 minutes after the 08:30 open) has the day's highest high and lowest low,
    the bars at 08:29:59.999999999 and 08:30 test the start."""
    t_open = T0 + 30 * MIN  # 08:30 Chicago (CST, UTC-6)
    ts = np.r_[np.arange(T0, T0 + 151 * MIN, MIN), t_open - 1].astype(np.int64)
    ts.sort()
    n = ts.size
    close = np.full(n, 6000.0)
    high, low = close + 1.0, close - 1.0
    at_60 = int(np.flatnonzero(ts == t_open + 60 * MIN)[0])
    high[at_60], low[at_60] = 6050.0, 5950.0
    before_open = int(np.flatnonzero(ts == t_open - 1)[0])
    high[before_open], low[before_open] = 6040.0, 5960.0
    return high, low, close, np.full(n, 10, dtype=np.int64), ts, at_60


def test_28_7_ib_excludes_the_bar_at_exactly_plus_60_minutes():
    """The initial balance covers [08:30, 09:30): the bar opening at exactly 09:30 and the one
    at 08:29:59.999999999 are outside it, in Live as in session_features / bar_features."""
    h, lo, c, v, ts, at_60 = _ib_bars()
    live = vpoc.Live(tick_size=0.25, session_starts=ts[:1])
    rows = []
    for i in range(ts.size):
        live.update(h[i], lo[i], c[i], int(v[i]), timestamp=int(ts[i]))
        rows.append(live.bar_features_row())
    live.close()
    off = np.array([0, ts.size])
    sf = vpoc.session_features(h, lo, c, v, timestamp=ts, offsets=off, tick_size=0.25)
    bf = vpoc.bar_features(h, lo, c, v, timestamp=ts, offsets=off, tick_size=0.25)
    ib_high = sf.values[0, sf.columns.index("ib_high")]
    ib_low = sf.values[0, sf.columns.index("ib_low")]
    assert (ib_high, ib_low) == (6001.0, 5999.0)  # neither the 09:30 bar nor the 08:29:59.999 one
    t = live.session_table()
    assert t.values[0, t.columns.index("ib_high")] == ib_high
    assert same(np.stack(rows), bf.values)
    k = bf.columns.index("ib_high_dist")
    assert rows[at_60][k] == (6001.0 - 6000.0) / 0.25


def test_28_7_session_boundaries_are_exact():
    """A row at exactly a session start opens that session (session_starts: [t_k, t_k+1));
    Globex: 16:59:59.999999999 CT is the old session, 16:00-17:00 the halt, 17:00 the next."""
    starts = np.array([T0, T0 + 10 * MIN])
    live = vpoc.Live(tick_size=0.25, session_starts=starts)
    live.update(6000.0, 6000.0, 6000.0, 1, timestamp=T0 + 10 * MIN - 1)
    assert live.session_label == 0
    live.update(6000.0, 6000.0, 6000.0, 1, timestamp=T0 + 10 * MIN)
    assert live.session_label == 1 and len(live) == 1
    pytest.importorskip("pandas_market_calendars")
    day = int(np.datetime64("2024-03-05T22:00", "ns").astype(np.int64))  # 16:00 CST
    ts = np.array([day - 1, day, day + 30 * MIN, day + 60 * MIN - 1, day + 60 * MIN])
    g = vpoc.Live(tick_size=0.25, session="globex", on_outside="drop")
    for t in ts:
        g.update(6000.0, 6000.0, 6000.0, 1, timestamp=int(t))
    s = vpoc.sessions.globex(ts, on_outside="drop")
    assert g.n_dropped == 3 == s.dropped_rows
    assert len(g) == 1 and g.labels[0] == 20240305 and g.session_label == 20240306


# =============================================================================== 23.1


def test_23_1_close_stamped_feed_equals_the_open_stamped_feed():
    """Live(label="close", interval=...) takes each timestamp as a bar's close: the feed equals
    the open-stamped feed of the same bars (levels, bar rows, sessions, session rows, state),
    and its state carries label and interval."""
    cols, starts = one_bar_sessions(30, seed=21, dropped=2)
    h, lo, c, o, v, ts = cols
    opens = new_live(starts[::5])
    closes = new_live(starts[::5], label="close", interval="1min")
    for a, b, one in plan(len(ts), seed=22):
        x = apply(opens, cols, a, b, one)
        y = apply(closes, (h, lo, c, o, v, ts + MIN), a, b, one)
        assert x == y
        if opens.session_rows:
            assert same(opens.bar_features_row(), closes.bar_features_row())
    open_state, close_state = opens.state_dict(flat=True), closes.state_dict(flat=True)  # the last session open
    opens.close()
    closes.close()
    assert same(opens.session_table().values, closes.session_table().values)
    a, b = opens.state_dict(flat=True), closes.state_dict(flat=True)
    ca, cb = json.loads(a.pop("config")), json.loads(b.pop("config"))
    same_state(a, b)
    assert (cb["label"], cb["interval"]) == ("close", "1min") and ca["label"] == "open"
    for live, t in ((closes, int(ts[-1]) + 60 * MIN), (opens, int(ts[-1]) + 59 * MIN)):  # close() ended it
        with pytest.raises(ValueError, match=r"which close\(\) ended"):
            live.update(6000.0, 6000.0, 6000.0, 1, open=6000.0, timestamp=t)
    again = vpoc.Live.from_state(close_state)  # states taken before close(): the session goes on
    again_open = vpoc.Live.from_state(open_state)
    again.update(6000.0, 6000.0, 6000.0, 1, open=6000.0, timestamp=int(ts[-1]) + 60 * MIN)
    again_open.update(6000.0, 6000.0, 6000.0, 1, open=6000.0, timestamp=int(ts[-1]) + 59 * MIN)
    assert again.levels == again_open.levels and again._ts == again_open._ts


def test_23_1_label_close_needs_interval():
    with pytest.raises(ValueError, match=r"label='close' needs interval="):
        vpoc.Live(tick_size=0.25, label="close")
    with pytest.raises(ValueError, match="label='close' is for bars"):
        vpoc.Live(tick_size=0.25, kind="trades", label="close", interval=60)
    with pytest.raises(ValueError, match="label must be 'open'"):
        vpoc.Live(tick_size=0.25, label="end")
    live = vpoc.Live(tick_size=0.25, label="close", interval=60, session_starts=[T0])
    live.update(6000.0, 6000.0, 6000.0, 1, timestamp=T0 + MIN)  # opened at T0: session 0
    assert live.session_label == 0 and live.n_dropped == 0
    with pytest.warns(vpoc.DuplicateRowsWarning, match="1 of 1 bars"):  # the same bar again: counted again
        live.update(6000.0, 6000.0, 6000.0, 1, timestamp=T0 + MIN)
    with pytest.raises(ValueError, match="before the previous row"):
        live.update(6000.0, 6000.0, 6000.0, 1, timestamp=T0 + MIN - 1)

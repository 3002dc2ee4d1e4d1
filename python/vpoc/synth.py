"""Synthetic, realistic-looking ES (E-mini S&P 500) futures data for tests and benchmarks.

Pure NumPy, deterministic for a given ``seed``, and vectorised so that the benchmark sizes
(:func:`es_bars` with 1014 sessions x 1380 one-minute bars, :func:`es_trades` with 50 M
trades) are generated in well under a second and a few seconds respectively.

What is modelled (enough to make profiles look like ES profiles, not a market model):

* **Sessions.** One session per trading date, weekends skipped (holidays and early closes are
  not modelled: ``vpoc.sessions.globex`` with its exchange calendar books a holiday's rows
  elsewhere and drops the hours after an early close, as it would for a file with those rows;
  ``calendar=None`` keeps every synthetic session). A session is a CME Globex day: 17:00
  America/Chicago on the previous calendar evening to 16:00 Chicago, 1380 minutes, with US
  daylight saving time (the rules of 2007 on: CDT from the second Sunday of March to the first
  Sunday of November; before 2007 the first Sunday of April to the last Sunday of October), so
  sessions start at 23:00 UTC in winter and 22:00 UTC in summer, and no bar falls in the daily
  16:00-17:00 halt. ``session_id`` is the trading date as the integer ``YYYYMMDD``.
* **Prices** are multiples of the 0.25 tick, start near 4500 and random-walk across
  sessions; the intraday volatility follows the volume (quiet overnight, busy at the RTH
  open 08:30 CT and close 15:15 CT).
* **Volumes** are non-negative integers. Bars have a U-shaped intraday volume curve
  (low overnight, peaks at the RTH open and close, bumps at the European open and the
  07:30 CT data releases), about 1.5-2 M contracts a day. Trade sizes are heavy-tailed
  (most trades are 1-3 lots, a few are thousands).

Examples
--------
>>> from vpoc.synth import es_bars, es_trades
>>> bars = es_bars(n_sessions=5, seed=1)
>>> bars.n_sessions, len(bars)
(5, 6900)
>>> trades = es_trades(100_000, 5, seed=1)
>>> int(trades.offsets[-1])
100000
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ._optional import require

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = [
    "ES_TICK_SIZE",
    "GLOBEX_MINUTES",
    "SESSION_START_UTC_HOUR",
    "SynthBars",
    "SynthTrades",
    "es_bars",
    "es_trades",
]

#: Tick size of ES futures (index points).
ES_TICK_SIZE: float = 0.25
#: Minutes in a Globex ES session (17:00 to 16:00 Chicago).
GLOBEX_MINUTES: int = 1380
#: UTC hour at which a session starts in winter (17:00 CST, UTC-6; an hour earlier under daylight saving time).
SESSION_START_UTC_HOUR: int = 23

_NS_PER_MINUTE = 60 * 1_000_000_000
_NS_PER_HOUR = 60 * _NS_PER_MINUTE
_NS_PER_DAY = 24 * _NS_PER_HOUR
_DEFAULT_START_DATE = "2019-01-02"
_PRICE_FLOOR_TICKS = 4000  # 1000.00 index points: whole sessions are reflected above it
_SESSION_CLOCK_START = 17 * 60  # session minute 0 is 17:00 Chicago (minute of day)

Int64Array = npt.NDArray[np.int64]
Float64Array = npt.NDArray[np.float64]


# --------------------------------------------------------------------------- containers


@dataclass(frozen=True)
class SynthBars:
    """One-minute OHLCV bars grouped into sessions (CSR ``offsets``).

    Attributes
    ----------
    timestamp : int64 array (N,)
        Bar open time, nanoseconds since the Unix epoch, UTC.
    open, high, low, close : float64 arrays (N,)
        Prices on the 0.25 grid; ``low <= min(open, close)`` and ``high >= max(open, close)``.
    volume : int64 array (N,)
        Contracts traded in the bar, ``>= 0``.
    offsets : int64 array (S+1,)
        Session ``s`` is rows ``offsets[s] .. offsets[s+1]-1``.
    session_id : int64 array (N,)
        Trading date of each row as ``YYYYMMDD``.
    """

    timestamp: Int64Array
    open: Float64Array
    high: Float64Array
    low: Float64Array
    close: Float64Array
    volume: Int64Array
    offsets: Int64Array
    session_id: Int64Array

    @property
    def n_sessions(self) -> int:
        """Number of sessions S."""
        return int(self.offsets.shape[0]) - 1

    @property
    def session_labels(self) -> Int64Array:
        """Trading date (``YYYYMMDD``) of each session, shape (S,)."""
        return _labels_from_rows(self.session_id, self.offsets)

    def __len__(self) -> int:
        return int(self.close.shape[0])

    def to_pandas(self) -> pd.DataFrame:
        """The rows as a DataFrame: ``timestamp`` (datetime64[ns, UTC]), ``open``, ``high``,
        ``low``, ``close``, ``volume``, ``session_id``. Needs pandas."""
        pd = require("pandas", "to_pandas()")

        return pd.DataFrame(
            {
                "timestamp": pd.to_datetime(self.timestamp, unit="ns", utc=True),
                "open": self.open,
                "high": self.high,
                "low": self.low,
                "close": self.close,
                "volume": self.volume,
                "session_id": self.session_id,
            }
        )


@dataclass(frozen=True)
class SynthTrades:
    """Individual trades (time and sales) grouped into sessions (CSR ``offsets``).

    ``price``, ``volume``, ``offsets`` and ``session_labels`` are stored; the per-row
    ``timestamp`` and ``session_id`` arrays (8 bytes a row each) are computed on first access
    and then cached, so that 50 M trades fit in about 1 GB until they are asked for.

    Attributes
    ----------
    price : float64 (or float32) array (N,)
        Trade prices on the 0.25 grid.
    volume : int64 (or the requested dtype) array (N,)
        Trade sizes, ``>= 1``.
    offsets : int64 array (S+1,)
        Session ``s`` is rows ``offsets[s] .. offsets[s+1]-1`` (sessions may be empty).
    session_labels : int64 array (S,)
        Trading date of each session as ``YYYYMMDD``.
    """

    price: npt.NDArray[np.floating[Any]]
    volume: npt.NDArray[Any]
    offsets: Int64Array
    session_labels: Int64Array

    @property
    def n_sessions(self) -> int:
        """Number of sessions S."""
        return int(self.offsets.shape[0]) - 1

    def __len__(self) -> int:
        return int(self.price.shape[0])

    @cached_property
    def session_id(self) -> Int64Array:
        """Trading date (``YYYYMMDD``) of each row, shape (N,)."""
        return np.repeat(self.session_labels, np.diff(self.offsets))

    @cached_property
    def timestamp(self) -> Int64Array:
        """Trade time, int64 nanoseconds since the epoch (UTC), non-decreasing in a session.

        Trades are placed at evenly spaced quantiles of the intraday activity curve (the
        same U shape as the bar volumes), so they cluster at the RTH open and close.
        """
        counts = np.diff(self.offsets)
        starts = _session_start_ns(self.session_labels)
        out = np.empty(len(self), dtype=np.int64)
        # inverse CDF of the activity over the session, in nanoseconds after the start
        activity = _intraday_mean_volume(np.arange(GLOBEX_MINUTES))
        cdf = np.concatenate(([0.0], np.cumsum(activity)))
        cdf /= cdf[-1]
        knots_ns = np.arange(GLOBEX_MINUTES + 1, dtype=np.float64) * _NS_PER_MINUTE
        chunk = 4_000_000  # rows materialised at once (bounded temporaries)
        s = 0
        n_s = counts.shape[0]
        while s < n_s:
            e = s
            rows = 0
            while e < n_s and (rows == 0 or rows + counts[e] <= chunk):
                rows += int(counts[e])
                e += 1
            lo, hi = int(self.offsets[s]), int(self.offsets[e])
            if hi > lo:
                c = counts[s:e]
                first = np.repeat(self.offsets[s:e], c)
                q = (np.arange(lo, hi, dtype=np.float64) - first + 0.5) / np.repeat(c, c)
                t = np.interp(q, cdf, knots_ns).astype(np.int64)
                t += np.repeat(starts[s:e], c)
                out[lo:hi] = t
            s = e
        return out

    def to_pandas(self) -> pd.DataFrame:
        """The rows as a DataFrame: ``timestamp`` (datetime64[ns, UTC]), ``price``,
        ``volume``, ``session_id``. Needs pandas."""
        pd = require("pandas", "to_pandas()")

        return pd.DataFrame(
            {
                "timestamp": pd.to_datetime(self.timestamp, unit="ns", utc=True),
                "price": self.price,
                "volume": self.volume,
                "session_id": self.session_id,
            }
        )


# --------------------------------------------------------------------------- generators


def es_bars(
    n_sessions: int = 1014,
    bars_per_session: int = GLOBEX_MINUTES,
    seed: int | None = 0,
    *,
    start_date: str = _DEFAULT_START_DATE,
    start_price: float = 4500.0,
) -> SynthBars:
    """Synthetic ES one-minute bars: ``n_sessions`` Globex days of ``bars_per_session`` bars.

    Session ``s`` covers trading date ``d_s`` (weekdays from ``start_date`` on) and starts at
    17:00 Chicago on the previous calendar day (23:00 UTC, 22:00 UTC under daylight saving time);
    bar ``i`` opens ``i`` minutes later. With the default 1380 bars a session ends at 16:00
    Chicago; more bars run past it (the activity curve wraps around the clock).

    The synthetic clock follows US DST but has no CME holidays: the feature tables and ``from_bars``
    read a SynthBars by its own sessions (``offsets``, ``session_labels``), which is exact. Read by a
    clock rule with the exchange calendar instead (``vpoc.sessions.globex(bars.timestamp)``,
    ``session="globex"``), CME holidays (2019-01-21 first with the default ``start_date``) are folded
    or closed, so rows are left out with a ``DroppedRowsWarning``. The README quickstart
    (``n_sessions=10`` from 2019-01-02) stays inside January 2019 before the first holiday and keeps
    every row (tests/test_silent_trial5.py checks both).

    Prices: the first bar opens near ``start_price``; closes random-walk in whole ticks with
    a per-minute standard deviation of about 1 tick overnight up to about 6 ticks at the RTH
    open (scaled by a per-session volatility factor); each bar opens at the previous close
    (plus an overnight gap at a session start); highs/lows extend past the body by a few
    ticks. Sessions are shifted up whole if the walk would go below 1000.00.

    Volume: gamma-Poisson (negative binomial) integers around a U-shaped intraday curve times
    a per-session activity factor.

    The draws depend on the shape asked for: one ``seed`` with another ``n_sessions`` (or
    ``bars_per_session``) gives other bars for the same dates (``es_bars(10)`` and ``es_bars(1014)``
    differ from the first session on), so compare runs with the same arguments.

    Parameters
    ----------
    n_sessions : int
        Number of sessions, ``>= 0``.
    bars_per_session : int
        One-minute bars per session, ``>= 0``.
    seed : int or None
        Seed for :func:`numpy.random.default_rng`.
    start_date : str
        First candidate trading date (ISO ``YYYY-MM-DD``; rolled forward to a weekday).
    start_price : float
        Approximate first price, finite and ``> 1000``.

    Returns
    -------
    SynthBars
    """
    S = _check_count(n_sessions, "n_sessions")
    B = _check_count(bars_per_session, "bars_per_session")
    start_price = float(start_price)
    if not np.isfinite(start_price) or start_price <= _PRICE_FLOOR_TICKS * ES_TICK_SIZE:
        raise ValueError(f"start_price must be finite and > 1000, got {start_price!r}")
    rng = np.random.default_rng(seed)
    N = S * B

    labels = _trading_dates(start_date, S)
    offsets = np.arange(S + 1, dtype=np.int64) * B
    minute = np.arange(B, dtype=np.int64)

    # per-session activity (volume) and volatility factors, positively correlated
    z = rng.standard_normal((2, S))
    activity = np.exp(0.30 * z[0] - 0.045)
    vol_factor = np.exp(0.25 * (0.6 * z[0] + 0.8 * z[1]) - 0.03)

    mean_vol = _intraday_mean_volume(minute)  # (B,)
    sigma = np.clip(np.sqrt(mean_vol / 300.0), 0.8, 6.0)  # ticks per minute
    sigma2d = sigma[None, :] * vol_factor[:, None]  # (S, B)

    # volume: gamma(k) * mean, then Poisson -> negative binomial with shape k
    k = 4.0
    lam = rng.standard_gamma(k, size=(S, B))
    lam *= (mean_vol / k)[None, :]
    lam *= activity[:, None]
    volume = rng.poisson(lam).astype(np.int64, copy=False).reshape(N)
    del lam

    # closes: random walk in ticks (int64), bar open = previous close (+ gap at session start)
    steps = np.rint(rng.standard_normal((S, B)) * sigma2d).astype(np.int64)
    if B > 0 and S > 0:
        gaps = np.rint(rng.standard_normal(S) * 6.0).astype(np.int64)
        steps[:, 0] += gaps
        steps[0, 0] = 0
    flat_steps = steps.reshape(N)
    close_t = np.cumsum(flat_steps)
    close_t += round(start_price / ES_TICK_SIZE)
    open_t = close_t - flat_steps
    if N > 0:
        open_t[0] = close_t[0]  # the very first bar opens at its close (no previous bar)
    del steps, flat_steps

    # wicks: whole ticks beyond the body, exponential with scale ~ 0.6 sigma
    wick_scale = (0.6 * sigma2d).reshape(N)
    up = np.floor(rng.exponential(1.0, N) * wick_scale).astype(np.int64)
    dn = np.floor(rng.exponential(1.0, N) * wick_scale).astype(np.int64)
    high_t = np.maximum(open_t, close_t) + up
    low_t = np.minimum(open_t, close_t) - dn
    del up, dn, wick_scale

    # keep prices positive for very long runs: reflect whole sessions above the floor
    if N > 0:
        sess_low = low_t.reshape(S, B).min(axis=1)
        shift = np.where(sess_low < _PRICE_FLOOR_TICKS, 2 * (_PRICE_FLOOR_TICKS - sess_low), 0)
        if np.any(shift):
            rows_shift = np.repeat(shift, B)
            open_t += rows_shift
            high_t += rows_shift
            low_t += rows_shift
            close_t += rows_shift

    starts = _session_start_ns(labels)
    timestamp = (starts[:, None] + minute[None, :] * _NS_PER_MINUTE).reshape(N)

    return SynthBars(
        timestamp=timestamp,
        open=_ticks_to_price(open_t, np.float64),
        high=_ticks_to_price(high_t, np.float64),
        low=_ticks_to_price(low_t, np.float64),
        close=_ticks_to_price(close_t, np.float64),
        volume=volume,
        offsets=offsets,
        session_id=np.repeat(labels, B),
    )


# trade-to-trade price steps in ticks, as a 256-entry table indexed by a random byte:
# P(0) = 154/256 (~0.60), P(+-1) = 48/256 each (~0.19), P(+-2) = 3/256 each (~0.012)
_STEP_TABLE = np.concatenate(
    [
        np.zeros(154, dtype=np.int32),
        np.full(48, 1, dtype=np.int32),
        np.full(48, -1, dtype=np.int32),
        np.full(3, 2, dtype=np.int32),
        np.full(3, -2, dtype=np.int32),
    ]
)
assert _STEP_TABLE.shape == (256,)

# trade sizes: discrete Pareto floor(u ** (-1/alpha)), alpha = 1.3, u on a 2**16 grid
# -> P(1) ~ 0.59, mean ~ 3.9, max ~ 8600 lots; indexed by a random uint16
_SIZE_ALPHA = 1.3
_SIZE_U = (np.arange(65536, dtype=np.float64) + 0.5) / 65536.0
_SIZE_TABLE = np.floor(_SIZE_U ** (-1.0 / _SIZE_ALPHA)).astype(np.int64)


def es_trades(
    n_trades: int,
    n_sessions: int,
    seed: int | None = 0,
    *,
    price_dtype: npt.DTypeLike = np.float64,
    volume_dtype: npt.DTypeLike = np.int64,
    start_date: str = _DEFAULT_START_DATE,
    start_price: float = 4500.0,
) -> SynthTrades:
    """Synthetic ES trades: ``n_trades`` trades split over ``n_sessions`` sessions.

    Session sizes are multinomial around equal shares with a log-normal (sd 0.2) activity
    factor per session: roughly equal, never negative, summing exactly to ``n_trades``
    (sessions may be empty when there are fewer trades than sessions). Within a session the
    price starts at the session's open (a daily random walk from ``start_price`` with a
    standard deviation of 1%) and moves trade to trade by 0 ticks (60%), +-1 tick (19% each)
    or +-2 ticks (1.2% each). Sizes are heavy-tailed integers ``>= 1`` (59% single lots,
    mean about 4, largest about 8600). Timestamps (computed on first access) are
    non-decreasing within a session and cluster at the RTH open and close.

    Memory: built from int8-sized random bytes and an int32 tick walk; 50 M trades with the
    default dtypes peak at about 1 GB and take a few seconds.

    Parameters
    ----------
    n_trades : int
        Total number of trades, ``>= 0``.
    n_sessions : int
        Number of sessions, ``>= 0`` (``>= 1`` when ``n_trades > 0``).
    seed : int or None
        Seed for :func:`numpy.random.default_rng`.
    price_dtype : float32 or float64
        dtype of ``price`` (0.25 multiples are exact in both at ES price levels).
    volume_dtype : integer or floating dtype
        dtype of ``volume`` (default int64).
    start_date, start_price
        As for :func:`es_bars`.

    Returns
    -------
    SynthTrades
    """
    N = _check_count(n_trades, "n_trades")
    S = _check_count(n_sessions, "n_sessions")
    if N > 0 and S == 0:
        raise ValueError("n_sessions must be >= 1 when n_trades > 0")
    if N >= 2**31:
        raise ValueError(f"n_trades must be < 2**31, got {N}")
    pdt = np.dtype(price_dtype)
    if pdt not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise TypeError(f"price_dtype must be float32 or float64, got {pdt}")
    vdt = np.dtype(volume_dtype)
    if vdt.kind not in "iuf":
        raise TypeError(f"volume_dtype must be an integer or floating dtype, got {vdt}")
    if vdt.kind in "iu" and vdt.itemsize < 2:
        raise TypeError(f"volume_dtype must hold sizes up to {_SIZE_TABLE[0]}, got {vdt}")
    start_price = float(start_price)
    if not np.isfinite(start_price) or start_price <= _PRICE_FLOOR_TICKS * ES_TICK_SIZE:
        raise ValueError(f"start_price must be finite and > 1000, got {start_price!r}")
    rng = np.random.default_rng(seed)

    labels = _trading_dates(start_date, S)

    # session sizes
    if S > 0:
        w = np.exp(0.2 * rng.standard_normal(S))
        counts = rng.multinomial(N, w / w.sum()).astype(np.int64)
    else:
        counts = np.zeros(0, dtype=np.int64)
    offsets = np.zeros(S + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])

    # session opens (ticks): daily random walk, sd 1% (~180 ticks), reflected above the floor
    start_t = round(start_price / ES_TICK_SIZE)
    opens = start_t + np.cumsum(np.rint(rng.standard_normal(S) * 0.01 * start_t)).astype(np.int64)
    opens = np.where(opens < _PRICE_FLOOR_TICKS, 2 * _PRICE_FLOOR_TICKS - opens, opens)

    # intraday walk: int32 steps from random bytes, then one in-place cumsum over all rows.
    # The step at each (non-empty) session's first row is replaced by the jump from the
    # previous session's last price to this session's open, so the walk restarts there.
    ticks = _STEP_TABLE[np.frombuffer(rng.bytes(N), dtype=np.uint8)]
    nonempty = np.flatnonzero(counts > 0)
    if nonempty.size:
        first = offsets[nonempty]
        ticks[first] = 0
        drift = np.add.reduceat(ticks, first, dtype=np.int64)  # walk within each session
        o = opens[nonempty]
        last = o + drift
        jump = o.copy()
        jump[1:] -= last[:-1]
        if np.abs(jump).max(initial=0) >= 2**31 - 2**24:
            raise ValueError("price walk overflow; use fewer trades per session")
        ticks[first] = jump.astype(np.int32)
        np.cumsum(ticks, out=ticks)
    price = _ticks_to_price(ticks, pdt)
    del ticks

    # sizes from random uint16 through the discrete-Pareto table
    table = _SIZE_TABLE.astype(vdt)
    volume = table[np.frombuffer(rng.bytes(2 * N), dtype=np.uint16)]

    return SynthTrades(price=price, volume=volume, offsets=offsets, session_labels=labels)


# --------------------------------------------------------------------------- helpers


def _check_count(value: object, name: str) -> int:
    """An integer count >= 0 (numpy integers accepted, bools and floats rejected)."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    try:
        n = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}") from None
    if n < 0:
        raise ValueError(f"{name} must be >= 0, got {n}")
    return n


def _ticks_to_price(ticks: npt.NDArray[np.integer[Any]], dtype: npt.DTypeLike) -> Any:
    """``ticks * 0.25`` in ``dtype`` (exact: 0.25 is a power of two)."""
    out = np.empty(ticks.shape, dtype=dtype)
    np.multiply(ticks, ES_TICK_SIZE, out=out, casting="unsafe")
    return out


def _trading_dates(start_date: str, n: int) -> Int64Array:
    """``n`` weekdays from ``start_date`` (rolled forward) as int64 ``YYYYMMDD``."""
    try:
        d0 = np.datetime64(start_date, "D")
    except ValueError:
        raise ValueError(f"start_date must be an ISO date, got {start_date!r}") from None
    days = np.busday_offset(d0, np.arange(n), roll="forward")
    years = days.astype("datetime64[Y]")
    months = days.astype("datetime64[M]")
    y = years.astype(np.int64) + 1970
    m = (months - years).astype(np.int64) + 1
    d = (days - months).astype(np.int64) + 1
    out: Int64Array = (y * 10000 + m * 100 + d).astype(np.int64)
    return out


def _session_start_ns(labels: Int64Array) -> Int64Array:
    """Session start (int64 ns UTC): 17:00 Chicago the evening before trading date ``YYYYMMDD``
    (23:00 UTC, 22:00 UTC under US daylight saving time, ``_us_dst``)."""
    labels = np.asarray(labels, dtype=np.int64)
    y, md = np.divmod(labels, 10000)
    m, d = np.divmod(md, 100)
    months = ((y - 1970) * 12 + (m - 1)).astype("datetime64[M]")
    days = months.astype("datetime64[D]") + (d - 1).astype("timedelta64[D]")
    ns: Int64Array = days.astype("datetime64[ns]").astype(np.int64)
    ns += SESSION_START_UTC_HOUR * _NS_PER_HOUR - _NS_PER_DAY
    ns -= _us_dst(days - np.timedelta64(1, "D")).astype(np.int64) * _NS_PER_HOUR
    return ns


def _us_dst(days: npt.NDArray[np.datetime64]) -> npt.NDArray[np.bool_]:
    """Whether 17:00 local time on each calendar day (datetime64[D]) is daylight saving time in the US
    (the switch is at 02:00): 2007 on, from the second Sunday of March to the first Sunday of November;
    before, from the first Sunday of April to the last Sunday of October."""
    years = days.astype("datetime64[Y]")
    mar, apr, nov = (years.astype("datetime64[M]") + np.timedelta64(k, "M") for k in (2, 3, 10))
    new = years.astype(np.int64) + 1970 >= 2007
    sunday = dict(roll="forward", weekmask="Sun")
    start = np.where(new, np.busday_offset(mar.astype("datetime64[D]"), 1, **sunday),
                     np.busday_offset(apr.astype("datetime64[D]"), 0, **sunday))
    end = np.where(new, np.busday_offset(nov.astype("datetime64[D]"), 0, **sunday),
                   np.busday_offset(nov.astype("datetime64[D]"), -1, **sunday))
    out: npt.NDArray[np.bool_] = (days >= start) & (days < end)
    return out


def _labels_from_rows(session_id: Int64Array, offsets: Int64Array) -> Int64Array:
    """Per-session label from per-row ids (0 for an empty session)."""
    counts = np.diff(offsets)
    out = np.zeros(counts.shape[0], dtype=np.int64)
    nz = counts > 0
    out[nz] = session_id[offsets[:-1][nz]]
    return out


def _intraday_mean_volume(minute: npt.NDArray[np.integer[Any]]) -> Float64Array:
    """Mean contracts per one-minute bar at session minute ``minute`` (0 = 17:00 Chicago).

    Overnight ~250/min with a bump at the European open (02:00 CT), a spike at the 07:30 CT
    data releases, then the RTH (08:30-15:15 CT) U shape: ~2500/min mid-day, ~11500 at the
    open, ~8500 into the close; ~700/min 15:15-16:00.
    """
    t = (np.asarray(minute, dtype=np.float64) + _SESSION_CLOCK_START) % 1440.0  # minute of day
    out = np.full(t.shape, 250.0)
    out += 500.0 * np.exp(-np.abs(t - 120.0) / 45.0)  # European open, 02:00 CT
    out += 1500.0 * np.exp(-np.abs(t - 450.0) / 6.0)  # 07:30 CT releases
    rth = (t >= 510.0) & (t < 915.0)
    u = 2500.0 + 9000.0 * np.exp(-(t - 510.0) / 25.0) + 6000.0 * np.exp(-(915.0 - t) / 15.0)
    out = np.where(rth, u, out)
    post = (t >= 915.0) & (t < 960.0)
    out = np.where(post, 700.0, out)
    return out

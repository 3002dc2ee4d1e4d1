"""``TpoProfiles``: the result of ``vpoc.tpo``, per-session numpy columns and ragged rows / periods.

Contract: every per-session column has ``n_sessions`` entries; ``count[offsets[s]:offsets[s+1]]`` is session s's
TPO histogram from its ``low_row`` up, ``period_*[period_offsets[s]:period_offsets[s+1]]`` its periods in time order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple

import numpy as np

from .._optional import require
from ._tpo_counts import _single_print_mask

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["LETTERS", "SESSION_FIELDS", "TpoProfiles", "letter_of", "period_cells"]

#: The period letters: period k of a session (k = 0 for its first period) is ``LETTERS[k % 52]``,
#: A-Z then a-z, starting again at A after z.
LETTERS: str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

#: The per-session columns of a ``TpoProfiles``, in ``to_pandas()`` order.
SESSION_FIELDS: Tuple[str, ...] = (
    "poc", "vah", "val", "poc_row", "vah_row", "val_row", "low_row", "n_rows", "total_tpo",
    "va_tpo", "n_periods", "empty_periods", "first_period_start", "single_prints", "poor_high",
    "poor_low", "excess_high", "excess_low", "session_high", "session_low", "or_high", "or_low",
    "ib_high", "ib_low", "ib_range", "ib_complete", "ib_ext_up", "ib_ext_down", "day_type", "open_type",
    "days_since_prior", "overnight_high", "overnight_low", "prior_high", "prior_low", "prior_close", "va_migration",
)
_PERIOD_FIELDS = ("period_index", "period_start", "period_low_row", "period_high_row")
_LETTER_CODES = np.frombuffer(LETTERS.encode("ascii"), dtype=np.uint8)


def letter_of(k: Any) -> Any:
    """The letter of period index ``k`` (an int or an int array): ``LETTERS[k % 52]``."""
    if isinstance(k, (int, np.integer)):
        return LETTERS[int(k) % len(LETTERS)]
    codes = _LETTER_CODES[np.mod(np.asarray(k, dtype=np.int64), len(LETTERS))]
    return codes.view("S1").astype("U1")


def period_cells(low_row: np.ndarray, high_row: np.ndarray, base: Any = 0) -> Tuple[np.ndarray, np.ndarray]:
    """Every TPO (one per period and row its bracket touches) of periods in time order with these
    low / high rows: (rows, period positions), ordered by ``base + row`` then time. ``base`` (per
    period, or a scalar) shifts a period's rows to its session's place (the flat rows of ragged
    counts); rows are returned without it. The one expansion of periods into cells: ``letters``
    and ``vpoc.plot_tpo`` both read it."""
    lo = np.asarray(low_row, dtype=np.int64)
    reps = np.asarray(high_row, dtype=np.int64) - lo + 1
    n = int(reps.sum())
    within = np.arange(n, dtype=np.int64) - np.repeat(np.cumsum(reps) - reps, reps)
    rows = np.repeat(lo, reps) + within
    which = np.repeat(np.arange(lo.shape[0], dtype=np.int64), reps)
    key = rows + (np.repeat(np.asarray(base, dtype=np.int64), reps) if np.ndim(base) else int(base))
    order = np.argsort(key, kind="stable")  # periods are in time order: stable keeps it per row
    return rows[order], which[order]


class TpoProfiles:
    """Per-session TPO (time-price opportunity) profiles: ``vpoc.tpo(...)``'s result.

    Per session (length ``n_sessions``; ``SESSION_FIELDS``, ``to_pandas()``): ``poc``, ``vah``,
    ``val`` (float64 row prices) and ``poc_row``, ``vah_row``, ``val_row``, ``low_row``, ``n_rows``
    (int64 ladder rows) of the TPO profile; ``total_tpo`` (sum of the counts), ``va_tpo`` (TPOs in
    the value area); ``n_periods`` (periods with bars), ``empty_periods`` (periods without bars
    between the first and the last), ``first_period_start`` (int64 ns UTC: start of period A);
    ``single_prints`` (rows of count 1), ``poor_high`` / ``poor_low`` (bool: the top / bottom row
    has a count >= 2), ``excess_high`` / ``excess_low`` (rows of count 1 running down from the top /
    up from the bottom); ``session_high``, ``session_low``, ``or_high``, ``or_low`` (opening range),
    ``ib_high``, ``ib_low``, ``ib_range`` (float64 prices), ``ib_complete`` (bool), ``ib_ext_up``,
    ``ib_ext_down`` (range extension beyond the IB, in IB ranges); ``day_type``, ``open_type`` (str:
    Dalton's types, "" when undecided); ``overnight_high``, ``overnight_low`` (the bars before
    ``rth_start`` on the trade date), ``prior_high``, ``prior_low``, ``prior_close`` (the previous
    non-empty session's; NaN for the first, ``prior_close`` NaN without closes), ``va_migration``
    (str: the TPO value area against the prior session's, ``vpoc.features.VA_MIGRATIONS``; "" for
    the first), ``days_since_prior`` (float64 calendar days from the prior session's date to this
    one's; NaN for the first; more than 4 is warned about: ``vpoc.MissingDaysWarning``).

    Ragged rows: ``offsets`` (int64, S+1) into ``count`` (int64 TPO count per row) and ``letters``
    (the letters of the periods touching each row, in time order; built on first use). Ragged
    periods: ``period_offsets`` (int64, S+1) into ``period_index`` (0 = A), ``period_letter``,
    ``period_start`` (int64 ns UTC), ``period_low_row``, ``period_high_row``.

    ``volume_profile``: the volume profile (``vpoc.Profiles``) of the same bars on the same ladder
    when volumes were given, else None. Settings and facts: ``tick_size``, ``ticks_per_row``,
    ``row_size``, ``period`` (minutes), ``rules`` (every rule's value), ``session_labels``,
    ``trade_dates``, ``session_rule``, ``dropped_rows``, ``dropped_volume``, ``input_index``,
    ``label``, ``interval``, ``snapped_prices`` (prices off the ``tick_size`` grid rounded to the
    nearest tick: ``tpo(snap=)``). Empty sessions: ``n_rows == 0``, NaN prices, ``NO_ROW`` rows.
    """

    #: Prices off the ``tick_size`` grid rounded to the nearest tick (``vpoc.tpo(snap=)``).
    snapped_prices: int = 0

    def __init__(self, columns: Dict[str, np.ndarray], *, settings: Dict[str, Any],
                 facts: Dict[str, Any], volume_profile: Any = None) -> None:
        self.__dict__.update(columns)
        self.__dict__.update(settings)
        self.__dict__.update(facts)
        self.volume_profile = volume_profile
        self._letters: Optional[np.ndarray] = None

    @property
    def n_sessions(self) -> int:
        return int(self.offsets.shape[0]) - 1

    def __len__(self) -> int:
        return self.n_sessions

    @property
    def labels(self) -> np.ndarray:
        """The session labels (alias of ``session_labels``)."""
        return self.session_labels

    @property
    def high_row(self) -> np.ndarray:
        """Highest row of each session's TPO profile (``NO_ROW`` when empty)."""
        return np.where(self.n_rows > 0, self.low_row + self.n_rows - 1, self.low_row)

    @property
    def period_letter(self) -> np.ndarray:
        """The letter of every period (``LETTERS[period_index % 52]``)."""
        return letter_of(self.period_index)

    @property
    def letters(self) -> np.ndarray:
        """Per row (aligned with ``count``): the letters of the periods touching it, in time order
        (a str array; '' for a row no period touched)."""
        if self._letters is None:
            self._letters = self._build_letters()
        return self._letters

    def _build_letters(self) -> np.ndarray:
        counts = self.count
        n = int(counts.shape[0])
        if n == 0:
            return np.zeros(0, dtype="U1")
        sess = np.repeat(np.arange(self.n_sessions, dtype=np.int64), np.diff(self.period_offsets))
        _, which = period_cells(self.period_low_row, self.period_high_row,
                                self.offsets[:-1][sess] - self.low_row[sess])  # flat rows of the counts
        text = _LETTER_CODES[np.mod(self.period_index[which], len(LETTERS))].tobytes().decode("ascii")
        ends = np.cumsum(counts)
        starts = (ends - counts).tolist()
        width = int(counts.max())
        return np.array([text[a:b] for a, b in zip(starts, ends.tolist())], dtype=f"U{max(width, 1)}")

    def session_counts(self, i: int) -> Tuple[np.ndarray, np.ndarray]:
        """(row prices, TPO counts) of session i, from its low row up (negative i counts from the
        end): ``session(i)`` without the letters."""
        if not -self.n_sessions <= i < self.n_sessions:
            raise IndexError(f"session index {i} out of range for {self.n_sessions} sessions")
        i %= self.n_sessions
        a, b = int(self.offsets[i]), int(self.offsets[i + 1])
        low = int(self.low_row[i]) if b > a else 0
        return (low + np.arange(b - a, dtype=np.int64)).astype(np.float64) * self.row_size, self.count[a:b]

    def session(self, i: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(row prices, TPO counts, letters) of session i, from its low row up (negative i counts
        from the end)."""
        prices, counts = self.session_counts(i)
        a = int(self.offsets[i % self.n_sessions])
        return prices, counts, self.letters[a:a + counts.shape[0]]

    def cells(self, i: int) -> Tuple[np.ndarray, np.ndarray]:
        """(ladder rows, period indices) of every TPO of session i (one per period and row its
        bracket touches), ordered by row then time: the cells ``letters`` holds, for one session."""
        if not -self.n_sessions <= i < self.n_sessions:
            raise IndexError(f"session index {i} out of range for {self.n_sessions} sessions")
        i %= self.n_sessions
        a, b = int(self.period_offsets[i]), int(self.period_offsets[i + 1])
        rows, which = period_cells(self.period_low_row[a:b], self.period_high_row[a:b])
        return rows, np.asarray(self.period_index[a:b], dtype=np.int64)[which]

    def single_print_rows(self, i: int) -> np.ndarray:
        """The ladder rows of session i's single prints (rows of TPO count 1, the rule of
        ``single_prints``: ``len(single_print_rows(i)) == single_prints[i]``), low row first."""
        _, counts = self.session_counts(i)
        return int(self.low_row[i]) + np.flatnonzero(_single_print_mask(counts)).astype(np.int64)

    def __repr__(self) -> str:
        rule = "" if self.session_rule is None else f", sessions={self.session_rule!r}"
        if self.snapped_prices:
            rule += f", snapped_prices={self.snapped_prices}"
        return (f"TpoProfiles(n_sessions={self.n_sessions}, rows={self.count.shape[0]}, "
                f"periods={self.period_index.shape[0]}, period={self.period}min, "
                f"tick_size={self.tick_size}, ticks_per_row={self.ticks_per_row}{rule})")

    def to_dict(self) -> Dict[str, np.ndarray]:
        """Every column (per-session, ragged rows with ``offsets``, ragged periods with
        ``period_offsets``) as numpy arrays; ``letters`` and ``period_letter`` as str arrays."""
        out = {name: getattr(self, name) for name in SESSION_FIELDS}
        out.update(offsets=self.offsets, count=self.count, letters=self.letters,
                   period_offsets=self.period_offsets)
        out.update({name: getattr(self, name) for name in _PERIOD_FIELDS})
        out["period_letter"] = self.period_letter
        return out

    def _index(self, pd: Any) -> Any:
        if self.trade_days is not None:
            days = np.asarray(self.trade_days, dtype=np.int64).astype("datetime64[D]")
            return pd.DatetimeIndex(days.astype("datetime64[ns]"), name="trade_date")
        return pd.Index(self.session_labels, name="session")

    def to_pandas(self) -> "pd.DataFrame":
        """One row per session with every per-session field (``SESSION_FIELDS``). Index: the trade
        dates as a ``DatetimeIndex`` named "trade_date" when the sessions carry dates, else the
        session labels, named "session"."""
        pd = require("pandas", "TpoProfiles.to_pandas()")
        return pd.DataFrame({name: getattr(self, name) for name in SESSION_FIELDS}, index=self._index(pd))

    def rows_frame(self) -> "pd.DataFrame":
        """One row per (session, ladder row): ``price``, ``count``, ``letters``; index (session
        label, row)."""
        pd = require("pandas", "TpoProfiles.rows_frame()")
        n = np.diff(self.offsets)
        sess = np.repeat(np.asarray(self.session_labels), n)
        row = np.repeat(self.low_row, n) + (np.arange(self.count.shape[0]) - np.repeat(self.offsets[:-1], n))
        index = pd.MultiIndex.from_arrays([sess, row], names=["session", "row"])
        return pd.DataFrame({"price": row.astype(np.float64) * self.row_size, "count": self.count,
                             "letters": self.letters}, index=index)

"""``vpoc.Live``: volume profiles of a live feed, updated bar by bar (or trade by trade).

Contract: public names re-exported here (docs/live.md); one concept per module: ``_live`` (the Live
class: updates, sessions' ends), ``_clock`` (session of each timestamp), ``_rows`` (one-row input
checks and conversion, engine appends), ``_atomic`` (snapshot and rollback), ``_drops`` (rows outside
every session), ``_features`` (feature state and rows, from vpoc.features' functions), ``_state``,
``_state_check`` and ``_state_flat`` (state_dict / from_state), ``_side`` (the aggressor side: buy /
sell rows, delta, delta POC), ``_common`` (shared pieces).
"""

from ._features import BAR_COLUMNS, BAR_SIDE_COLUMNS
from ._live import Live

__all__ = ["BAR_COLUMNS", "BAR_SIDE_COLUMNS", "Live"]

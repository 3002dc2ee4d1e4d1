"""ML feature tables from volume profiles: ``session_features`` [S, F] and ``bar_features`` [N, F].

Contract (docs/features.md): float32 C-contiguous rows; row s uses only sessions <= s, bar row i
only bars <= i of its session and sessions before it; every rule is a documented parameter.

The package has one module per job: ``_table`` (FeatureTable), ``_params`` (rules and names),
``_inputs`` (arrays and frames), ``_grouping`` (which rows form a session), ``_segments``
(per-session reductions), ``_engine`` (engine call, context, composites), ``_lookback``, ``_naked_pocs``,
``_profile_nodes`` (HVN/LVN, shape), ``_intraday`` (clock, IB, TPO), ``_session`` and ``_bars`` (the two
tables); ``_tpo_counts`` (TPO brackets and counts), ``_tpo``, ``_tpo_result`` and ``_tpo_types`` (``tpo``,
``TpoProfiles``, day and open types); ``_levels`` (``levels``, ``Levels``: HVN/LVN lists, balanced target) and
``_market_context`` (prior session, overnight, value-area migration, type codes; the opt-in table columns);
``_incremental`` gives vpoc.Live the same rows one session or bar at a time (public names below). The private names below are re-exported for the tests.
"""

from ._bars import _bar_columns, bar_features
from ._engine import _composites, _Context, _context, _profiles
from ._inputs import _Data, _data, _host, _timestamps_ns, _unpack_frame
from ._grouping import GROUP_COLUMNS, SESSION_RULES
from ._intraday import _Clock, _clock, _ib_mask, _offset_change, _tpo, _utc_offset_ns, _zone_offset_s
from ._lookback import _lag, _rolling, _rolling_mean, _rolling_std
from ._naked_pocs import _first_touch, _naked, _SortedSet
from ._profile_nodes import _node_levels, _Nodes, _nodes, _shapes
from ._params import (LEGACY_SESSION_COLUMNS, LOOKBACK_FEATURES, MAX_NODE_ROWS, SHAPES,
                      _engine_rules, _Rules, _rules, _tzinfo, legacy_columns)
from ._segments import (_nearest, _nearest_grouped, _price_rows, _ratio, _segment_accumulate,
                        _segment_count, _segment_reduce, _sliding)
from ._session import SIDE_TABLE_COLUMNS, _session_column_names, _session_columns, session_features
from ._table import _Columns, FeatureTable
from ._tpo import INCOMPLETE, IncompleteSessionWarning, TPO_TABLE_COLUMNS, tpo
from ._tpo_result import LETTERS as TPO_LETTERS, SESSION_FIELDS as TPO_SESSION_FIELDS, TpoProfiles
from ._tpo_types import DAY_TYPES, OPEN_TYPES, TYPE_RULES as TPO_TYPE_RULES
from ._levels import LEVEL_FIELDS, Levels, levels
from ._market_context import (CONTEXT_TABLE_COLUMNS, DAY_TYPE_CODES, LEVEL_TABLE_COLUMNS, OPEN_TYPE_CODES,
                       VA_MIGRATION_CODES, VA_MIGRATIONS, check_prior_gap)
from ._incremental import (FEATURE_DEFAULTS, bar_row, composite_levels, feature_rules, ib_window,
                           last_session_row, nearest, node_levels, price_rows, session_volume)

__all__ = [
    "CONTEXT_TABLE_COLUMNS",
    "DAY_TYPES",
    "DAY_TYPE_CODES",
    "FEATURE_DEFAULTS",
    "FeatureTable",
    "INCOMPLETE",
    "IncompleteSessionWarning",
    "LEGACY_SESSION_COLUMNS",
    "LEVEL_FIELDS",
    "LEVEL_TABLE_COLUMNS",
    "Levels",
    "LOOKBACK_FEATURES",
    "MAX_NODE_ROWS",
    "OPEN_TYPES",
    "OPEN_TYPE_CODES",
    "SHAPES",
    "SIDE_TABLE_COLUMNS",
    "TPO_LETTERS",
    "TPO_SESSION_FIELDS",
    "TPO_TABLE_COLUMNS",
    "TPO_TYPE_RULES",
    "TpoProfiles",
    "VA_MIGRATIONS",
    "VA_MIGRATION_CODES",
    "bar_features",
    "bar_row",
    "check_prior_gap",
    "composite_levels",
    "feature_rules",
    "ib_window",
    "last_session_row",
    "legacy_columns",
    "levels",
    "nearest",
    "node_levels",
    "price_rows",
    "session_features",
    "session_volume",
    "tpo",
]

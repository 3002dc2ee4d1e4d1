"""vpoc: exact, fast volume profiles (POC, value area) for futures sessions.

Public API: ``from_trades``, ``from_bars`` -> ``Profiles``; ``tpo`` -> ``TpoProfiles``; ``levels`` -> ``Levels``;
``Live`` (live feeds); ``backends()``; ``synth`` data.
"""

from . import features, io, live, sessions, synth
from ._api import (backends, empty_cache, from_bars, from_trades, gpu_available, memory_stats,
                   set_pool_limit)
from ._core import InputError, OutOfMemoryError
from ._diff import ProfilesDiff, diff
from ._plot import plot_profile
from ._plot_migration import plot_migration
from ._plot_tpo import plot_tpo
from ._profiles import NO_ROW, Profiles
from ._version import __version__
from ._warnings import (CoarseGridWarning, DroppedRowsWarning, DuplicateRowsWarning, GuessedDefaultWarning, MissingDaysWarning,
                        PresetWarning)
from .features import (FeatureTable, IncompleteSessionWarning, Levels, TpoProfiles, bar_features, levels,
                       session_features, tpo)
from .io import ReorderedRecordsWarning
from .live import Live

__all__ = [
    "CoarseGridWarning",
    "DroppedRowsWarning",
    "DuplicateRowsWarning",
    "FeatureTable",
    "GuessedDefaultWarning",
    "IncompleteSessionWarning",
    "InputError",
    "Levels",
    "Live",
    "MissingDaysWarning",
    "NO_ROW",
    "OutOfMemoryError",
    "PresetWarning",
    "Profiles",
    "ProfilesDiff",
    "ReorderedRecordsWarning",
    "TpoProfiles",
    "__version__",
    "backends",
    "bar_features",
    "diff",
    "empty_cache",
    "features",
    "from_bars",
    "from_trades",
    "gpu_available",
    "io",
    "levels",
    "live",
    "memory_stats",
    "plot_migration",
    "plot_profile",
    "plot_tpo",
    "session_features",
    "sessions",
    "set_pool_limit",
    "synth",
    "tpo",
]

"""Session definitions from timestamps (CME Globex, RTH, daily, custom windows).

Contract: public names re-exported here; the rules live in the package's private modules.
"""

from ._calendar import DEFAULT_CALENDAR, DEFAULT_TRADE_DATES
from ._container import Sessions
from ._definition import RULES, localize_wall, rule_definition
from ._dropped import CAUSES, DROP_WARN_SHARE
from ._dropped import cause_counts as drop_cause_counts, cause_hint as drop_cause_hint  # vpoc.Live's drops:
from ._dropped import describe_cause as drop_cause_text  # the batch's cause rule and words
from ._dropped import ambiguous as label_hint_ambiguous  # vpoc.Live's label hint: the batch's rule
from ._guard import ES_RTH, SessionHoursWarning, check_hours
from ._public import custom, daily, globex, rth

__all__ = [
    "CAUSES",
    "DROP_WARN_SHARE",
    "RULES",
    "ES_RTH",
    "SessionHoursWarning",
    "check_hours",
    "DEFAULT_CALENDAR",
    "DEFAULT_TRADE_DATES",
    "Sessions",
    "custom",
    "daily",
    "globex",
    "localize_wall",
    "rth",
    "rule_definition",
]

"""docs/sessions.md's DBN section says how DBN trades are ordered: sorted by ``ts_event`` (stable), announced by a
``vpoc.io.ReorderedRecordsWarning``, a ``ts_recv`` that steps back refused (vpoc.io._dbn, "Order").

Contract: the DBN section (from "**Databento DBN**" to the next bold heading) states each of these, and the names it
gives exist in vpoc.io; the general order rule points to the DBN exception.
"""

from __future__ import annotations

from pathlib import Path

import vpoc.io

DOC = Path(__file__).resolve().parents[1] / "docs" / "sessions.md"


def _dbn_section() -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index("**Databento DBN**")
    return text[start:text.index("\n**", start + 1)]


def test_dbn_section_states_the_trade_order():
    """Fails before the change: the section said nothing of the order of DBN trades."""
    sec = " ".join(_dbn_section().split())
    for words in ("sorted by `ts_event`", "stable sort", "equal times keep the file order",
                  "`vpoc.io.ReorderedRecordsWarning`", "`ts_recv` steps back", "raw_index_ts"):
        assert words in sec, words
    assert issubclass(vpoc.io.ReorderedRecordsWarning, UserWarning)


def test_the_general_order_rule_points_to_dbn_trades():
    text = " ".join(DOC.read_text(encoding="utf-8").split())
    rule = text[text.index("**Nothing is dropped silently.**"):]
    rule = rule[:rule.index("The first offending row")]
    assert "DBN trades are sorted by `ts_event`" in rule and "ReorderedRecordsWarning" in rule

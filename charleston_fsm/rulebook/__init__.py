"""The project's rule book: every rule of every ruleset, with a stable id.

Each rule is stated in the project's own words, traced to the passage of the original
document it comes from, and carries the decision taken where the documents are silent
or disagree. Code names rules by id: ``@enforces("NMJL-05")`` on the table's guards,
validators and actions, ``rule = "PASS-03"`` on a refusal, ``@pytest.mark.rule(...)``
on a test. :mod:`charleston_fsm.traceability.trace` builds the matrix from those.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from . import common, four_winds, service, standard
from .model import DOCUMENTS, RULESET_NAMES, Chapter, Rule, Source, Status

__all__ = [
    "CHAPTERS",
    "DOCUMENTS",
    "OPTIONS",
    "RULES",
    "RULESET_NAMES",
    "Chapter",
    "Rule",
    "Source",
    "Status",
    "enforces",
    "get_rule",
    "rules_of",
    "statement",
]

RULES: dict[str, Rule] = {
    r.id: r for r in (*common.RULES, *standard.RULES, *four_winds.RULES, *service.RULES)
}
assert len(RULES) == len(common.RULES + standard.RULES + four_winds.RULES + service.RULES)

CHAPTERS: tuple[Chapter, ...] = (
    Chapter(
        "Every ruleset",
        "Seats and directions, the tile set, the deal, and what holds for every pass.",
        ("SEAT", "TILE", "DEAL", "PASS"),
    ),
    Chapter(
        "Ruleset nmjl: the National Mah Jongg League's Charleston (the default)",
        "Right, Across, Left; a vote; Left, Across, Right; a Courtesy Pass. Steps: "
        "CHARLESTON_P1_R, CHARLESTON_P1_A, CHARLESTON_P1_L, CHARLESTON_DECIDE_STOP, "
        "CHARLESTON_P2_L, CHARLESTON_P2_A, CHARLESTON_P2_R, COURTESY_PASS (pairs "
        "COURTESY_PASS_PAIR_1 and COURTESY_PASS_PAIR_2 in parallel), CHARLESTON_DONE. "
        "The rules marked nmjl, house hold in house too.",
        ("NMJL",),
    ),
    Chapter(
        "Ruleset house: the implementation spec's variant",
        "As nmjl, except for these rules (they replace NMJL-04, NMJL-05 and NMJL-06, "
        "NMJL-07 to NMJL-11, and NMJL-13).",
        ("HOUSE",),
    ),
    Chapter(
        "Ruleset four_winds: the Four Winds program's Charleston and Ding Dong",
        "Six exchanges in pairs, then Ding Dong at East's request; its own chart "
        "(charts/four_winds.py).",
        ("FW",),
    ),
    Chapter(
        "The service",
        "Rules of the service itself, so that every refusal names a rule of this book.",
        ("SVC",),
    ),
)

#: The options on which the rule documents disagree, and the rules each one selects.
OPTIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "second_charleston_order": ("the order of the Second Charleston", ("NMJL-04", "HOUSE-01")),
    "blind_pass": (
        "whether the last pass of each Charleston may be blind",
        ("NMJL-07", "HOUSE-02"),
    ),
    "late_objection": ("whether a stop is taken after four continues", ("NMJL-05", "HOUSE-04")),
    "courtesy_mode": ("agreed smaller count, or free counts per player", ("NMJL-13", "HOUSE-03")),
    "require_placing": ("received tiles are placed before the next confirmation", ("PASS-08",)),
    "round": ("the game's round (prevailing wind) of the deal", ("FW-07",)),
    "charleston": ("on which rounds the six exchanges are played", ("FW-07",)),
    "ding_dong": ("on which rounds Ding Dong may be requested", ("FW-07",)),
    "ding_dong_max": ("how many Ding Dongs a deal allows", ("FW-05",)),
}


def get_rule(rule_id: str) -> Rule:
    try:
        return RULES[rule_id]
    except KeyError:
        raise KeyError(f"There is no rule {rule_id!r} in the rule book.") from None


def statement(rule_id: str) -> str:
    """The rule's statement; empty for an empty id."""
    return get_rule(rule_id).statement if rule_id else ""


def rules_of(chapter: Chapter) -> list[Rule]:
    return [r for r in RULES.values() if r.prefix in chapter.prefixes]


F = TypeVar("F", bound=Callable[..., object])


def enforces(*rule_ids: str) -> Callable[[F], F]:
    """Mark a guard, validator, action or function as enforcing these rules.

    An unknown id fails at import time, so no code can cite a rule the book lacks.
    """
    for rule_id in rule_ids:
        get_rule(rule_id)

    def mark(func: F) -> F:
        func.__rules__ = (*getattr(func, "__rules__", ()), *rule_ids)  # type: ignore[attr-defined]
        return func

    return mark

"""Rulesets as data: a named profile of options plus the chart that plays it.

A game's ruleset and options are fixed when it is created. Any option can be overridden
per game (``get_ruleset("nmjl").options({"blind_pass": False})``); the chart reads options only
through its guards, so a ruleset never turns into flags sprinkled through the code.
"""

from __future__ import annotations

from .charts.four_winds import (
    FOUR_WINDS_STATE_PHASES,
    FOUR_WINDS_STATE_RULES,
    FOUR_WINDS_STEPS,
    FourWindsCharleston,
    FourWindsOptions,
)
from .charts.standard import (
    STANDARD_STEPS,
    STATE_PHASES,
    STATE_RULES,
    CourtesyMode,
    Options,
    SecondCharlestonOrder,
    StandardCharleston,
)
from .ruleset import DEFAULT_RULESET, RULESETS, Ruleset, get_ruleset, register

register(
    Ruleset(
        name="nmjl",
        title="National Mah Jongg League",
        description=(
            "The League's Charleston: Right, Across, Left; a vote; Left, Across, Right; "
            "blind passes on the last pass of each Charleston; a late objection may stop the "
            "Second Charleston until its first pass resolves; the courtesy pair "
            "exchanges the smaller offer."
        ),
        defaults=Options(),
        chart=StandardCharleston,
        steps=STANDARD_STEPS,
        state_rules=STATE_RULES,
        phases=STATE_PHASES,
    ),
    Ruleset(
        name="house",
        title="House rules (implementation spec)",
        description=(
            "As nmjl, but the Second Charleston goes Across, Left, Right; no blind pass; "
            "objections at the vote only; "
            "courtesy counts may differ within a pair (each gives what they chose)."
        ),
        defaults=Options(
            second_charleston_order=SecondCharlestonOrder.ACROSS_LEFT_RIGHT,
            blind_pass=False,
            late_objection=False,
            courtesy_mode=CourtesyMode.ASYMMETRIC,
        ),
        chart=StandardCharleston,
        steps=STANDARD_STEPS,
        state_rules=STATE_RULES,
        phases=STATE_PHASES,
    ),
    Ruleset(
        name="four_winds",
        title="Four Winds program",
        description=(
            "Six exchanges in pairs (East-West, South-North, East-South, West-North, "
            "East-North, West-South), 3 tiles each way, the first-named player giving first; "
            "no blind pass; then Ding Dong at East's request (one tile to each other "
            "player, up to 3 a deal) until a player declares Ready. Each on every round, on "
            "the North round only, or off."
        ),
        defaults=FourWindsOptions(),
        chart=FourWindsCharleston,
        steps=FOUR_WINDS_STEPS,
        state_rules=FOUR_WINDS_STATE_RULES,
        phases=FOUR_WINDS_STATE_PHASES,
    ),
)


__all__ = [
    "DEFAULT_RULESET",
    "RULESETS",
    "CourtesyMode",
    "Options",
    "Ruleset",
    "SecondCharlestonOrder",
    "get_ruleset",
]

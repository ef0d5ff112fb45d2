"""Rulesets as data: a named profile of options plus the chart that plays it.

A game's ruleset and options are fixed when it is created. Any option can be overridden
per game (``resolve("nmjl", {"blind_pass": False})``); the chart reads options only
through its guards, so a ruleset never turns into flags sprinkled through the code.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError
from statemachine import StateChart

from .charts.four_winds import (
    FOUR_WINDS_STATE_RULES,
    FOUR_WINDS_STEPS,
    FourWindsCharleston,
    FourWindsOptions,
    FourWindsTable,
)
from .charts.standard import (
    STANDARD_STEPS,
    STATE_RULES,
    CourtesyMode,
    Options,
    SecondCharlestonOrder,
    StandardCharleston,
    StandardTable,
)
from .errors import InvalidOption, UnknownRuleset
from .rulebook import get_rule
from .steps import Step
from .table import DEFAULT_RULESET, Table


@dataclass(frozen=True)
class Ruleset:
    name: str
    title: str
    description: str
    defaults: BaseModel  # the family's options model, with this ruleset's values
    chart: type[StateChart]
    steps: Mapping[str, Step]
    model: type[Table]  # the chart's domain model: the family's table class
    state_rules: Mapping[str, tuple[str, ...]]  # rule ids per chart state (rule book)

    def state_rule_ids(self, state_id: str) -> tuple[str, ...]:
        """The rules of this ruleset that a chart state plays out."""
        return tuple(
            r for r in self.state_rules.get(state_id, ()) if self.name in get_rule(r).rulesets
        )

    def options(self, overrides: Mapping[str, Any] | None = None) -> Any:
        if not overrides:
            return self.defaults
        family = type(self.defaults)
        try:
            return family.model_validate({**self.defaults.model_dump(), **overrides})
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()
            )
            raise InvalidOption(
                f"Options for ruleset {self.name!r} are invalid ({problems}). "
                f"Known options: {', '.join(family.model_fields)}."
            ) from None


RULESETS: dict[str, Ruleset] = {
    "nmjl": Ruleset(
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
        model=StandardTable,
        state_rules=STATE_RULES,
    ),
    "house": Ruleset(
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
        model=StandardTable,
        state_rules=STATE_RULES,
    ),
    "four_winds": Ruleset(
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
        model=FourWindsTable,
        state_rules=FOUR_WINDS_STATE_RULES,
    ),
}


def get_ruleset(name: str) -> Ruleset:
    try:
        return RULESETS[name]
    except KeyError:
        raise UnknownRuleset(
            f"There is no ruleset {name!r}; choose one of: {', '.join(RULESETS)}."
        ) from None


__all__ = [
    "DEFAULT_RULESET",
    "RULESETS",
    "CourtesyMode",
    "Options",
    "Ruleset",
    "SecondCharlestonOrder",
    "get_ruleset",
]

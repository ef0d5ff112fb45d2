"""Rulesets as data: a named profile of options plus the chart that plays it.

A game's ruleset and options are fixed when it is created. Any option can be overridden
per game (``resolve("nmjl", {"blind_pass": False})``); the chart reads options only
through its guards, so a ruleset never turns into flags sprinkled through the code.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError
from statemachine import StateChart

from .charts.standard import STANDARD_STEPS, StandardCharleston
from .errors import InvalidOption, UnknownRuleset
from .steps import Step


class SecondCharlestonOrder(StrEnum):
    LEFT_ACROSS_RIGHT = "left-across-right"
    ACROSS_LEFT_RIGHT = "across-left-right"


class CourtesyMode(StrEnum):
    AGREED_MIN = "agreed_min"  # the pair exchanges the smaller of the two offers
    ASYMMETRIC = "asymmetric"  # each player gives what they chose, 0-3


class Options(BaseModel):
    """The choices on which the rule documents disagree."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_enum_values=False)

    second_charleston_order: SecondCharlestonOrder = SecondCharlestonOrder.LEFT_ACROSS_RIGHT
    blind_pass: bool = True
    courtesy_mode: CourtesyMode = CourtesyMode.AGREED_MIN
    require_placing: bool = True


@dataclass(frozen=True)
class Ruleset:
    name: str
    title: str
    description: str
    defaults: Options
    chart: type[StateChart]
    steps: Mapping[str, Step]

    def options(self, overrides: Mapping[str, Any] | None = None) -> Options:
        if not overrides:
            return self.defaults
        try:
            return Options.model_validate({**self.defaults.model_dump(), **overrides})
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()
            )
            raise InvalidOption(
                f"Options for ruleset {self.name!r} are invalid ({problems}). "
                f"Known options: {', '.join(Options.model_fields)}."
            ) from None


RULESETS: dict[str, Ruleset] = {
    "nmjl": Ruleset(
        name="nmjl",
        title="National Mah Jongg League",
        description=(
            "The League's Charleston: Right, Across, Left; a vote; Left, Across, Right; "
            "blind passes on the last pass of each Charleston; the courtesy pair "
            "exchanges the smaller offer."
        ),
        defaults=Options(),
        chart=StandardCharleston,
        steps=STANDARD_STEPS,
    ),
    "house": Ruleset(
        name="house",
        title="House rules (implementation spec)",
        description=(
            "As nmjl, but the Second Charleston goes Across, Left, Right; no blind pass; "
            "courtesy counts may differ within a pair (each gives what they chose)."
        ),
        defaults=Options(
            second_charleston_order=SecondCharlestonOrder.ACROSS_LEFT_RIGHT,
            blind_pass=False,
            courtesy_mode=CourtesyMode.ASYMMETRIC,
        ),
        chart=StandardCharleston,
        steps=STANDARD_STEPS,
    ),
}
DEFAULT_RULESET = "nmjl"


def get_ruleset(name: str) -> Ruleset:
    try:
        return RULESETS[name]
    except KeyError:
        raise UnknownRuleset(
            f"There is no ruleset {name!r}; choose one of: {', '.join(RULESETS)}."
        ) from None

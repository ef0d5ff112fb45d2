"""What a ruleset is, and the registry the chart families' rulesets are entered in.

A ruleset is data: a named profile of options plus the chart that plays it. Which table
class (the chart's domain model) drives a chart is the family's own knowledge, kept with
the tables (``Table.FAMILIES[chart]``), so this module needs no table and sits below
them: the shared table resolves ``"nmjl"`` to its ruleset here without importing the
families back, and :mod:`charleston_fsm.engine.rulesets` (the catalogue, above the
families) enters each ruleset here when the engine package is imported.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError
from statemachine import StateChart

from ..rulebook import get_rule
from .errors import InvalidOption, UnknownRuleset
from .field_errors import field_errors
from .steps import Step

DEFAULT_RULESET = "nmjl"


@dataclass(frozen=True)
class Ruleset:
    name: str
    title: str
    description: str
    defaults: BaseModel  # the family's options model, with this ruleset's values
    chart: type[StateChart]
    steps: Mapping[str, Step]
    state_rules: Mapping[str, tuple[str, ...]]  # rule ids per chart state (rule book)
    phases: Mapping[str, str]  # what the table does in each top-level state (progress.py)

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
            problems = field_errors(exc.errors(), unnamed="options")
            raise InvalidOption(
                f"Options for ruleset {self.name!r} are invalid ({problems}). "
                f"Known options: {', '.join(family.model_fields)}."
            ) from None


#: every ruleset by name, in the order the catalogue enters them
RULESETS: dict[str, Ruleset] = {}


def register(*rulesets: Ruleset) -> None:
    """Enter rulesets in the registry (the catalogue does, once, at import)."""
    for ruleset in rulesets:
        RULESETS[ruleset.name] = ruleset


def get_ruleset(name: str) -> Ruleset:
    try:
        return RULESETS[name]
    except KeyError:
        raise UnknownRuleset(
            f"There is no ruleset {name!r}; choose one of: {', '.join(RULESETS)}."
        ) from None

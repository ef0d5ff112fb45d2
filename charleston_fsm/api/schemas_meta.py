"""What the service says about itself: its rulesets (the options, steps and joker rule a
platform offers its players before creating a game) and its health, for the OpenAPI
document (``routes_meta.py`` serves them)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from ..engine.seats import Direction, Seat
from ..engine.view_models import RulesetName, StateId


class OptionInfo(BaseModel):
    type: Literal["string", "boolean", "integer"]
    default: str | bool | int
    choices: list[str] | None = Field(None, description="The values a string option takes.")


class RulesetStep(BaseModel):
    state: StateId
    label: str
    participants: list[Seat]
    direction: Direction | None = Field(description="null: a pair swaps (courtesy).")
    count: int | None = Field(description="Exact tiles per seat; null: 0-3, settled at the table.")
    blind: bool
    courtesy: bool


class JokerRule(BaseModel):
    """Why a joker cannot be lifted for a pass: a page says it before any refusal."""

    rule: str = Field(description="The rule's id in the rule book (docs/rules.md).")
    message: str = Field(description="The refusal's exact words.")


class RulesetInfo(BaseModel):
    name: RulesetName
    title: str
    description: str
    options: dict[str, OptionInfo] = Field(description="Every option, its type and default.")
    steps: list[RulesetStep]
    links: dict[Literal["diagram"], str]
    joker_rule: JokerRule
    rules: dict[str, str] = Field(
        description="The ruleset's rules of the rule book (docs/rules.md): id -> statement, "
        "in the project's own words (a client's help text)."
    )
    state_rules: dict[str, list[str]] = Field(
        description="The rule ids each chart state plays out (this ruleset's only)."
    )
    state_names: dict[str, str] = Field(
        description="Every chart state's name for people, by its id (First Charleston: pass Right)."
    )


class RulesetList(BaseModel):
    rulesets: list[RulesetInfo]


class Health(BaseModel):
    status: Literal["ok"]
    pid: int = Field(
        description="The process that answered: one of N with 'serve --workers N'.",
    )


class Ready(BaseModel):
    status: Literal["ready"]
    schema_: Literal["current"] = Field(alias="schema")
    notifier: Literal["in-process", "postgres-listen"] = Field(
        description="How live updates reach streams: in-process, or PostgreSQL LISTEN/NOTIFY."
    )
    reads: dict[str, Any] | None = Field(
        None,
        description="With standbys (serve --read-database-url): `max_lag_seconds` and, per "
        "standby, `name`, `used`, `lag_seconds`, `lag_bytes`, `replay_paused`, "
        "`not_used_because`, `reads` and `fallbacks` (reads it could not answer, asked "
        "of the primary). A standby not used sends its reads to the primary: still ready.",
    )

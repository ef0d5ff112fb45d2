"""A round's request body and answers, for the OpenAPI document (beside :mod:`.schemas`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, StrictInt

from ..engine.seats import Seat
from ..engine.view_models import RulesetName, StateId
from ..store.credentials import MAX_DELAY
from .schemas import CreatedGame, CreateGame, Name


class RoundTableSpec(CreateGame):
    """One table of a round: a create-game request, plus what a round adds."""

    label: Name | None = Field(None, description="The table's name in the round's listing.")


class CreateRound(BaseModel):
    """Many tables in one call: a list of tables, or one table and a count."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"name": "Round 1", "table": {"ruleset": "nmjl", "seed": 100}, "count": 40},
                {"tables": [{"seed": 1, "bots": ["north"]}, {"ruleset": "house", "seed": 2}]},
            ]
        },
    )
    name: Name | None = Field(None, description="The round's name (e.g. 'Round 1').")
    tables: list[RoundTableSpec] | None = Field(
        None, description="One spec per table, table 1 first (or give `table` and `count`)."
    )
    table: RoundTableSpec | None = Field(
        None,
        description="One spec for `count` tables; its seed (if any) is table 1's, then "
        "seed+1, seed+2, …; without seed or hands each table gets a random seed.",
    )
    count: StrictInt | None = Field(
        None, ge=1, description="How many tables `table` makes (an integer, not text)."
    )
    start: Literal["now", "held"] | AwareDatetime = Field(
        "now",
        description="When every table starts: now (default); held (the round's director "
        "starts them, all in one instant: POST /v1/rounds/{id}/start); or a start time "
        "(ISO 8601 with its zone): each table starts at that very instant, once. A table's "
        "own `start` is refused in a round.",
    )
    spectator_delay: int = Field(
        0,
        ge=0,
        le=MAX_DELAY,
        strict=True,
        description="Seconds the round's spectator link lags behind its tables (0: live).",
    )


#: a command body is an engine command without ``seat``: documented by examples


class CreatedTable(CreatedGame):
    """One table of a new round: its game, tokens and links, as ``POST /v1/games`` gives."""

    table: int = Field(description="The table's number in the round, from 1.")
    label: str | None
    bots: list[Seat] = Field(description="Seats the service's bot plays.")


class CreatedRound(BaseModel):
    round_id: str
    name: str | None
    organiser_id: str | None = Field(
        None,
        description="The organiser whose key created the round (that key directs it and "
        "its tables); null: the platform's.",
    )
    token: str = Field(
        description="The round director's token: it lists the round (GET /v1/rounds/{id}) "
        "and opens each of its tables as their director (the room's links to each desk), "
        "never as a seat; each table's own director token opens that table. Shown once."
    )
    tables: list[CreatedTable]
    spectator_token: str = Field(
        description="The round's spectator link's secret: it lists the round's tables and "
        "shows each as a spectator sees it (never a tile). Shown once."
    )
    links: dict[Literal["self", "room", "spectator"], str] = Field(
        description="The round's API path, its room page with the round token after # "
        "(/room/ID#token=…): every table live, for the round's director; and its "
        "spectator page (/watch/round/ID#token=…)."
    )


class RoundTableState(BaseModel):
    """One table of a round at a glance (no tiles): where it is and whom it waits for."""

    table: int
    game_id: str
    ruleset: RulesetName | None = Field(description="null while the game is quarantined.")
    state: list[StateId]
    state_labels: list[str]
    awaiting: list[Seat] = Field(
        description="Seats with a command the table waits for (a pass to confirm, tiles to "
        "place, a vote, a courtesy offer, a Ding Dong to give …)."
    )
    late: list[Seat] = Field(description="Seats whose clock ran out, as the director view says.")
    finished: bool
    ended_reason: str | None = Field(description="Why it ended, as the record wrote it.")
    quarantined: bool = Field(description="Its record failed verify: nothing is served from it.")
    last_seq: int
    players: dict[str, Any]
    ending: str | None = Field(
        None,
        description="How the Charleston ended, in words with the players' names (the "
        "view's game.ending.text); null while it runs.",
    )
    moved_at: str | None = Field(
        None,
        description="When the table last moved (its last row that is not a clock's or a "
        "director's note): the awaited seats wait since.",
    )
    clock: dict[str, Any] | None = Field(
        None,
        description="The clock at a glance: paused and held (bools), start_at and "
        "started_at (the start gate), bots (seats the bot plays) and deadlines (seat: "
        "due_at); null when the game has no clock, bots or gate.",
    )
    calls: dict[Seat, dict[str, Any]] = Field(
        default_factory=dict,
        description="Open calls to the director by seat: at (when) and reason (the "
        "caller's, for the director only).",
    )


class RoundCounts(BaseModel):
    tables: int
    finished: int
    active: int
    late_seats: int
    quarantined: int
    held: int = Field(0, description="Tables not started yet.")
    paused: int = Field(0, description="Tables whose clock is paused.")
    calls: int = Field(0, description="Open calls to the director.")


class RoundView(BaseModel):
    """``GET /v1/rounds/{id}``: every table of the round, for its director."""

    round_id: str
    name: str | None
    created_at: str
    settings: dict[str, Any] = Field(description="What the round was created with.")
    counts: RoundCounts
    tables: list[RoundTableState] = Field(description="Table 1 first.")


class RoundActBody(BaseModel):
    """A round's act: only its command id (or send ``Idempotency-Key``)."""

    model_config = ConfigDict(extra="forbid")
    command_id: str | None = Field(None, description="Makes a retry safe.")


class TableActOutcome(BaseModel):
    table: int
    game_id: str
    done: bool = Field(description="Whether this table took the act (now or by an earlier try).")
    duplicate: bool = Field(description="True when an earlier try with this id did it.")
    last_seq: int | None
    code: str | None = Field(description="Why not, when not done (a refusal's code).")
    detail: str | None


class RoundActResult(BaseModel):
    round_id: str
    act: Literal["start", "pause", "resume"]
    at: str = Field(description="The act's moment: every started table's clock counts from it.")
    done: int = Field(description="How many tables took the act.")
    tables: list[TableActOutcome] = Field(description="Table 1 first.")
    command_id: str

"""A round's request body and answers, for the OpenAPI document (beside :mod:`.schemas`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt

from ..engine.seats import Seat
from ..engine.view_models import RulesetName, StateId
from ..store.rounds.credentials import MAX_DELAY
from .schemas import CreatedGame, CreateGame, Name
from .starts import StartField, start_field


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
                {
                    "name": "Duplicate 1",
                    "table": {"ruleset": "nmjl"},
                    "count": 8,
                    "deal": "duplicate",
                },
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
    start: StartField = start_field(
        "When every table starts: now (default); held (the round's director starts them, "
        "all in one instant: POST /v1/rounds/{id}/start); or a start time (ISO 8601 with "
        "its zone, to come, within a year): each table starts at that very instant, once. "
        "A table's own `start` is refused in a round; so is all_present (a single game's)."
    )
    spectator_delay: int = Field(
        0,
        ge=0,
        le=MAX_DELAY,
        strict=True,
        description="Seconds every spectator link of the round lags behind its tables "
        "(0: live): the round's link, and each table's own link (a table's own "
        "`spectator_delay` may only be longer), unless the table is in `live_tables`.",
    )
    live_tables: list[StrictInt] = Field(
        default_factory=list,
        max_length=500,
        description="Featured tables (by number, from 1) whose own spectator link is "
        "live, an explicit choice for a broadcaster: the round's link still shows them "
        "`spectator_delay` behind. Every table's answer states its link's delay "
        "(`spectator`).",
    )
    deal: Literal["per_table", "duplicate"] = Field(
        "per_table",
        description="per_table (default): each table its own deal (its seed or hands, or a "
        "random seed); duplicate: one deal for every table, the same tiles to the same "
        "winds, so the tables' Charlestons can be compared "
        "(GET /v1/rounds/{id}/comparison). A duplicate round's tables share one ruleset "
        "and options and give no seed or hands of their own.",
    )
    deal_seed: StrictInt | str | None = Field(
        None,
        description="A duplicate round's deal number, as text (decimal digits, 0 to 2^62; "
        "an integer is taken too): every table is dealt from it. Absent: drawn once at "
        "random when the round is created. Only with deal: duplicate.",
        examples=["4611686018427387903"],
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
    links: dict[Literal["self", "room", "spectator", "comparison"], str] = Field(
        description="The round's API path, its room page with the round token after # "
        "(/room/ID#token=…): every table live, for the round's director; and its "
        "spectator page (/watch/round/ID#token=…). A duplicate round adds its "
        "comparison page (/compare/ID#token=…, the round director's)."
    )
    deal: Literal["per_table", "duplicate"] = Field(
        "per_table", description="One deal per table, or one for every table (duplicate)."
    )
    deal_seed: str | None = Field(
        None,
        description="A duplicate round's deal number, as text (it exceeds 2^53: never read "
        "it as a JavaScript number); null for a round dealt per table. Shown to the round's "
        "creator and director only: it gives every tile of every table.",
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

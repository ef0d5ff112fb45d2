"""Request bodies, and response shapes for the OpenAPI document.

The response models document what handlers return (as JSON, without a second validation:
the views are already built by their models in :mod:`charleston_fsm.engine.views`).
``tests/test_api_schema.py`` checks every answer of a played game against them.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

from ..engine.charts.four_winds import FourWindsOptions
from ..engine.clock_options import MAX_SECONDS, ClockOptions
from ..engine.clocks import MAX_PACE
from ..engine.commands import PlayerId
from ..engine.free_text import ONE_LINE, KeptText
from ..engine.rulesets import Options
from ..engine.seats import Seat
from ..engine.tiles import HAND_SIZE
from ..engine.view_models import DirectorView, RulesetName, SeatView
from ..store.rounds.credentials import MAX_DELAY
from .starts import StartField, start_field

SeatRole = Literal["east", "south", "west", "north"]
Role = Literal[SeatRole, "director"]

MAX_NAME = 64  # a player's display name, an option's name or text value
MAX_OPTIONS = 16  # overrides in one options document (the ruleset has 4 options)
MAX_HAND = max(HAND_SIZE.values())  # tiles dealt to East
MAX_SEED = 2**62  # a float in JSON Schema: exactly representable


#: a short text the store keeps (names): one printable line (engine/free_text.py)
Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME), ONE_LINE]
#: an option's value: options are flags and choices, never documents
OptionValue = bool | int | Annotated[str, Field(max_length=MAX_NAME), ONE_LINE] | None


# -- request bodies -----------------------------------------------------------------------
def _distinct(seats: list[Seat]) -> list[Seat]:
    if len(set(seats)) != len(seats):
        raise ValueError("names a seat twice")
    return seats


def _whole_seconds(value: Any) -> Any:
    """A number of whole seconds (``2`` or ``2.0``), never text, a flag or a fraction."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value != int(value)
    ):
        raise ValueError("must be a whole number of seconds, at least 1")
    return int(value)


#: a clock's limit as the service takes it: whole seconds, 1 to a day
WholeSeconds = Annotated[int, BeforeValidator(_whole_seconds), Field(ge=1, le=MAX_SECONDS)]


class ClockSettings(ClockOptions):
    """The clock of a game created over HTTP: as the engine's options, in whole seconds.

    (The engine takes fractions, which its own tests use; a service's players get at
    least a second, and a value such as 1e-300 is refused.)
    """

    confirm_pass: WholeSeconds | None = Field(
        None, description="Whole seconds to confirm a pass, exchange or gift (at least 1)."
    )
    vote: WholeSeconds | None = Field(None, description="Whole seconds to vote (at least 1).")
    courtesy: WholeSeconds | None = Field(
        None, description="Whole seconds to offer, then choose, courtesy tiles (at least 1)."
    )
    place_tiles: WholeSeconds | None = Field(
        None, description="Whole seconds to place received tiles (at least 1)."
    )


class CreateGame(BaseModel):
    """A new table: a ruleset, its options, and a seed or explicit hands."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"ruleset": "nmjl", "seed": 42, "players": {"east": "Ann", "south": "Bea"}},
                {"ruleset": "house", "options": {"require_placing": False}},
            ]
        },
    )
    ruleset: Name = Field("nmjl", description="One of GET /v1/rulesets.")
    options: dict[Name, OptionValue] | None = Field(
        None, max_length=MAX_OPTIONS, description="Overrides of the ruleset's options."
    )
    seed: int | None = Field(
        None, ge=0, le=MAX_SEED, description="Reproducible shuffled deal (random if omitted)."
    )
    hands: dict[Seat, Annotated[list[int], Field(max_length=MAX_HAND)]] | None = Field(
        None, description="Explicit deal: tile ids per seat (East 14, others 13)."
    )
    players: dict[Seat, Name] | None = Field(None, description="Display names per seat.")
    player_ids: dict[Seat, PlayerId] | None = Field(
        None,
        description="The platform's own id of each seat's player (1-128 printable ASCII "
        "characters, no space; opaque to the service): kept in the record, the audit, the "
        "results and the feed's entries and webhooks that name a seat; a substitute brings "
        "their own.",
    )
    clock: ClockSettings | None = Field(
        None,
        description="Per-kind time limits in seconds and what happens on expiry; absent: no "
        "clock. Fixed at creation (in the game_created row).",
    )
    bots: Annotated[list[Seat], AfterValidator(_distinct)] | None = Field(
        None,
        max_length=4,
        description="Seats the service's auto player plays from the start (durable: through "
        "the clock's deadlines, so they survive restarts and work across processes).",
    )
    bot_pace: float | None = Field(
        None,
        ge=0,
        le=MAX_PACE,
        description="Seconds a bot seat thinks over a decision, on average (each time "
        "between half and one and a half of it; three times that for its first pass). "
        "Absent: 3 when people play beside bots (so East may declare a Heavenly Hand and "
        "the vote is seen seat by seat), 0 when bots play every seat.",
    )
    start: StartField = start_field(
        "now (default); held: seats see their racks, but no clock runs and no command is "
        "taken until the director starts the table (start_game); all_present: held until "
        "every seat a person plays has opened its page (POST /v1/games/{id}/present), "
        "then it starts by itself; or a start time (ISO 8601 with its zone, to come, "
        "within a year): the table starts then by itself. Anything else is a 422."
    )
    spectator_delay: int = Field(
        0,
        ge=0,
        le=MAX_DELAY,
        strict=True,
        description="Seconds the spectator's link lags behind the table (0: live; at most "
        "an hour), applied by the service.",
    )


COMMAND_EXAMPLES = {
    "confirm_pass": {
        "summary": "Confirm a pass (3 tiles, or fewer plus a blind count)",
        "value": {"type": "confirm_pass", "tiles": [4, 57, 98], "command_id": "c-1"},
    },
    "blind": {
        "summary": "Blind pass: 1 tile from the hand, 2 forwarded unseen",
        "value": {"type": "confirm_pass", "tiles": [12], "blind": 2, "command_id": "c-7"},
    },
    "place": {"summary": "Place received tiles", "value": {"type": "place_tiles"}},
    "vote": {"summary": "Vote", "value": {"type": "vote", "choice": "continue"}},
    "offer": {"summary": "Courtesy offer", "value": {"type": "offer_courtesy", "count": 2}},
}


# -- responses ------------------------------------------------------------------------------


class Problem(BaseModel):
    """An error (RFC 9457 ``application/problem+json``)."""

    type: str = Field(examples=["urn:charleston-fsm:problem:wrong_count"])
    title: str = Field(examples=["Wrong count"])
    status: int = Field(examples=[422])
    detail: str = Field(examples=["First Charleston: pass Right is exactly 3 tile(s)."])
    code: str = Field(examples=["wrong_count"])
    kind: str = Field(examples=["rule"], description="rule, not_now, setup, not_found, auth …")
    rule: str = Field(
        examples=["PASS-01"],
        description="The id of the rule the refusal enforces (docs/rules.md); empty when "
        "the service itself failed.",
    )
    rule_text: str = Field(
        examples=["A standard pass is exactly 3 tiles; any other count is refused."],
        description="The statement of that rule.",
    )
    instance: str | None = None
    command_id: str | None = Field(
        None, description="On an answer to a command: its id (send it again to retry safely)"
    )


class GameTokens(BaseModel):
    """A new game's secrets, by who holds them (``Authorization: Bearer <token>``)."""

    east: str = Field(description="East's token (SeatToken).")
    south: str = Field(description="South's token (SeatToken).")
    west: str = Field(description="West's token (SeatToken).")
    north: str = Field(description="North's token (SeatToken).")
    director: str = Field(description="The table's director token (DirectorToken).")
    spectator: str = Field(description="The table's spectator link (SpectatorToken).")


class GameLinks(BaseModel):
    """A new game's API paths, and its pages with their secrets after #."""

    self: str = Field(description="GET: the table as the token's holder sees it.")
    commands: str = Field(description="POST: a seat's commands.")
    events: str = Field(description="GET: the events, redacted for the token's holder.")
    stream: str = Field(description="GET: the events as server-sent events.")
    east: str = Field(description="East's page, its token after #.")
    south: str = Field(description="South's page, its token after #.")
    west: str = Field(description="West's page, its token after #.")
    north: str = Field(description="North's page, its token after #.")
    director: str = Field(description="The director's desk, its token after #.")
    spectator: str = Field(description="The spectators' page, the link's token after #.")


class SpectatorLinkState(BaseModel):
    """How far behind the table a spectator link shows it: every link states it."""

    delay: int = Field(description="Seconds the link lags behind the table (0: live).")
    live: bool = Field(
        description="True when the link shows the table as it happens (no delay): in a "
        "round with a delay, only a featured table's link given live by the director."
    )


class CreatedGame(BaseModel):
    game_id: str
    ruleset: RulesetName
    organiser_id: str | None = Field(
        None,
        description="The organiser whose key created the game (that key directs it); "
        "null: the platform's.",
    )
    options: Options | FourWindsOptions = Field(
        description="The game's options: the ruleset's, with overrides."
    )
    tokens: GameTokens = Field(
        description="One secret per seat (east, south, west, north), one for the director "
        "and one for the table's spectator link. Shown once; the service keeps only their "
        "SHA-256."
    )
    links: GameLinks = Field(
        description="API paths (self, commands, events, stream) and one page per seat, "
        "for the director's desk and for spectators (/watch/ID: read-only, behind the "
        "link's delay), each with its secret after # (e.g. /table/ID#token=…): hand them "
        "out as they are."
    )
    spectator: SpectatorLinkState = Field(
        description="The delay of the table's spectator link (links.spectator)."
    )


class SeatGameView(BaseModel):
    """The table as a seat sees it."""

    game_id: str
    role: SeatRole = Field(description="The token's seat.")
    view: SeatView = Field(description="The seat's own view.")


class DirectorGameView(BaseModel):
    """The table as the director sees it."""

    game_id: str
    role: Literal["director"] = Field(description="The director's token.")
    view: DirectorView = Field(description="Everything at the table.")


#: ``GET /v1/games/{id}``: the seat view for a seat's token, the director view for the director's
GameView = Annotated[SeatGameView | DirectorGameView, Field(discriminator="role")]


class EventOut(BaseModel):
    seq: int
    type: str
    seat: str | None
    payload: dict[str, Any] = Field(description="Redacted for a seat (views.redact)")
    created_at: str
    command_id: str | None = Field(None, description="A seat sees only its own command ids")
    prev_hash: str | None = Field(None, description="Director only")
    hash: str | None = Field(None, description="Director only")


class EventList(BaseModel):
    game_id: str
    role: str
    events: list[EventOut]
    last_seq: int


class CommandResult(BaseModel):
    game_id: str
    command_id: str
    duplicate: bool = Field(description="True when this command id was already stored")
    events: list[EventOut]
    view: SeatView = Field(description="The seat's view after the command")


class DirectorCommandResult(BaseModel):
    """The answer to a command of the platform or director (``close_ding_dong``)."""

    game_id: str
    command_id: str
    duplicate: bool = Field(description="True when this command id was already stored")
    events: list[EventOut]
    view: DirectorView = Field(description="The director's view after the command")


class SeatReplay(BaseModel):
    """A seat's own view of the table as it was at ``seq``."""

    game_id: str
    role: SeatRole
    seq: int | None = Field(description="The last seq folded; null: all of them.")
    view: SeatView


class DirectorReplay(BaseModel):
    """The director's view of the table as it was at ``seq``."""

    game_id: str
    role: Literal["director"]
    seq: int | None = Field(description="The last seq folded; null: all of them.")
    view: DirectorView


Replay = Annotated[SeatReplay | DirectorReplay, Field(discriminator="role")]


class FindingOut(BaseModel):
    kind: str = Field(
        description="missing_rows, beyond_head, bad_link, changed_row, reordered_row, "
        "retyped_row, head_mismatch, replay_failed, projection_missing, projection_differs, "
        "anchor_bad_signature, anchor_foreign_key, anchor_row_gone, anchor_differs, "
        "anchor_missing"
    )
    seq: int | None
    message: str


class QuarantineOut(BaseModel):
    game_id: str
    number: int
    active: bool
    since: str
    findings: list[FindingOut]
    lifted_at: str | None
    lifted_by: str | None
    lift_note: str | None


class VerifyResult(BaseModel):
    """The same verdict as ``charleston-fsm verify``: hashes, head, anchors, projection."""

    game_id: str
    ok: bool
    first_bad_seq: int | None
    message: str
    findings: list[FindingOut]
    checked: int = Field(description="Event rows that exist (all checked)")
    recorded_seq: int = Field(description="The last seq the game records")
    head_hash: str | None = Field(description="Hash of the last stored row")
    anchored_seq: int | None = Field(description="Seq of the newest stored anchor")
    anchors_checked: int
    quarantine: QuarantineOut | None = Field(description="The active quarantine, if any")


class QuarantineList(BaseModel):
    game_id: str
    quarantines: list[QuarantineOut] = Field(description="Active and lifted, oldest first")


class LiftQuarantine(BaseModel):
    model_config = ConfigDict(extra="forbid")
    note: KeptText = Field(
        "", max_length=1000, description="What was repaired, for the record of the lift"
    )


#: the headers of every answer to a command (the id also names problems)
COMMAND_HEADERS = {
    "Command-ID": {
        "description": "The command id (the client's or a made-up one), percent-encoded",
        "schema": {"type": "string"},
    },
    "Idempotent-Replayed": {
        "description": "`true` when the id was already stored (a duplicate)",
        "schema": {"type": "string"},
    },
}


class BotStarted(BaseModel):
    game_id: str
    seat: Seat
    bot: Literal["playing"]
    started: bool = Field(description="False when a bot already plays the seat here.")


class BotStopped(BaseModel):
    game_id: str
    seat: Seat
    stopped: bool = Field(description="False when no bot played the seat here.")


PROBLEM_DESCRIPTIONS = {
    400: "Malformed request",
    401: "Missing or unknown token",
    403: "The token does not allow this",
    404: "No such game, event or ruleset",
    408: "The request body did not arrive in time (serve --body-timeout); nothing was done",
    409: "Not valid now (kind not_now) or a reused command id",
    413: "The request body is larger than the service's limit",
    415: "The body was sent with a Content-Encoding: send plain JSON",
    422: "A rule refusal (kind rule), a bad setup (kind setup), or a text the record cannot "
    "keep (invalid_text: NUL, a lone surrogate, too long)",
    423: "The game is quarantined (code game_quarantined): its stored record failed verify; "
    "a director must repair it and lift the quarantine",
    500: "The service failed unexpectedly (the problem names the request id)",
    503: "Not available now (database, schema, Graphviz): retry later",
}


def problem_response(status: int) -> dict[str, Any]:
    """One problem+json entry of an OpenAPI ``responses`` object."""
    return {
        "description": PROBLEM_DESCRIPTIONS[status],
        "content": {
            "application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}
        },
    }


def problems(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """``responses=`` entries documenting problem+json errors."""
    return {
        status: {
            "model": Problem,
            "content": {"application/problem+json": {}},
            "description": PROBLEM_DESCRIPTIONS[status],
        }
        for status in statuses
    }

"""Request bodies, and response shapes for the OpenAPI document.

The response models are documentation only (handlers return JSON). Views are documented
loosely (``dict``): their fields are those of :func:`charleston_fsm.views.seat_view` and
:func:`charleston_fsm.views.director_view`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..seats import Seat


# -- request bodies -----------------------------------------------------------------------
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
    ruleset: str = Field("nmjl", description="One of GET /v1/rulesets.")
    options: dict[str, Any] | None = Field(None, description="Overrides of the ruleset's options.")
    seed: int | None = Field(None, description="Reproducible shuffled deal (random if omitted).")
    hands: dict[Seat, list[int]] | None = Field(
        None, description="Explicit deal: tile ids per seat (East 14, others 13)."
    )
    players: dict[Seat, str] | None = Field(None, description="Display names per seat.")


#: a command body is an engine command without ``seat``: documented by examples
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
    rule: str = Field(examples=["A standard pass is exactly 3 tiles; a courtesy pass 0-3."])
    instance: str | None = None


class CreatedGame(BaseModel):
    game_id: str
    ruleset: str
    options: dict[str, Any]
    tokens: dict[str, str] = Field(
        description="One secret per seat (east, south, west, north) and one for the director. "
        "Shown once; the service keeps only their SHA-256."
    )
    links: dict[str, str]


class GameView(BaseModel):
    game_id: str
    role: str = Field(description="east, south, west, north or director")
    view: dict[str, Any] = Field(description="seat_view for a seat, director_view for the director")


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
    view: dict[str, Any] = Field(description="The seat's view after the command")


class Replay(BaseModel):
    game_id: str
    role: str
    seq: int | None
    view: dict[str, Any]


class VerifyResult(BaseModel):
    game_id: str
    ok: bool
    first_bad_seq: int | None
    message: str


def problems(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """``responses=`` entries documenting problem+json errors."""
    return {
        status: {
            "model": Problem,
            "content": {"application/problem+json": {}},
            "description": {
                400: "Malformed request",
                401: "Missing or unknown token",
                403: "The token does not allow this",
                404: "No such game, event or ruleset",
                409: "Not valid now (kind not_now) or a reused command id",
                422: "A rule refusal (kind rule) or a bad setup (kind setup)",
                503: "Not available now",
            }[status],
        }
        for status in statuses
    }

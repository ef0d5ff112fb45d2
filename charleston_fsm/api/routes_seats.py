"""Who sits a seat, and a seat's call to the director.

- ``POST /games/{id}/present`` (the seat's token): the seat's page is open, at a table
  created to start when all its players are there; the last one starts it.
- ``POST /games/{id}/call`` (the seat's token): the seat calls the director, with a
  reason only the director reads; the director answers with ``answer_call`` (a director
  command: a ruling or cleared).
- ``POST /games/{id}/seats/{seat}/token`` (the director's, or the round's, token): a
  substitute sits the seat with a new token, shown once; the old one stops working at
  once here, and within a second on every other process (``token_cache``). Handing a
  seat to the service's bot and back are director commands (``hand_to_bot``,
  ``hand_back``): they need no new secret.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header, Request
from pydantic import BaseModel, ConfigDict, Field

from ..engine.annotations import arrival, call
from ..engine.commands import CallDirector, Label, PlayerId, Reason
from ..engine.seating import Deadline
from ..engine.seats import Seat
from .auth import new_token, token_hash
from .commands import command_answer, command_id_of
from .deps import (
    DirectorCredentials,
    SeatCredentials,
    StoreDep,
    TokenFirstRoute,
    director_only,
    seat_only,
    token_first,
)
from .game_setup import seat_page
from .logs import log
from .problems import command_headers
from .render import event_out
from .responses import FastJSONResponse
from .schemas import COMMAND_HEADERS, CommandResult, Name, problems

router = APIRouter(tags=["seats"], route_class=TokenFirstRoute)
CALL_REFUSAL = "The director answers calls; only a seat calls the director."
PRESENT_REFUSAL = "Only a seat arrives at its table; the director starts it from the desk."
IdempotencyKey = Annotated[str | None, Header(alias="Idempotency-Key")]


class CallBody(BaseModel):
    """A seat's call: an optional short reason, for the director's eyes only."""

    model_config = ConfigDict(extra="forbid")
    reason: Reason | None = Field(None, description="Up to 200 characters; seen by the director.")
    command_id: str | None = Field(None, description="Makes a retry safe.")


class SubstituteBody(BaseModel):
    """Who sits the seat now (shown in the record, the audit and the round's results)."""

    model_config = ConfigDict(extra="forbid")
    name: Name | None = Field(
        None,
        description="The substitute's name: the seat's name from now on on every page, in "
        "the listing and the results (absent: the seat is named by its wind alone).",
    )
    player_id: PlayerId | None = Field(
        None,
        description="The substitute's own id on the platform (1-128 printable ASCII "
        "characters, no space): the seat's id from now on in the results and the feed "
        "(absent: the seat has none; the replaced player's never passes to them).",
    )
    deadline: Deadline = Field(
        "fresh",
        description="fresh (default): the substitute gets the current step's whole time, "
        "from now; kept: what was left of the seat's deadline.",
    )
    label: Label | None = Field(
        None, description="The director's note on the seat, e.g. 'substitute: R. Chen' (64)."
    )
    command_id: str | None = Field(None, description="Makes a retry safe.")


class NewSeatToken(BaseModel):
    game_id: str
    seat: Seat
    command_id: str
    token: str = Field(description="The seat's new secret, shown once; the old one is void.")
    link: str = Field(description="The seat's page with the new secret after #.")
    events: list[dict[str, Any]] = Field(description="The seat_taken row, as the director sees it.")


def _seat_guard(request: Request) -> None:
    seat_only(request, request.path_params["game_id"], CALL_REFUSAL)


def _director_guard(request: Request) -> None:
    director_only(request, request.path_params["game_id"])


@router.post(
    "/games/{game_id}/call",
    summary="Call the director to the table (the seat's token)",
    response_model=None,
    responses={
        200: {"model": CommandResult, "headers": COMMAND_HEADERS},
        **problems(400, 401, 403, 404, 409, 422, 423, 503),
    },
    description=(
        "A `director_called` row; the round's room flags the table and the desk shows the "
        "call with its reason, which no seat and no spectator is shown. One open call per "
        "seat (a second is 409 `director_already_called`) until the director answers it "
        "(`answer_call`)."
    ),
)
@token_first(_seat_guard)
def post_call(
    game_id: str,
    request: Request,
    store: StoreDep,
    _: SeatCredentials,
    body: CallBody | None = None,
    idempotency_key: IdempotencyKey = None,
) -> FastJSONResponse:
    seat = seat_only(request, game_id, CALL_REFUSAL)
    body = body or CallBody()
    command_id = command_id_of(body.command_id, idempotency_key)
    request.state.command_id = command_id
    annotation = call(CallDirector(seat=seat, reason=body.reason))
    result = store.writes.annotate(game_id, annotation, f"{seat.value}:{command_id}")
    log.info("director called", extra={"role": seat.value})
    return command_answer(store, game_id, command_id, result, seat)


@router.post(
    "/games/{game_id}/present",
    summary="The seat's page is open: at a table waiting for its players (the seat's token)",
    response_model=None,
    responses={
        200: {"model": CommandResult, "headers": COMMAND_HEADERS},
        **problems(401, 403, 404, 409, 423, 503),
    },
    description=(
        "For a game created with `start: all_present`: a `seat_arrived` row (with the seats "
        "still awaited); the last seat's arrival also writes `game_started` (`seated: "
        "true`) in the same transaction, so every deadline and the bots' first look count "
        "from then. Answered once per seat (a second call is a duplicate of the first). "
        "409 `not_awaited` when the table does not wait for this seat (it has started, or "
        "it is held for its director or a start time). The table page sends it when it "
        "opens; the seat's view lists the seats still awaited (`clock.awaiting`)."
    ),
)
@token_first(_seat_guard)
def post_present(
    game_id: str, request: Request, store: StoreDep, _: SeatCredentials
) -> FastJSONResponse:
    seat = seat_only(request, game_id, PRESENT_REFUSAL)
    command_id = "present"
    request.state.command_id = command_id
    result = store.writes.annotate(game_id, arrival(seat), f"{seat.value}:{command_id}")
    log.info("seat arrived", extra={"role": seat.value})
    return command_answer(store, game_id, command_id, result, seat)


@router.post(
    "/games/{game_id}/seats/{seat}/token",
    summary="A substitute sits the seat: a new token, the old one void (director)",
    response_model=None,
    responses={200: {"model": NewSeatToken}, **problems(400, 401, 403, 404, 409, 422, 423, 503)},
    description=(
        "A `seat_taken` row (`by: human`, the `label`, `token_replaced: true`, the "
        "substitute's `name`, `player_id` and `deadline`) and the seat's new token in one "
        "transaction; the `name` is the seat's name from then on (every page, the listing, "
        "the results; none: the seat's wind); the old token is refused at once (401 "
        "`invalid_token`) on this process and within a second on every other, and its "
        "open streams end. If the bot played the seat, the substitute takes it over. The "
        "new token is shown once; a retry with the same `command_id` stores the row once "
        "and answers with a fresh token (the lost answer's stops working)."
    ),
)
@token_first(_director_guard)
def post_seat_token(
    game_id: str,
    seat: Seat,
    request: Request,
    store: StoreDep,
    _: DirectorCredentials,
    body: SubstituteBody | None = None,
    idempotency_key: IdempotencyKey = None,
) -> FastJSONResponse:
    director_only(request, game_id)
    body = body or SubstituteBody()
    command_id = command_id_of(body.command_id, idempotency_key)
    request.state.command_id = command_id
    token = new_token()
    result = store.credentials.replace_seat_token(
        game_id,
        seat,
        token_hash(token),
        body.label,
        f"director:{command_id}",
        name=body.name,
        player_id=body.player_id,
        deadline=body.deadline,
    )
    request.app.state.roles.forget({game_id})
    store.reads.forget_names({game_id})
    log.info("seat token replaced", extra={"role": "director", "command": seat.value})
    answer = {
        "game_id": game_id,
        "seat": seat.value,
        "command_id": command_id,
        "token": token,
        "link": seat_page(game_id, token),
        "events": [event_out(e, "director") for e in result.events],
    }
    return FastJSONResponse(answer, headers=command_headers(command_id))

"""Who sits a seat, and a seat's call to the director.

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

from ..engine.annotations import call
from ..engine.commands import CallDirector, Label, Reason
from ..engine.seats import Seat
from .auth import new_token, token_hash
from .deps import Credentials, StoreDep, TokenFirstRoute, director_only, seat_only, token_first
from .logs import log
from .problems import command_headers
from .render import event_out
from .responses import FastJSONResponse
from .routes_games import command_answer, command_id_of, seat_page
from .schemas import COMMAND_HEADERS, CommandResult, problems

router = APIRouter(tags=["seats"], route_class=TokenFirstRoute)
CALL_REFUSAL = "The director answers calls; only a seat calls the director."
IdempotencyKey = Annotated[str | None, Header(alias="Idempotency-Key")]


class CallBody(BaseModel):
    """A seat's call: an optional short reason, for the director's eyes only."""

    model_config = ConfigDict(extra="forbid")
    reason: Reason | None = Field(None, description="Up to 200 characters; seen by the director.")
    command_id: str | None = Field(None, description="Makes a retry safe.")


class SubstituteBody(BaseModel):
    """Who sits the seat now (shown in the record, the audit and the round's results)."""

    model_config = ConfigDict(extra="forbid")
    label: Label | None = Field(None, description="e.g. 'substitute: R. Chen' (64 characters).")
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
    _: Credentials,
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
    "/games/{game_id}/seats/{seat}/token",
    summary="A substitute sits the seat: a new token, the old one void (director)",
    response_model=None,
    responses={200: {"model": NewSeatToken}, **problems(400, 401, 403, 404, 409, 422, 423, 503)},
    description=(
        "A `seat_taken` row (`by: human`, the `label`, `token_replaced: true`) and the "
        "seat's new token in one transaction; the old token is refused at once (401 "
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
    _: Credentials,
    body: SubstituteBody | None = None,
    idempotency_key: IdempotencyKey = None,
) -> FastJSONResponse:
    director_only(request, game_id)
    body = body or SubstituteBody()
    command_id = command_id_of(body.command_id, idempotency_key)
    request.state.command_id = command_id
    token = new_token()
    result = store.credentials.replace_seat_token(
        game_id, seat, token_hash(token), body.label, f"director:{command_id}"
    )
    request.app.state.roles.forget({game_id})
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

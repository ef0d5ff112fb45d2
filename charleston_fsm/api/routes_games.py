"""A game's life: create it, read it, send commands, list its events, replay it.

The command route (:func:`post_command`) is declared here and added to the app first,
outside the nested routers (:func:`add_command_route`): it is the request the service
answers most, and its route class (:class:`~.command_route.CommandRoute`) reads a JSON
object itself. What every command route shares lives in :mod:`.commands`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Any

from fastapi import APIRouter, Body, FastAPI, Header, Query, Request

from ..engine.views import director_view, seat_view
from ..store.database.models import MAX_SEQ
from .auth import seat_of
from .command_route import CommandRoute
from .commands import (
    command_answer,
    command_guard,
    command_request,
    execute_with_retries,
)
from .deps import (
    GameCredentials,
    PlatformCredentials,
    SeatCredentials,
    StoreDep,
    TokenFirstRoute,
    authenticate,
    token_first,
)
from .game_setup import table_setup
from .logs import log
from .organiser_keys import platform_or_organiser
from .render import event_out
from .responses import FastJSONResponse
from .schemas import (
    COMMAND_EXAMPLES,
    COMMAND_HEADERS,
    CommandResult,
    CreatedGame,
    CreateGame,
    EventList,
    GameView,
    Replay,
    problems,
)
from .schemas_commands import declared_body

AFTER = Query(ge=0, le=MAX_SEQ, description="Only events after this seq")
COMMANDS_PATH = "/games/{game_id}/commands"

router = APIRouter(tags=["games"], route_class=TokenFirstRoute)


@router.post(
    "/games",
    status_code=201,
    summary="Create a game; returns one token per seat and one for the director",
    response_model=None,
    responses={201: {"model": CreatedGame}, **problems(400, 401, 403, 408, 413, 422, 503)},
)
@token_first(platform_or_organiser)
def create_game(
    body: CreateGame, request: Request, store: StoreDep, _: PlatformCredentials
) -> FastJSONResponse:
    organiser_id = platform_or_organiser(request)
    setup = table_setup(body)
    game_id = store.registry.create_game(replace(setup.game, organiser_id=organiser_id))
    request.state.game_id = str(game_id)
    request.state.role = "platform" if organiser_id is None else "organiser"
    log.info("game created", extra={"game_id": str(game_id), "ruleset": setup.ruleset})
    answer = {**setup.created(game_id), "organiser_id": organiser_id}
    return FastJSONResponse(answer, status_code=201, headers={"Location": answer["links"]["self"]})


@router.get(
    "/games/{game_id}",
    summary="The table as the token's holder sees it (seat view or director view)",
    response_model=None,
    responses={200: {"model": GameView}, **problems(401, 404, 423, 503)},
)
def get_game(
    game_id: str, request: Request, store: StoreDep, _: GameCredentials
) -> FastJSONResponse:
    role = authenticate(request, game_id)
    view = store.reads.view(game_id, seat_of(role))
    return FastJSONResponse({"game_id": game_id, "role": role, "view": view})


@token_first(command_guard)
def post_command(
    game_id: str,
    request: Request,
    store: StoreDep,
    _: SeatCredentials,
    body: Annotated[dict[str, Any], Body(openapi_examples=COMMAND_EXAMPLES)],
    idempotency_key: Annotated[str | None, Header(alias="Idempotency-Key")] = None,
) -> FastJSONResponse:
    """A seat's command, stored once by its id (the route of :func:`add_command_route`)."""
    seat, command, command_id = command_request(request, game_id, body, idempotency_key)
    result = execute_with_retries(store, game_id, command, f"{seat.value}:{command_id}")
    return command_answer(store, game_id, command_id, result, seat)


def add_command_route(app: FastAPI, prefix: str) -> None:
    """Declare :func:`post_command` at ``prefix`` + ``COMMANDS_PATH`` as the app's first
    route: the route the OpenAPI document lists is the one that runs, matched before
    FastAPI walks the nested routers of ``include_router`` for the others."""
    app.router.add_api_route(
        prefix + COMMANDS_PATH,
        post_command,
        methods=["POST"],
        tags=["games"],
        route_class_override=CommandRoute,
        summary="Send a command for the token's seat (idempotent by command id)",
        response_model=None,
        responses={
            200: {"model": CommandResult, "headers": COMMAND_HEADERS},
            **problems(400, 401, 403, 404, 408, 409, 413, 422, 423, 503),
        },
        openapi_extra=declared_body("SeatCommand"),
        description=(
            "The body is one of the seat's commands (`SeatCommand`: the engine's commands, "
            "without `seat`: the token names it), with an optional `command_id`; the "
            "`Idempotency-Key` header may carry it instead. Sending the same command id "
            "again returns the first result (`duplicate: true`) and stores nothing. "
            "Command ids are scoped per seat. Every answer names the id (`command_id`, "
            "header `Command-ID`); a 503 `outcome_unknown` may be stored: send the same id "
            "again to learn which (docs/api.md, the retry rule)."
        ),
    )
    app.router.routes.insert(0, app.router.routes.pop())


@router.get(
    "/games/{game_id}/events",
    summary="The game's events, redacted",
    response_model=None,
    responses={200: {"model": EventList}, **problems(400, 401, 404, 423, 503)},
)
def get_events(
    game_id: str,
    request: Request,
    store: StoreDep,
    _: GameCredentials,
    after: Annotated[int, AFTER] = 0,
) -> dict[str, Any]:
    role = authenticate(request, game_id)
    events = store.reads.events(game_id, after=after)
    return {
        "game_id": game_id,
        "role": role,
        "events": [event_out(e, role) for e in events],
        "last_seq": events[-1].seq if events else after,
    }


@router.get(
    "/games/{game_id}/replay",
    summary="The table rebuilt from the events up to seq N",
    response_model=None,
    responses={200: {"model": Replay}, **problems(400, 401, 404, 423, 503)},
    description=(
        "The director gets the director view of the replayed table; a seat gets its "
        "own seat view of it (what it saw at that moment), never anyone else's."
    ),
)
def get_replay(
    game_id: str,
    request: Request,
    store: StoreDep,
    _: GameCredentials,
    seq: Annotated[int | None, Query(ge=1, le=MAX_SEQ, description="Last seq to fold")] = None,
) -> dict[str, Any]:
    role = authenticate(request, game_id)
    # a given seq may be read from a standby (a missing one is asked of the primary);
    # the table now is the primary's: a seat sees its own last command in it
    table = (store.reads if seq is None else store.standby.reads).replay(game_id, at=seq)
    seat = seat_of(role)
    names = store.reads.players(game_id)
    view = (
        director_view(table, players=names)
        if seat is None
        else seat_view(table, seat, players=names)
    )
    return {"game_id": game_id, "role": role, "seq": seq, "view": view}

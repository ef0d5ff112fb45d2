"""A game's life: create it, read it, send commands, list its events, replay it."""

from __future__ import annotations

import asyncio
import contextlib
import random
import secrets
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Body, Header, Query, Request
from fastapi.routing import APIRoute
from pydantic import ValidationError

from ..engine.commands import Command, parse_command
from ..engine.errors import InvalidCommand
from ..engine.rulesets import get_ruleset
from ..engine.seats import Seat
from ..engine.views import director_view, seat_view
from ..store import Conflict, ExecuteResult, GameStore, OutcomeUnknown
from ..store.models import MAX_SEQ
from .auth import ROLES, new_token, seat_of, token_hash
from .deps import (
    SEAT_RULE,
    Credentials,
    StoreDep,
    TokenFirstRoute,
    authenticate,
    platform_only,
    seat_only,
    token_first,
)
from .logs import log
from .problems import ApiProblem, bad_request, command_headers, forbidden, validation_detail
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

MAX_RACE_RETRIES = 6
MAX_COMMAND_ID = 100  # the store keeps "<seat>:<id>" in 128 characters
DIRECTOR_PLAYS = "The director's token cannot send commands."
AFTER = Query(ge=0, le=MAX_SEQ, description="Only events after this seq")

router = APIRouter(tags=["games"], route_class=TokenFirstRoute)


def _command_guard(request: Request) -> None:
    """A seat's token of this game, checked before the body is read. Until the body is
    read, the only command id a refusal can name is an ``Idempotency-Key`` header's."""
    key = request.headers.get("Idempotency-Key")
    if key:
        with contextlib.suppress(ApiProblem):
            request.state.command_id = command_id_of(None, key)
    seat_only(request, request.path_params["game_id"], DIRECTOR_PLAYS)


@router.post(
    "/games",
    status_code=201,
    summary="Create a game; returns one token per seat and one for the director",
    response_model=None,
    responses={201: {"model": CreatedGame}, **problems(400, 401, 403, 408, 413, 422, 503)},
)
@token_first(platform_only)
def create_game(
    body: CreateGame, request: Request, store: StoreDep, _: Credentials
) -> FastJSONResponse:
    platform_only(request)
    setup = table_setup(body)
    game_id = store.registry.create_game(**setup.store_args)
    request.state.game_id = str(game_id)
    request.state.role = "platform"
    log.info("game created", extra={"game_id": str(game_id), "ruleset": setup.ruleset})
    answer = setup.created(game_id)
    return FastJSONResponse(answer, status_code=201, headers={"Location": answer["links"]["self"]})


@dataclass(frozen=True)
class TableSetup:
    """A checked create-game request: the store's arguments and the tokens to hand out."""

    ruleset: str
    options: dict[str, Any]
    tokens: dict[str, str]
    store_args: dict[str, Any]

    def created(self, game_id: str) -> dict[str, Any]:
        """The answer naming the new game: its tokens (shown once) and links."""
        base = f"/v1/games/{game_id}"
        return {
            "game_id": game_id,
            "ruleset": self.ruleset,
            "options": self.options,
            "tokens": self.tokens,
            "links": {
                "self": base,
                "commands": f"{base}/commands",
                "events": f"{base}/events",
                "stream": f"{base}/stream",
                **page_links(game_id, self.tokens),
            },
        }


def page_links(game_id: str, tokens: dict[str, str]) -> dict[str, str]:
    """The page of each seat, of the director's desk and of spectators, its secret after
    ``#``.

    A browser never sends the fragment to a server, so a platform may hand these out as
    they are: the page takes the token from it and keeps it for the tab only.
    """
    pages = {role: seat_page(game_id, t) for role, t in tokens.items()}
    pages["director"] = f"/desk/{game_id}#token={tokens['director']}"
    if "spectator" in tokens:
        pages["spectator"] = spectator_page(game_id, tokens["spectator"])
    return pages


def seat_page(game_id: str, token: str) -> str:
    """A seat's page, its secret after ``#``."""
    return f"/table/{game_id}#token={token}"


def spectator_page(game_id: str, token: str) -> str:
    """A table's spectator page, its secret after ``#``."""
    return f"/watch/{game_id}#token={token}"


#: how far in the past a start time may be (the clocks of a platform and the service)
START_SLACK = timedelta(seconds=5)


def start_args(start: str | datetime) -> dict[str, Any]:
    """The store's start gate for a request's ``start`` (now, held, or a start time)."""
    if start == "now":
        return {}
    if start == "held":
        return {"held": True}
    assert isinstance(start, datetime)
    at = start.astimezone(UTC)
    if at < datetime.now(UTC) - START_SLACK:
        raise ApiProblem(
            422,
            "start_in_the_past",
            f"The start time {at.isoformat()} has passed: give a time to come, 'held' "
            "(the director starts it) or 'now'.",
            kind="setup",
            rule="SVC-12",
        )
    return {"start_at": at}


def table_setup(body: CreateGame) -> TableSetup:
    """What ``store.registry.create_game`` takes for a create-game request, with fresh tokens
    (a game's and each table of a round's: one path for both)."""
    if body.seed is not None and body.hands is not None:
        raise ApiProblem(
            422,
            "seed_or_hands",
            "Give either a seed or explicit hands, not both.",
            kind="setup",
            rule="SVC-03",
        )
    ruleset = get_ruleset(body.ruleset)
    options = ruleset.options(body.options)
    seed = body.seed
    if seed is None and body.hands is None:
        seed = secrets.randbits(62)
    tokens = {role: new_token() for role in (*ROLES, "spectator")}
    return TableSetup(
        ruleset=ruleset.name,
        options=options.model_dump(mode="json"),
        tokens=tokens,
        store_args={
            "ruleset": ruleset.name,
            "options": body.options or None,
            "seed": seed,
            "hands": {s.value: list(t) for s, t in body.hands.items()} if body.hands else None,
            "players": {s.value: n for s, n in body.players.items()} if body.players else None,
            "credentials": {role: token_hash(tokens[role]) for role in ROLES},
            "clock": body.clock,
            "bots": [s.value for s in body.bots] if body.bots else None,
            "pace": body.bot_pace,
            "spectator": (token_hash(tokens["spectator"]), body.spectator_delay),
            **start_args(body.start),
        },
    )


@router.get(
    "/games/{game_id}",
    summary="The table as the token's holder sees it (seat view or director view)",
    response_model=None,
    responses={200: {"model": GameView}, **problems(401, 404, 423, 503)},
)
def get_game(game_id: str, request: Request, store: StoreDep, _: Credentials) -> FastJSONResponse:
    role = authenticate(request, game_id)
    view = store.reads.view(game_id, seat_of(role))
    return FastJSONResponse({"game_id": game_id, "role": role, "view": view})


@router.post(
    "/games/{game_id}/commands",
    summary="Send a command for the token's seat (idempotent by command id)",
    response_model=None,
    responses={
        200: {"model": CommandResult, "headers": COMMAND_HEADERS},
        **problems(400, 401, 403, 404, 408, 409, 413, 422, 423, 503),
    },
    description=(
        "The body is an engine command without `seat` (the seat comes from the token), "
        "plus an optional `command_id`; the `Idempotency-Key` header may carry it "
        "instead. Sending the same command id again returns the first result "
        "(`duplicate: true`) and stores nothing. Command ids are scoped per seat. Every "
        "answer names the id (`command_id`, header `Command-ID`); a 503 `outcome_unknown` "
        "may be stored: send the same id again to learn which (docs/api.md, the retry rule)."
    ),
)
@token_first(_command_guard)
def post_command(
    game_id: str,
    request: Request,
    store: StoreDep,
    _: Credentials,
    body: Annotated[dict[str, Any], Body(openapi_examples=COMMAND_EXAMPLES)],
    idempotency_key: Annotated[str | None, Header(alias="Idempotency-Key")] = None,
) -> FastJSONResponse:
    seat, command, command_id = _command_request(request, game_id, body, idempotency_key)
    result = execute_with_retries(store, game_id, command, f"{seat.value}:{command_id}")
    return command_answer(store, game_id, command_id, result, seat)


async def post_command_on_loop(
    game_id: str,
    request: Request,
    store: StoreDep,
    _: Credentials,
    body: dict[str, Any],
    idempotency_key: str | None = None,
) -> FastJSONResponse:
    """:func:`post_command` on the event loop, for a store that runs commands there
    (PostgreSQL: ``store.writes.execute_on_loop``); the hot route calls it."""
    seat, command, command_id = _command_request(request, game_id, body, idempotency_key)
    stored_id = f"{seat.value}:{command_id}"
    for attempt in range(MAX_RACE_RETRIES + 1):
        try:
            result = await store.writes.execute_on_loop(game_id, command, command_id=stored_id)
            break
        except Conflict:
            if attempt == MAX_RACE_RETRIES:
                raise
            await asyncio.sleep(random.uniform(0.002, 0.01) * 2**attempt)
    return command_answer(store, game_id, command_id, result, seat)


post_command.on_loop = post_command_on_loop  # type: ignore[attr-defined]


def _command_request(
    request: Request, game_id: str, body: dict[str, Any], idempotency_key: str | None
) -> tuple[Seat, Command, str]:
    """The seat, the command and its id a command request names (no store is read: the
    token's role is known once its guard has run)."""
    body = dict(body)
    sent_id = body.pop("command_id", None)
    # Every answer names the command id (problems via request.state) once the body is
    # read, which is after the token is checked; a malformed id is refused.
    try:
        command_id = command_id_of(sent_id, idempotency_key)
    except ApiProblem as malformed:  # refused after the token check, and naming no id
        request.state.command_id = None
        seat_only(request, game_id, DIRECTOR_PLAYS)
        raise malformed from None
    request.state.command_id = command_id
    seat = seat_only(request, game_id, DIRECTOR_PLAYS)
    role = seat.value
    claimed = body.pop("seat", None)
    if claimed is not None and claimed != role:
        raise forbidden(
            "seat_mismatch",
            f"This token is {role}'s; it cannot act for {claimed!s:.10}.",
            SEAT_RULE,
        )
    request.state.command = str(body.get("type", ""))[:40]
    return seat, command_from({**body, "seat": role}), command_id


def command_route() -> APIRoute:
    """The declared route of :func:`post_command` (the app serves it by a hot route)."""
    return next(r for r in router.routes if getattr(r, "endpoint", None) is post_command)


def command_from(body: dict[str, Any]) -> Command:
    """The engine command a request body names (a 422 ``invalid_command`` if none)."""
    try:
        return parse_command(body)
    except ValidationError as exc:
        raise InvalidCommand(
            f"Not a valid command: {validation_detail(list(exc.errors()))}."
        ) from None


def command_answer(
    store: GameStore,
    game_id: str,
    command_id: str,
    result: ExecuteResult,
    seat: Seat | None,
) -> FastJSONResponse:
    """The answer to a stored command (a seat's, or the director's when ``seat`` is None)."""
    role = seat.value if seat else "director"
    # Committed: from here on, a failure must not read as "nothing was stored".
    try:
        events = list(result.events)
        answer = {
            "game_id": game_id,
            "command_id": command_id,
            "duplicate": bool(result.duplicate),
            "events": [event_out(e, role) for e in events],
            # the committed table and clock, no re-read
            "view": store.reads.view_of(
                result.snapshot, seat, result.clock, store.reads.players(game_id)
            ),
        }
    except Exception:
        log.exception("answer failed after the commit")
        raise OutcomeUnknown(
            "The command was stored, but the service failed while building the answer. "
            "Send the same command with the same command id again to get it: it is "
            "applied at most once."
        ) from None
    headers = command_headers(command_id)
    if result.duplicate:
        headers["Idempotent-Replayed"] = "true"
    return FastJSONResponse(answer, headers=headers)


def command_id_of(sent: Any, idempotency_key: str | None) -> str:
    """The client's id from the body or ``Idempotency-Key`` (a made-up one without)."""
    if sent is not None and not isinstance(sent, str | int):
        raise bad_request("invalid_command_id", "command_id must be a string.")
    command_id = None if sent is None else str(sent)
    if idempotency_key and command_id and idempotency_key != command_id:
        raise bad_request(
            "command_id_mismatch", "The Idempotency-Key header and command_id differ."
        )
    command_id = command_id or idempotency_key or f"auto-{uuid.uuid4().hex}"
    if len(command_id) > MAX_COMMAND_ID:
        raise bad_request(
            "invalid_command_id", f"A command id has at most {MAX_COMMAND_ID} characters."
        )
    if not command_id.isprintable():
        raise bad_request(
            "invalid_command_id",
            "A command id is printable text: no control characters (such as NUL).",
        )
    return command_id


def execute_with_retries(
    store: GameStore, game_id: str, command: Command, command_id: str
) -> ExecuteResult:
    """``store.writes.execute``, sent again while other commands of the game win the race.

    Nothing was stored for a lost race (the store's contract for ``Conflict``).
    """
    for attempt in range(MAX_RACE_RETRIES):
        try:
            return store.writes.execute(game_id, command, command_id=command_id)
        except Conflict:
            time.sleep(random.uniform(0.002, 0.01) * 2**attempt)
    return store.writes.execute(game_id, command, command_id=command_id)


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
    _: Credentials,
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
    _: Credentials,
    seq: Annotated[int | None, Query(ge=1, le=MAX_SEQ, description="Last seq to fold")] = None,
) -> dict[str, Any]:
    role = authenticate(request, game_id)
    table = store.reads.replay(game_id, at=seq)
    seat = seat_of(role)
    names = store.reads.players(game_id)
    view = (
        director_view(table, players=names)
        if seat is None
        else seat_view(table, seat, players=names)
    )
    return {"game_id": game_id, "role": role, "seq": seq, "view": view}

"""The FastAPI application: authentication, redaction and problem+json over the store.

Everything that decides the game lives in the engine and the store; this module maps
tokens to roles, commands to ``store.execute``, refusals to HTTP statuses, and passes every
payload meant for a seat through :mod:`charleston_fsm.views` (``seat_view``, ``redact``).
"""

from __future__ import annotations

import json
import os
import random
import re
import secrets
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, FastAPI, Header, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..commands import parse_command
from ..errors import InvalidCommand, UnknownRuleset
from ..rulesets import RULESETS, Options, Ruleset, get_ruleset
from ..seats import Seat
from ..store import Conflict, GameStore
from ..views import director_view, redact, seat_view
from .auth import ROLES, bearer_token, check_platform_key, new_token, token_hash
from .botrunner import BotRunner
from .logs import game_id_var, log, request_id_var
from .notify import Notifier, notifier_for
from .problems import ApiProblem, bad_request, forbidden, install, problem, unauthorized
from .schemas import (
    CommandResult,
    CreatedGame,
    EventList,
    GameView,
    Problem,
    Replay,
    VerifyResult,
    problems,
)

API_VERSION = "v1"
GAME_PATH = re.compile(r"^/v1/games/([^/]+)")
DIRECTOR_RULE = "Only the tournament director sees every hand, the audit and the diagram."
SEAT_RULE = "A seat's token acts only for that seat; the director does not play."
STREAM_POLL_SECONDS = 15.0  # safety re-read when no notification arrives
MAX_RACE_RETRIES = 6
ROLE_CACHE_SIZE = 100_000  # (game id, token digest) -> role, per process

_bearer = HTTPBearer(auto_error=False, description="A seat, director or platform token.")
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]


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


# -- request context and logs -----------------------------------------------------------------
class RequestContext:
    """Pure ASGI middleware: game id and request id in every log line, one line per request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        match = GAME_PATH.match(path)
        headers = dict(scope.get("headers") or [])
        request_id = headers.get(b"x-request-id", b"").decode()[:64] or uuid.uuid4().hex[:16]
        game_token = game_id_var.set(match.group(1) if match else None)
        request_token = request_id_var.set(request_id)
        scope.setdefault("state", {})
        start = time.perf_counter()

        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start":
                out = MutableHeaders(scope=message)
                out["X-Request-ID"] = request_id
                if path.startswith("/v1/games"):
                    out["Cache-Control"] = "no-store"
                state = scope["state"]
                fields = {
                    "method": scope["method"],
                    "path": path,
                    "status": message["status"],
                    "ms": round((time.perf_counter() - start) * 1000, 2),
                }
                for key in ("role", "command", "game_id"):
                    if state.get(key):
                        fields[key] = state[key]
                log.info("request", extra=fields)
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            game_id_var.reset(game_token)
            request_id_var.reset(request_token)


# -- helpers ----------------------------------------------------------------------------------
def _store_url(store: Any) -> str | None:
    url = getattr(store, "url", None)
    if url is None and getattr(store, "engine", None) is not None:
        url = store.engine.url
    if url is None:
        return None
    render = getattr(url, "render_as_string", None)
    return render(hide_password=False) if render else str(url)


def _iso(value: Any) -> Any:
    return value.isoformat() if hasattr(value, "isoformat") else value


def _seat_of(role: str) -> Seat | None:
    return None if role == "director" else Seat(role)


def _client_command_id(stored_id: str | None, role: str) -> str | None:
    if stored_id and stored_id.startswith(f"{role}:"):
        return stored_id[len(role) + 1 :]
    return None


def event_out(stored: Any, role: str) -> dict[str, Any]:
    """One stored event as ``role`` may see it: redacted for a seat, whole for the director.

    Seats never get the hash chain: a hash over a payload of a few tile ids could be
    brute-forced back to the tiles.
    """
    seat = _seat_of(role)
    data = redact(stored.event, seat)
    data["seq"] = stored.seq
    data["created_at"] = _iso(stored.created_at)
    if seat is None:
        data["command_id"] = stored.command_id
        data["prev_hash"] = stored.prev_hash
        data["hash"] = stored.hash
    else:
        own = _client_command_id(stored.command_id, role)
        if own is not None:
            data["command_id"] = own
    return data


def ruleset_out(ruleset: Ruleset) -> dict[str, Any]:
    schema = Options.model_json_schema()
    props = schema.get("properties", {})
    defs = schema.get("$defs", {})
    defaults = ruleset.defaults.model_dump(mode="json")
    options: dict[str, Any] = {}
    for name in Options.model_fields:
        prop = props.get(name, {})
        ref = prop.get("$ref", "").rsplit("/", 1)[-1]
        enum = defs.get(ref, {}).get("enum") if ref else prop.get("enum")
        options[name] = {
            "type": "string" if enum else prop.get("type", "string"),
            "default": defaults[name],
            **({"choices": enum} if enum else {}),
        }
    return {
        "name": ruleset.name,
        "title": ruleset.title,
        "description": ruleset.description,
        "options": options,
        "steps": [
            {
                "state": state_id,
                "label": step.label,
                "participants": [s.value for s in step.participants],
                "direction": step.direction.value if step.direction else None,
                "count": step.count,
                "blind": step.blind,
                "courtesy": step.courtesy,
            }
            for state_id, step in ruleset.steps.items()
        ],
        "links": {"diagram": f"/v1/rulesets/{ruleset.name}/diagram"},
    }


# -- the application ------------------------------------------------------------------------
def create_app(
    store: Any = None,
    *,
    platform_key: str | None = None,
    notifier: Notifier | None = None,
) -> FastAPI:
    """The service over ``store`` (default: ``GameStore()`` from ``$CHARLESTON_DATABASE_URL``)."""
    if store is None:
        store = GameStore()
    if platform_key is None:
        platform_key = os.environ.get("CHARLESTON_PLATFORM_KEY") or None
    notifier = notifier or notifier_for(_store_url(store))
    bots = BotRunner(store, notifier)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await run_in_threadpool(notifier.start)
        log.info("service started", extra={"notifier": notifier.kind})
        try:
            yield
        finally:
            await bots.stop_all()
            await run_in_threadpool(notifier.stop)

    app = FastAPI(
        title="charleston-fsm",
        version="1",
        summary="The Charleston of American Mah Jongg as a service: statechart + event store.",
        description=(
            "Seats and the director authenticate with `Authorization: Bearer <token>` "
            "(tokens are returned once, by `POST /v1/games`). Errors are "
            "`application/problem+json` with `code`, `kind` and `rule`."
        ),
        lifespan=lifespan,
    )
    app.state.store = store
    app.state.notifier = notifier
    app.add_middleware(RequestContext)
    install(app)

    v1 = APIRouter(prefix=f"/{API_VERSION}")
    roles: dict[tuple[str, str], str] = {}

    # -- authentication ---------------------------------------------------------------------
    def _ensure_game(game_id: str) -> None:
        """Raise the store's GameNotFound for an unknown game (one small query)."""
        store.last_seq(game_id)

    def authenticate(request: Request, game_id: str) -> str:
        token = bearer_token(request)
        if token is None:
            _ensure_game(game_id)
            raise unauthorized(
                "missing_token",
                "Send a seat or director token of this game as 'Authorization: Bearer <token>'.",
            )
        digest = token_hash(token)
        role = roles.get((game_id, digest))
        if role is None:
            role = store.role_for(game_id, digest)
            if role is not None:  # a game's credentials never change: remember the role
                if len(roles) >= ROLE_CACHE_SIZE:
                    roles.clear()
                roles[(game_id, digest)] = role
        if role is None:
            _ensure_game(game_id)
            raise unauthorized("invalid_token", "This token does not open this game.")
        request.state.role = role
        return role

    def director_only(request: Request, game_id: str) -> str:
        role = authenticate(request, game_id)
        if role != "director":
            raise forbidden(
                "director_only", "Only the director's token may read this.", DIRECTOR_RULE
            )
        return role

    # -- games ------------------------------------------------------------------------------
    @v1.post(
        "/games",
        status_code=201,
        tags=["games"],
        summary="Create a game; returns one token per seat and one for the director",
        response_model=None,
        responses={201: {"model": CreatedGame}, **problems(400, 401, 403, 422)},
    )
    def create_game(body: CreateGame, request: Request, _: Credentials) -> JSONResponse:
        check_platform_key(request, platform_key)
        if body.seed is not None and body.hands is not None:
            raise ApiProblem(
                422,
                "seed_or_hands",
                "Give either a seed or explicit hands, not both.",
                kind="setup",
                rule="A game's deal is a shuffled seed or explicit hands.",
            )
        ruleset = get_ruleset(body.ruleset)
        options = ruleset.options(body.options)
        seed = body.seed
        if seed is None and body.hands is None:
            seed = secrets.randbits(62)
        tokens = {role: new_token() for role in ROLES}
        game_id = store.create_game(
            ruleset=ruleset.name,
            options=body.options or None,
            seed=seed,
            hands={s.value: list(t) for s, t in body.hands.items()} if body.hands else None,
            players={s.value: n for s, n in body.players.items()} if body.players else None,
            credentials={role: token_hash(t) for role, t in tokens.items()},
        )
        request.state.game_id = str(game_id)
        request.state.role = "platform"
        log.info("game created", extra={"game_id": str(game_id), "ruleset": ruleset.name})
        base = f"/v1/games/{game_id}"
        return JSONResponse(
            {
                "game_id": str(game_id),
                "ruleset": ruleset.name,
                "options": options.model_dump(mode="json"),
                "tokens": tokens,
                "links": {
                    "self": base,
                    "commands": f"{base}/commands",
                    "events": f"{base}/events",
                    "stream": f"{base}/stream",
                },
            },
            status_code=201,
            headers={"Location": base},
        )

    @v1.get(
        "/games/{game_id}",
        tags=["games"],
        summary="The table as the token's holder sees it (seat view or director view)",
        response_model=None,
        responses={200: {"model": GameView}, **problems(401, 404)},
    )
    def get_game(game_id: str, request: Request, _: Credentials) -> dict[str, Any]:
        role = authenticate(request, game_id)
        return {"game_id": game_id, "role": role, "view": store.view(game_id, _seat_of(role))}

    @v1.post(
        "/games/{game_id}/commands",
        tags=["games"],
        summary="Send a command for the token's seat (idempotent by command id)",
        response_model=None,
        responses={200: {"model": CommandResult}, **problems(400, 401, 403, 404, 409, 422)},
        description=(
            "The body is an engine command without `seat` (the seat comes from the token), "
            "plus an optional `command_id`; the `Idempotency-Key` header may carry it "
            "instead. Sending the same command id again returns the first result "
            "(`duplicate: true`) and stores nothing. Command ids are scoped per seat."
        ),
    )
    def post_command(
        game_id: str,
        request: Request,
        _: Credentials,
        body: Annotated[dict[str, Any], Body(openapi_examples=COMMAND_EXAMPLES)],
        idempotency_key: Annotated[str | None, Header(alias="Idempotency-Key")] = None,
    ) -> JSONResponse:
        role = authenticate(request, game_id)
        seat = _seat_of(role)
        if seat is None:
            raise forbidden(
                "director_cannot_play", "The director's token cannot send commands.", SEAT_RULE
            )
        body = dict(body)
        command_id = body.pop("command_id", None)
        if command_id is not None and not isinstance(command_id, str | int):
            raise bad_request("invalid_command_id", "command_id must be a string.")
        command_id = None if command_id is None else str(command_id)
        if idempotency_key and command_id and idempotency_key != command_id:
            raise bad_request(
                "command_id_mismatch", "The Idempotency-Key header and command_id differ."
            )
        command_id = command_id or idempotency_key or f"auto-{uuid.uuid4().hex}"
        if len(command_id) > 100:
            raise bad_request("invalid_command_id", "A command id has at most 100 characters.")
        claimed = body.pop("seat", None)
        if claimed is not None and claimed != role:
            raise forbidden(
                "seat_mismatch",
                f"This token is {role}'s; it cannot act for {claimed!s:.10}.",
                SEAT_RULE,
            )
        request.state.command = str(body.get("type", ""))[:40]
        try:
            command = parse_command({**body, "seat": role})
        except ValidationError as exc:
            from .problems import validation_detail

            raise InvalidCommand(
                f"Not a valid command: {validation_detail(list(exc.errors()))}."
            ) from None
        for attempt in range(MAX_RACE_RETRIES + 1):
            try:
                result = store.execute(game_id, command, command_id=f"{role}:{command_id}")
                break
            except Conflict:
                # another command of this game won the race; nothing was stored for this
                # one, so it is simply sent again (the store's contract for Conflict)
                if attempt == MAX_RACE_RETRIES:
                    raise
                time.sleep(random.uniform(0.002, 0.01) * 2**attempt)
        events = list(result.events)
        if events and not result.duplicate:
            notifier.publish(game_id, max(e.seq for e in events))
        return JSONResponse(
            {
                "game_id": game_id,
                "command_id": command_id,
                "duplicate": bool(result.duplicate),
                "events": [event_out(e, role) for e in events],
                "view": store.view(game_id, seat),
            },
            headers={"Idempotent-Replayed": "true"} if result.duplicate else None,
        )

    @v1.get(
        "/games/{game_id}/events",
        tags=["games"],
        summary="The game's events, redacted",
        response_model=None,
        responses={200: {"model": EventList}, **problems(401, 404)},
    )
    def get_events(
        game_id: str,
        request: Request,
        _: Credentials,
        after: Annotated[int, Query(ge=0, description="Only events after this seq")] = 0,
    ) -> dict[str, Any]:
        role = authenticate(request, game_id)
        events = store.events(game_id, after=after)
        return {
            "game_id": game_id,
            "role": role,
            "events": [event_out(e, role) for e in events],
            "last_seq": events[-1].seq if events else after,
        }

    @v1.get(
        "/games/{game_id}/replay",
        tags=["games"],
        summary="The table rebuilt from the events up to seq N",
        response_model=None,
        responses={200: {"model": Replay}, **problems(401, 404)},
        description=(
            "The director gets the director view of the replayed table; a seat gets its "
            "own seat view of it (what it saw at that moment), never anyone else's."
        ),
    )
    def get_replay(
        game_id: str,
        request: Request,
        _: Credentials,
        seq: Annotated[int | None, Query(ge=1, description="Last seq to fold")] = None,
    ) -> dict[str, Any]:
        role = authenticate(request, game_id)
        table = store.replay(game_id, at=seq)
        seat = _seat_of(role)
        view = director_view(table) if seat is None else seat_view(table, seat)
        return {"game_id": game_id, "role": role, "seq": seq, "view": view}

    @v1.get(
        "/games/{game_id}/audit",
        tags=["director"],
        summary="Audit report (director)",
        responses=problems(401, 403, 404),
    )
    def get_audit(
        game_id: str,
        request: Request,
        _: Credentials,
        format: Annotated[str, Query(pattern="^(json|text)$")] = "json",
    ) -> Response:
        director_only(request, game_id)
        report = store.audit(game_id)
        if format == "text":
            return PlainTextResponse(report.to_text())
        return JSONResponse(report.to_dict())

    @v1.get(
        "/games/{game_id}/verify",
        tags=["director"],
        summary="Check the hash chain",
        response_model=None,
        responses={200: {"model": VerifyResult}, **problems(401, 403, 404)},
    )
    def get_verify(game_id: str, request: Request, _: Credentials) -> dict[str, Any]:
        director_only(request, game_id)
        result = store.verify(game_id)
        return {
            "game_id": game_id,
            "ok": bool(result.ok),
            "first_bad_seq": result.first_bad_seq,
            "message": result.message,
        }

    @v1.get(
        "/games/{game_id}/diagram",
        tags=["director"],
        summary="The ruleset's diagram with this game's active states highlighted",
    )
    def get_game_diagram(
        game_id: str,
        request: Request,
        _: Credentials,
        format: Annotated[str, Query(description="svg, dot or mermaid")] = "svg",
    ) -> Response:
        director_only(request, game_id)
        from .. import diagrams

        return _diagram(diagrams.live, store.table(game_id), format)

    # -- bots -------------------------------------------------------------------------------
    def seat_only(request: Request, game_id: str) -> Seat:
        seat = _seat_of(authenticate(request, game_id))
        if seat is None:
            raise forbidden(
                "director_cannot_play", "Only a seat's own token hands it to a bot.", SEAT_RULE
            )
        return seat

    @v1.post(
        "/games/{game_id}/bot",
        status_code=202,
        tags=["games"],
        summary="Hand the token's seat to a bot (it plays from that seat's view only)",
        description=(
            "The bot runs in the service process that took the request and plays until "
            "the Charleston is over and it has nothing left to do. It is not persisted: "
            "after a restart, hand the seat over again. DELETE takes the seat back."
        ),
    )
    async def start_bot(
        game_id: str,
        request: Request,
        _: Credentials,
        seed: Annotated[int | None, Query(description="The bot's random seed")] = None,
    ) -> dict[str, Any]:
        seat = await run_in_threadpool(seat_only, request, game_id)
        started = bots.start(game_id, seat, seed)
        return {"game_id": game_id, "seat": seat.value, "bot": "playing", "started": started}

    @v1.delete("/games/{game_id}/bot", tags=["games"], summary="Take the seat back from its bot")
    async def stop_bot(game_id: str, request: Request, _: Credentials) -> dict[str, Any]:
        seat = await run_in_threadpool(seat_only, request, game_id)
        stopped = await bots.stop(game_id, seat)
        return {"game_id": game_id, "seat": seat.value, "stopped": stopped}

    # -- live stream --------------------------------------------------------------------------
    @v1.get(
        "/games/{game_id}/stream",
        tags=["games"],
        summary="Server-sent events: the game's events as they are stored, redacted",
        description=(
            "Each SSE message is one stored event (`id` = seq, `event` = type, `data` = the "
            "event as GET /events shows it to this token). Resume with `Last-Event-ID` or "
            "`?after=seq`."
        ),
        response_class=EventSourceResponse,
    )
    async def stream(
        game_id: str,
        request: Request,
        _: Credentials,
        after: Annotated[int | None, Query(ge=0)] = None,
        last_event_id: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
    ) -> EventSourceResponse:
        role = await run_in_threadpool(authenticate, request, game_id)
        start = after if after is not None else 0
        if after is None and last_event_id and last_event_id.isdigit():
            start = int(last_event_id)
        sub = notifier.subscribe(game_id)

        async def messages() -> AsyncIterator[ServerSentEvent]:
            last = start
            try:
                yield ServerSentEvent(
                    data=json.dumps({"game_id": game_id, "role": role, "after": last}),
                    event="subscribed",
                )
                while True:
                    for stored in await run_in_threadpool(store.events, game_id, last):
                        yield ServerSentEvent(
                            data=json.dumps(event_out(stored, role)),
                            event=stored.type,
                            id=str(stored.seq),
                        )
                        last = stored.seq
                    await sub.wait(STREAM_POLL_SECONDS)
            finally:
                notifier.unsubscribe(sub)

        return EventSourceResponse(messages(), ping=10)

    # -- rulesets and diagrams --------------------------------------------------------------
    @v1.get("/rulesets", tags=["rulesets"], summary="Rulesets with their options and defaults")
    def list_rulesets() -> dict[str, Any]:
        return {"rulesets": [ruleset_out(r) for r in RULESETS.values()]}

    def known_ruleset(name: str) -> Ruleset:
        if name not in RULESETS:
            raise ApiProblem(
                404,
                "unknown_ruleset",
                f"There is no ruleset {name!r}; choose one of: {', '.join(RULESETS)}.",
                kind="not_found",
                rule=UnknownRuleset.rule,
            )
        return RULESETS[name]

    @v1.get("/rulesets/{name}", tags=["rulesets"], summary="One ruleset")
    def get_ruleset_route(name: str) -> dict[str, Any]:
        return ruleset_out(known_ruleset(name))

    @v1.get("/rulesets/{name}/diagram", tags=["rulesets"], summary="The ruleset's state diagram")
    def get_ruleset_diagram(
        name: str,
        format: Annotated[str, Query(description="svg, dot or mermaid")] = "svg",
    ) -> Response:
        from .. import diagrams

        return _diagram(diagrams.render, known_ruleset(name).name, format)

    app.include_router(v1)

    def openapi() -> dict[str, Any]:
        """FastAPI's document, with errors as they really leave: problem+json, 400 not 422."""
        if app.openapi_schema is None:
            from fastapi.openapi.utils import get_openapi

            spec = get_openapi(
                title=app.title,
                version=app.version,
                summary=app.summary,
                description=app.description,
                routes=app.routes,
            )
            problem_ref = {"$ref": "#/components/schemas/Problem"}
            for operation in (op for path in spec["paths"].values() for op in path.values()):
                responses = operation.get("responses", {})
                default = responses.get("422", {}).get("content", {}).get("application/json", {})
                if default.get("schema", {}).get("$ref", "").endswith("/HTTPValidationError"):
                    del responses["422"]
                    responses.setdefault(
                        "400",
                        {
                            "description": "Malformed request",
                            "content": {"application/problem+json": {"schema": problem_ref}},
                        },
                    )
                for response in responses.values():
                    content = response.get("content", {})
                    if "application/problem+json" in content:
                        content.pop("application/json", None)
                        content["application/problem+json"] = {"schema": problem_ref}
            schemas = spec.get("components", {}).get("schemas", {})
            for unused in ("HTTPValidationError", "ValidationError"):
                schemas.pop(unused, None)
            if "Problem" not in schemas:
                schemas["Problem"] = Problem.model_json_schema()
            app.openapi_schema = spec
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]

    # -- health -----------------------------------------------------------------------------
    @app.get("/healthz", tags=["health"], summary="The process answers")
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz", tags=["health"], summary="Database reachable, schema current")
    def readyz() -> Response:
        try:
            status = store.schema_status()
        except Exception as exc:
            log.warning("database unreachable", extra={"error": type(exc).__name__})
            return problem(
                503, "database_unreachable", "The database does not answer.", kind="server"
            )
        if status != "current":
            return problem(
                503,
                f"schema_{status}",
                f"The database schema is {status}: run 'charleston-fsm migrate'.",
                kind="server",
            )
        if not notifier.healthy:
            return problem(
                503,
                "not_listening",
                "The notification listener is not connected.",
                kind="server",
            )
        return JSONResponse(
            {"status": "ready", "schema": status, "notifier": notifier.kind},
        )

    return app


# -- diagrams (charleston_fsm.diagrams, written by the diagrams engineer) -----------------------
DIAGRAM_TYPES = {
    "svg": "image/svg+xml",
    "dot": "text/vnd.graphviz; charset=utf-8",
    "mermaid": "text/plain; charset=utf-8",
}


def _diagram(render: Any, subject: Any, fmt: str) -> Response:
    """Render with :mod:`charleston_fsm.diagrams`; SVG needs Graphviz's ``dot``."""
    if fmt not in DIAGRAM_TYPES:
        raise bad_request(
            "unknown_diagram_format", f"Choose a format among: {', '.join(DIAGRAM_TYPES)}."
        )
    from statemachine.contrib.diagram import GraphvizNotFoundError

    try:
        content = render(subject, fmt)
    except GraphvizNotFoundError:
        raise ApiProblem(
            503,
            "graphviz_unavailable",
            "SVG needs Graphviz on the server; ask for format=dot or format=mermaid.",
            kind="server",
        ) from None
    return Response(content, media_type=DIAGRAM_TYPES[fmt])

"""Rounds: many tables created in one call, and their listing for the round's director."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from ..store import MAX_TABLES, GameStore, InvalidRound, check_round_size
from ..store.rounds import numbered
from .auth import bearer_token, new_token, token_hash
from .deps import Credentials, StoreDep, TokenFirstRoute, platform_only, token_first
from .logs import log
from .problems import ApiProblem, unauthorized
from .routes_games import TableSetup, command_id_of, table_setup
from .schemas import problems
from .schemas_rounds import (
    CreatedRound,
    CreateRound,
    RoundActBody,
    RoundActResult,
    RoundTableSpec,
    RoundView,
)

router = APIRouter(tags=["rounds"], route_class=TokenFirstRoute)


@router.post(
    "/rounds",
    status_code=201,
    summary="Create a round of tables in one call (all or none); returns every token",
    response_model=None,
    responses={201: {"model": CreatedRound}, **problems(400, 401, 403, 408, 413, 422, 503)},
    description=(
        f"Up to {MAX_TABLES} tables, each a create-game request (`tables`), or one spec "
        "and a `count`. The tables are stored in one transaction: a table that cannot be "
        "set up is refused with its number and no table of the round exists. Seats listed "
        "in a table's `bots` are played by the service's auto player from the start "
        "(durable, as in a single game)."
    ),
)
@token_first(platform_only)
async def create_round(
    body: CreateRound, request: Request, store: StoreDep, _: Credentials
) -> JSONResponse:
    specs = _specs(body)
    setups = [_numbered_setup(n, spec) for n, spec in enumerate(specs, start=1)]
    token, watch = new_token(), new_token()
    settings = {
        "count": len(specs),
        "labels": [spec.label for spec in specs],
        "bots": [[s.value for s in spec.bots or ()] for spec in specs],
    }
    if body.start != "now":
        settings["start"] = body.start if isinstance(body.start, str) else body.start.isoformat()
    round_id, game_ids = await run_in_threadpool(
        _store_round, store, setups, token, body.name, settings, (watch, body.spectator_delay)
    )
    request.state.role = "platform"
    log.info("round created", extra={"round_id": round_id, "tables": len(game_ids)})
    tables = [
        {
            **setup.created(game_id),
            "table": number,
            "label": spec.label,
            "bots": [s.value for s in spec.bots or ()],
        }
        for number, (game_id, setup, spec) in enumerate(
            zip(game_ids, setups, specs, strict=True), start=1
        )
    ]
    base = f"/v1/rounds/{round_id}"
    return JSONResponse(
        {
            "round_id": round_id,
            "name": body.name,
            "token": token,
            "spectator_token": watch,
            "tables": tables,
            "links": {
                "self": base,
                "room": f"/room/{round_id}#token={token}",
                "spectator": f"/watch/round/{round_id}#token={watch}",
            },
        },
        status_code=201,
        headers={"Location": base},
    )


@router.get(
    "/rounds/{round_id}",
    summary="Every table of a round with its state (the round director's token)",
    response_model=None,
    responses={200: {"model": RoundView}, **problems(401, 404, 503)},
)
def get_round(round_id: str, request: Request, store: StoreDep, _: Credentials) -> dict[str, Any]:
    round_director_only(request, round_id)
    return store.rounds.round_listing(round_id).to_dict()


def round_director_only(request: Request, round_id: str) -> None:
    """The round's own director token (a 404 for an unknown round before any 401)."""
    store = request.app.state.store
    token = bearer_token(request)
    opens = store.rounds.round_opens(round_id, token_hash(token or ""))
    if token is None:
        raise unauthorized(
            "missing_token", "Send the round's director token as 'Authorization: Bearer <token>'."
        )
    if not opens:
        raise unauthorized(
            "invalid_token",
            "This token does not open this round: a round is listed with the token its "
            "creation returned, not a table's.",
        )
    request.state.role = "round_director"


def _round_guard(request: Request) -> None:
    round_director_only(request, request.path_params["round_id"])


_ACT_RULES = {"start": "SVC-12", "pause": "SVC-11", "resume": "SVC-11"}


_ACT_HELP = (
    "`start`: every held table starts in the same instant; `pause` / `resume`: every "
    "table's clock, in one transaction (all of them or none: a closed page or a lost "
    "connection cannot leave half a round paused). Each table gets its own row "
    "(`game_started`, `clock_paused`, `clock_resumed`, naming the round). A table "
    "that cannot take the act (finished, not started, already paused, no clock) is "
    "left as it is and named in `tables` with its `code`; when no table could, the "
    "answer is 409. `command_id` or `Idempotency-Key` makes a retry safe."
)


def _round_act(
    act: str,
    round_id: str,
    request: Request,
    store: GameStore,
    body: RoundActBody | None,
    idempotency_key: str | None,
) -> dict[str, Any]:
    round_director_only(request, round_id)
    command_id = command_id_of(body.command_id if body else None, idempotency_key)
    request.state.command_id = command_id
    result = store.round_acts.act(round_id, act, command_id)
    if result.done == 0:
        codes = {t.code for t in result.tables}
        why = "; ".join(f"table {t.table}: {(t.detail or '').rstrip('.')}" for t in result.tables)
        done = {"start": "started", "pause": "paused", "resume": "resumed"}[act]
        raise ApiProblem(
            409,
            codes.pop() if len(codes) == 1 and None not in codes else f"round_not_{done}",
            f"No table of the round could be {done} ({why or 'it has no table'}).",
            kind="not_now",
            rule=_ACT_RULES[act],
        )
    log.info("round act", extra={"round_id": round_id, "command": act})
    return {**result.to_dict(), "command_id": command_id}


_ACT_ROUTE: dict[str, Any] = {
    "response_model": None,
    "responses": {200: {"model": RoundActResult}, **problems(400, 401, 404, 409, 503)},
    "description": _ACT_HELP,
}
IdempotencyKey = Annotated[str | None, Header(alias="Idempotency-Key")]


@router.post("/rounds/{round_id}/start", summary="Start every held table at once", **_ACT_ROUTE)
@token_first(_round_guard)
def post_round_start(
    round_id: str,
    request: Request,
    store: StoreDep,
    _: Credentials,
    body: RoundActBody | None = None,
    idempotency_key: IdempotencyKey = None,
) -> dict[str, Any]:
    return _round_act("start", round_id, request, store, body, idempotency_key)


@router.post("/rounds/{round_id}/pause", summary="Pause every table's clock", **_ACT_ROUTE)
@token_first(_round_guard)
def post_round_pause(
    round_id: str,
    request: Request,
    store: StoreDep,
    _: Credentials,
    body: RoundActBody | None = None,
    idempotency_key: IdempotencyKey = None,
) -> dict[str, Any]:
    return _round_act("pause", round_id, request, store, body, idempotency_key)


@router.post("/rounds/{round_id}/resume", summary="Resume every table's clock", **_ACT_ROUTE)
@token_first(_round_guard)
def post_round_resume(
    round_id: str,
    request: Request,
    store: StoreDep,
    _: Credentials,
    body: RoundActBody | None = None,
    idempotency_key: IdempotencyKey = None,
) -> dict[str, Any]:
    return _round_act("resume", round_id, request, store, body, idempotency_key)


def _specs(body: CreateRound) -> list[RoundTableSpec]:
    """The round's tables: the list, or ``count`` copies of one spec with seeds in a row."""
    if (body.tables is None) == (body.table is None) or (body.table is None) != (
        body.count is None
    ):
        raise InvalidRound(
            "Give either 'tables' (one spec per table) or 'table' with 'count', not both "
            "and not neither."
        )
    if body.tables is not None:
        count = len(body.tables)
    else:
        assert body.count is not None
        count = body.count
    check_round_size(count)
    if body.tables is not None:
        specs = body.tables
    else:
        spec = body.table
        assert spec is not None
        if spec.seed is None:
            specs = [spec] * count
        else:
            specs = [spec.model_copy(update={"seed": spec.seed + i}) for i in range(count)]
    for number, spec in enumerate(specs, start=1):
        if spec.start != "now":
            raise InvalidRound(
                f"Table {number}: a round's tables start together: give 'start' for the "
                "round, not for one table."
            )
    return [spec.model_copy(update={"start": body.start}) for spec in specs]


def _numbered_setup(number: int, spec: RoundTableSpec) -> TableSetup:
    try:
        with numbered(number):
            return table_setup(spec)
    except ApiProblem as exc:
        raise ApiProblem(
            exc.status, exc.code, f"Table {number}: {exc.detail}", kind=exc.kind, rule=exc.rule
        ) from None


def _store_round(
    store: GameStore,
    setups: list[TableSetup],
    token: str,
    name: str | None,
    settings: dict[str, Any],
    spectator: tuple[str, int],
) -> tuple[str, list[str]]:
    return store.rounds.create_round(
        [s.store_args for s in setups],
        token_hash=token_hash(token),
        name=name,
        settings=settings,
        spectator=(token_hash(spectator[0]), spectator[1]),
    )

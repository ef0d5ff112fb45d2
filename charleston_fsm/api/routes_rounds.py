"""Rounds: many tables created in one call, and their listing for the round's director."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from ..store import MAX_TABLES, GameStore, InvalidRound, check_round_size
from ..store.rounds import numbered
from .auth import bearer_token, new_token, token_hash
from .deps import Credentials, StoreDep, TokenFirstRoute, platform_only, token_first
from .logs import log
from .problems import ApiProblem, unauthorized
from .routes_games import TableSetup, table_setup
from .schemas import problems
from .schemas_rounds import CreatedRound, CreateRound, RoundTableSpec, RoundView

router = APIRouter(tags=["rounds"], route_class=TokenFirstRoute)


@router.post(
    "/rounds",
    status_code=201,
    summary="Create a round of tables in one call (all or none); returns every token",
    response_model=None,
    responses={201: {"model": CreatedRound}, **problems(400, 401, 403, 413, 422, 503)},
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
    token = new_token()
    settings = {
        "count": len(specs),
        "labels": [spec.label for spec in specs],
        "bots": [[s.value for s in spec.bots or ()] for spec in specs],
    }
    round_id, game_ids = await run_in_threadpool(
        _store_round, store, setups, token, body.name, settings
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
            "tables": tables,
            "links": {"self": base, "room": f"/room/{round_id}#token={token}"},
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
    token = bearer_token(request)
    opens = store.rounds.round_opens(round_id, token_hash(token or ""))  # 404 before any 401
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
    return store.rounds.round_listing(round_id).to_dict()


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
        return body.tables
    spec = body.table
    assert spec is not None
    if spec.seed is None:
        return [spec] * count
    return [spec.model_copy(update={"seed": spec.seed + i}) for i in range(count)]


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
) -> tuple[str, list[str]]:
    return store.rounds.create_round(
        [s.store_args for s in setups],
        token_hash=token_hash(token),
        name=name,
        settings=settings,
    )

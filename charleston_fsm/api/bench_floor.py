"""The bench's floor route: a seat's token authenticated and one row stored, no more.

``charleston-fsm bench`` compares a command's server CPU, seen from outside the process,
with this route's, served by the same ``serve`` process configuration: the same HTTP
parser, middleware, token guard (:func:`~.deps.run_guard`, the role cache), body check,
thread hand-off and the store's pooled write transaction (``store.core.writing``), around
one INSERT of an event-sized row and its COMMIT. What a command costs beyond it is the
service's own work: the chart, the chain, the view, the answer.

It is not part of the service: only an app built with ``bench_floor`` (``serve
--bench-floor``, ``CHARLESTON_BENCH_FLOOR=1``, which only the bench sets) has the route
and its table; any other answers 404 at its path.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime

from fastapi import FastAPI
from fastapi.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .bodies import check_body
from .deps import run_guard, seat_only
from .responses import FastJSONResponse

BENCH_FLOOR_ENV = "CHARLESTON_BENCH_FLOOR"
FLOOR_PATH = "/bench/floor/{game_id}"
TABLE = "bench_floor_events"
_DDL = (
    f"CREATE TABLE IF NOT EXISTS {TABLE} (row_id VARCHAR(32) PRIMARY KEY, "
    "game_id VARCHAR(64), type VARCHAR(32), seat VARCHAR(8), payload TEXT, "
    "created_at VARCHAR(40), hash VARCHAR(64))"
)
#: an event row's size: a pass's payload and a hash
_PAYLOAD = json.dumps({"tiles": [3, 17, 41], "blind": 0, "step": "first_right"})
_HASH = "0" * 64
FLOOR_REFUSAL = "The director's token stores no floor row."


def install_floor(app: FastAPI) -> None:
    """Give ``app`` the floor route (second, after the command route) and its table."""
    store = app.state.store
    with store.core.writing() as conn:
        conn.exec_driver_sql(_DDL)
    mark = "?" if store.dialect == "sqlite" else "%s"
    insert = f"INSERT INTO {TABLE} VALUES ({', '.join([mark] * 7)})"

    def guard(request: Request) -> None:
        seat_only(request, request.path_params["game_id"], FLOOR_REFUSAL)

    def store_row(request: Request) -> Response:
        game_id = request.path_params["game_id"]
        seat = seat_only(request, game_id, FLOOR_REFUSAL)  # judged by the guard: no hash
        row = (uuid.uuid4().hex, game_id, "floor", seat.value, _PAYLOAD, _now(), _HASH)
        with store.core.writing() as conn:
            conn.exec_driver_sql(insert, row)
        return FastJSONResponse({"game_id": game_id, "stored": 1})

    async def floor(request: Request) -> Response:
        await run_guard(guard, request)
        await check_body(request)
        return await run_in_threadpool(store_row, request)

    route = Route(f"{FLOOR_PATH}", floor, methods=["POST"], include_in_schema=False)
    app.router.routes.insert(1, route)


def _now() -> str:
    return datetime.now(UTC).isoformat()

"""The bench and the simulator wait out a busy service (issue 30 R7): a ``503`` that stored
nothing is sent again after its ``Retry-After``, bounded, and counted. A real HTTP server
on a loopback port answers 503 once, then as the service would."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from charleston_fsm.bench.load import Resends, Slot, command_sender, create_tables
from charleston_fsm.bench.raw_client import RawClient
from charleston_fsm.engine.seats import Seat
from charleston_fsm.tournament.busy_service import MAX_WAIT, wait_before_retry
from charleston_fsm.tournament.round_player import RoundPlan, TablePlayer, Tally, create_round

BUSY = {
    "type": "about:blank",
    "title": "Service Unavailable",
    "status": 503,
    "code": "store_unavailable",
    "detail": "The database refused the command; nothing was stored. Retry the command.",
}
TOKENS = {"east": "e", "south": "s", "west": "w", "north": "n", "director": "d"}


class BusyOnce(ThreadingHTTPServer):
    """Answers each path's first POST ``503`` (``Retry-After: 1``, a problem whose code
    is ``busy_code``), every later one as the service would; notes when each arrived."""

    daemon_threads = True

    def __init__(self, busy_code: str = "store_unavailable") -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.busy_code = busy_code
        self.arrivals: dict[str, list[float]] = {}
        self.lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: BusyOnce

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with self.server.lock:
            seen = self.server.arrivals.setdefault(self.path, [])
            seen.append(time.monotonic())
            first = len(seen) == 1
        if first:
            self._answer(503, {**BUSY, "code": self.server.busy_code}, {"Retry-After": "1"})
        elif self.path == "/v1/games":
            self._answer(201, {"game_id": "g1", "tokens": TOKENS})
        elif self.path == "/v1/rounds":
            self._answer(201, {"round_id": "r1", "token": "t", "tables": []})
        else:
            self._answer(200, {"events": []})

    def _answer(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header(
            "Content-Type", "application/problem+json" if status >= 400 else "application/json"
        )
        self.send_header("Content-Length", str(len(raw)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def serving(busy_code: str = "store_unavailable") -> Iterator[BusyOnce]:
    server = BusyOnce(busy_code)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def busy() -> Iterator[BusyOnce]:
    with serving() as server:
        yield server


def _waited(server: BusyOnce, path: str) -> float:
    first, second = server.arrivals[path]
    return second - first


def test_the_bench_waits_out_a_503_creating_tables_and_sending_commands(busy: BusyOnce) -> None:
    resends = Resends()

    async def run() -> tuple[list[Slot], str | None]:
        async with httpx.AsyncClient(base_url=busy.base_url, timeout=60) as client:
            slots = await create_tables(client, 1, resends=resends)
        raw = RawClient("127.0.0.1", busy.server_address[1])
        try:
            problem = await command_sender(raw, slots[:1], resends)()
        finally:
            await raw.aclose()
        return slots, problem

    slots, problem = asyncio.run(run())
    assert [s.game_id for s in slots] == ["g1"] * 3
    assert problem is None  # the command was sent again and answered 200
    assert resends.total == 2  # one for the table, one for the command
    assert _waited(busy, "/v1/games") >= 1.0  # Retry-After: 1, honoured
    assert _waited(busy, "/v1/games/g1/commands") >= 1.0


def test_the_bench_does_not_resend_a_503_that_may_have_stored() -> None:
    resends = Resends()
    with serving("outcome_unknown") as server:

        async def run() -> None:
            async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as client:
                await create_tables(client, 1, resends=resends)

        with pytest.raises(httpx.HTTPStatusError):
            asyncio.run(run())
        assert len(server.arrivals["/v1/games"]) == 1
        assert resends.total == 0


def test_the_simulator_waits_out_a_503_creating_the_round_and_sending_a_command(
    busy: BusyOnce,
) -> None:
    tally = Tally()
    with httpx.Client(base_url=busy.base_url, timeout=60) as client:
        assert create_round(client, RoundPlan(tables=1), tally)["round_id"] == "r1"
        table = {"game_id": "g1", "tokens": TOKENS, "table": 1}
        player = TablePlayer(client, table, RoundPlan(tables=1), tally)
        assert player.send(Seat.EAST, {"type": "place_tiles"})
    assert tally.resent == 2 and tally.commands == 1
    assert _waited(busy, "/v1/rounds") >= 1.0
    assert _waited(busy, "/v1/games/g1/commands") >= 1.0


def test_retry_after_is_honoured_within_bounds() -> None:
    assert wait_before_retry({"Retry-After": "2"}, 0) == 2.0
    assert wait_before_retry({"Retry-After": "3600"}, 0) == MAX_WAIT
    assert wait_before_retry({"Retry-After": "-4"}, 0) == 0.0
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=3), usegmt=True)
    assert 1.0 < wait_before_retry({"Retry-After": later}, 0) <= 3.0
    earlier = format_datetime(datetime.now(UTC) - timedelta(seconds=30), usegmt=True)
    assert wait_before_retry({"Retry-After": earlier}, 0) == 0.0
    # none given, or unreadable: a short wait doubling per attempt, at most a second
    assert wait_before_retry({}, 0) == 0.05
    assert wait_before_retry({"Retry-After": "soon"}, 2) == 0.2
    assert wait_before_retry({}, 40) == 1.0

"""A command's CPU budget by stage: µs of one HTTP command and of one store command.

The figures of the speed targets say how far a path is from its floor; this says which
stage to work on. The real app (or the real store) runs the command; the functions that
make up each stage are wrapped for the run, each wrapper charging its call's CPU time
(``time.thread_time``: the CPU of the thread that ran it, which a busy machine inflates
far less than the wall clock) to its stage, minus the time of wrapped calls nested
inside it. What no stage claims (routing, dependency injection, the thread hand-off,
middleware, the transaction's checkout, ``BEGIN`` and ``COMMIT``) is reported as the
rest, so the stages add up to the whole command's CPU. Wall time is shown beside CPU:
their difference is time spent waiting (network round trips, ``fsync``, the GIL).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..api import commands, deps
from ..api.app import create_app
from ..api.auth import ROLES as TOKEN_ROLES
from ..api.auth import new_token, token_hash
from ..api.notify import Notifier
from ..api.responses import FastJSONResponse
from ..engine import turns
from ..engine.seats import Seat
from ..engine.table import Table
from ..store import GameStore, NewGame
from ..store.database.core import StoreCore
from ..store.games import append, writes
from .databases import Database
from .store_rows import toggle

#: (stage, object, attribute): the functions whose time is charged to each stage; the
#: methods a route calls on the store's parts are wrapped on the parts of the store run
#: (:func:`targets`)
WRAPPED: tuple[tuple[str, Any, str], ...] = (
    ("auth (token digest, role)", deps, "authenticate"),
    ("auth (token digest, role)", deps, "role_remembered"),
    ("command parse (pydantic)", commands, "command_from"),
    ("read (round trip; none for a cached game)", append, "read_head"),
    ("snapshot → warm table", StoreCore, "load"),
    ("chart (Table.execute)", Table, "execute"),
    ("rows + hash chain", writes, "chained_rows"),
    ("snapshot of the table", Table, "snapshot"),
    ("write (round trip)", append, "write"),
    ("view: allowed_commands", Table, "allowed_commands"),
    ("notify (in-process fan-out)", Notifier, "publish"),
    ("serialise (events, orjson)", commands, "event_out"),
    ("serialise (events, orjson)", FastJSONResponse, "render"),
    ("engine: the turn (refusal, steps, clock)", turns, "command_turn"),
    ("store: the command's own work", writes.Writes, "_append"),
)
#: (stage, part of the store, method)
ON_THE_STORE = (
    ("view (seat_view)", "reads", "view_of"),
    ("store: transaction (checkout, BEGIN, COMMIT)", "writes", "execute"),
)


def targets(store: GameStore) -> tuple[tuple[str, Any, str], ...]:
    """Every wrapped function of a run on ``store``, in the order stages are listed."""
    on_parts = ((stage, getattr(store, part), name) for stage, part, name in ON_THE_STORE)
    return (*WRAPPED, *on_parts)


#: the stages in the order they are printed (roughly the order a command meets them)
STAGES = tuple(
    dict.fromkeys(
        [stage for stage, _, _ in WRAPPED[:9]]
        + [ON_THE_STORE[0][0]]
        + [stage for stage, _, _ in WRAPPED[9:]]
        + [ON_THE_STORE[1][0]]
    )
)
REST = "the rest (routing, DI, thread hand-off, middleware)"


@dataclass
class StageClock:
    """CPU and wall seconds per stage, exclusive of nested wrapped calls."""

    cpu: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    wall: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    _stack: list[list[float]] = field(default_factory=list)

    def wrap(self, stage: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn`` charged to ``stage``; a coroutine function from its start to its end
        (one request runs at a time, so what runs meanwhile on the loop is its own)."""
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def timed_async(*args: Any, **kwargs: Any) -> Any:
                started = self._enter()
                try:
                    return await fn(*args, **kwargs)
                finally:
                    self._leave(stage, *started)

            return timed_async

        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = self._enter()
            try:
                return fn(*args, **kwargs)
            finally:
                self._leave(stage, *started)

        return timed

    def _enter(self) -> tuple[list[float], float, float]:
        children = [0.0, 0.0]
        self._stack.append(children)
        return children, time.thread_time(), time.perf_counter()

    def _leave(self, stage: str, children: list[float], cpu: float, wall: float) -> None:
        spent_cpu, spent_wall = time.thread_time() - cpu, time.perf_counter() - wall
        self._stack.pop()
        self.cpu[stage] += spent_cpu - children[0]
        self.wall[stage] += spent_wall - children[1]
        if self._stack:
            self._stack[-1][0] += spent_cpu
            self._stack[-1][1] += spent_wall

    def reset(self) -> None:
        self.cpu.clear()
        self.wall.clear()


@contextlib.contextmanager
def wrapped(clock: StageClock, store: GameStore) -> Iterator[None]:
    """Every function of :func:`targets` charged to its stage, for the ``with`` block.

    The stack is per call chain; the HTTP run makes one request at a time, so the loop
    thread and the worker thread never interleave wrapped calls.
    """
    saved = []
    for stage, owner, name in targets(store):
        own = name in vars(owner)  # a class may inherit it (a mixin's method)
        original = getattr(owner, name)
        saved.append((owner, name, vars(owner)[name] if own else None))
        setattr(owner, name, clock.wrap(stage, original))
    try:
        yield
    finally:
        for owner, name, original in reversed(saved):
            if original is None:
                delattr(owner, name)
            else:
                setattr(owner, name, original)


@dataclass(frozen=True)
class Budget:
    """µs per command by stage (CPU and wall), over ``commands`` commands."""

    name: str
    commands: int
    total_cpu_us: float
    total_wall_us: float
    stages: dict[str, tuple[float, float]]  # stage -> (cpu µs, wall µs) per command

    def rows(self) -> list[tuple[str, float, float]]:
        return [(stage, cpu, wall) for stage, (cpu, wall) in self.stages.items()]


def _budget(name: str, clock: StageClock, count: int, cpu: float, wall: float) -> Budget:
    stages = {
        s: (clock.cpu[s] / count * 1e6, clock.wall[s] / count * 1e6)
        for s in STAGES
        if s in clock.cpu
    }
    claimed_cpu = sum(c for c, _ in stages.values())
    claimed_wall = sum(w for _, w in stages.values())
    stages[REST] = (cpu / count * 1e6 - claimed_cpu, wall / count * 1e6 - claimed_wall)
    return Budget(name, count, cpu / count * 1e6, wall / count * 1e6, stages)


def store_budget(store: GameStore, count: int) -> Budget:
    """One store command (confirm / withdraw in turn: one event row), by stage."""
    game_id = store.registry.create_game(NewGame(seed=1))
    moves = toggle(store, game_id)
    for i in range(20):
        store.writes.execute(game_id, moves[i % 2])
    clock = StageClock()
    with wrapped(clock, store):
        cpu, wall = time.thread_time(), time.perf_counter()
        for i in range(count):
            store.writes.execute(game_id, moves[i % 2])
        cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
    return _budget(f"{store.dialect}: one store command", clock, count, cpu, wall)


def http_parse_us(body: bytes, count: int = 2000) -> float:
    """CPU µs to parse one command request's bytes with httptools (what uvicorn runs)."""
    import httptools

    raw = (
        b"POST /v1/games/0123456789abcdef0123456789abcdef/commands HTTP/1.1\r\n"
        b"host: 127.0.0.1:8000\r\naccept: */*\r\naccept-encoding: gzip, deflate\r\n"
        b"connection: keep-alive\r\nauthorization: Bearer " + b"x" * 43 + b"\r\n"
        b"content-type: application/json\r\ncontent-length: " + str(len(body)).encode() + b"\r\n"
        b"user-agent: python-httpx/0.27\r\n\r\n" + body
    )

    class Sink:
        def on_header(self, name: bytes, value: bytes) -> None: ...
        def on_body(self, data: bytes) -> None: ...

    start = time.thread_time()
    for _ in range(count):
        httptools.HttpRequestParser(Sink()).feed_data(raw)
    return (time.thread_time() - start) / count * 1e6


def http_budget(store: GameStore, count: int) -> Budget:
    """One HTTP command through the real app (its middleware, routing and thread hand-off),
    called in-process over ASGI: no socket, no client; the request's parsing by httptools
    is timed on its own and added as a stage."""
    tokens = {role: new_token() for role in TOKEN_ROLES}
    game_id = store.registry.create_game(
        NewGame(seed=1, credentials={r: token_hash(t) for r, t in tokens.items()})
    )
    moves = toggle(store, game_id)
    bodies = [
        orjson.dumps(m.model_dump(mode="json", exclude={"seat"})) for m in moves
    ]  # confirm, withdraw
    app = create_app(store, notifier=Notifier(), clock_interval=None)
    path = f"/v1/games/{game_id}/commands"
    headers = [
        (b"host", b"127.0.0.1"),
        (b"authorization", f"Bearer {tokens[Seat.EAST.value]}".encode()),
        (b"content-type", b"application/json"),
    ]

    async def one(body: bytes) -> int:
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "query_string": b"",
            "root_path": "",
            "headers": [*headers, (b"content-length", str(len(body)).encode())],
            "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 8000),
            "app": app,
        }
        sent = False
        status = 0

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if sent:
                await asyncio.sleep(3600)
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]

        await app(scope, receive, send)
        return status

    async def run() -> tuple[float, float, StageClock]:
        for i in range(20):
            if (status := await one(bodies[i % 2])) != 200:
                raise RuntimeError(f"the command answered {status}")
        clock = StageClock()
        with wrapped(clock, store):
            cpu, wall = time.process_time(), time.perf_counter()
            for i in range(count):
                await one(bodies[i % 2])
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        return cpu, wall, clock

    with _event_loop() as loop:
        cpu, wall, clock = loop.run_until_complete(run())
    parse = http_parse_us(bodies[0])
    budget = _budget(f"{store.dialect}: one HTTP command", clock, count, cpu, wall)
    stages = {"HTTP request parse (httptools)": (parse, parse), **budget.stages}
    return Budget(
        budget.name, count, budget.total_cpu_us + parse, budget.total_wall_us + parse, stages
    )


@contextlib.contextmanager
def _event_loop() -> Iterator[asyncio.AbstractEventLoop]:
    try:
        import uvloop

        loop = uvloop.new_event_loop()
    except ImportError:  # pragma: no cover - uvloop is a dependency
        loop = asyncio.new_event_loop()
    try:
        yield loop
    finally:
        loop.close()


def budgets(database: Database, count: int) -> list[Budget]:
    """The HTTP and the store command's budgets on ``database``."""
    store = database.store()
    try:
        return [http_budget(store, count), store_budget(store, count)]
    finally:
        store.dispose()


def budget_lines(budget: Budget) -> list[str]:
    """The budget as aligned text lines (µs per command: CPU, wall)."""
    lines = [f"{budget.name}, {budget.commands} commands: µs per command (CPU / wall)"]
    for stage, cpu, wall in budget.rows():
        lines.append(f"  {stage:<52} {cpu:8.1f} / {wall:8.1f}")
    lines.append(f"  {'total':<52} {budget.total_cpu_us:8.1f} / {budget.total_wall_us:8.1f}")
    return lines


def median_budget(runs: list[Budget]) -> Budget:
    """Per stage, the median over several runs of the same budget."""
    first = runs[0]
    stages = {
        s: (
            statistics.median(r.stages[s][0] for r in runs),
            statistics.median(r.stages[s][1] for r in runs),
        )
        for s in first.stages
    }
    return Budget(
        first.name,
        first.commands,
        statistics.median(r.total_cpu_us for r in runs),
        statistics.median(r.total_wall_us for r in runs),
        stages,
    )

"""An open-loop HTTP load generator: a fixed offered rate, whatever the answers do.

Requests leave at scheduled times (even or Poisson arrivals) and each latency is measured
from its scheduled time, not from when it was sent, so a slow server is charged for the
queue it causes (no coordinated omission). The tables are created with httpx; the load
is sent by :mod:`.raw_client` (prebuilt request bytes, answers parsed by httptools), and
each step reports the generator's own CPU beside the server's. Commands are legal by
construction: East, South and West of each table confirm and withdraw their first pass in
turn (never North, so the pass never resolves), and a seat has at most one command in
flight.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import httptools
import httpx
import orjson

from ..engine.seats import Seat
from ..engine.table import Table
from ..engine.tiles import Deal, is_joker
from ..tournament.busy_service import MAX_RETRIES, nothing_stored, wait_before_retry
from . import raw_client
from .figures import percentile
from .raw_client import RawClient

P99_LIMIT_MS = 50.0
ERROR_LIMIT = 0.01  # a step with more failed requests than this fails too


@dataclass
class Step:
    """One offered rate: what was asked, what came back."""

    rate: float
    sent: int
    ok: int
    errors: int
    p50_ms: float
    p99_ms: float
    max_ms: float
    first_error: str | None = None
    server_cpu_ms: float | None = None  # the server's CPU time per request, when known
    #: of that, its event loop threads' (HTTP, routing, middleware; the rest is the
    #: worker threads running the store and the views, and the service's own threads)
    server_loop_cpu_ms: float | None = None
    sessions_opened: int | None = None  # PostgreSQL sessions opened during the step
    #: the load generator's own CPU per request, and its share of one core during the
    #: step: near 1.0 the generator, not the server, would be what limits the rate
    client_cpu_ms: float | None = None
    client_core_share: float | None = None
    #: requests sent again after a 503 that stored nothing (waiting its Retry-After)
    resent: int = 0

    @property
    def passed(self) -> bool:
        return self.p99_ms <= P99_LIMIT_MS and self.errors <= ERROR_LIMIT * max(1, self.sent)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "passed": self.passed}


@dataclass
class Ladder:
    """Steps of rising rates; ``best`` is the highest rate that passed."""

    steps: list[Step] = field(default_factory=list)

    @property
    def best(self) -> float:
        passed = [s.rate for s in self.steps if s.passed]
        return max(passed) if passed else 0.0


@dataclass
class Slot:
    """One seat of one table, as the generator drives it."""

    game_id: str
    token: str
    tiles: list[int]
    confirmed: bool = False
    busy: bool = False
    broken: bool = False

    def request(self) -> bytes:
        """The bytes of the seat's next command: confirm its pass, or withdraw it."""
        body: dict[str, Any] = (
            {"type": "withdraw_pass"}
            if self.confirmed
            else {"type": "confirm_pass", "tiles": self.tiles}
        )
        return raw_client.post(
            f"/v1/games/{self.game_id}/commands",
            orjson.dumps(body),
            {"Authorization": f"Bearer {self.token}"},
        )


@dataclass
class Resends:
    """Requests sent again after a ``503 store_unavailable`` (nothing stored), each after
    the answer's ``Retry-After`` (``tournament/busy_service.py``)."""

    total: int = 0

    def count(self) -> int:
        return self.total


async def create_tables(
    client: httpx.AsyncClient, count: int, parallel: int = 16, resends: Resends | None = None
) -> list[Slot]:
    """``count`` games; three slots each, whose tiles come from the seeded deal. A busy
    service's 503 (nothing stored) is waited out and the game asked for again."""
    gate = asyncio.Semaphore(parallel)
    resends = resends if resends is not None else Resends()

    async def one(seed: int) -> list[Slot]:
        async with gate:
            for attempt in range(MAX_RETRIES + 1):
                answer = await client.post("/v1/games", json={"seed": seed})
                if attempt == MAX_RETRIES or not nothing_stored(
                    answer.status_code, _problem(answer.content)
                ):
                    break
                resends.total += 1
                await asyncio.sleep(wait_before_retry(answer.headers, attempt))
        answer.raise_for_status()
        data = answer.json()
        racks = Table(Deal.shuffled(seed)).racks
        return [
            Slot(
                data["game_id"],
                data["tokens"][seat.value],
                [t for t in racks[seat] if not is_joker(t)][:3],
            )
            for seat in (Seat.EAST, Seat.SOUTH, Seat.WEST)
        ]

    tables = await asyncio.gather(*(one(10_000 + i) for i in range(count)))
    return [slot for table in tables for slot in table]


def _problem(body: bytes) -> Any:
    """An answer's problem+json (``None`` when it is not JSON)."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return None


def command_sender(
    client: RawClient, slots: Sequence[Slot], resends: Resends | None = None
) -> Callable[[], Awaitable[str | None]]:
    """Each call sends the next idle seat's command; returns None or what went wrong. A
    ``503 store_unavailable`` (nothing stored) is sent again after its ``Retry-After``
    (counted in ``resends``); its latency, from the scheduled time, includes the wait."""
    resends = resends if resends is not None else Resends()
    turn = iter(range(10**12))
    built = {(id(slot), confirmed): b"" for slot in slots for confirmed in (False, True)}

    async def send() -> str | None:
        for _ in range(len(slots)):
            slot = slots[next(turn) % len(slots)]
            if not (slot.busy or slot.broken):
                break
        else:
            return "no idle seat: every seat has a command in flight"
        key = (id(slot), slot.confirmed)
        if not built[key]:
            built[key] = slot.request()
        slot.busy = True
        try:
            for attempt in range(MAX_RETRIES + 1):
                status, body, headers = await client.exchange(built[key])
                if attempt == MAX_RETRIES or not nothing_stored(status, _problem(body)):
                    break
                resends.total += 1
                await asyncio.sleep(wait_before_retry(headers, attempt))
        except (OSError, httptools.HttpParserError) as exc:
            slot.broken = True  # its state is unknown now
            return f"{type(exc).__name__}: {exc}"
        finally:
            slot.busy = False
        if status != 200:
            slot.broken = True
            return raw_client.describe(status, body)
        slot.confirmed = not slot.confirmed
        return None

    return send


def floor_sender(client: RawClient, slots: Sequence[Slot]) -> Callable[[], Awaitable[str | None]]:
    """Each call sends the next seat's request to the floor route (``api/bench_floor.py``:
    the seat's token authenticated, one row stored), with a command's body."""
    requests = [
        raw_client.post(
            f"/bench/floor/{slot.game_id}",
            orjson.dumps({"type": "confirm_pass", "tiles": slot.tiles}),
            {"Authorization": f"Bearer {slot.token}"},
        )
        for slot in slots
    ]
    turn = iter(range(10**12))

    async def send() -> str | None:
        try:
            status, body = await client.request(requests[next(turn) % len(requests)])
        except (OSError, httptools.HttpParserError) as exc:
            return f"{type(exc).__name__}: {exc}"
        return None if status == 200 else raw_client.describe(status, body)

    return send


def health_sender(client: RawClient) -> Callable[[], Awaitable[str | None]]:
    request = raw_client.get("/healthz")

    async def send() -> str | None:
        try:
            status, body = await client.request(request)
        except (OSError, httptools.HttpParserError) as exc:
            return f"{type(exc).__name__}: {exc}"
        return None if status == 200 else raw_client.describe(status, body)

    return send


async def each_once(
    send: Callable[[], Awaitable[str | None]], count: int, parallel: int = 16
) -> list[str]:
    """``count`` requests, ``parallel`` at a time, untimed (a sender takes its seats in
    turn, so one call per seat touches each); what went wrong, if anything."""
    gate = asyncio.Semaphore(parallel)

    async def one() -> str | None:
        async with gate:
            return await send()

    return [p for p in await asyncio.gather(*(one() for _ in range(count))) if p is not None]


async def offer(
    send: Callable[[], Awaitable[str | None]],
    rate: float,
    seconds: float,
    *,
    poisson: bool = False,
    rng: random.Random | None = None,
    cpu: Callable[[], float] | None = None,
    loop_cpu: Callable[[], float] | None = None,
    sessions: Callable[[], int] | None = None,
    resent: Callable[[], int] | None = None,
) -> Step:
    """Send at ``rate`` per second for ``seconds``, open loop; wait for every answer.
    ``cpu``: the server's CPU seconds so far, to charge each request its share
    (``loop_cpu``: the same, of its event loop threads only);
    ``sessions``: the database's sessions opened so far (a pool that churns opens some);
    ``resent``: the requests sent again so far after a busy service's 503."""
    loop = asyncio.get_running_loop()
    rng = rng or random.Random(0)
    latencies: list[float] = []
    failures: list[str] = []

    async def one(at: float) -> None:
        problem = await send()
        if problem is None:
            latencies.append((loop.time() - at) * 1e3)
        else:
            failures.append(problem)

    count = max(1, round(rate * seconds))
    own_before, wall_before = time.process_time(), time.perf_counter()
    cpu_before = cpu() if cpu else 0.0
    loop_before = loop_cpu() if loop_cpu else 0.0
    sessions_before = sessions() if sessions else 0
    resent_before = resent() if resent else 0
    tasks = []
    at = loop.time() + 0.01
    for _ in range(count):
        delay = at - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one(at)))
        at += rng.expovariate(rate) if poisson else 1 / rate
    await asyncio.gather(*tasks)
    own, wall = time.process_time() - own_before, time.perf_counter() - wall_before
    cpu_ms = (cpu() - cpu_before) * 1e3 / count if cpu else None
    loop_ms = (loop_cpu() - loop_before) * 1e3 / count if loop_cpu else None
    opened = sessions() - sessions_before if sessions else None
    return Step(
        rate=rate,
        sent=count,
        ok=len(latencies),
        errors=len(failures),
        p50_ms=percentile(latencies, 0.50),
        p99_ms=percentile(latencies, 0.99),
        max_ms=max(latencies, default=0.0),
        first_error=failures[0] if failures else None,
        server_cpu_ms=cpu_ms,
        server_loop_cpu_ms=loop_ms,
        sessions_opened=opened,
        client_cpu_ms=own * 1e3 / count,
        client_core_share=own / wall if wall else None,
        resent=resent() - resent_before if resent else 0,
    )


async def climb(
    send: Callable[[], Awaitable[str | None]],
    rates: Sequence[float],
    seconds: float,
    *,
    poisson: bool = False,
    on_step: Callable[[Step], None] | None = None,
    cpu: Callable[[], float] | None = None,
    loop_cpu: Callable[[], float] | None = None,
    sessions: Callable[[], int] | None = None,
    resent: Callable[[], int] | None = None,
) -> Ladder:
    """Offer each rate in turn until one fails (p99 over the limit, or errors). A first
    step at the lowest rate warms the server (imports, pools, caches) and is not kept."""
    await offer(send, rates[0], min(seconds, 2.0))
    ladder = Ladder()
    for rate in rates:
        step = await offer(
            send,
            rate,
            seconds,
            poisson=poisson,
            cpu=cpu,
            loop_cpu=loop_cpu,
            sessions=sessions,
            resent=resent,
        )
        ladder.steps.append(step)
        if on_step:
            on_step(step)
        if not step.passed:
            break
        await asyncio.sleep(0.5)  # let the server drain between steps
    return ladder


def client_for(base_url: str, connections: int = 512) -> httpx.AsyncClient:
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    return httpx.AsyncClient(base_url=base_url, limits=limits, timeout=30)

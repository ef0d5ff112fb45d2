"""Rows 3 and 6: the highest command rate with p99 ≤ 50 ms over 100 and 1,000 active
tables (``/healthz`` at the same rates as the floor), a command's server CPU beside the
floor route's (``api/bench_floor.py``: a token authenticated and one INSERT + COMMIT,
served by the same process), and the server's memory meanwhile."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .databases import Database
from .figures import Figure, Goal
from .load import (
    P99_LIMIT_MS,
    Ladder,
    Resends,
    Step,
    client_for,
    climb,
    command_sender,
    create_tables,
    each_once,
    floor_sender,
    health_sender,
)
from .raw_client import RawClient
from .server import ServeProcess

#: issue 34: one serve process, 1,000 active tables, on the 2-core machine
RATE_TARGET = 200.0
MEMORY_LIMIT_MB = 200.0
#: a command's server CPU at most this many times the floor route's (issue 34)
CPU_RATIO_TARGET = 2.5


@dataclass(frozen=True)
class LoadPlan:
    """What to offer: table counts, the rate ladder, seconds per step."""

    tables: tuple[int, ...] = (100, 1000)
    rates: tuple[float, ...] = (50, 100, 200, 300, 400, 600, 800)
    seconds: float = 10.0
    poisson: bool = False
    workers: int | None = None

    @classmethod
    def quick(cls) -> LoadPlan:
        return cls(tables=(5, 20), rates=(10, 25), seconds=1.0)


def http_rows(
    database: Database, plan: LoadPlan, on_step: Callable[[str, Step], None] | None = None
) -> list[Figure]:
    """The HTTP figures of one database (one server process for all of them)."""
    with tempfile.TemporaryDirectory(prefix="charleston-bench-") as tmp:
        server = ServeProcess(
            database.url,
            Path(tmp) / "serve.log",
            workers=plan.workers,
            extra=["--bench-floor"],
            timeout=120,  # a loaded shared machine starts a process slowly
        )
        try:
            return asyncio.run(_measure(server, database, plan, on_step))
        finally:
            server.stop()


async def _measure(
    server: ServeProcess,
    database: Database,
    plan: LoadPlan,
    on_step: Callable[[str, Step], None] | None,
) -> list[Figure]:
    peak = [server.rss_mb()]
    idle_mb = peak[0]

    async def sample() -> None:
        while True:
            peak[0] = max(peak[0], server.rss_mb())
            await asyncio.sleep(0.25)

    sampler = asyncio.create_task(sample())

    def report(label: str) -> Callable[[Step], None]:
        return lambda step: on_step(label, step) if on_step else None

    counter = SessionCounter(database) if database.is_postgres else None
    raw = RawClient("127.0.0.1", server.port)
    resends = Resends()  # a busy service's 503s, waited out (tables and commands)
    try:
        async with client_for(server.base_url) as client:
            slots = await create_tables(client, max(plan.tables), resends=resends)
        created_resent = resends.total
        health = await climb(
            health_sender(raw),
            plan.rates,
            plan.seconds,
            poisson=plan.poisson,
            on_step=report("/healthz"),
            cpu=server.cpu_seconds,
            loop_cpu=server.loop_cpu_seconds,
        )
        ladders: list[tuple[int, Ladder]] = []
        warm_failed: dict[int, list[str]] = {}
        for tables in plan.tables:
            active = slots[: tables * 3]
            send = command_sender(raw, active, resends)
            # each seat once before the clock, as the floor route's are: a seat's first
            # request looks its token up in the store, its later ones find it remembered
            # (what failed there is told beside the figure: the ladder never sees it)
            warm_failed[tables] = await each_once(send, len(active))
            ladder = await climb(
                send,
                plan.rates,
                plan.seconds,
                poisson=plan.poisson,
                on_step=report(f"{tables} tables"),
                cpu=server.cpu_seconds,
                loop_cpu=server.loop_cpu_seconds,
                sessions=counter.opened if counter else None,
                resent=resends.count,
            )
            ladders.append((tables, ladder))
        # the floor route over the largest count's seats, at the same rates
        floor = await climb(
            floor_sender(raw, slots[: max(plan.tables) * 3]),
            plan.rates,
            plan.seconds,
            poisson=plan.poisson,
            on_step=report("floor route"),
            cpu=server.cpu_seconds,
            loop_cpu=server.loop_cpu_seconds,
        )
    finally:
        sampler.cancel()
        await raw.aclose()
        if counter:
            counter.close()
    processes = plan.workers or 1
    figures = [
        _rate_figure(database, tables, ladder, health, processes, warm_failed[tables])
        for tables, ladder in ladders
    ]
    for figure in figures:  # what the busy service made the bench send again
        figure.details["tables_resent_after_503"] = created_resent
        figure.details["commands_resent_after_503"] = resends.total - created_resent
    figures.append(_cpu_figure(database, *ladders[-1], floor))
    figures.append(
        Figure(
            row="memory",
            database=database.name,
            name="server memory (RSS) under that load",
            value=peak[0],
            unit="MB",
            floor=idle_mb,
            floor_name="the same server idle, before the load",
            goal=Goal(f"≤ {MEMORY_LIMIT_MB:.0f} MB", MEMORY_LIMIT_MB),
            details={"workers": plan.workers or 1},
        )
    )
    return figures


class SessionCounter:
    """The sessions PostgreSQL has opened on the bench's database (``pg_stat_database``),
    read over one connection of its own opened before the load. The server reports a
    session's start within about a second, so a step's count is good to ±1."""

    def __init__(self, database: Database) -> None:
        self._conn = database.connect()
        self._conn.autocommit = True

    def opened(self) -> int:
        row = self._conn.execute(
            "SELECT sessions FROM pg_stat_database WHERE datname = current_database()"
        ).fetchone()
        return int(row[0]) if row else 0

    def close(self) -> None:
        self._conn.close()


def _rate_figure(
    database: Database,
    tables: int,
    ladder: Ladder,
    health: Ladder,
    processes: int,
    first_failed: list[str],
) -> Figure:
    """The highest rate ``ladder`` held; ``first_failed``: what the untimed first command
    of each seat met (a failed one leaves that seat's token unremembered)."""
    served = f"{processes} serve processes" if processes > 1 else "one serve process"
    return Figure(
        row="http",
        database=database.name,
        name=f"HTTP, {served}, {tables:,} active tables, highest rate with p99 ≤ "
        f"{P99_LIMIT_MS:.0f} ms",
        value=ladder.best,
        unit="/s",
        floor=health.best,
        floor_name=f"/healthz at the same rates ({_at(health, ladder.best)})",
        goal=Goal(f"≥ {RATE_TARGET:.0f}/s", RATE_TARGET, at_least=True),
        higher_is_better=True,
        details={
            "server_cpu_ms_per_command": _cpu_per_request(ladder),
            "server_loop_cpu_ms_per_command": _cpu_per_request(ladder, loop=True),
            "server_cpu_ms_per_healthz": _cpu_per_request(health),
            "client_cpu_ms_per_command": _median(s.client_cpu_ms for s in ladder.steps),
            "client_core_share_at_best": next(
                (s.client_core_share for s in ladder.steps if s.rate == ladder.best), None
            ),
            "processes": processes,
            "first_commands_failed": len(first_failed),
            "first_command_failure": first_failed[0] if first_failed else None,
            "steps": [s.to_dict() for s in ladder.steps],
            "healthz_steps": [s.to_dict() for s in health.steps],
        },
    )


def _cpu_figure(database: Database, tables: int, ladder: Ladder, floor: Ladder) -> Figure:
    """A command's server CPU seen from outside (``/proc``) beside the floor route's,
    each the median over the rates both passed (the CPU a request costs moves with the
    rate: batching, idle wake-ups)."""
    rates = {s.rate for s in ladder.steps if s.passed} & {s.rate for s in floor.steps if s.passed}
    kept = (rates or {s.rate for s in ladder.steps}) & {s.rate for s in floor.steps}
    return Figure(
        row="http",
        database=database.name,
        name=f"server CPU per command from outside, {tables:,} tables",
        value=_median(s.server_cpu_ms for s in ladder.steps if s.rate in kept) or 0.0,
        unit="ms",
        floor=_median(s.server_cpu_ms for s in floor.steps if s.rate in kept),
        floor_name="the floor route (token + INSERT + COMMIT) at the same rates",
        goal=Goal(f"≤ {CPU_RATIO_TARGET}× the floor", CPU_RATIO_TARGET, of="ratio"),
        details={
            "rates": sorted(kept),
            "server_loop_cpu_ms_per_command": _median(
                s.server_loop_cpu_ms for s in ladder.steps if s.rate in kept
            ),
            "server_loop_cpu_ms_per_floor": _median(
                s.server_loop_cpu_ms for s in floor.steps if s.rate in kept
            ),
            "floor_steps": [s.to_dict() for s in floor.steps],
        },
    )


def _at(health: Ladder, rate: float) -> str:
    """The floor's p99 at ``rate`` (or at its nearest rate measured)."""
    steps: Sequence[Step] = health.steps
    if not steps:
        return "not measured"
    step = min(steps, key=lambda s: abs(s.rate - rate))
    return f"p99 {step.p99_ms:.1f} ms at {step.rate:.0f}/s"


def _cpu_per_request(ladder: Ladder, *, loop: bool = False) -> float | None:
    """The server's CPU ms per request (``loop``: its event loop threads'), the median
    over the steps that measured it."""
    return _median(s.server_loop_cpu_ms if loop else s.server_cpu_ms for s in ladder.steps)


def _median(values: Iterable[float | None]) -> float | None:
    known = sorted(v for v in values if v is not None)
    return known[(len(known) - 1) // 2] if known else None

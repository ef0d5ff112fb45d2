"""One bench run: every selected row on both databases, each beside its floor."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace

from .breakdown import Costs, engine_costs, store_costs
from .databases import Database, postgres_database, sqlite_database
from .figures import DEFAULT_PG, ROWS, Figure, RowSkipped, median_figure
from .http_rows import LoadPlan, http_rows
from .load import Step
from .notify_rows import notify_rows
from .platform_rows import platform_rows
from .replay_rows import FULL_GAMES, replay_row, stored_games, verify_row
from .stages import Budget, budgets
from .standby_rows import standby_rows
from .store_rows import command_row, throughput_row

REPLAY_GAMES = 500  # replay is per game: a sample of the stored games is enough


@dataclass(frozen=True)
class BenchSettings:
    """What to measure and how long (``quick``: the CI smoke form, seconds long)."""

    quick: bool = False
    rows: tuple[str, ...] = ROWS
    database_url: str = DEFAULT_PG
    games: int = FULL_GAMES
    repeat: int = 3
    workers: int | None = None
    poisson: bool = False
    databases: tuple[str, ...] = ("SQLite", "PostgreSQL")
    breakdown: bool = False
    load: LoadPlan = field(default_factory=LoadPlan)

    @classmethod
    def quick_form(cls, **changes: object) -> BenchSettings:
        base = {"quick": True, "games": 6, "repeat": 1, "load": LoadPlan.quick()}
        return cls(**{**base, **changes})  # type: ignore[arg-type]

    @property
    def samples(self) -> int:
        return 30 if self.quick else 300

    @property
    def seconds(self) -> float:
        return 1.0 if self.quick else 10.0

    def describe(self) -> dict[str, object]:
        """The settings as JSON-ready values (the JSON output records them)."""
        return {
            "quick": self.quick,
            "rows": list(self.rows),
            "games": self.games,
            "repeat": self.repeat,
            "workers": self.workers,
            "poisson": self.poisson,
            "databases": list(self.databases),
            "breakdown": self.breakdown,
            "samples": self.samples,
            "seconds": self.seconds,
            "http": {
                "tables": list(self.load.tables),
                "rates": list(self.load.rates),
                "seconds": self.load.seconds,
            },
        }

    def units(self) -> int:
        """Progress units: one per row, database and repeat (games count separately)."""
        per_database = len(self.rows) * self.repeat + self.breakdown
        return len(self.databases) * per_database + self.breakdown


Say = Callable[[str], None]


@dataclass
class BenchResult:
    """The figures, in the issue's row order, and the cost breakdown when asked for."""

    figures: list[Figure]
    breakdown: dict[str, Costs]
    budgets: list[Budget] = field(default_factory=list)
    #: why a row was not measured (a sentence each), printed after the table
    notes: list[str] = field(default_factory=list)


def run_bench(settings: BenchSettings, say: Say, advance: Callable[[int], None]) -> BenchResult:
    """Every selected row on every selected database; ``say`` names what runs now,
    ``advance`` moves the progress by finished units (see ``BenchSettings.units``)."""
    figures: list[Figure] = []
    costs: dict[str, Costs] = {}
    stage_budgets: list[Budget] = []
    notes: list[str] = []
    if settings.breakdown:
        say("the engine's costs")
        costs["engine"] = engine_costs(settings.samples)
        advance(1)
    # PostgreSQL first: a server that cannot give a scratch database fails the run at once
    for database_name in sorted(settings.databases, key=lambda d: d != "PostgreSQL"):
        with _open(database_name, settings) as database:
            figures += _measure(database, settings, say, advance, notes)
            if settings.breakdown:
                say(f"{database.name}: the store's costs")
                costs[database.name] = store_costs(database, settings.samples)
                say(f"{database.name}: a command's CPU by stage")
                stage_budgets += budgets(database, settings.samples)
                advance(1)
    figures.sort(key=lambda f: (ROWS.index(f.row), settings.databases.index(f.database)))
    return BenchResult(figures, costs, stage_budgets, notes)


def _open(name: str, settings: BenchSettings) -> AbstractContextManager[Database]:
    return sqlite_database() if name == "SQLite" else postgres_database(settings.database_url)


def _measure(
    database: Database,
    settings: BenchSettings,
    say: Say,
    advance: Callable[[int], None],
    notes: list[str],
) -> list[Figure]:
    games: list[str] = []
    if {"replay", "verify"} & set(settings.rows):
        say(f"{database.name}: storing {settings.games:,} bot games")
        games = stored_games(database, settings.games)
    measures: dict[str, Callable[[], list[Figure]]] = {
        "command": lambda: [command_row(database, settings.samples)],
        "throughput": lambda: [throughput_row(database, settings.seconds)],
        "notify": lambda: notify_rows(database, settings.seconds),
        "platform": lambda: platform_rows(database, settings.samples, settings.quick),
        "replay": lambda: [replay_row(database, games[:REPLAY_GAMES])],
        "verify": lambda: [verify_row(database, games)],
        # its own primary and standby (scripts/pg-standby.sh), on this machine
        "standby": lambda: standby_rows(settings.seconds) if database.is_postgres else [],
    }

    def on_step(label: str, step: Step) -> None:
        cpu = f", server CPU {step.server_cpu_ms:.2f} ms each" if step.server_cpu_ms else ""
        if step.server_cpu_ms and step.server_loop_cpu_ms is not None:
            cpu += f" ({step.server_loop_cpu_ms:.2f} on the event loop)"
        if step.sessions_opened is not None:
            cpu += f", {step.sessions_opened} sessions opened"
        if step.resent:
            cpu += f", {step.resent} sent again after a 503"
        if step.client_cpu_ms is not None and step.client_core_share is not None:
            cpu += (
                f"; the generator {step.client_cpu_ms:.2f} ms each, "
                f"{step.client_core_share:.0%} of a core"
            )
        say(f"{database.name} HTTP {label}: {step.rate:.0f}/s → p99 {step.p99_ms:.1f} ms{cpu}")

    if {"http", "memory"} & set(settings.rows):
        plan = replace(settings.load, workers=settings.workers, poisson=settings.poisson)
        measures["http"] = lambda: http_rows(database, plan, on_step)
    figures: list[Figure] = []
    for row in ROWS:
        if row not in settings.rows or (row == "memory" and "http" in settings.rows):
            continue
        runs: list[list[Figure]] = []
        for attempt in range(settings.repeat):
            say(f"{database.name}: {row} (run {attempt + 1} of {settings.repeat})")
            try:
                runs.append(measures["http" if row == "memory" else row]())
            except RowSkipped as skipped:
                notes.append(str(skipped))
                advance(settings.repeat - attempt)
                runs = []
                break
            advance(2 if row == "http" and "memory" in settings.rows else 1)
        figures += [median_figure(same) for same in _by_name(runs) if same[0].row in settings.rows]
    return figures


def _by_name(runs: Sequence[Sequence[Figure]]) -> Iterator[list[Figure]]:
    """The figures of every run, grouped by figure (each run yields them in one order)."""
    yield from (list(group) for group in zip(*runs, strict=True))

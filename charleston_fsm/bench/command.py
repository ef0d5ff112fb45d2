"""The ``charleston-fsm bench`` command: options in, progress and tables out."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import typer

from .figures import DEFAULT_PG, ROWS


def bench_command(
    quick: bool = typer.Option(False, "--quick", help="The CI smoke form: seconds, small N."),
    only: str | None = typer.Option(
        None, "--only", help=f"Comma-separated rows to measure, of: {', '.join(ROWS)}."
    ),
    database_url: str = typer.Option(
        DEFAULT_PG,
        "--database-url",
        help="A PostgreSQL server; the bench creates a scratch database there and drops it.",
    ),
    sqlite_only: bool = typer.Option(False, "--sqlite-only", help="Skip PostgreSQL."),
    postgres_only: bool = typer.Option(
        False, "--postgres-only", help="Skip SQLite (with --workers N above 1, say)."
    ),
    games: int | None = typer.Option(
        None, "--games", min=1, help="Games for verify + audit (default 10,000; --quick 6)."
    ),
    repeat: int | None = typer.Option(
        None, "--repeat", min=1, help="Runs per figure, the median is kept (default 3; --quick 1)."
    ),
    workers: int | None = typer.Option(
        None, "--workers", min=1, help="Passed to 'serve --workers' for the HTTP rows."
    ),
    poisson: bool = typer.Option(False, "--poisson", help="Poisson arrivals (default: even)."),
    http_tables: str | None = typer.Option(
        None,
        "--http-tables",
        help="Active tables per HTTP figure (default 100,1000; --quick 5,20).",
    ),
    http_rates: str | None = typer.Option(
        None, "--http-rates", help="The offered rates, climbed in order (default 50,100,...,800)."
    ),
    step_seconds: float | None = typer.Option(
        None, "--step-seconds", min=0.5, help="Seconds per offered rate (default 10; --quick 1)."
    ),
    json_path: Path | None = typer.Option(None, "--json", help="Also write the figures here."),
    markdown: bool = typer.Option(False, "--markdown", help="Print a Markdown table instead."),
    breakdown: bool = typer.Option(
        False,
        "--breakdown",
        help="Also time each engine and store operation, and a command's CPU µs by stage "
        "(HTTP: parse, auth, read, chart, view, write, notify, serialise; the store's).",
    ),
) -> None:
    """Measure every figure of the speed targets on SQLite and PostgreSQL, each beside its
    floor in the same run: the store's command latency and throughput, PostgreSQL's commit
    rate with and without pg_notify in the transaction, HTTP under an open-loop load,
    replay, verify + audit, and the server's memory."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from .databases import NoPostgres
    from .http_rows import LoadPlan
    from .report import breakdown_table, budget_table, to_json, to_markdown, to_rich
    from .run import BenchSettings, run_bench
    from .server import exit_on_sigterm

    rows = tuple(r.strip() for r in only.split(",")) if only else ROWS
    unknown = [r for r in rows if r not in ROWS]
    if unknown:
        raise typer.BadParameter(
            f"Unknown row(s) {', '.join(unknown)}; choose from {', '.join(ROWS)}.",
            param_hint="--only",
        )
    changes: dict[str, object] = {
        "rows": rows,
        "database_url": database_url,
        "workers": workers,
        "poisson": poisson,
        "breakdown": breakdown,
        "databases": ("SQLite",)
        if sqlite_only
        else ("PostgreSQL",)
        if postgres_only
        else ("SQLite", "PostgreSQL"),
    }
    changes |= {k: v for k, v in (("games", games), ("repeat", repeat)) if v is not None}
    plan = LoadPlan.quick() if quick else LoadPlan()
    plan = replace(
        plan,
        tables=_numbers(http_tables, "--http-tables", int) or plan.tables,
        rates=_numbers(http_rates, "--http-rates", float) or plan.rates,
        seconds=step_seconds or plan.seconds,
    )
    changes["load"] = plan
    settings = BenchSettings.quick_form(**changes) if quick else BenchSettings(**changes)  # type: ignore[arg-type]
    console = Console(stderr=markdown)
    exit_on_sigterm()
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=console,
        transient=markdown,
    ) as progress:
        task = progress.add_task("bench", total=settings.units())
        try:
            result = run_bench(
                settings,
                say=lambda text: progress.update(task, description=text),
                advance=lambda n: progress.advance(task, n),
            )
        except NoPostgres as exc:
            progress.stop()
            console.print(f"[red]{exc}", highlight=False)
            raise typer.Exit(2) from None
    if json_path:
        json_path.write_text(
            to_json(
                result.figures,
                settings.describe(),
                result.breakdown,
                result.budgets,
                result.notes,
            )
        )
    if markdown:
        typer.echo(to_markdown(result.figures), nl=False)
        for note in result.notes:
            typer.echo(f"\n{note}", nl=False)
        return
    title = "charleston-fsm bench" + (" (quick: smoke sizes, not targets)" if quick else "")
    console.print(to_rich(result.figures, title))
    if result.breakdown:
        console.print(breakdown_table(result.breakdown))
    for budget in result.budgets:
        console.print(budget_table(budget))
    for note in result.notes:
        console.print(note, highlight=False)


def _numbers(text: str | None, option: str, kind: Callable[[str], float]) -> tuple:  # type: ignore[type-arg]
    """``"100,1000"`` as numbers, in order; a clear error names the option otherwise."""
    if not text:
        return ()
    try:
        numbers = tuple(kind(part) for part in text.split(","))
    except ValueError:
        raise typer.BadParameter(
            f"{text!r} is not a comma-separated list of numbers.", param_hint=option
        ) from None
    if any(n <= 0 for n in numbers):
        raise typer.BadParameter("Every number must be positive.", param_hint=option)
    return numbers

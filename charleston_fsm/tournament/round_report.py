"""``simulate --url``'s face: a progress bar of finished tables, then the summary."""

from __future__ import annotations

from typing import Any

import httpx
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table as RichTable

from .round_player import RoundPlan, RoundResult, play_round


def simulate_over_http(
    console: Console,
    urls: list[str],
    plan: RoundPlan,
    *,
    platform_key: str | None,
    concurrency: int,
    timeout: float,
    ruling: str | None = None,
) -> int:
    """Play the round; the exit code: 0 when every table finished and verifies, else 1
    (2 when the service could not be reached or refused the round)."""
    with Progress(
        TextColumn("[bold]tables finished"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    ) as progress:
        task = progress.add_task("tables", total=plan.tables)

        def created(answer: dict[str, Any]) -> None:
            progress.console.print(
                f"round {answer['round_id']}: {len(answer['tables'])} tables created",
                highlight=False,
            )

        try:
            result = play_round(
                [url.rstrip("/") for url in urls],
                plan,
                platform_key=platform_key,
                concurrency=concurrency,
                timeout=timeout,
                on_created=created,
                ruling=ruling,
                on_table_done=lambda n: progress.update(task, completed=n),
            )
        except httpx.TransportError:
            raise  # no service there: the command line says so in plain words
        except (httpx.HTTPError, RuntimeError) as exc:
            console.print(f"[red]{type(exc).__name__}: {exc}", highlight=False)
            return 2
    console.print(summary(result, plan))
    for problem in result.problems[:20]:
        console.print(f"[red]{problem}", highlight=False)
    return 0 if result.ok else 1


def summary(result: RoundResult, plan: RoundPlan) -> RichTable:
    tally = result.tally
    table = RichTable(title=f"round {result.round_id}: {result.tables} tables over HTTP")
    table.add_column("measure")
    table.add_column("value", justify="right")
    clock = f"{plan.clock_seconds:g} s" if plan.clock_seconds is not None else "off"
    for name, value in [
        ("tables", result.tables),
        ("finished", result.finished),
        ("verified", result.verified),
        ("ruleset", plan.ruleset),
        ("clock", clock),
        ("idle seats per table", plan.idle_seats),
        ("commands", tally.commands),
        ("refusals", tally.refusals),
        ("sent again (5xx, lost connection)", tally.resent),
        ("late seats (round listing = audits)", result.late_seats),
        ("actions the clock took (audits)", tally.clock_actions),
        ("rulings recorded", tally.rulings),
        ("time", f"{result.elapsed:.2f} s"),
        ("commands/s", f"{tally.commands / max(result.elapsed, 1e-9):.1f}"),
        ("command latency p50", f"{tally.percentile(50) * 1000:.1f} ms"),
        ("command latency p99", f"{tally.percentile(99) * 1000:.1f} ms"),
    ]:
        table.add_row(name, str(value))
    return table

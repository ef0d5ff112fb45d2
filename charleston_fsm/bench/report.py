"""The bench's figures as a Rich table, a Markdown table (docs/performance.md) or JSON."""

from __future__ import annotations

import json
import os
import platform
import shutil
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from rich.table import Table as RichTable

from .figures import Figure
from .stages import Budget

HEADERS = ("figure", "database", "measured", "floor in the same run", "ratio", "target", "met")


def amount(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    if unit == "ms":
        return f"{value:.2f} ms"
    if unit == "s":
        return f"{value:.2f} s"
    if unit == "MB":
        return f"{value:.0f} MB"
    return f"{value:,.0f} {unit}" if unit != "/s" else f"{value:,.0f}/s"


def cells(figure: Figure) -> tuple[str, ...]:
    ratio = figure.ratio
    met = {True: "met", False: "not met", None: "—"}[figure.met]
    return (
        figure.name,
        figure.database,
        amount(figure.value, figure.unit),
        f"{figure.floor_name}: {amount(figure.floor, figure.unit)}",
        "—" if ratio is None else f"{ratio:.2f}×",
        figure.goal.text,
        met,
    )


def to_rich(figures: Sequence[Figure], title: str) -> RichTable:
    table = RichTable(title=title)
    for header in HEADERS:
        table.add_column(header, justify="right" if header in ("measured", "ratio") else "left")
    for figure in figures:
        row = cells(figure)
        style = {True: "green", False: "red"}.get(figure.met)  # type: ignore[call-overload]
        table.add_row(*row[:-1], f"[{style}]{row[-1]}" if style else row[-1])
    return table


def breakdown_table(costs: dict[str, dict[str, tuple[float, float]]]) -> RichTable:
    """Each operation's median and p95, in ms, per part (engine, SQLite, PostgreSQL)."""
    table = RichTable(title="Where the time goes (ms: median / p95)")
    table.add_column("operation")
    table.add_column("median / p95", justify="right")
    for part, operations in costs.items():
        for name, (median, p95) in operations.items():
            where = "" if part == "engine" else f" [{part}]"
            table.add_row(f"{name}{where}", f"{median:.3f} / {p95:.3f}")
    return table


def budget_table(budget: Budget) -> RichTable:
    """A command's CPU and wall µs by stage (:mod:`.stages`)."""
    table = RichTable(title=f"{budget.name}: µs per command, {budget.commands} commands")
    table.add_column("stage")
    table.add_column("CPU µs", justify="right")
    table.add_column("wall µs", justify="right")
    for stage, cpu, wall in budget.rows():
        table.add_row(stage, f"{cpu:.0f}", f"{wall:.0f}")
    table.add_row("total", f"{budget.total_cpu_us:.0f}", f"{budget.total_wall_us:.0f}")
    return table


def to_markdown(figures: Sequence[Figure]) -> str:
    lines = ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    for figure in figures:
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells(figure)) + " |")
    return "\n".join(lines) + "\n"


def to_json(
    figures: Sequence[Figure],
    settings: dict[str, Any],
    breakdown: dict[str, dict[str, tuple[float, float]]] | None = None,
    budgets: Sequence[Budget] = (),
    notes: Sequence[str] = (),
) -> str:
    document = {
        "generated_at": datetime.now(UTC).isoformat(),
        "settings": settings,
        "conditions": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "pgbench": shutil.which("pgbench") is not None,
        },
        "figures": [f.to_dict() for f in figures],
        "notes": list(notes),
        "breakdown_ms": {
            part: {name: {"median": m, "p95": p} for name, (m, p) in operations.items()}
            for part, operations in (breakdown or {}).items()
        },
        "stages_us": {
            b.name: {
                "commands": b.commands,
                "total": {"cpu": b.total_cpu_us, "wall": b.total_wall_us},
                "stages": {s: {"cpu": c, "wall": w} for s, c, w in b.rows()},
            }
            for b in budgets
        },
    }
    return json.dumps(document, indent=2)

"""The ``charleston-fsm`` command line: thin, everything it does lives in the package."""

from __future__ import annotations

import random

import typer
from rich.console import Console

from .bots import bots_for, play
from .rulesets import RULESETS
from .story import story_lines
from .table import Table
from .tiles import Deal
from .views import seat_view

app = typer.Typer(
    help="The Charleston of American Mah Jongg as a statechart.", no_args_is_help=True
)
console = Console()


@app.command("play")
def play_command(
    ruleset: str = typer.Option("nmjl", help=f"One of: {', '.join(RULESETS)}."),
    seed: int = typer.Option(7, help="Deal and bot seed (reproducible)."),
) -> None:
    """Play one in-memory game with four bots and print it pass by pass."""
    table = Table(Deal.shuffled(seed), ruleset)
    given = play(
        table.execute, lambda s: seat_view(table, s), bots_for(seed), rng=random.Random(seed)
    )
    console.rule(f"[bold]Charleston, ruleset {ruleset}, seed {seed}")
    for line in story_lines(table.log):
        console.print(line, highlight=False)
    replayed = Table.fold(table.deal, ruleset, table.options, table.log)
    same = replayed.snapshot() == table.snapshot()
    console.print(
        f"[bold]{given} commands, {len(table.log)} events; "
        f"replay through the chart {'[green]matches' if same else '[red]DIFFERS'}"
    )
    if not same:
        raise typer.Exit(1)


@app.callback()
def main() -> None:
    """Run one of the commands below."""

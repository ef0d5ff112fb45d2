"""Playing: ``play`` (in memory), ``demo`` (through the store, then verified)."""

from __future__ import annotations

import typer

from ..engine.bots import play_table
from ..engine.rulesets import RULESETS
from ..engine.table import Table
from ..engine.tiles import Deal, describe
from .common import (
    DEMO_SEEDS,
    DatabaseUrl,
    _bot_game,
    _check_game,
    _open_store,
    _print_legend,
    _print_story,
    check_ruleset,
    console,
    courtesy_given,
    uneven_courtesy_note,
)
from .errors import command_text

commands = typer.Typer()


@commands.command("play")
def play_command(
    ruleset: str = typer.Option(
        "nmjl", callback=check_ruleset, help=f"One of: {', '.join(RULESETS)}."
    ),
    seed: int = typer.Option(7, help="Deal and bot seed (reproducible)."),
) -> None:
    """Play one in-memory game with four bots and print it pass by pass."""
    table = Table(Deal.shuffled(seed), ruleset)
    given = play_table(table, seed)
    _print_legend()
    console.rule(f"[bold]Charleston, ruleset {ruleset}, seed {seed}")
    _print_story(table.log, RULESETS[ruleset].chart)
    replayed = Table.fold(table.deal, ruleset, table.options, table.log)
    same = replayed.snapshot() == table.snapshot()
    console.print(
        f"[bold]{given} commands, {len(table.log)} events; "
        f"replay through the chart {'[green]matches' if same else '[red]DIFFERS'}"
    )
    if not same:
        raise typer.Exit(1)


@commands.command("demo")
def demo_command(
    seed: int | None = typer.Option(None, help="Deal and bot seed (default: one per ruleset)."),
    ruleset: str | None = typer.Option(
        None,
        callback=check_ruleset,
        help=f"One of: {', '.join(RULESETS)} (default: each in turn).",
    ),
    database_url: str | None = DatabaseUrl,
) -> None:
    """Four bots play a full game per ruleset through the event store; print; verify."""
    store = _open_store(database_url)
    _print_legend()
    ok = True
    stored = []
    for name in [ruleset] if ruleset else list(RULESETS):
        game_id, good = _demo_game(store, name, seed if seed is not None else DEMO_SEEDS[name])
        stored.append(game_id)
        ok &= good
    if not ok:
        raise typer.Exit(1)
    where = f" --database-url {database_url}" if database_url else ""
    console.rule("[bold]Next")
    console.print("Replay a game through the chart, or read its audit (tiles' routes, hashes):")
    for line in (f"replay {stored[0]}{where}", f"audit {stored[0]}{where}", f"verify{where}"):
        console.print(f"  {command_text(line)}", highlight=False, markup=False)
    console.print(
        f"Play one yourself in a browser: {command_text('serve')}, then open "
        "http://127.0.0.1:8000/ (one seat against three bots, and the director's desk)",
        highlight=False,
        markup=False,
    )


def _demo_game(store, ruleset: str, seed: int) -> tuple[str, bool]:  # type: ignore[no-untyped-def]
    """One bot game through the store, printed, then verified: (its id, verified)."""
    game_id, given = _bot_game(store, seed, ruleset)
    events = store.reads.events(game_id)
    chosen = RULESETS[ruleset]
    console.rule(f"[bold]Charleston demo: ruleset {ruleset}, seed {seed}")
    console.print(f"{chosen.title}: {chosen.description}", style="dim", highlight=False)
    deal = events[0].payload["deal"]["hands"]
    for seat, tiles in deal.items():
        console.print(
            f"[bold]{seat.capitalize():<6}[/] dealt {describe(sorted(tiles))}", highlight=False
        )
    _print_story((e.event for e in events[1:]), chosen.chart)
    resolved = [e.payload for e in events if e.type == "pass_resolved"]
    blind = sum(1 for p in resolved if p["blind"])
    courtesy = courtesy_given(events)
    ding_dongs = sum(1 for p in resolved if p["step"] == "DING_DONG")
    ended = next((e.payload["reason"] for e in events if e.type == "charleston_ended"), "")
    gave = ", ".join(f"{seat} {n}" for seat, n in courtesy.items()) or "none"
    for line in (
        f"stored: game {game_id}, {given} commands, {len(events)} events in "
        f"{store.url.render_as_string(hide_password=True)}",
        f"passes resolved: {len(resolved)} (blind: {blind}; Ding Dongs: {ding_dongs}); "
        f"courtesy tiles given: {gave}",
        f"ended: {ended}",
        uneven_courtesy_note(courtesy) or "",
    ):
        if line:
            console.print(line, style="bold", highlight=False, markup=False)
    return game_id, _check_game(store, game_id)

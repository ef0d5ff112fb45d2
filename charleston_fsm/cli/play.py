"""Playing: ``play`` (in memory), ``demo`` (through the store, then verified)."""

from __future__ import annotations

import typer

from ..engine.bots import play_table
from ..engine.rulesets import RULESETS
from ..engine.story import story_lines
from ..engine.table import Table
from ..engine.tiles import Deal, describe
from .common import (
    DEMO_SEEDS,
    DatabaseUrl,
    _bot_game,
    _check_game,
    _open_store,
    _print_story,
    check_ruleset,
    console,
)

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
    ok = True
    for name in [ruleset] if ruleset else list(RULESETS):
        ok &= _demo_game(store, name, seed if seed is not None else DEMO_SEEDS.get(name, 1))
    if not ok:
        raise typer.Exit(1)
    console.print(
        "[bold]Play one yourself in a browser:[/] ./dev serve, then open http://127.0.0.1:8000/ "
        "(one seat against three bots, and the director's desk)"
    )


def _demo_game(store, ruleset: str, seed: int) -> bool:  # type: ignore[no-untyped-def]
    from rich.panel import Panel

    game_id, given = _bot_game(store, seed, ruleset)
    events = store.events(game_id)
    console.rule(f"[bold]Charleston demo: ruleset {ruleset}, seed {seed}")
    deal = events[0].payload["deal"]["hands"]
    for seat, tiles in deal.items():
        console.print(f"[bold]{seat.capitalize():<6}[/] dealt {describe(sorted(tiles))}")
    _print_story(e.event for e in events[1:])
    resolved = [e.payload for e in events if e.type == "pass_resolved"]
    blind = sum(1 for p in resolved if p["blind"])
    courtesy = [
        len(e.payload["from_hand"])
        for e in events
        if e.type == "tiles_transferred" and e.payload["step"].startswith("PAIR_")
    ]
    ding_dongs = sum(1 for p in resolved if p["step"] == "DING_DONG")
    ended = next((e.payload["reason"] for e in events if e.type == "charleston_ended"), "")
    console.print(
        Panel.fit(
            f"game {game_id}\n{given} commands, {len(events)} events stored in "
            f"{store.url.render_as_string(hide_password=True)}\n"
            f"passes resolved: {len(resolved)} (blind: {blind}; Ding Dongs: {ding_dongs}); "
            f"courtesy tiles given per player: {courtesy or 'none'}\nended: {ended}",
            title=f"stored ({ruleset})",
        )
    )
    ok = _check_game(store, game_id)
    console.print(
        f"[dim]again later: charleston-fsm replay {game_id}; charleston-fsm audit {game_id}",
        highlight=False,
    )
    return ok

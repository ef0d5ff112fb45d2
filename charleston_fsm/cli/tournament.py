"""Tournament operations: ``simulate`` (a round over HTTP) and ``ruling``."""

from __future__ import annotations

import typer

from ..engine.rulesets import RULESETS
from .common import (
    AnchorKeyFile,
    DatabaseUrl,
    _bot_game,
    _open_store,
    _refusals,
    check_database_url,
    check_ruleset,
    check_service_url,
    console,
)

commands = typer.Typer()


@commands.command("simulate")
def simulate_command(
    games: int = typer.Option(100, "--games", "-n", help="How many games."),
    seed: int = typer.Option(1, help="Seed of the first game (then seed+1, …)."),
    ruleset: str = typer.Option(
        "nmjl", callback=check_ruleset, help=f"One of: {', '.join(RULESETS)}."
    ),
    database_url: str | None = typer.Option(
        None,
        "--database-url",
        callback=check_database_url,
        help="Store to fill (default: a fresh temporary SQLite file).",
    ),
    url: list[str] | None = typer.Option(
        None,
        "--url",
        callback=check_service_url,
        help="Play a round against the service at this URL over HTTP instead "
        "(e.g. http://127.0.0.1:8000); repeat it for several processes on one database "
        "(table i is played through URL i mod n).",
    ),
    tables: int | None = typer.Option(
        None, "--tables", help="With --url: tables in the round (default: --games)."
    ),
    clock_seconds: int | None = typer.Option(
        None,
        "--clock-seconds",
        min=1,
        help="With --url: each table's clock, whole seconds per action (at least 1).",
    ),
    idle_seats: int = typer.Option(
        0,
        "--idle-seats",
        min=0,
        max=3,
        help="With --url: seats per table nobody plays (North, then West, South): "
        "the clock acts for them.",
    ),
    concurrency: int = typer.Option(16, "--concurrency", min=1, help="With --url: tables at once."),
    timeout: float = typer.Option(
        600.0, "--timeout", help="With --url: seconds before unfinished tables count as failed."
    ),
    platform_key: str | None = typer.Option(
        None, "--platform-key", envvar="CHARLESTON_PLATFORM_KEY", help="With --url: the key."
    ),
    organiser_key: str | None = typer.Option(
        None,
        "--organiser-key",
        envvar="CHARLESTON_ORGANISER_KEY",
        help="With --url: an organiser's key instead of the platform's (the round is then "
        "that organiser's, which its key lists and directs).",
    ),
    ruling: str | None = typer.Option(
        None,
        "--ruling",
        help="With --url: a director's note recorded on table 1 once played (checked in "
        "its audit): a rehearsal of the director's desk.",
    ),
) -> None:
    """Many bot games through the store, then a summary; checks every projection.

    With --url: a whole round against a running service, over HTTP only.
    """
    if url:
        from ..tournament.round_player import RoundPlan
        from ..tournament.round_report import simulate_over_http

        plan = RoundPlan(
            tables=tables or games,
            ruleset=ruleset,
            seed=seed,
            clock_seconds=clock_seconds,
            idle_seats=idle_seats,
        )
        raise typer.Exit(
            simulate_over_http(
                console,
                url,
                plan,
                platform_key=organiser_key or platform_key,
                concurrency=concurrency,
                timeout=timeout,
                ruling=ruling,
            )
        )
    import tempfile
    import time
    from pathlib import Path

    from rich.progress import track
    from rich.table import Table as RichTable

    tmp = None
    if database_url is None:
        tmp = tempfile.TemporaryDirectory(prefix="charleston-sim-")
        database_url = f"sqlite:///{Path(tmp.name) / 'simulate.sqlite3'}"
    store = _open_store(database_url)
    commands = events = blind = stopped = second = finished = ding_dongs = 0
    started = time.perf_counter()
    ids = []
    for i in track(range(games), description="playing", console=console):
        game_id, given = _bot_game(store, seed + i, ruleset)
        ids.append(game_id)
        rows = store.reads.events(game_id)
        commands += given
        events += len(rows)
        blind += sum(1 for e in rows if e.type == "pass_resolved" and e.payload["blind"])
        stopped += any(e.type == "vote_cast" and e.payload["choice"] == "stop" for e in rows)
        second += any(
            e.type == "pass_resolved" and e.payload["step"].startswith("CHARLESTON_P2")
            for e in rows
        )
        finished += any(e.type == "charleston_ended" for e in rows)
        ding_dongs += sum(1 for e in rows if e.type == "ding_dong_requested")
    elapsed = time.perf_counter() - started
    checked = time.perf_counter()
    bad_chain = [g for g in ids if not store.tamper.verify(g).ok]
    bad_projection = store.auditor.check_projections()
    checked = time.perf_counter() - checked
    summary = RichTable(title=f"{games} bot games, ruleset {ruleset}")
    summary.add_column("measure")
    summary.add_column("value", justify="right")
    for name, value in [
        ("games", games),
        ("finished", finished),
        ("commands", commands),
        ("events", events),
        ("blind passes", blind),
        ("games stopped by a vote", stopped),
        ("games with a Second Charleston", second),
        ("Ding Dongs", ding_dongs),
        ("time per command", f"{elapsed / max(commands, 1) * 1000:.2f} ms"),
        ("time per game", f"{elapsed / max(games, 1) * 1000:.1f} ms"),
        ("verify + check projections", f"{checked:.2f} s"),
        ("broken hash chains", len(bad_chain)),
        ("projections != replay", len(bad_projection)),
    ]:
        summary.add_row(name, str(value))
    console.print(summary)
    store.dispose()
    if tmp is not None:
        tmp.cleanup()
    if bad_chain or bad_projection or finished != games:
        raise typer.Exit(1)


@commands.command("ruling")
def ruling_command(
    game_id: str = typer.Argument(..., help="The game."),
    kind: str = typer.Option(..., "--kind", help="note, warning, penalty or void."),
    text: str = typer.Option(..., "--text", help="The ruling (1-2000 characters)."),
    seat: str | None = typer.Option(None, "--seat", help="The seat it concerns, if one."),
    database_url: str | None = DatabaseUrl,
    anchor_key_file: str | None = AnchorKeyFile,
) -> None:
    """Record a director's ruling in the game's hash chain (it changes no tile)."""
    import uuid

    from ..engine.annotations import from_director

    store = _open_store(database_url, migrate_empty=False, anchor_key_file=anchor_key_file)
    body = {"type": "record_ruling", "kind": kind, "text": text}
    if seat is not None:
        body["seat"] = seat
    with _refusals():
        result = store.writes.annotate(
            game_id, from_director(body), f"director:cli-{uuid.uuid4().hex}"
        )
    console.print(f"ruling recorded at seq {result.last_seq} of {game_id}", highlight=False)

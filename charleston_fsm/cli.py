"""The ``charleston-fsm`` command line: thin, everything it does lives in the package."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum

import typer
from rich.console import Console

from .bench.command import bench_command
from .bots import play_table
from .rulesets import RULESETS
from .story import story_lines
from .table import Table
from .tiles import Deal, describe

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


@app.command("diagram")
def diagram_command(
    ruleset: str | None = typer.Option(None, help="One ruleset (default: every ruleset)."),
    fmt: str = typer.Option("all", "--format", help="svg, dot, mermaid or all."),
    out: str | None = typer.Option(
        None, help="Directory (default: diagrams/ at the repository root), or a file name."
    ),
    game: str | None = typer.Option(
        None, help="A stored game's id: its chart with the active states filled (default out: .)."
    ),
    database_url: str | None = typer.Option(
        None, "--database-url", envvar="CHARLESTON_DATABASE_URL", help="The store, with --game."
    ),
) -> None:
    """Draw the rulesets' statecharts (or one stored game's) from the chart classes."""
    from pathlib import Path

    from .diagrams import run_command

    loaded = None
    if game is not None:
        from .store import GameNotFound

        try:
            loaded = (game, _open_store(database_url, migrate_empty=False).table(game))
        except GameNotFound as exc:
            console.print(f"[red]{exc}", highlight=False)
            raise typer.Exit(1) from None
    code = run_command(
        ruleset=ruleset,
        fmt=fmt,
        out=Path(out) if out else None,
        game=loaded,
        echo=lambda line: console.print(line, highlight=False, markup=False),
    )
    raise typer.Exit(code)


@app.command("rules")
def rules_command(
    markdown: bool = typer.Option(
        False, "--markdown", help="The whole rule book as Markdown (docs/rules.md)."
    ),
    ruleset: str | None = typer.Option(None, help="Only the rules of one ruleset."),
    rule: list[str] = typer.Option([], "--rule", help="Only these rule ids (repeatable)."),
) -> None:
    """The rule book's matrix: each rule, where the code enforces it, which tests prove it."""
    from .rulebook import RULES, RULESET_NAMES
    from .rulebook.render import to_markdown, to_rich
    from .rulebook.trace import default_tests_dir, matrix
    from .store import errors as _store_errors  # noqa: F401  (their refusals name rules too)

    unknown = [r for r in rule if r not in RULES]
    if unknown or (ruleset is not None and ruleset not in RULESET_NAMES):
        what = f"rule {', '.join(unknown)}" if unknown else f"ruleset {ruleset!r}"
        console.print(f"There is no {what} in the rule book.", highlight=False, markup=False)
        raise typer.Exit(2)
    chosen = [
        r
        for r in RULES.values()
        if (ruleset is None or ruleset in r.rulesets) and (not rule or r.id in rule)
    ]
    rows = matrix(default_tests_dir(), chosen)
    if markdown:
        typer.echo(to_markdown(rows), nl=False)
        return
    console.print(to_rich(rows))


@app.callback()
def main() -> None:
    """Run one of the commands below."""


# -- the service: serve, migrate, demo, simulate, replay, audit, verify ---------------------
DEMO_SEED = 6  # with the bots of this seed the demo shows two blind passes and both
# courtesy pairs exchanging tiles (tests/test_cli.py checks it)
#: The demo's seed per ruleset: each story shows what sets that ruleset apart
#: (nmjl: blind passes and agreed courtesy; house: Across first, asymmetric courtesy).
DEMO_SEEDS = {"nmjl": DEMO_SEED, "house": 3, "four_winds": 14}

DatabaseUrl = typer.Option(
    None,
    "--database-url",
    envvar="CHARLESTON_DATABASE_URL",
    help="SQLAlchemy URL (postgresql://user@host/db or sqlite:///file); "
    "default: $CHARLESTON_DATABASE_URL, else the embedded SQLite var/charleston.sqlite3.",
)


AnchorKeyFile = typer.Option(
    None,
    "--anchor-key-file",
    envvar="CHARLESTON_ANCHOR_KEY_FILE",
    help="File holding the key that signs anchors (created, mode 0600, if missing); "
    "$CHARLESTON_ANCHOR_KEY takes precedence. Default: ~/.config/charleston-fsm/anchor.key.",
)


def _open_store(  # type: ignore[no-untyped-def]
    url: str | None, *, migrate_empty: bool = True, say=None, anchor_key_file: str | None = None
):
    """The store at ``url``; an empty database is migrated, any other not current refused.

    ``say(level, text)`` reports (default: the console; ``serve`` logs JSON lines).
    """
    from .errors import CharlestonError
    from .store import GameStore, load_key

    if say is None:

        def say(level: str, text: str) -> None:
            style = {"error": "red", "info": "dim", "warning": "yellow"}[level]
            console.print(f"[{style}]{text}", highlight=False)

    try:
        key = load_key(key_file=anchor_key_file)
    except CharlestonError as exc:
        say("error", exc.message)
        raise typer.Exit(2) from None
    if key.created:
        say(
            "warning",
            f"created a new anchor key: {key.source} (mode 0600). Back it up apart from "
            "the database: without it, verify cannot check the anchors it signs.",
        )
    store = GameStore(url, anchor_key=key)
    where = store.url.render_as_string(hide_password=True)
    try:
        schema = store.schema_state()
    except Exception as exc:
        say("error", f"Cannot reach the database {where}: {type(exc).__name__}: {exc}")
        raise typer.Exit(2) from None
    if schema.status == "empty" and migrate_empty:
        say("info", f"empty database {where}: applying the migrations")
        store.upgrade()
    elif not schema.current:
        say("error", f"Refusing the database {where}. {schema.message}")
        raise typer.Exit(2)
    return store


def _bot_game(store, seed: int, ruleset: str = "nmjl"):  # type: ignore[no-untyped-def]
    """One game played by four bots through the store; returns (game id, commands given)."""
    from .store import play_bots

    game_id = store.create_game(ruleset=ruleset, seed=seed)
    given = play_bots(store, game_id, seed)
    return game_id, given


def _story_style(line: str) -> str:
    if line.startswith("=="):
        return "bold yellow" if "blind" in line else "bold"
    if line.startswith("->"):
        return "cyan"
    if line.startswith("**"):
        return "bold green"
    if line.startswith("    "):
        return "magenta" if "unseen" in line else ""
    return "dim" if "confirms" in line else ""


def _print_story(events) -> None:  # type: ignore[no-untyped-def]
    for line in story_lines(events):
        console.print(line, style=_story_style(line), highlight=False)


def _check_game(store, game_id: str) -> bool:  # type: ignore[no-untyped-def]
    """Verify the stored game (hashes, head, anchors, projection == replay); prints it."""
    verdict = store.verify(game_id)
    mark = "[green]ok[/]" if verdict.ok else "[red]FAILED[/]"
    console.print(f"verify (hash chain, head, anchors, projection = replay): {mark}")
    console.print(verdict.message, highlight=False, markup=False)
    return bool(verdict.ok)


class HttpParser(StrEnum):
    auto = "auto"
    httptools = "httptools"
    h11 = "h11"


class EventLoop(StrEnum):
    auto = "auto"
    uvloop = "uvloop"
    asyncio = "asyncio"


@app.command("serve")
def serve_command(
    host: str = typer.Option("127.0.0.1", help="Interface to listen on."),
    port: int = typer.Option(8000, help="TCP port."),
    database_url: str | None = DatabaseUrl,
    platform_key: str | None = typer.Option(
        None,
        envvar="CHARLESTON_PLATFORM_KEY",
        help="If set, POST /v1/games needs 'Authorization: Bearer <platform key>'.",
    ),
    log_level: str = typer.Option("info", help="debug, info, warning or error."),
    anchor_key_file: str | None = AnchorKeyFile,
    max_body_bytes: int | None = typer.Option(
        None,
        min=0,
        envvar="CHARLESTON_MAX_BODY_BYTES",
        help="Largest request body accepted, in bytes (default 65536); a larger one is a 413.",
    ),
    workers: int = typer.Option(
        1,
        min=1,
        envvar="CHARLESTON_WORKERS",
        help="Processes serving the port (more than 1 needs PostgreSQL: streams follow "
        "commands across them through LISTEN/NOTIFY). Default 1.",
    ),
    http: HttpParser = typer.Option(
        "auto", help="HTTP parser; auto is httptools (C, a dependency), h11 is pure Python."
    ),
    loop: EventLoop = typer.Option("auto", help="Event loop; auto is uvloop (a dependency)."),
) -> None:
    """Run the HTTP service (JSON-line logs on stderr); migrates an empty database."""
    import os

    from .api import create_app, serve
    from .api.logs import configure, log

    configure(log_level.upper())
    store = _open_store(
        database_url,
        say=lambda level, text: getattr(log, level)(text),
        anchor_key_file=anchor_key_file,
    )
    try:
        serve.check_workers(workers, store.dialect)
    except serve.WorkersNeedPostgres as exc:
        log.error(str(exc))
        raise typer.Exit(2) from None
    log.info(f"anchors signed with the key from {store.anchor_key.source}")
    if workers > 1:  # each worker builds its own app from these settings
        os.environ.update(
            serve.worker_environment(
                database_url=store.url.render_as_string(hide_password=False),
                anchor_key_file=anchor_key_file,
                platform_key=platform_key,
                max_body_bytes=max_body_bytes,
            )
        )
        store.dispose()
        app_ = None
    else:
        app_ = create_app(store, platform_key=platform_key or None, max_body_bytes=max_body_bytes)
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    log.info(f"open http://{shown}:{port}/ in a browser to create a game and take a seat")
    serve.run(
        app_,
        host=host,
        port=port,
        workers=workers,
        log_level=log_level,
        http=http.value,
        loop=loop.value,
    )


app.command("bench")(bench_command)


@app.command("migrate")
def migrate_command(database_url: str | None = DatabaseUrl) -> None:
    """Bring the database schema up to date (Alembic upgrade head)."""
    from .store import GameStore

    store = GameStore(database_url)
    before = store.schema_state()
    if before.status not in ("empty", "outdated", "current"):
        console.print(f"[red]Not migrating: {before.message}", highlight=False)
        raise typer.Exit(2)
    store.upgrade()
    console.print(f"schema {before.status} -> {store.schema_status()}")


@app.command("demo")
def demo_command(
    seed: int | None = typer.Option(None, help="Deal and bot seed (default: one per ruleset)."),
    ruleset: str | None = typer.Option(
        None, help=f"One of: {', '.join(RULESETS)} (default: each in turn)."
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


@app.command("simulate")
def simulate_command(
    games: int = typer.Option(100, "--games", "-n", help="How many games."),
    seed: int = typer.Option(1, help="Seed of the first game (then seed+1, …)."),
    ruleset: str = typer.Option("nmjl", help=f"One of: {', '.join(RULESETS)}."),
    database_url: str | None = typer.Option(
        None,
        "--database-url",
        help="Store to fill (default: a fresh temporary SQLite file).",
    ),
    url: list[str] | None = typer.Option(
        None,
        "--url",
        help="Play a round against the service at this URL over HTTP instead "
        "(e.g. http://127.0.0.1:8000); repeat it for several processes on one database "
        "(table i is played through URL i mod n).",
    ),
    tables: int | None = typer.Option(
        None, "--tables", help="With --url: tables in the round (default: --games)."
    ),
    clock_seconds: float | None = typer.Option(
        None, "--clock-seconds", help="With --url: each table's clock, seconds per action."
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
        from .round_player import RoundPlan
        from .round_report import simulate_over_http

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
                platform_key=platform_key,
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
        rows = store.events(game_id)
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
    bad_chain = [g for g in ids if not store.verify(g).ok]
    bad_projection = store.check_projections()
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


@contextmanager
def _refusals() -> Iterator[None]:
    """A store refusal (no such game, quarantined …) is a message and exit status 1."""
    from .errors import CharlestonError

    try:
        yield
    except CharlestonError as exc:
        console.print(f"[red]{exc.message}", highlight=False)
        raise typer.Exit(1) from None


@app.command("replay")
def replay_command(
    game_id: str = typer.Argument(..., help="The game's id."),
    seq: int | None = typer.Option(None, help="Stop after this event (default: all)."),
    database_url: str | None = DatabaseUrl,
) -> None:
    """Rebuild a stored game through the chart and print it (director's knowledge)."""
    store = _open_store(database_url, migrate_empty=False)
    with _refusals():
        events = [e for e in store.events(game_id) if seq is None or e.seq <= seq]
        table = store.replay(game_id, at=seq)
    console.rule(f"[bold]game {game_id}, ruleset {table.ruleset.name}, up to seq {events[-1].seq}")
    _print_story(e.event for e in events[1:])
    console.print(f"state: {', '.join(table.configuration)}", highlight=False)
    for seat, tiles in table.racks.items():
        waiting = table.received[seat]
        extra = f"  (received, not placed: {describe(waiting)})" if waiting else ""
        console.print(f"[bold]{seat.label:<6}[/] {describe(sorted(tiles))}{extra}", highlight=False)


@app.command("audit")
def audit_command(
    game_id: str = typer.Argument(..., help="The game's id."),
    as_json: bool = typer.Option(False, "--json", help="The report as JSON."),
    database_url: str | None = DatabaseUrl,
) -> None:
    """The audit report of one game: every event, every tile's route, the hash chain."""
    import json

    store = _open_store(database_url, migrate_empty=False)
    with _refusals():
        report = store.audit(game_id)
    if as_json:
        print(json.dumps(report.to_dict(), indent=2, default=str))
    else:
        console.print(report.to_text(), highlight=False, markup=False)


@app.command("verify")
def verify_command(
    game_id: str | None = typer.Argument(None, help="One game (default: every game)."),
    anchors: str | None = typer.Option(
        None, "--anchors", help="Also check against an anchors file from 'anchors export'."
    ),
    replay: bool = typer.Option(
        False,
        "--replay",
        help="Replay every game through the chart, even those a sealed anchor vouches for.",
    ),
    jobs: int = typer.Option(
        0, "--jobs", "-j", min=0, help="Worker processes for many games (0: one per core)."
    ),
    database_url: str | None = DatabaseUrl,
    anchor_key_file: str | None = AnchorKeyFile,
) -> None:
    """Verify stored games: every row's hash and link, the recorded head, the signed
    anchors, and projection == replay. A game that fails is quarantined.

    A finished game whose final anchor is sealed (replayed once when it finished) is
    checked against that signed head instead of being replayed again; --replay forces it."""
    import os

    from rich.progress import Progress

    from .errors import CharlestonError
    from .store import read_anchor_file

    store = _open_store(database_url, migrate_empty=False, anchor_key_file=anchor_key_file)
    try:
        kept = read_anchor_file(anchors) if anchors else None
    except CharlestonError as exc:
        console.print(f"[red]{exc.message}", highlight=False)
        raise typer.Exit(2) from None
    stored = {g.id for g in store.games()}
    ids = [game_id] if game_id else sorted(stored)
    if game_id and game_id not in stored:
        console.print(f"[red]There is no game {game_id!r}.", highlight=False)
        raise typer.Exit(1)
    gone = sorted(set(kept or ()) - stored) if game_id is None else []
    with Progress(console=console, disable=len(ids) < 20, transient=True) as bar:
        task = bar.add_task("verifying", total=len(ids))
        found = store.verify_all(
            ids,
            kept,
            replay=replay,
            jobs=jobs or os.cpu_count() or 1,
            progress=lambda n: bar.advance(task, n),
        )
    bad = 0
    for verdict in found.verifications:
        if not verdict.ok:
            bad += 1
            console.print(f"[red]{verdict.game_id}: FAILED, quarantined", highlight=False)
            for finding in verdict.findings:
                where = f"seq {finding.seq}" if finding.seq is not None else "game"
                console.print(
                    f"  {where} {finding.kind}: {finding.message}", highlight=False, markup=False
                )
    for gid in gone:
        console.print(
            f"[red]{gid}: in the anchors file but not in the database: the game was deleted",
            highlight=False,
        )
    console.print(
        f"{len(ids)} game(s) verified: {len(ids) - bad} ok, {bad} failed (quarantined)"
        + (f"; {len(gone)} anchored game(s) missing" if gone else "")
        + (f"; checked against {anchors}" if anchors else "")
    )
    console.print(
        f"[dim]{found.rows} rows hashed; {found.replayed} game(s) replayed through the chart, "
        f"{len(ids) - found.replayed} vouched for by a sealed anchor; {found.sealed} sealed now",
        highlight=False,
    )
    if bad or gone:
        raise typer.Exit(1)


anchors_app = typer.Typer(help="Signed anchors of the games' hash chains.", no_args_is_help=True)
app.add_typer(anchors_app, name="anchors")


@anchors_app.command("restore")
def anchors_restore(
    file: str = typer.Argument(..., help="An anchors file from 'anchors export'."),
    database_url: str | None = DatabaseUrl,
    anchor_key_file: str | None = AnchorKeyFile,
) -> None:
    """Put back anchors of FILE that are missing or altered in the database (a repair;
    only anchors signed with this service's key are taken)."""
    from .store import read_anchor_file

    store = _open_store(database_url, migrate_empty=False, anchor_key_file=anchor_key_file)
    with _refusals():
        kept = [a for anchors in read_anchor_file(file).values() for a in anchors]
        restored = store.restore_anchors(kept)
    console.print(f"{restored} anchor(s) restored from {file}", highlight=False)


@anchors_app.command("export")
def anchors_export(
    file: str = typer.Argument(..., help="The file to write (keep it outside the database)."),
    database_url: str | None = DatabaseUrl,
    anchor_key_file: str | None = AnchorKeyFile,
) -> None:
    """Write every stored anchor to FILE, for 'verify --anchors FILE' later."""
    from .store import write_anchor_file

    store = _open_store(database_url, migrate_empty=False, anchor_key_file=anchor_key_file)
    anchors = store.anchors()
    count = write_anchor_file(file, anchors, store.anchor_key.key_id)
    games = len({a.game_id for a in anchors})
    console.print(f"{count} anchor(s) of {games} game(s) written to {file}", highlight=False)


quarantine_app = typer.Typer(help="Games set aside because verify failed.", no_args_is_help=True)
app.add_typer(quarantine_app, name="quarantine")


@quarantine_app.command("list")
def quarantine_list(
    game_id: str | None = typer.Argument(None, help="One game (default: every game)."),
    everything: bool = typer.Option(False, "--all", help="Lifted quarantines too."),
    database_url: str | None = DatabaseUrl,
) -> None:
    """The quarantined games and what verify found."""
    store = _open_store(database_url, migrate_empty=False)
    shown = [q for q in store.quarantines(game_id) if everything or q["active"]]
    for q in shown:
        state = "ACTIVE" if q["active"] else f"lifted {q['lifted_at']} by {q['lifted_by']}"
        console.print(f"{q['game_id']} #{q['number']} since {q['since']}: {state}", markup=False)
        for finding in q["findings"]:
            console.print(f"  {finding['kind']}: {finding['message']}", markup=False)
        if q["lift_note"]:
            console.print(f"  note: {q['lift_note']}", markup=False)
    console.print(f"{len(shown)} quarantine(s)")


@quarantine_app.command("rebuild-projection")
def quarantine_rebuild_projection(
    game_id: str = typer.Argument(..., help="The game."),
    database_url: str | None = DatabaseUrl,
    anchor_key_file: str | None = AnchorKeyFile,
) -> None:
    """Rebuild a game's projection from its rows (a repair; only when the rows verify)."""
    store = _open_store(database_url, migrate_empty=False, anchor_key_file=anchor_key_file)
    with _refusals():
        verdict = store.rebuild_projection(game_id)
    console.print(f"projection of {game_id} rebuilt: {verdict.message}", highlight=False)


@quarantine_app.command("lift")
def quarantine_lift(
    game_id: str = typer.Argument(..., help="The game."),
    note: str = typer.Option(..., "--note", help="What was repaired (kept with the lift)."),
    by: str = typer.Option(None, "--by", envvar="USER", help="Who lifts it (default: $USER)."),
    anchors: str | None = typer.Option(
        None, "--anchors", help="Verify against this anchors file too (needed when it found it)."
    ),
    database_url: str | None = DatabaseUrl,
    anchor_key_file: str | None = AnchorKeyFile,
) -> None:
    """Lift a game's quarantine: refused while its record still fails verify."""
    from .store import read_anchor_file

    store = _open_store(database_url, migrate_empty=False, anchor_key_file=anchor_key_file)
    with _refusals():
        kept = read_anchor_file(anchors).get(game_id, []) if anchors else None
        lifted = store.lift_quarantine(game_id, by=f"{by or 'unknown'} (CLI)", note=note, kept=kept)
    console.print(
        f"quarantine #{lifted['number']} of {game_id} lifted by {lifted['lifted_by']}",
        highlight=False,
    )


@app.command("ruling")
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

    store = _open_store(database_url, migrate_empty=False, anchor_key_file=anchor_key_file)
    body = {"type": "record_ruling", "kind": kind, "text": text}
    if seat is not None:
        body["seat"] = seat
    with _refusals():
        result = store.direct(game_id, body, f"director:cli-{uuid.uuid4().hex}")
    console.print(f"ruling recorded at seq {result.last_seq} of {game_id}", highlight=False)

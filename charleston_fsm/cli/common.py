"""What the commands share: the database option, opening the store, printing a story."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

import typer
from rich.console import Console

from ..engine.story import LEGEND, story_lines
from .errors import DATABASE_URLS_ACCEPTED, SERVICE_URLS_ACCEPTED, as_run_here, prog

#: Piped into a file or another program, lines are never hard-wrapped (a hand stays on
#: its line); on a terminal Rich wraps at the terminal's width.
console = Console(soft_wrap=not sys.stdout.isatty())

# -- the service: serve, migrate, demo, simulate, replay, audit, verify ---------------------
DEMO_SEED = 6  # with the bots of this seed the demo shows two blind passes and both
# courtesy pairs exchanging tiles (tests/test_cli.py checks it)
#: The demo's seed per ruleset: each story shows what sets that ruleset apart
#: (nmjl: blind passes and agreed courtesy; house: Across first, asymmetric courtesy).
DEMO_SEEDS = {"nmjl": DEMO_SEED, "house": 13, "four_winds": 4}


def check_database_url(value: str | None) -> str | None:
    """Refuse, before anything is opened or created, a URL the store cannot use."""
    if value is None:
        return value
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        backend = make_url(value).get_backend_name()
    except ArgumentError:
        backend = None
    if backend not in ("sqlite", "postgresql"):
        raise typer.BadParameter(
            f"{value!r} is not a database the store runs on. Accepted: {DATABASE_URLS_ACCEPTED}."
        )
    return value


def check_ruleset(value: str | None) -> str | None:
    """A ruleset name from the registry, checked before any game is stored."""
    from ..engine.rulesets import RULESETS

    if value is not None and value not in RULESETS:
        raise typer.BadParameter(f"{value!r} is not a ruleset. Accepted: {', '.join(RULESETS)}.")
    return value


def check_service_url(values: list[str] | None) -> list[str] | None:
    """``--url`` values: http(s)://host[:port] of a running service."""
    from urllib.parse import urlsplit

    for value in values or ():
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise typer.BadParameter(
                f"{value!r} is not a service URL. Accepted: {SERVICE_URLS_ACCEPTED}."
            )
    return values


DatabaseUrl = typer.Option(
    None,
    "--database-url",
    envvar="CHARLESTON_DATABASE_URL",
    callback=check_database_url,
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
    url: str | None,
    *,
    migrate_empty: bool = True,
    say=None,
    anchor_key_file: str | None = None,
    read_urls: list[str] | None = None,
    read_max_lag: float | None = None,
):
    """The store at ``url``; an empty database is migrated, any other not current refused.

    ``say(level, text)`` reports (default: the console; ``serve`` logs JSON lines).
    """
    from ..engine.errors import CharlestonError
    from ..store import GameStore, load_key

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
    try:
        store = GameStore(url, anchor_key=key, read_urls=read_urls, read_max_lag=read_max_lag)
    except CharlestonError as exc:  # a read database that cannot be one
        say("error", exc.message)
        raise typer.Exit(2) from None
    where = store.url.render_as_string(hide_password=True)
    try:
        schema = store.core.schema_state()
    except Exception as exc:
        say("error", f"Cannot reach the database {where}: {type(exc).__name__}: {exc}")
        raise typer.Exit(2) from None
    if schema.status == "empty" and migrate_empty:
        say("info", f"empty database {where}: applying the migrations")
        store.core.upgrade()
    elif not schema.current:
        given = f" --database-url {url}" if url and url == where else ""
        hint = f"'{prog()} migrate{given}'"
        message = as_run_here(schema.message.replace("'charleston-fsm migrate'", hint))
        say("error", f"Refusing the database {where}. {message}")
        raise typer.Exit(2)
    return store


def _story_style(line: str) -> str:
    if line.startswith("=="):
        return "bold yellow" if "blind" in line else "bold"
    if line.startswith("->"):
        return "cyan"
    if line.startswith("**"):
        return "bold green"
    if line.startswith("    "):
        return "magenta" if "unseen" in line else ("italic" if "uneven" in line else "")
    if line.lstrip().startswith("["):
        return "yellow"
    return "dim" if "confirms" in line else ""


def _print_story(events, chart=None) -> None:  # type: ignore[no-untyped-def]
    """The story of a game; with the ruleset's ``chart``, steps by their names."""
    for line in story_lines(events, chart):
        console.print(line, style=_story_style(line), highlight=False, markup=False)


def _print_legend() -> None:
    """How to read a story (tiles, #numbers, the marks): once, above the first."""
    for line in LEGEND:
        console.print(line, style="dim", highlight=False, markup=False)


def _check_game(store, game_id: str) -> bool:  # type: ignore[no-untyped-def]
    """Verify the stored game (hashes, head, anchors, projection == replay); prints it."""
    verdict = store.tamper.verify(game_id)
    mark = "[green]ok[/]" if verdict.ok else "[red]FAILED[/]"
    console.print(f"verify (hash chain, head, anchors, projection = replay): {mark}")
    console.print(verdict.message, highlight=False, markup=False)
    return bool(verdict.ok)


@contextmanager
def _refusals() -> Iterator[None]:
    """A store refusal (no such game, quarantined …) is a message and exit status 1."""
    from ..engine.errors import CharlestonError

    try:
        yield
    except CharlestonError as exc:
        console.print(as_run_here(exc.message), style="red", highlight=False, markup=False)
        raise typer.Exit(1) from None


def _bot_game(store, seed: int, ruleset: str = "nmjl"):  # type: ignore[no-untyped-def]
    """One game played by four bots through the store; returns (game id, commands given)."""
    from ..store import NewGame, play_bots

    game_id = store.registry.create_game(NewGame(ruleset=ruleset, seed=seed))
    given = play_bots(store, game_id, seed)
    return game_id, given


def courtesy_given(events) -> dict[str, int]:  # type: ignore[no-untyped-def]
    """Tiles each player gave from the hand in the Courtesy Pass, by seat name."""
    return {
        str(e.seat).capitalize(): len(e.payload["from_hand"])
        for e in events
        if e.type == "tiles_transferred" and e.payload["step"].startswith("PAIR_")
    }


def uneven_courtesy_note(given: dict[str, int]) -> str | None:
    """Why hands of 11 and 16 tiles are right: a pair that gave different counts."""
    pairs = (("East", "West"), ("South", "North"))
    uneven = [(a, b) for a, b in pairs if a in given and given[a] != given.get(b, 0)]
    if not uneven:
        return None
    said = "; ".join(f"{a} gave {given[a]}, {b} {given.get(b, 0)}" for a, b in uneven)
    return (
        f"Uneven courtesy ({said}): under this ruleset each player gives the count they "
        "chose, so hands end the Charleston with more or fewer tiles than dealt."
    )

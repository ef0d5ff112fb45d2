"""Running the service: ``serve``, ``migrate`` and ``bench``."""

from __future__ import annotations

import sys
from enum import StrEnum

import typer

from ..bench.command import bench_command
from .common import (
    AnchorKeyFile,
    DatabaseUrl,
    _open_store,
    check_database_url,
    console,
)

commands = typer.Typer()

#: the store's own (``store.connection_budget``), named here because importing the store
#: costs seconds that every command and every serve worker would pay before its first
#: line; tests/test_layout.py holds the two equal and the CLI's import free of the store
ROUTE_THREADS_ENV = "CHARLESTON_ROUTE_THREADS"
DEFAULT_ROUTE_THREADS = 14
#: the store's (``store.standbys``), named here for the same reason
READ_URLS_ENV = "CHARLESTON_READ_DATABASE_URL"


class HttpParser(StrEnum):
    auto = "auto"
    httptools = "httptools"
    h11 = "h11"


class EventLoop(StrEnum):
    auto = "auto"
    uvloop = "uvloop"
    asyncio = "asyncio"


@commands.command("serve")
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
    body_timeout: float | None = typer.Option(
        None,
        min=0.1,
        envvar="CHARLESTON_BODY_TIMEOUT",
        help="Seconds a request's body has to arrive after its headers (default 10); a "
        "slower one is answered 408 and its connection closed.",
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
    route_threads: int = typer.Option(
        DEFAULT_ROUTE_THREADS,
        min=1,
        envvar=ROUTE_THREADS_ENV,
        help="Threads serving requests in each process; each holds at most one PostgreSQL "
        "connection, so this sizes the process's connections (docs/deploy.md, Connections).",
    ),
    read_database_url: list[str] | None = typer.Option(
        None,
        "--read-database-url",
        help="A streaming standby of the database (PostgreSQL hot standby; repeat for "
        "several): spectators, the feed, audit, replay, records, round listings and "
        "results are read there while it lags less than --read-max-lag; commands and "
        "what follows them read the primary. Default: $CHARLESTON_READ_DATABASE_URL "
        "(whitespace-separated).",
    ),
    read_max_lag: float | None = typer.Option(
        None,
        min=0.1,
        envvar="CHARLESTON_READ_MAX_LAG",
        help="Seconds a standby may lag behind the primary and still be read (default 5); "
        "beyond it, its reads go to the primary. /readyz shows each standby's lag.",
    ),
    max_connections: int | None = typer.Option(
        None,
        min=1,
        envvar="CHARLESTON_MAX_CONNECTIONS",
        help="PostgreSQL connections all processes may open together (default: the "
        "server's max_connections less its reserved ones and 10); behind a pooler, its "
        "client limit. A plan beyond it is refused at start-up.",
    ),
    bench_floor: bool = typer.Option(
        False,
        "--bench-floor",
        hidden=True,
        help="For charleston-fsm bench only: serve its floor route (api/bench_floor.py).",
    ),
) -> None:
    """Run the HTTP service; migrates an empty database. Logs are JSON lines on stderr;
    on a terminal a short banner comes first (the address, the database, the anchor key)."""
    import os

    from ..api import create_app, serve
    from ..api.bench_floor import BENCH_FLOOR_ENV
    from ..api.heap import FREEZE_HEAP_ENV
    from ..api.logs import configure, log

    configure(log_level.upper())
    os.environ[ROUTE_THREADS_ENV] = str(route_threads)  # this store's pool, and workers'
    person = sys.stderr.isatty()
    held: list[tuple[str, str]] = []  # on a terminal, logged after the banner

    def say(level: str, text: str) -> None:
        if person and level != "error":
            held.append((level, text))
        else:
            getattr(log, level)(text)

    read_urls = list(read_database_url or os.environ.get(READ_URLS_ENV, "").split())
    for read_url in read_urls:
        check_database_url(read_url)
    store = _open_store(
        database_url,
        say=say,
        anchor_key_file=anchor_key_file,
        read_urls=read_urls,
        read_max_lag=read_max_lag,
    )
    try:
        serve.check_workers(workers, store.dialect)
        connections = serve.connection_plan(store, workers, max_connections)
    except (serve.WorkersNeedPostgres, serve.PlanTooLarge) as exc:
        log.error(str(exc))
        store.dispose()
        raise typer.Exit(2) from None
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    if person:
        _banner(f"http://{shown}:{port}/", store, workers)
    for level, text in held:
        getattr(log, level)(text)
    log.info(f"anchors signed with the key from {store.anchor_key.source}")
    log.info(connections)
    if store.standbys is not None:
        names = ", ".join(s.name for s in store.standbys.members)
        log.info(
            f"reads that need no lock go to the standby(s) {names} while they lag less "
            f"than {store.standbys.max_lag:g} s, else to the primary"
        )
    if workers > 1:  # each worker builds its own app from these settings
        os.environ.update(
            serve.worker_environment(
                database_url=store.url.render_as_string(hide_password=False),
                anchor_key_file=anchor_key_file,
                platform_key=platform_key,
                max_body_bytes=max_body_bytes,
                body_timeout=body_timeout,
                read_urls=read_urls,
                read_max_lag=read_max_lag,
            )
        )
        if bench_floor:
            os.environ[BENCH_FLOOR_ENV] = "1"
        os.environ[FREEZE_HEAP_ENV] = "1"  # api/heap.py: each worker is a serving process
        store.dispose()
        app_ = None
    else:
        app_ = create_app(
            store,
            platform_key=platform_key or None,
            max_body_bytes=max_body_bytes,
            body_timeout=body_timeout,
            bench_floor=bench_floor,
            freeze_heap=True,
        )
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


def _banner(address: str, store, workers: int) -> None:  # type: ignore[no-untyped-def]
    """For a person at a terminal, before the JSON logs: where to go, what is used, how
    to stop. Logs stay JSON lines for the machines that read them."""
    from rich.console import Console

    out = Console(stderr=True, highlight=False, soft_wrap=True)
    key = store.anchor_key
    made = ", created just now" if key.created else ""
    out.print(f"[bold]charleston-fsm is serving[/] ({workers} process{'es' * (workers > 1)})")
    out.print(f"  Open        [bold cyan]{address}[/] to create a game and take a seat")
    out.print(f"  Database    {store.url.render_as_string(hide_password=True)}", markup=False)
    out.print(f"  Anchor key  {key.source}{made}", markup=False)
    out.print("              it signs every game's hash chain, so verify can trust a record;")
    out.print("              back it up apart from the database")
    out.print("  Stop        Ctrl+C")
    out.print("[dim]Logs follow, one JSON object per line:")


commands.command("bench")(bench_command)


@commands.command("migrate")
def migrate_command(database_url: str | None = DatabaseUrl) -> None:
    """Bring the database schema up to date (Alembic upgrade head)."""
    from ..store import GameStore

    store = GameStore(database_url)
    before = store.core.schema_state()
    if before.status not in ("empty", "outdated", "current"):
        console.print(f"[red]Not migrating: {before.message}", highlight=False)
        raise typer.Exit(2)
    store.core.upgrade()
    console.print(f"schema {before.status} -> {store.core.schema_status()}")

"""Running the service under uvicorn: one process, or N worker processes on one port.

One process serves the app the CLI built. Several (``serve --workers N``) each build their
own through :func:`~charleston_fsm.api.app.create_app`, which reads every setting from the
environment: :func:`worker_environment` puts there what the command line was given, so
each worker opens the same database with the same anchor key, platform key and body limit.
Workers share nothing but the database: a stream in one wakes on a command stored by
another through PostgreSQL's ``LISTEN/NOTIFY`` (:mod:`.notify`), which is why several
workers need PostgreSQL.
"""

from __future__ import annotations

import os
from importlib.util import find_spec
from typing import Any

from ..ledger.anchors import KEY_FILE_ENV
from ..store.database.connection_budget import ConnectionBudget, refusal, server_room
from ..store.database.standbys import MAX_LAG_ENV, READ_URLS_ENV
from ..store.database.urls import ENV_VAR as DATABASE_ENV
from .app import BODY_TIMEOUT_ENV, MAX_BODY_ENV, PLATFORM_KEY_ENV
from .logs import log, logging_config

#: What each worker calls to build its app (``uvicorn --factory``).
APP_FACTORY = "charleston_fsm.api.app:create_app"
#: seconds a worker may leave the supervisor's ping unanswered before it is restarted:
#: uvicorn's 5 killed workers still starting on a busy machine, over and over (issue 30)
WORKER_HEALTHCHECK_SECONDS = 60
#: seconds an idle client connection is kept open. Longer than the idle time of the
#: clients and proxies in front (a load balancer's is commonly 60 s, httpx's 5 s), so they
#: close an idle connection first: a server that closes at the very moment a client sends
#: on it answers that request with nothing ("Server disconnected without sending a
#: response"), which uvicorn's default of 5 s did to clients idle for 5 s.
KEEP_ALIVE_SECONDS = 75


#: the open files a serving process asks for, at most: a descriptor per spectator stream,
#: per client connection and per database connection. Many systems start a process with a
#: soft limit of 1,024, which refuses the thousandth stream though the hard limit allows
#: far more.
OPEN_FILES_WANTED = 65536


def open_files_raised(wanted: int = OPEN_FILES_WANTED) -> tuple[int, int] | None:
    """Raise this process's soft limit of open files towards its hard limit (at most
    ``wanted``); worker processes inherit it. ``(before, after)``, or ``None`` where the
    system has no such limit (Windows) or refuses the change."""
    try:
        import resource
    except ImportError:
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            return None
        return soft, target
    return soft, soft


class WorkersNeedPostgres(ValueError):
    """Several workers over a database that cannot tell them of each other's commands."""


def fast_parts(http: str = "auto", loop: str = "auto") -> dict[str, str]:
    """The event loop and HTTP parser; ``auto``: uvloop and httptools when installed (they
    are dependencies; measured in docs/bench/history.md), else asyncio and h11."""
    return {
        "loop": loop if loop != "auto" else "uvloop" if find_spec("uvloop") else "asyncio",
        "http": http if http != "auto" else "httptools" if find_spec("httptools") else "h11",
    }


def check_workers(workers: int, dialect: str) -> None:
    """Refuse several workers on a database without ``LISTEN/NOTIFY`` (SQLite)."""
    if workers > 1 and dialect != "postgresql":
        raise WorkersNeedPostgres(
            f"--workers {workers} needs PostgreSQL; this database is {dialect}. Each worker "
            "would hear only the commands it stores itself, so a live stream served by one "
            "would miss the moves posted through another (SQLite has no LISTEN/NOTIFY), and "
            "one file serialises every write anyway. Serve SQLite with --workers 1, or give "
            "a postgresql:// --database-url."
        )


class PlanTooLarge(ValueError):
    """Workers that together may open more connections than PostgreSQL admits."""


def connection_plan(store: Any, workers: int, max_connections: int | None = None) -> str:
    """What each process may open (the start-up line); raises :class:`PlanTooLarge` with
    what to do when ``workers`` such processes do not fit what the server admits
    (``max_connections``: the operator's own limit, e.g. a pooler's, instead of the
    server's)."""
    if store.dialect != "postgresql":
        return (
            f"this process opens no database server connections (SQLite file); "
            f"{store.core.budget.route_threads} route threads"
        )
    budget = ConnectionBudget(
        store.core.budget.route_threads, standby_watch=store.core.budget.standby_watch
    )
    if max_connections is not None:
        admits, why = max_connections, "--max-connections"
    else:
        with store.engine.connect() as conn:
            room = server_room(conn)
        admits, why = room.admits, room.arithmetic()
    refused = refusal(budget, workers, admits, why)
    if refused is not None:
        raise PlanTooLarge(refused)
    return (
        f"{budget.sentence()}; {workers} process(es) may open {workers * budget.total} "
        f"of the {admits} this PostgreSQL admits ({why})"
    )


def worker_environment(
    *,
    database_url: str,
    anchor_key_file: str | None,
    platform_key: str | None,
    max_body_bytes: int | None,
    body_timeout: float | None = None,
    read_urls: list[str] | None = None,
    read_max_lag: float | None = None,
) -> dict[str, str]:
    """The variables through which every worker's ``create_app()`` gets the CLI's settings.

    What the command line left unset stays as the environment says (the anchor key in
    ``$CHARLESTON_ANCHOR_KEY``, say), which the workers inherit unchanged.
    """
    env = {DATABASE_ENV: database_url}
    if anchor_key_file:
        env[KEY_FILE_ENV] = anchor_key_file
    if platform_key:
        env[PLATFORM_KEY_ENV] = platform_key
    if max_body_bytes is not None:
        env[MAX_BODY_ENV] = str(max_body_bytes)
    if body_timeout is not None:
        env[BODY_TIMEOUT_ENV] = str(body_timeout)
    if read_urls:
        env[READ_URLS_ENV] = " ".join(read_urls)
    if read_max_lag is not None:
        env[MAX_LAG_ENV] = str(read_max_lag)
    return env


def run(
    app: Any,
    *,
    host: str,
    port: int,
    workers: int,
    log_level: str,
    http: str = "auto",
    loop: str = "auto",
) -> None:
    """Serve ``app`` (one process) or, with ``workers > 1``, N processes each building its own
    from :data:`APP_FACTORY` and the environment of :func:`worker_environment`."""
    import uvicorn

    parts = fast_parts(http, loop)
    files = open_files_raised()
    log.info(
        f"serving with {workers} worker process(es), event loop {parts['loop']}, "
        f"HTTP parser {parts['http']}"
        + (f", up to {files[1]} open files each (streams and connections)" if files else "")
        + (f", raised from {files[0]}" if files and files[0] != files[1] else ""),
        extra={"pid": os.getpid(), "workers": workers, **parts},
    )
    several = workers > 1
    uvicorn.run(
        APP_FACTORY if several else app,
        factory=several,
        workers=workers,
        host=host,
        port=port,
        log_config=logging_config(log_level.upper()),
        access_log=False,
        proxy_headers=True,
        timeout_worker_healthcheck=WORKER_HEALTHCHECK_SECONDS,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        **parts,
    )

"""The FastAPI application: authentication, redaction and problem+json over the store.

Everything that decides the game lives in the engine and the store; the routes map
tokens to roles, commands to ``store.writes.execute``, refusals to HTTP statuses, and pass every
payload meant for a seat through :mod:`charleston_fsm.engine.views` (``seat_view``, ``redact``).
This module only assembles the service: its settings, lifespan, middleware, error
handlers and routers.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

from anyio import to_thread
from fastapi import APIRouter, FastAPI
from fastapi.concurrency import run_in_threadpool

from ..store import GameStore
from ..store.feed import Sequencer
from . import (
    routes_director,
    routes_games,
    routes_live,
    routes_meta,
    routes_organisers,
    routes_platform,
    routes_record,
    routes_rounds,
    routes_seats,
    routes_spectators,
    routes_web,
)
from .botrunner import BotRunner
from .clockthread import CLOCK_INTERVAL, ClockThread
from .hot_route import hot_route
from .logs import log
from .middleware import DEFAULT_BODY_SECONDS, DEFAULT_MAX_BODY_BYTES, BodyLimit, RequestContext
from .notify import Notifier
from .problems import install
from .responses import FastJSONResponse
from .token_cache import CredentialWatch, TokenCache
from .webhook_sender import DeliveryWorker

API_VERSION = "v1"
MAX_BODY_ENV = "CHARLESTON_MAX_BODY_BYTES"
BODY_TIMEOUT_ENV = "CHARLESTON_BODY_TIMEOUT"
PLATFORM_KEY_ENV = "CHARLESTON_PLATFORM_KEY"
#: "1": a seat's command on PostgreSQL runs on the event loop (psycopg's async
#: connections) instead of a worker thread; off by default: on the shared 2-core machine
#: it cost as much CPU and answered later (docs/performance.md, "Where a command runs")
ON_LOOP_ENV = "CHARLESTON_COMMANDS_ON_LOOP"


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    notifier: Notifier = app.state.notifier
    # the route threads and the store's connection pool are sized together (each route
    # thread holds at most one pooled connection: store/connection_budget.py)
    to_thread.current_default_thread_limiter().total_tokens = (
        app.state.store.core.budget.route_threads
    )
    await run_in_threadpool(notifier.start)
    clock = ClockThread(app.state.store, app.state.clock_interval)
    clock.start()
    watch = CredentialWatch(app.state.store, app.state.roles)
    watch.start()
    # every process may position the feed and send webhooks (store/feed.py, outbox.py)
    sequencer = Sequencer(app.state.store.feed)
    sender = DeliveryWorker(app.state.store)
    if app.state.platform_workers:
        sequencer.start()
        sender.start()
    log.info("service started", extra={"notifier": notifier.kind, "pid": os.getpid()})
    try:
        yield
    finally:
        await run_in_threadpool(clock.stop)
        await run_in_threadpool(watch.stop)
        await run_in_threadpool(sender.stop)
        await run_in_threadpool(sequencer.stop)
        await app.state.bots.stop_all()
        await run_in_threadpool(notifier.stop)
        if app.state.store.core.on_loop is not None:  # the loop's connections end with it
            app.state.store.core.on_loop.pool.close_now()


def create_app(
    store: Any = None,
    *,
    platform_key: str | None = None,
    notifier: Notifier | None = None,
    max_body_bytes: int | None = None,
    clock_interval: float | None = CLOCK_INTERVAL,
    commands_on_loop: bool | None = None,
    body_timeout: float | None = None,
    platform_workers: bool = True,
) -> FastAPI:
    """The service over ``store`` (default: ``GameStore()`` from ``$CHARLESTON_DATABASE_URL``).

    ``max_body_bytes`` bounds request bodies (default: ``$CHARLESTON_MAX_BODY_BYTES``,
    else 64 KiB); ``body_timeout``: seconds a body has to arrive after its headers, else a
    408 (default: ``$CHARLESTON_BODY_TIMEOUT``, else 10). ``clock_interval``: seconds
    between the clock worker's polls (``None``: no worker in this process).
    ``commands_on_loop``: run seats' commands on the event loop where the store can
    (PostgreSQL; default: ``$CHARLESTON_COMMANDS_ON_LOOP`` is ``1``).
    ``platform_workers``: run the feed's sequencer and the webhook sender here.
    """
    if store is None:
        store = GameStore()
    if platform_key is None:
        platform_key = os.environ.get(PLATFORM_KEY_ENV) or None
    if max_body_bytes is None:
        max_body_bytes = int(os.environ.get(MAX_BODY_ENV) or DEFAULT_MAX_BODY_BYTES)
    if body_timeout is None:
        body_timeout = float(os.environ.get(BODY_TIMEOUT_ENV) or DEFAULT_BODY_SECONDS)
    notifier = notifier or Notifier()
    notifier.attach(store.core.notices)  # this process's commits, then (PostgreSQL) others'

    app = FastAPI(
        title="charleston-fsm",
        version="1",
        summary="The Charleston of American Mah Jongg as a service: statechart + event store.",
        description=(
            "Seats and the director authenticate with `Authorization: Bearer <token>` "
            "(tokens are returned once, by `POST /v1/games`). Errors are "
            "`application/problem+json` with `code`, `kind`, `rule` (a rule id of docs/rules.md) "
            "and `rule_text`."
        ),
        lifespan=lifespan,
        default_response_class=FastJSONResponse,
    )
    # what the routes reach through charleston_fsm.api.deps
    app.state.store = store
    app.state.notifier = notifier
    app.state.bots = BotRunner(store, notifier)
    app.state.platform_key = platform_key
    app.state.clock_interval = clock_interval
    # CHARLESTON_PLATFORM_WORKERS=0: another process numbers the feed and sends webhooks
    # (and the fault tests, whose relay must see only the command's COMMIT)
    app.state.platform_workers = (
        platform_workers
        and hasattr(store, "feed")
        and os.environ.get("CHARLESTON_PLATFORM_WORKERS", "1") != "0"
    )
    if commands_on_loop is None:
        commands_on_loop = os.environ.get(ON_LOOP_ENV, "0") == "1"
    app.state.commands_on_loop = commands_on_loop and store.writes.on_loop_ready
    app.state.roles = TokenCache()  # (game id, token digest) -> role, until it changes
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes, seconds=body_timeout)
    app.add_middleware(RequestContext)  # outermost: it sees every answer
    install(app)

    v1 = APIRouter(prefix=f"/{API_VERSION}")
    for module in (
        routes_games,
        routes_rounds,
        routes_organisers,
        routes_director,
        routes_seats,
        routes_spectators,
        routes_record,
        routes_platform,
        routes_live,
        routes_meta,
    ):
        v1.include_router(module.router)
    app.include_router(v1)
    # the command route first, past FastAPI's nested routers (api/hot_route.py)
    app.router.routes.insert(0, hot_route(routes_games.command_route(), f"/{API_VERSION}"))
    app.include_router(routes_meta.health)
    routes_web.install(app)
    app.openapi = partial(routes_meta.openapi, app)  # type: ignore[method-assign]
    return app

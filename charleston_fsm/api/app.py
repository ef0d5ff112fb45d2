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
from ..store.platform.feed_positions import Sequencer
from . import (
    heap,
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
    routes_webhook_acts,
)
from .bench_floor import BENCH_FLOOR_ENV, install_floor
from .botrunner import BotRunner
from .clockthread import CLOCK_INTERVAL, ClockThread
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
#: seconds between the feed stream's heartbeats (a comment line), default 15
FEED_HEARTBEAT_ENV = "CHARLESTON_FEED_HEARTBEAT"
DEFAULT_FEED_HEARTBEAT = 15.0
PLATFORM_KEY_ENV = "CHARLESTON_PLATFORM_KEY"


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    notifier: Notifier = app.state.notifier
    # the route threads and the store's connection pool are sized together (each route
    # thread holds at most one pooled connection: store/database/connection_budget.py)
    to_thread.current_default_thread_limiter().total_tokens = (
        app.state.store.core.budget.route_threads
    )
    await run_in_threadpool(notifier.start)
    standbys = getattr(app.state.store, "standbys", None)
    if standbys is not None:  # store/database/standbys.py: its watch wakes the standby streams
        notifier.follow_standbys(standbys)
        standbys.start()
    clock = ClockThread(app.state.store, app.state.clock_interval)
    clock.start()
    # a changed link also wakes its open streams, which then look at it (and end)
    watch = CredentialWatch(app.state.store, app.state.roles, on_change=notifier.publish)
    watch.start()
    # every process may position the feed and send webhooks (store/platform/feed.py, outbox.py)
    sequencer = Sequencer(app.state.store.feed)
    sender = DeliveryWorker(app.state.store)
    if app.state.platform_workers:
        sequencer.start()
        sender.start()
    log.info("service started", extra={"notifier": notifier.kind, "pid": os.getpid()})
    if app.state.freeze_heap:  # api/heap.py: no full collection walks the start-up objects
        log.info(
            "heap settled: start-up objects frozen", extra={**heap.settle(), "pid": os.getpid()}
        )
    try:
        yield
    finally:
        await run_in_threadpool(clock.stop)
        await run_in_threadpool(watch.stop)
        await run_in_threadpool(sender.stop)
        await run_in_threadpool(sequencer.stop)
        await app.state.bots.stop_all()
        await run_in_threadpool(notifier.stop)
        if standbys is not None:
            await run_in_threadpool(standbys.stop)


def create_app(
    store: Any = None,
    *,
    platform_key: str | None = None,
    notifier: Notifier | None = None,
    max_body_bytes: int | None = None,
    clock_interval: float | None = CLOCK_INTERVAL,
    body_timeout: float | None = None,
    platform_workers: bool = True,
    feed_heartbeat: float | None = None,
    bench_floor: bool | None = None,
    freeze_heap: bool | None = None,
) -> FastAPI:
    """The service over ``store`` (default: ``GameStore()`` from ``$CHARLESTON_DATABASE_URL``).

    ``max_body_bytes`` bounds request bodies (default: ``$CHARLESTON_MAX_BODY_BYTES``,
    else 64 KiB); ``body_timeout``: seconds a body has to arrive after its headers, else a
    408 (default: ``$CHARLESTON_BODY_TIMEOUT``, else 10). ``clock_interval``: seconds
    between the clock worker's polls (``None``: no worker in this process).
    ``platform_workers``: run the feed's sequencer and the webhook sender here.
    ``feed_heartbeat``: seconds between the feed stream's heartbeat comments (default:
    ``$CHARLESTON_FEED_HEARTBEAT``, else 15).
    ``bench_floor``: add the bench's floor route (:mod:`.bench_floor`; default:
    ``$CHARLESTON_BENCH_FLOOR`` is ``1``): never in a production service.
    ``freeze_heap``: once started, collect and freeze the heap (:mod:`.heap`; default:
    ``$CHARLESTON_FREEZE_HEAP`` is ``1``): a serving process, not a test's app.
    """
    if store is None:
        store = GameStore()
    if platform_key is None:
        platform_key = os.environ.get(PLATFORM_KEY_ENV) or None
    if max_body_bytes is None:
        max_body_bytes = int(os.environ.get(MAX_BODY_ENV) or DEFAULT_MAX_BODY_BYTES)
    if body_timeout is None:
        body_timeout = float(os.environ.get(BODY_TIMEOUT_ENV) or DEFAULT_BODY_SECONDS)
    if feed_heartbeat is None:
        feed_heartbeat = float(os.environ.get(FEED_HEARTBEAT_ENV) or DEFAULT_FEED_HEARTBEAT)
    notifier = notifier or Notifier()
    notifier.attach(store.core.notices)  # this process's commits, then (PostgreSQL) others'

    app = FastAPI(
        title="charleston-fsm",
        version="1",
        summary="The Charleston of American Mah Jongg as a service: statechart + event store.",
        description=(
            "Seats and the director authenticate with `Authorization: Bearer <token>` "
            "(tokens are returned once, by `POST /v1/games`); each operation's `security` "
            "names the tokens it takes (SeatToken, DirectorToken, RoundToken, "
            "SpectatorToken, PlatformKey, OrganiserKey; `{}`: none). Errors are "
            "`application/problem+json` with `code`, `kind`, `rule` (a rule id of docs/rules.md) "
            "and `rule_text`."
        ),
        lifespan=lifespan,
        default_response_class=FastJSONResponse,
        # operation ids are the endpoints' names (create_game, post_command …): what a
        # client generated from the document calls its functions
        generate_unique_id_function=lambda route: route.name,
    )
    # what the routes reach through charleston_fsm.api.deps
    app.state.store = store
    app.state.notifier = notifier
    app.state.bots = BotRunner(store, notifier)
    app.state.platform_key = platform_key
    app.state.clock_interval = clock_interval
    app.state.feed_heartbeat = feed_heartbeat
    app.state.freeze_heap = heap.wanted(freeze_heap)
    # CHARLESTON_PLATFORM_WORKERS=0: another process numbers the feed and sends webhooks
    # (and the fault tests, whose relay must see only the command's COMMIT)
    app.state.platform_workers = (
        platform_workers
        and hasattr(store, "feed")
        and os.environ.get("CHARLESTON_PLATFORM_WORKERS", "1") != "0"
    )
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
        routes_webhook_acts,
        routes_live,
        routes_meta,
    ):
        v1.include_router(module.router)
    app.include_router(v1)
    # the command route first, past FastAPI's nested routers (api/command_route.py)
    routes_games.add_command_route(app, f"/{API_VERSION}")
    if bench_floor if bench_floor is not None else os.environ.get(BENCH_FLOOR_ENV) == "1":
        install_floor(app)  # the bench's own serve process only
    app.include_router(routes_meta.health)
    routes_web.install(app)
    app.openapi = partial(routes_meta.openapi, app)  # type: ignore[method-assign]
    return app

"""The ``platform`` row: what the feed and the outbox cost a command, and webhooks/s.

1. **CPU per command**: a command that makes a feed entry (a clock's pause or resume)
   through ``store.writes.annotate``, its process CPU (``time.process_time``) per command
   in three shapes, alternated in blocks in the same run on one game: without the feed's
   rider (the floor), with the feed and no endpoint, with the feed and one endpoint
   subscribed to everything (an outbox row per command). The goal: the outbox costs a
   command at most 10 % of its CPU.
2. **Deliveries/s**: one ``DeliveryWorker`` (as a ``serve`` process runs it) sending
   outbox rows of many games to a receiver in another process on 127.0.0.1 (a threaded
   ``http.server`` answering 204), from the first claim to the last row recorded.
"""

from __future__ import annotations

import multiprocessing
import os
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from ..api.webhook_sender import ALLOW_ENV, DeliveryWorker
from ..engine.annotations import pause, resume
from ..store import feed
from .databases import Database
from .figures import Figure, Goal

BLOCK = 20  # commands per block; the shapes alternate block by block


def _cpu_per_command(run: Callable[[], object], count: int) -> float:
    started = time.process_time()
    for _ in range(count):
        run()
    return (time.process_time() - started) / count


def outbox_cpu_row(database: Database, samples: int) -> Figure:
    """Process CPU per command with the feed and an outbox row, beside none of them."""
    store = database.store()
    try:
        game_id = store.registry.create_game(seed=1, clock={"vote": 60})
        flip = iter(range(10**9))

        def command() -> None:
            doc = {"type": "pause_clock"} if next(flip) % 2 == 0 else {"type": "resume_clock"}
            act = pause if doc["type"] == "pause_clock" else resume
            store.writes.annotate(game_id, act(doc))

        for _ in range(20):
            command()  # warm: pools, statements, the chart
        riders = list(store.writes.riders)
        shapes: dict[str, list[float]] = {"none": [], "feed": [], "outbox": []}
        endpoint = None
        for _ in range(max(1, samples // BLOCK)):
            for shape in shapes:
                store.writes.riders[:] = [] if shape == "none" else riders
                if shape == "outbox" and endpoint is None:
                    endpoint = store.webhooks.create("https://example.invalid/hook", ["*"])
                if shape != "outbox" and endpoint is not None:
                    store.webhooks.delete(endpoint["id"])
                    endpoint = None
                shapes[shape].append(_cpu_per_command(command, BLOCK))
        store.writes.riders[:] = riders
    finally:
        store.dispose()
    none, with_feed, with_outbox = (statistics.median(shapes[s]) * 1e3 for s in shapes)
    return Figure(
        row="platform",
        database=database.name,
        name="a command's CPU with the feed and an outbox row (one endpoint)",
        value=with_outbox,
        unit="ms",
        floor=none,
        floor_name="the same command without the feed's rider (same run)",
        goal=Goal("≤ 1.10× the floor", 1.10, of="ratio"),
        details={"feed_only_ms": with_feed, "blocks": len(shapes["none"]), "block": BLOCK},
    )


def _receive(port: Any, ready: Any) -> None:
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            self.send_response(204)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *_: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port.value = server.server_address[1]
    ready.set()
    server.serve_forever()


def deliveries_row(database: Database, count: int) -> Figure:
    """Webhooks/s of one process's worker to a local receiver (``count`` rows, of
    ``count // 4`` games: four entries a game, sent in each game's order)."""
    context = multiprocessing.get_context("spawn")
    port, ready = context.Value("i", 0), context.Event()
    receiver = context.Process(target=_receive, args=(port, ready), daemon=True)
    receiver.start()
    ready.wait(30)
    os.environ.setdefault(ALLOW_ENV, "127.0.0.1")
    store = database.store()
    try:
        store.webhooks.create(f"http://127.0.0.1:{port.value}/hook", ["*"])
        now = datetime.now(UTC)
        games = [f"bench-{n}" for n in range(max(1, count // 4))]
        entries = [
            feed.new_entry("game.paused", now, game_id=game, seq=turn)
            for turn in range(1, 5)
            for game in games
        ]
        with store.core.writing() as conn:
            feed.record(conn, entries)
        worker = DeliveryWorker(store)  # its turns, without its thread: timed here
        started = time.perf_counter()
        sent = 0
        while sent < len(entries):
            done = worker.deliver_once()
            assert done or store.outbox.next_due() is not None, "rows left undelivered"
            sent += done
        elapsed = time.perf_counter() - started
        worker.stop()
        floor = _raw_posts(port.value, len(entries) // 4)
    finally:
        store.dispose()
        receiver.terminate()
        receiver.join(10)
    return Figure(
        row="platform",
        database=database.name,
        name="webhooks delivered per second (one worker, local receiver)",
        value=len(entries) / elapsed,
        unit="/s",
        floor=floor,
        floor_name="bare http.client POSTs to the same receiver, one connection (same run)",
        goal=Goal("≥ 500/s", 500.0, at_least=True),
        higher_is_better=True,
        details={"deliveries": len(entries), "games": len(games), "seconds": elapsed},
    )


def _raw_posts(port: int, count: int) -> float:
    """POSTs/s of one kept-alive ``http.client`` connection: the receiver's own pace."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    body = b'{"type":"game.paused"}'
    started = time.perf_counter()
    for _ in range(count):
        conn.request("POST", "/hook", body=body, headers={"content-type": "application/json"})
        conn.getresponse().read()
    elapsed = time.perf_counter() - started
    conn.close()
    return count / elapsed


def platform_rows(database: Database, samples: int, quick: bool) -> list[Figure]:
    return [outbox_cpu_row(database, samples), deliveries_row(database, 400 if quick else 4000)]

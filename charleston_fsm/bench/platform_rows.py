"""The ``platform`` row: what the feed and the outbox cost a command, and webhooks/s.

1. **CPU per command**: a command that makes a feed entry (a clock's pause or resume)
   through ``store.writes.annotate``, its process CPU (``time.process_time``) per command
   in three shapes, alternated in blocks in the same run on one game: without the feed's
   rider, with the feed and no endpoint, with the feed and one endpoint subscribed to
   everything (an outbox row per command). Two figures of them:

   - *the outbox*: the command with its outbox row beside the same command writing its
     feed entry with no endpoint. The goal (the platform issue's): at most 10 % of its
     CPU. The outbox is what webhooks add to a write; the feed entry is written whether
     or not anyone has an endpoint.
   - *the feed entry*: the command with its entry beside the same command without the
     rider, shown with no target of its own (what a platform's feed costs a write; the
     two ratios multiplied are what both cost, in ``details``).
2. **Deliveries/s**: one ``DeliveryWorker`` (as a ``serve`` process runs it) sending
   outbox rows of many games to a receiver in another process on 127.0.0.1 (a threaded
   ``http.server`` answering 204, ``receiver.py``), from the first claim to the last row
   recorded, and the worker's process CPU per delivery.
"""

from __future__ import annotations

import os
import select
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from ..api.webhook_sender import ALLOW_ENV, TIMEOUT_ENV, DeliveryWorker
from ..engine.annotations import pause, resume
from ..store import NewGame
from ..store.platform import feed
from .databases import Database
from .figures import Figure, Goal

BLOCK = 20  # commands per block; the shapes alternate block by block


def _cpu_per_command(run: Callable[[], object], count: int) -> float:
    started = time.process_time()
    for _ in range(count):
        run()
    return (time.process_time() - started) / count


def outbox_cpu_row(database: Database, samples: int) -> list[Figure]:
    """Process CPU per command with the feed's entry, and with an outbox row besides."""
    store = database.store()
    try:
        game_id = store.registry.create_game(NewGame(seed=1, clock={"vote": 60}))
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
        if endpoint is not None:  # its rows are not the deliveries row's to send
            store.webhooks.delete(endpoint["id"])
    finally:
        store.dispose()
    none, with_feed, with_outbox = (statistics.median(shapes[s]) * 1e3 for s in shapes)
    details = {
        "no_rider_ms": none,
        "feed_only_ms": with_feed,
        "feed_and_outbox_ms": with_outbox,
        "feed_and_outbox_ratio": with_outbox / none,
        "blocks": len(shapes["none"]),
        "block": BLOCK,
    }
    return [
        Figure(
            row="platform",
            database=database.name,
            name="a command's CPU with its feed entry (no endpoint)",
            value=with_feed,
            unit="ms",
            floor=none,
            floor_name="the same command without the feed's rider (same run)",
            goal=Goal("none of its own (the feed's price; the outbox's target is below)", None),
            details=details,
        ),
        Figure(
            row="platform",
            database=database.name,
            name="a command's CPU with an outbox row (one endpoint)",
            value=with_outbox,
            unit="ms",
            floor=with_feed,
            floor_name="the same command writing its feed entry, no endpoint (same run)",
            goal=Goal("≤ 1.10× the floor", 1.10, of="ratio"),
            details=details,
        ),
    ]


#: how long the receiver may take to listen (it imports the standard library only)
RECEIVER_START_SECONDS = 60.0
#: how long one worker may take for all the rows (a few seconds at the target's pace)
DELIVERY_SECONDS = 300.0
#: the worker's send timeout here (a receiver that stopped answering is seen in seconds)
SEND_TIMEOUT = "5"


class DeliveriesFailed(RuntimeError):
    """The deliveries could not be measured: what happened (``plain_lines``, printed by the
    command line instead of a traceback)."""

    def __init__(self, *lines: str) -> None:
        super().__init__(" ".join(lines))
        self.plain_lines = lines


@contextmanager
def receiver() -> Iterator[int]:
    """A receiver process on 127.0.0.1 (``bench/receiver.py``); its port."""
    process = subprocess.Popen(
        [sys.executable, "-m", "charleston_fsm.bench.receiver"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], RECEIVER_START_SECONDS)
        line = process.stdout.readline() if ready else b""
        if not line.strip().isdigit():
            raise DeliveriesFailed(
                f"The bench's webhook receiver (process {process.pid}) did not say its port "
                f"within {RECEIVER_START_SECONDS:.0f} s (exit code {process.poll()}); "
                "nothing was measured.",
                "Run the bench again when the machine is less loaded.",
            )
        yield int(line)
    finally:
        process.kill()
        process.wait(10)


def deliveries_row(database: Database, count: int) -> Figure:
    """Webhooks/s of one process's worker to a local receiver (``count`` rows, of
    ``count // 4`` games: four entries a game, sent in each game's order).

    Bounded: every row must be delivered (a receiver's error, or no answer within
    :data:`SEND_TIMEOUT` seconds, stops the row with what happened; a retry would wait
    the schedule's 5 s, then 5 minutes), all within :data:`DELIVERY_SECONDS`."""
    os.environ.setdefault(ALLOW_ENV, "127.0.0.1")
    with receiver() as port:
        store = database.store()
        timeout = os.environ.get(TIMEOUT_ENV)
        os.environ[TIMEOUT_ENV] = SEND_TIMEOUT
        try:
            # deleted after the row (below): the next run's receiver has another port, and
            # an endpoint left here would have the next run's rows sent to a closed one
            endpoint = store.webhooks.create(f"http://127.0.0.1:{port}/hook", ["*"])
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
            try:
                started = time.perf_counter()
                cpu = time.process_time()
                _deliver_all(worker, len(entries), started + DELIVERY_SECONDS)
                elapsed = time.perf_counter() - started
                cpu = time.process_time() - cpu
            finally:
                worker.stop()
            floor = _raw_posts(port, len(entries) // 4)
            store.webhooks.delete(endpoint["id"])
        finally:
            if timeout is None:
                os.environ.pop(TIMEOUT_ENV, None)
            else:
                os.environ[TIMEOUT_ENV] = timeout
            store.dispose()
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
        details={
            "deliveries": len(entries),
            "games": len(games),
            "seconds": elapsed,
            "cpu_ms_per_delivery": cpu / len(entries) * 1e3,
        },
    )


def _deliver_all(worker: DeliveryWorker, count: int, deadline: float) -> None:
    """Turn ``worker`` until ``count`` rows are delivered; :class:`DeliveriesFailed` at
    the first that is not, or past ``deadline``."""
    while worker.delivered < count:
        worker.deliver_once()
        if worker.last_failure is not None:
            raise DeliveriesFailed(
                f"A webhook to the bench's receiver was not delivered ({worker.last_failure}) "
                f"after {worker.delivered:,} of {count:,}; nothing was measured.",
                "The receiver runs on 127.0.0.1: check that nothing blocks local connections.",
            )
        if time.perf_counter() > deadline:
            raise DeliveriesFailed(
                f"One worker delivered {worker.delivered:,} of {count:,} webhooks in "
                f"{DELIVERY_SECONDS:.0f} s; the row gives up (nothing was measured).",
                "Run the bench again when the machine is less loaded.",
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
    return [*outbox_cpu_row(database, samples), deliveries_row(database, 400 if quick else 4000)]

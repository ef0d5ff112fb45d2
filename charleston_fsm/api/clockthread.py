"""The clock worker of one service process: polls the store's due deadlines.

Every ``serve`` process runs one; the store makes them safe together (``SKIP LOCKED``,
re-checks under the game's lock, deterministic command ids), so a deadline fires once
whichever process sees it first, and after a restart. What it writes is told to the
streams by the store's notices, as every write is.
"""

from __future__ import annotations

import threading
from typing import Any

from .logs import log

CLOCK_INTERVAL = 0.25  # seconds between polls: the next_due index makes one poll cheap
RETRY_SECONDS = 5.0  # after a failed poll


class ClockThread:
    """A daemon thread calling ``store.clock_worker.fire_due_clocks`` every ``interval`` seconds."""

    def __init__(self, store: Any, interval: float | None) -> None:
        self.store = store
        self.interval = interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self.interval is None or not hasattr(self.store, "clock_worker"):
            return
        self._thread = threading.Thread(target=self._run, name="clock-worker", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.store.clock_worker.fire_due_clocks()
            except Exception:  # the database is away, a schema is not current ...
                log.exception("clock worker: a poll failed; trying again shortly")
                self._stop.wait(RETRY_SECONDS)

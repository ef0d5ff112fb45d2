"""The seals of finished games, made on the store's one sealing thread after the commit.

A game a write finished is replayed once and its final anchor sealed with the replay's
digest (``TamperEvidence.seal``), so later verifies need not replay it. The answer to
the finishing command does not wait for that (tens of ms). A seal that fails, or never
runs because the process ends first, leaves the anchor unsealed: the next verify
replays the game and seals it then. A seal the database could not take for a while
(a failover: no primary for some seconds) is tried again, :data:`RETRY_WAITS` apart; a
seal whose commit was cut is only re-checked by the next try (a sealed anchor is not
sealed twice). Whoever waits for the seals (the store closing) ends the waiting at
once: those seals are left to the next verify.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import suppress

from ..errors import OutcomeUnknown, StoreUnavailable

#: the waits before each new try of a seal the database was away for (about 30 s in all:
#: longer than a failover's promotion takes)
RETRY_WAITS = (1.0, 2.0, 4.0, 8.0, 16.0)


class Sealing:
    """One thread, made on first use, sealing games with ``seal(game_id)``."""

    def __init__(self, seal: Callable[[str], object]) -> None:
        self._seal = seal
        self._pool: ThreadPoolExecutor | None = None
        self._pending: list[Future[None]] = []
        self._lock = threading.Lock()
        #: set while someone waits for the seals: no seal waits to be tried again
        self._hurry = threading.Event()

    def later(self, game_id: str) -> None:
        """Seal ``game_id`` on the sealing thread."""
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(1, thread_name_prefix="charleston-seal")
            self._pending = [f for f in self._pending if not f.done()]
            self._pending.append(self._pool.submit(self._quietly, game_id))

    def _quietly(self, game_id: str) -> None:
        with suppress(Exception):  # an unsealed anchor is the record of a seal not made
            for wait_first in (0.0, *RETRY_WAITS):
                if wait_first and self._hurry.wait(wait_first):
                    return  # the store is closing: the next verify seals it
                try:
                    self._seal(game_id)
                    return
                except (StoreUnavailable, OutcomeUnknown):
                    continue  # the database is away (a failover): try again shortly

    def wait(self) -> None:
        """Return once every seal asked for so far is written (or given up)."""
        with self._lock:
            pending = list(self._pending)
        self._hurry.set()
        try:
            wait(pending)
        finally:
            self._hurry.clear()

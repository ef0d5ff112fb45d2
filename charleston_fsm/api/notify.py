"""Wake the streams (and bots) of a game when new events are stored.

A notification only says "game G has events up to seq N": every subscriber then reads
the new events from the store after its own last seq and redacts them for its seat, so
a missed or duplicated notification never loses or leaks anything.

The store tells (``charleston_fsm.store.notices``): this process's writes at once, after
each commit, and (PostgreSQL) other processes' writes as its listening connection hears
them. :class:`Notifier` fans those out to the asyncio subscribers of this process.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import defaultdict
from dataclasses import dataclass, field

from ..store.notices import Notices


@dataclass(eq=False)
class Subscription:
    game_id: str
    loop: asyncio.AbstractEventLoop
    wake: asyncio.Event = field(default_factory=asyncio.Event)

    def _set(self) -> None:
        self.loop.call_soon_threadsafe(self.wake.set)

    async def wait(self, timeout: float) -> bool:
        """Wait for a notification (``True``) or the timeout (``False``); then re-arm."""
        try:
            await asyncio.wait_for(self.wake.wait(), timeout)
            return True
        except TimeoutError:
            return False
        finally:
            self.wake.clear()


class Notifier:
    """Fan-out of "new events in game G" to that game's subscribers in this process.

    ``source``: the store's notices (:meth:`attach`), which call :meth:`publish`; without
    one, only what is published here is heard.
    """

    def __init__(self, source: Notices | None = None) -> None:
        self._lock = threading.Lock()
        self._subs: dict[str, set[Subscription]] = defaultdict(set)
        self.delivered = 0
        self.source: Notices | None = None
        if source is not None:
            self.attach(source)

    def attach(self, source: Notices) -> None:
        """Hear the store's notices (once)."""
        if self.source is None:
            self.source = source
            source.listen(self.publish, on_gap=self.wake_all)

    @property
    def kind(self) -> str:
        return self.source.kind if self.source is not None else "in-process"

    def subscribe(self, game_id: str) -> Subscription:
        sub = Subscription(game_id, asyncio.get_running_loop())
        with self._lock:
            self._subs[game_id].add(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        with self._lock:
            subs = self._subs.get(sub.game_id)
            if subs is not None:
                subs.discard(sub)
                if not subs:
                    del self._subs[sub.game_id]

    def publish(self, game_id: str, seq: int | None = None) -> None:
        with self._lock:
            subs = list(self._subs.get(game_id, ()))
        for sub in subs:
            with contextlib.suppress(RuntimeError):  # the subscriber's loop has closed
                sub._set()
                self.delivered += 1

    def wake_all(self) -> None:
        with self._lock:
            games = list(self._subs)
        for game_id in games:
            self.publish(game_id)

    @property
    def subscribers(self) -> int:
        with self._lock:
            return sum(len(s) for s in self._subs.values())

    def start(self) -> None:
        """Start hearing other processes (the store's listening thread, PostgreSQL)."""
        if self.source is not None:
            self.source.start()

    def stop(self) -> None:
        if self.source is not None:
            self.source.stop()

    @property
    def healthy(self) -> bool:
        return self.source.healthy if self.source is not None else True

"""Wake the streams (and bots) of a game when new events are stored.

A notification only says "game G has events up to seq N": every subscriber then reads
the new events from the store after its own last seq and redacts them for its seat, so
a missed or duplicated notification never loses or leaks anything.

The store tells (``charleston_fsm.store.database.notices``): this process's writes at once, after
each commit, and (PostgreSQL) other processes' writes as its listening connection hears
them. :class:`Notifier` fans those out to the asyncio subscribers of this process.

A stream that reads a standby (``standby=True``: spectators') is woken instead by the
store's standby watch (``store/database/standbys.py``), once the rows are on every standby in use
(:meth:`Notifier.standby_rows`): a primary's notice would wake it before the standby has
the rows. While no standby is in use, it reads the primary and wakes on its notices.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..store.database.notices import Notices


@dataclass(eq=False)
class Subscription:
    game_id: str
    loop: asyncio.AbstractEventLoop
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    #: other subjects that wake it too (a spectator's stream: the table's round)
    also: tuple[str, ...] = ()
    #: it reads a standby: woken by the standby watch, not by the primary's notices
    standby: bool = False

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
        #: whether a standby is in use now (the store's standbys; none: never)
        self.standby_in_use: Callable[[], bool] = lambda: False
        if source is not None:
            self.attach(source)

    def attach(self, source: Notices) -> None:
        """Hear the store's notices (once)."""
        if self.source is None:
            self.source = source
            source.listen(self._primary_notice, on_gap=self.wake_all)

    def follow_standbys(self, standbys: Any) -> None:
        """Wake standby streams from ``standbys``' watch (``store.standbys.Standbys``)."""
        self.standby_in_use = lambda: bool(standbys.in_use)
        standbys.followed = self.standby_games
        standbys.on_rows = self.standby_rows
        standbys.on_change = self.wake_all  # every stream re-reads where it reads now

    def _primary_notice(self, game_id: str, seq: int | None = None) -> None:
        """A commit on the primary: its streams wake; standby streams only while they
        read the primary too (no standby in use)."""
        self.publish(game_id, seq, standby=None if not self.standby_in_use() else False)

    def standby_rows(self, game_id: str, seq: int | None = None) -> None:
        """The standbys in use have the game's rows up to ``seq``: its standby streams wake."""
        self.publish(game_id, seq, standby=True)

    def standby_games(self) -> list[str]:
        """The games that standby streams of this process show (the watch reads their
        heads on the standby, in one statement per tick)."""
        with self._lock:
            return [g for g, subs in self._subs.items() if any(s.standby for s in subs)]

    @property
    def kind(self) -> str:
        return self.source.kind if self.source is not None else "in-process"

    def subscribe(
        self, game_id: str, also: tuple[str, ...] = (), *, standby: bool = False
    ) -> Subscription:
        """Wake on ``game_id``'s notices, and on any of ``also`` (e.g. its round: a
        published round id, whose links changed); ``standby``: the stream reads a
        standby (woken when the rows are there)."""
        sub = Subscription(game_id, asyncio.get_running_loop(), also=also, standby=standby)
        with self._lock:
            for key in (game_id, *also):
                self._subs[key].add(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        with self._lock:
            for key in (sub.game_id, *sub.also):
                subs = self._subs.get(key)
                if subs is not None:
                    subs.discard(sub)
                    if not subs:
                        del self._subs[key]

    def publish(self, game_id: str, seq: int | None = None, standby: bool | None = None) -> None:
        """Wake ``game_id``'s subscribers (``standby``: only those reading a standby, or
        only those reading the primary; ``None``: all, as a change of links does)."""
        with self._lock:
            subs = [
                s for s in self._subs.get(game_id, ()) if standby is None or s.standby == standby
            ]
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
            return len({sub for subs in self._subs.values() for sub in subs})

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

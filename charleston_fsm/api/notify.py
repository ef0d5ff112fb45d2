"""Wake the streams of a game when new events are stored.

A notification only says "game G has events up to seq N": every subscriber then reads
the new events from the store after its own last seq and redacts them for its seat, so
a missed or duplicated notification never loses or leaks anything.

- In-process (:class:`Notifier`): the service publishes after each command it stores.
  Enough for SQLite and for a single process.
- PostgreSQL (:class:`PostgresNotifier`): the store runs
  ``pg_notify('charleston_events', '<game_id>:<seq>')`` in the command's transaction; each
  service process LISTENs on one dedicated connection (a daemon thread) and fans out to
  its own subscribers, so a command stored through process A wakes streams served by B.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field

from .logs import log

CHANNEL = "charleston_events"


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
    """In-process fan-out of "new events in game G" to that game's subscribers."""

    kind = "in-process"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subs: dict[str, set[Subscription]] = defaultdict(set)
        self.delivered = 0

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
        pass

    def stop(self) -> None:
        pass

    @property
    def healthy(self) -> bool:
        return True


class PostgresNotifier(Notifier):
    """LISTEN on one dedicated psycopg connection in a daemon thread; reconnect on loss."""

    kind = "postgres-listen"

    def __init__(self, dsn: str, *, poll: float = 0.5) -> None:
        super().__init__()
        self.dsn = dsn
        self.poll = poll
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._connected = threading.Event()

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="pg-listen", daemon=True)
            self._thread.start()
            self._connected.wait(5)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    @property
    def healthy(self) -> bool:
        return self._connected.is_set()

    def _run(self) -> None:
        import psycopg

        backoff = 0.2
        while not self._stop.is_set():
            try:
                with psycopg.connect(self.dsn, autocommit=True) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    self._connected.set()
                    backoff = 0.2
                    # whatever happened while we were not listening: let everyone re-read
                    self.wake_all()
                    while not self._stop.is_set():
                        for note in conn.notifies(timeout=self.poll):
                            game_id, _, seq = note.payload.rpartition(":")
                            self.publish(game_id, int(seq) if seq.isdigit() else None)
            except Exception as exc:  # connection lost: retry, streams keep polling slowly
                self._connected.clear()
                if self._stop.is_set():
                    return
                log.warning("listen connection lost", extra={"error": type(exc).__name__})
                time.sleep(backoff)
                backoff = min(backoff * 2, 5.0)


def listen_dsn(url: str | None) -> str | None:
    """A libpq connection string for a SQLAlchemy PostgreSQL URL; ``None`` for others."""
    if not url or not url.startswith("postgres"):
        return None
    from sqlalchemy.engine import make_url

    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def notifier_for(url: str | None) -> Notifier:
    dsn = listen_dsn(url)
    return PostgresNotifier(dsn) if dsn else Notifier()

"""The feed's positions: the one order every reader shares, given after the commit.

A write inserts its entries with no position (writers never wait on each other for a
number); a sequencer (one ``serve`` process at a time, under an advisory lock) numbers
the committed ones in a batch, continuing from the highest (:data:`ASSIGN_POSITIONS`).
A number once given is never changed: the update takes only rows still without one, a
unique index refuses a number given twice, and a trigger refuses any change of a
position (migration 0013). PostgreSQL only: SQLite's writes are serialised, so its
feed is read in ``id`` order and needs none of this."""

from __future__ import annotations

import threading
from typing import Any, Protocol

from sqlalchemy import Connection, select, text

from ..database.models import FeedRow

#: how often each ``serve`` process tries to be the sequencer (PostgreSQL)
SEQUENCE_SECONDS = 0.05
_SEQUENCER_LOCK = 7458020212  # pg advisory lock key (migrations use 7458020211)


class Sequenced(Protocol):
    """What the sequencer drives: the feed's part (``store.feed``)."""

    core: Any

    def sequence(self) -> int: ...


#: is any committed entry waiting for its position (the partial index's first row)
UNPOSITIONED = select(FeedRow.id).where(FeedRow.position.is_(None)).limit(1)

#: One batch of positions, continuing from the highest. Safe by construction, not only by
#: the advisory lock taken before it (which makes its snapshot see every earlier batch):
#: ``AND feed.position IS NULL`` is checked again on the row as it is when the update gets
#: it, so an entry another sequencer numbered meanwhile (its update waited for that one's
#: commit) is never numbered again; the unique index on ``position`` refuses a number
#: given twice (the batch rolls back, the next turn numbers on from the new head); and
#: the database itself refuses to change a position once given (migration 0013's trigger).
ASSIGN_POSITIONS = text(
    "WITH todo AS (SELECT id, row_number() OVER (ORDER BY id) AS rank FROM feed "
    "WHERE position IS NULL ORDER BY id LIMIT 5000), "
    "top AS (SELECT coalesce(max(position), 0) AS top FROM feed) "
    "UPDATE feed SET position = top.top + todo.rank FROM todo, top "
    "WHERE feed.id = todo.id AND feed.position IS NULL"
)


def sequence(conn: Connection) -> int:
    """One batch of :meth:`Feed.sequence` in the caller's transaction (PostgreSQL)."""
    held = conn.execute(text(f"SELECT pg_try_advisory_xact_lock({_SEQUENCER_LOCK})")).scalar()
    if not held:
        return 0
    return conn.execute(ASSIGN_POSITIONS).rowcount  # type: ignore[attr-defined,no-any-return]


class Sequencer:
    """A daemon thread of a ``serve`` process trying :meth:`Feed.sequence` every
    :data:`SEQUENCE_SECONDS` (PostgreSQL); a failure is retried at the next turn."""

    def __init__(self, feed: Sequenced, interval: float = SEQUENCE_SECONDS) -> None:
        self.feed = feed
        self.interval = interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self.feed.core.dialect != "postgresql" or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name="feed-sequencer", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                while self.feed.sequence() >= 5000:  # a backlog: at once, batch after batch
                    pass
            except Exception:  # the database is away: the next turn tries again
                self._stop.wait(1.0)

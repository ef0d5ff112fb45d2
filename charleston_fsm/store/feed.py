"""The feed: every game's and round's lifecycle in one total order, resumable from a cursor.

A platform learns what happened without watching every game: "table 17 finished", "East
is late on table 40", "game quarantined", "round 3 started". Each entry is a small
document (:data:`FEED_TYPES` says which rows make one, and which of their fields it
keeps: never a tile, so no entry can show a concealed one).

**Written with its cause.** An entry is inserted by the transaction that writes the rows
causing it: the write path carries it as a rider in its one statement (``writes.py``,
:func:`rider`), a new game, a round's acts, a seal and a quarantine call :func:`record`
in their own transaction. With it go the webhooks' outbox rows (``outbox.py``). An entry
of a write that rolled back never existed; one of a write that committed is never lost.

**One order without a global lock.** Writers never take a lock for the feed: ``feed.id``
is the insert order (a sequence on PostgreSQL), and ids are *not* commit order there (a
transaction can take id 7, commit after the one that took 8, and a reader in between
would skip 7 for ever). So the feed's order is ``position``, given *after* the commit:

- PostgreSQL: a sequencer (:func:`sequence`) runs under a transaction-level advisory
  lock (``pg_try_advisory_xact_lock``), so one process at a time assigns; every
  ``serve`` process tries every :data:`SEQUENCE_SECONDS` and whichever gets the lock
  does the work (no leader to elect, none to lose). A turn reads first whether any entry
  waits for a position and opens a write transaction only then: idle, it commits
  nothing. It numbers the committed entries without a position in ``id`` order,
  continuing from the highest position, and commits: readers see no new positions or all
  of them, so the positioned entries are always a prefix of the order and ``position >
  cursor`` never skips one. An entry still in flight is not visible to it; it gets the
  next position once committed. A game's entries keep their order: a game's next write
  inserts only after the one before it committed (its row lock), so it has the higher
  id, and is numbered in the same batch or a later one.
- SQLite: writes are serialised (``BEGIN IMMEDIATE``), so insert order is commit order
  and ``id`` is the position; no sequencer runs (no background writer to meet "database
  is locked").

The cursor is opaque to clients (``p<position>``) and means the same on every process
and after any restart: it names a place in a stored order, not a process's memory.
"""

from __future__ import annotations

import re
import threading
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import ColumnElement, Connection, func, insert, or_, select, text, update

from ..engine.errors import SetupError
from ..ledger.hashing import utc
from .append import Append, Rider
from .core import Part
from .models import FeedRow, GameRow, RoundRow
from .outbox import FAN_OUT, fan_out

#: event type -> (feed entry type, the payload fields the entry keeps). The one mapping.
#: Only these fields leave the game: none holds a tile (tests scan every entry).
FEED_TYPES: dict[str, tuple[str, tuple[str, ...]]] = {
    "game_started": ("game.started", ("round", "scheduled")),
    "state_changed": ("game.step_reached", ("from", "to")),
    "seat_late": ("game.seat_late", ()),
    "clock_expired": ("game.clock_acted", ()),
    "clock_paused": ("game.paused", ("round",)),
    "clock_resumed": ("game.resumed", ("round", "paused_seconds")),
    "ruling_recorded": ("game.ruling", ("kind",)),
    "mah_jongg_declared": ("game.declaration", ()),
    "declaration_judged": ("game.verdict", ("verdict",)),
    "charleston_ended": ("game.finished", ("reason",)),
}
#: entries written outside the write path, by the part that does the thing
OTHER_TYPES = (
    "game.created",
    "game.sealed",
    "game.quarantined",
    "game.quarantine_lifted",
    "round.created",
    "round.started",
    "round.paused",
    "round.resumed",
    "round.finished",
)
ENTRY_TYPES = frozenset([*(t for t, _ in FEED_TYPES.values()), *OTHER_TYPES])

MAX_PAGE = 1000
#: how often each ``serve`` process tries to be the sequencer (PostgreSQL)
SEQUENCE_SECONDS = 0.05
_SEQUENCER_LOCK = 7458020212  # pg advisory lock key (migrations use 7458020211)
_CURSOR = re.compile(r"^p([0-9]{1,18})$")
#: which entries a reader may see (:meth:`Feed.read`): ``None``, all of them
Scope = ColumnElement[bool] | None
_COLUMNS = ("entry_id", "type", "game_id", "round_id", "seq", "at", "data")


class InvalidCursor(SetupError):
    """A cursor the feed never gave (the API answers 400)."""

    code = "invalid_cursor"
    rule = "SVC-02"


@dataclass(frozen=True)
class Entry:
    """One feed entry as a client reads it."""

    cursor: str
    id: str
    type: str
    at: datetime
    game_id: str | None
    round_id: str | None
    seq: int | None
    data: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {
            "cursor": self.cursor,
            "id": self.id,
            "type": self.type,
            "at": self.at.isoformat().replace("+00:00", "Z"),
            "game_id": self.game_id,
            "round_id": self.round_id,
            "seq": self.seq,
            "data": self.data,
        }


def new_entry(
    type_: str,
    at: datetime,
    *,
    game_id: str | None = None,
    round_id: str | None = None,
    seq: int | None = None,
    data: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A feed row to insert (its ``entry_id`` new)."""
    assert type_ in ENTRY_TYPES, type_
    return {
        "entry_id": uuid.uuid4().hex,
        "type": type_,
        "game_id": game_id,
        "round_id": round_id,
        "seq": seq,
        "at": at,
        "data": dict(data or {}),
    }


def entries_of(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The entries a write's event rows make (:data:`FEED_TYPES`), in row order."""
    entries = []
    for row in rows:
        mapped = FEED_TYPES.get(row["type"])
        if mapped is None:
            continue
        kind, fields = mapped
        payload = row["payload"]
        data = {f: payload[f] for f in fields if f in payload}
        if row["seat"] is not None:
            data["seat"] = row["seat"]
        entries.append(
            new_entry(kind, row["created_at"], game_id=row["game_id"], seq=row["seq"], data=data)
        )
    return entries


def rider(append: Append) -> Rider | None:
    """The write path's rider: the entries of the append's rows, and their outbox rows;
    a write that finishes a game also counts it in its round (:class:`RoundFinished`)."""
    entries = entries_of(append.rows)
    if not entries:
        return None
    finishes = any(e["type"] == "game.finished" for e in entries)
    return Rider(
        FeedRow.__table__,  # type: ignore[arg-type]
        tuple(entries),
        fan_out=FAN_OUT,
        follow=ROUND_FINISHED if finishes else None,
    )


class RoundFinished:
    """A write that finishes a game raises its round's ``finished_tables`` by one, in its
    own statement; the write that raises it to ``tables`` records ``round.finished`` (and
    its outbox rows), after its own entries (``append.Follow``).

    Exactly once, whoever finishes the last tables: on PostgreSQL the update takes the
    round's row lock, so of two writes finishing the last two tables at once the second
    waits for the first's commit and then raises the count the first left (READ
    COMMITTED re-reads the updated row): only one of them sees it reach ``tables``. On
    SQLite the writes are serialised. A game finishes once (its chart's end is one row),
    and a write that stores nothing (the game moved) raises nothing."""

    def pg(self, inserted: str, number: int) -> list[str]:
        counted, done = f"round_counted_{number}", f"round_finished_{number}"
        return [
            f"{counted} AS (UPDATE rounds SET finished_tables = rounds.finished_tables + 1 "
            "FROM moved WHERE rounds.id = moved.round_id "
            "RETURNING rounds.id, rounds.name, rounds.tables, rounds.finished_tables)",
            # the count of the write's own entries makes them inserted first: the round's
            # entry comes after its last table's game.finished in the feed's order
            f"{done} AS (INSERT INTO feed (entry_id, type, round_id, at, data) "
            "SELECT replace(gen_random_uuid()::text, '-', ''), 'round.finished', c.id, "
            "%(b_at)s, jsonb_build_object('name', c.name, 'tables', c.tables) "
            f"FROM {counted} c WHERE c.finished_tables = c.tables "
            f"AND (SELECT count(*) FROM {inserted}) > 0 RETURNING *)",
            f"round_fan_out_{number} AS ({FAN_OUT.pg(done)})",
        ]

    def after_insert(self, conn: Connection, append: Append) -> None:
        round_id = conn.execute(
            select(GameRow.round_id).where(GameRow.id == append.game_id)
        ).scalar()
        if round_id is None:
            return
        counted = conn.execute(
            update(RoundRow)
            .where(RoundRow.id == round_id)
            .values(finished_tables=RoundRow.finished_tables + 1)
            .returning(RoundRow.name, RoundRow.tables, RoundRow.finished_tables)
        ).first()
        if counted is not None and counted.finished_tables == counted.tables:
            data = {"name": counted.name, "tables": counted.tables}
            record(conn, [new_entry("round.finished", append.at, round_id=round_id, data=data)])


ROUND_FINISHED = RoundFinished()


def record(conn: Connection, entries: Sequence[Mapping[str, Any]]) -> None:
    """Insert ``entries`` and their outbox rows in the caller's transaction."""
    if not entries:
        return
    conn.execute(insert(FeedRow), [dict(e) for e in entries])
    fan_out(conn, [e["entry_id"] for e in entries])


def of_organiser(organiser_id: str) -> ColumnElement[bool]:
    """The :meth:`Feed.read` ``scope`` of an organiser: the entries of its own games (a
    round's tables included: they carry its id) and of its own rounds, nobody else's."""
    return or_(
        FeedRow.game_id.in_(select(GameRow.id).where(GameRow.organiser_id == organiser_id)),
        FeedRow.round_id.in_(select(RoundRow.id).where(RoundRow.organiser_id == organiser_id)),
    )


def parse_cursor(cursor: str | None) -> int:
    """The position after which to read (0: from the start)."""
    if cursor is None or cursor == "":
        return 0
    found = _CURSOR.match(cursor)
    if found is None:
        raise InvalidCursor(
            f"{cursor!r} is not a feed cursor: pass the 'cursor' of an entry you read "
            "(or 'next' of a page), or leave 'after' out to read from the start."
        )
    return int(found.group(1))


def cursor_of(position: int) -> str:
    return f"p{position}"


class Feed(Part):
    """``read`` the feed from a cursor; ``sequence`` positions (PostgreSQL)."""

    def read(
        self,
        after: str | None = None,
        limit: int = 100,
        types: Sequence[str] | None = None,
        scope: ColumnElement[bool] | None = None,
    ) -> tuple[list[Entry], str]:
        """Up to ``limit`` entries after the cursor ``after`` (``types``: only these), and
        the cursor to read on from (the last entry's, or ``after`` when none came).

        ``scope``: a condition on :class:`FeedRow` an entry must meet, e.g. an organiser's
        (:func:`of_organiser`). Its cursors are the same order's, so a scoped reader
        resumes as any other; its page skips the others' entries, and a page short of
        ``limit`` reads on from the newest position read past (the head, taken first:
        positions are given as a prefix, so nothing at or below it can appear later), not
        to scan the others' entries again at every poll."""
        start = parse_cursor(after)
        limit = max(1, min(limit, MAX_PAGE))
        order = FeedRow.id if self.core.dialect == "sqlite" else FeedRow.position
        query = select(*FeedRow.__table__.columns, order.label("place")).where(order > start)
        if types:
            query = query.where(FeedRow.type.in_(list(types)))
        head = start
        with self._reading() as conn:
            if scope is not None:
                head = conn.execute(select(func.max(order))).scalar() or 0
                query = query.where(scope, order <= head)
            rows = conn.execute(query.order_by(order).limit(limit)).all()
        entries = [
            Entry(
                cursor_of(r.place),
                r.entry_id,
                r.type,
                utc(r.at),
                r.game_id,
                r.round_id,
                r.seq,
                r.data,
            )
            for r in rows
        ]
        if len(entries) == limit or (scope is None and entries):
            return entries, entries[-1].cursor
        return entries, cursor_of(max(start, head))

    def head(self) -> str:
        """The cursor of the newest positioned entry (read on from here: only what comes)."""
        order = FeedRow.id if self.core.dialect == "sqlite" else FeedRow.position
        with self._reading() as conn:
            top = conn.execute(select(order).order_by(order.desc()).limit(1)).scalar()
        return cursor_of(top or 0)

    def sequence(self) -> int:
        """Give positions to the committed entries that have none (PostgreSQL; 0 on
        SQLite, when there are none, or when another process holds the sequencer's
        lock): how many.

        A read first (one indexed row at most, ``ix_feed_unpositioned``; it ends with
        ROLLBACK): a turn that finds nothing opens no write transaction and commits
        nothing, so an idle service's sequencers write nothing to the database."""
        if self.core.dialect != "postgresql":
            return 0
        with self._reading() as conn:
            if conn.execute(_UNPOSITIONED).first() is None:
                return 0
        with self._writing() as conn:
            return sequence(conn)


#: is any committed entry waiting for its position (the partial index's first row)
_UNPOSITIONED = select(FeedRow.id).where(FeedRow.position.is_(None)).limit(1)

_ASSIGN = text(
    "WITH todo AS (SELECT id, row_number() OVER (ORDER BY id) AS rank FROM feed "
    "WHERE position IS NULL ORDER BY id LIMIT 5000), "
    "top AS (SELECT coalesce(max(position), 0) AS top FROM feed) "
    "UPDATE feed SET position = top.top + todo.rank FROM todo, top WHERE feed.id = todo.id"
)


def sequence(conn: Connection) -> int:
    """One batch of :meth:`Feed.sequence` in the caller's transaction (PostgreSQL)."""
    held = conn.execute(text(f"SELECT pg_try_advisory_xact_lock({_SEQUENCER_LOCK})")).scalar()
    if not held:
        return 0
    return conn.execute(_ASSIGN).rowcount  # type: ignore[attr-defined,no-any-return]


class Sequencer:
    """A daemon thread of a ``serve`` process trying :meth:`Feed.sequence` every
    :data:`SEQUENCE_SECONDS` (PostgreSQL); a failure is retried at the next turn."""

    def __init__(self, feed: Feed, interval: float = SEQUENCE_SECONDS) -> None:
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


def now() -> datetime:
    return datetime.now(UTC)

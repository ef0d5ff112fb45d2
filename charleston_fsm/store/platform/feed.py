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
  id, and is numbered in the same batch or a later one. A given position never changes
  (:data:`ASSIGN_POSITIONS`: ``AND position IS NULL``, the unique index, a trigger).
- SQLite: writes are serialised (``BEGIN IMMEDIATE``), so insert order is commit order
  and ``id`` is the position; no sequencer runs (no background writer to meet "database
  is locked").

The cursor is opaque to clients (``p<position>``) and means the same on every process
and after any restart: it names a place in a stored order, not a process's memory. One
past the newest position was never given and is refused (:class:`CursorAhead`); a short
page answers the head as its next cursor, past what its filter skipped.

Every entry of a round's table carries the round's id (the write path's statement takes
it from the game's row; :func:`record` from the games table). A game is sealed in the
feed once (:func:`record_seal`); a later seal of its grown record is
``game.record_updated``.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    and_,
    func,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from ...engine import seating
from ...engine.errors import SetupError
from ...ledger.hashing import utc
from ..database.core import Part
from ..database.models import FeedRow, GameRow, RoundRow
from ..games.append import Append, Rider
from .feed_positions import UNPOSITIONED, sequence
from .outbox import FAN_OUT, fan_out

#: event type -> (feed entry type, the payload fields the entry keeps). The one mapping.
#: Only these fields leave the game: none holds a tile (tests scan every entry).
FEED_TYPES: dict[str, tuple[str, tuple[str, ...]]] = {
    "game_started": ("game.started", ("round", "scheduled", "seated")),
    "state_changed": ("game.step_reached", ("from", "to")),
    "seat_late": ("game.seat_late", ()),
    "clock_expired": ("game.clock_acted", ()),
    "clock_paused": ("game.paused", ("round",)),
    "clock_resumed": ("game.resumed", ("round", "paused_seconds")),
    "ruling_recorded": ("game.ruling", ("kind",)),
    "mah_jongg_declared": ("game.declaration", ()),
    "declaration_judged": ("game.verdict", ("verdict",)),
    "charleston_ended": ("game.finished", ("reason",)),
    "seat_taken": ("game.seat_taken", ("by", "token_replaced")),
}
#: entries written outside the write path, by the part that does the thing
OTHER_TYPES = (
    "game.created",
    "game.sealed",
    "game.record_updated",
    "game.quarantined",
    "game.quarantine_lifted",
    "round.created",
    "round.started",
    "round.paused",
    "round.resumed",
    "round.finished",
    "webhook.disabled",  # store/platform/outbox.py: an endpoint disabled (410, or days of failures)
)
ENTRY_TYPES = frozenset([*(t for t, _ in FEED_TYPES.values()), *OTHER_TYPES])

MAX_PAGE = 1000
_CURSOR = re.compile(r"p([0-9]{1,18})")
#: which entries a reader may see (:meth:`Feed.read`): ``None``, all of them
Scope = ColumnElement[bool] | None
_COLUMNS = ("entry_id", "type", "game_id", "round_id", "seq", "at", "data")


class InvalidCursor(SetupError):
    """A cursor the feed never gave (the API answers 400)."""

    code = "invalid_cursor"
    rule = "SVC-02"


class CursorAhead(InvalidCursor):
    """A well-formed cursor past the newest position: never given by this feed (a
    typo, another service's cursor, or a database restored from an older backup). Read
    as "wait", it would skip for ever whatever is written up to it, so it is refused."""

    code = "cursor_ahead"


class UnknownEntryType(SetupError):
    """A ``types`` filter naming a type the feed has not (the API answers 422, as
    webhook registration does): a filter that could match nothing is a mistake."""

    code = "unknown_entry_type"
    rule = "SVC-02"


def check_types(types: Sequence[str] | None) -> list[str] | None:
    """``types`` when each is an entry type (:data:`ENTRY_TYPES`); ``None``: every type."""
    if not types:
        return None
    unknown = sorted(set(types) - ENTRY_TYPES)
    if unknown:
        raise UnknownEntryType(
            f"Unknown entry types {[t[:40] for t in unknown[:5]]}: the feed's types are "
            f"{sorted(ENTRY_TYPES)}; leave 'types' out to read every entry."
        )
    return list(types)


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


def entries_of(
    rows: Iterable[Mapping[str, Any]], player_ids: Mapping[str, str] | None = None
) -> list[dict[str, Any]]:
    """The entries a write's event rows make (:data:`FEED_TYPES`), in row order; an entry
    that names a seat also names its ``player_id`` (the platform's, from ``player_ids``:
    who sits the seat once the write is done) when it has one."""
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
            if player_ids and row["seat"] in player_ids:
                data["player_id"] = player_ids[row["seat"]]
        entries.append(
            new_entry(kind, row["created_at"], game_id=row["game_id"], seq=row["seq"], data=data)
        )
    return entries


def rider(append: Append) -> Rider | None:
    """The write path's rider: the entries of the append's rows, and their outbox rows;
    a write that finishes a game also counts it in its round (:class:`RoundFinished`)."""
    entries = entries_of(append.rows, seating.player_ids(append.clock))
    if not entries:
        return None
    finishes = any(e["type"] == "game.finished" for e in entries)
    return Rider(
        FeedRow.__table__,  # type: ignore[arg-type]
        tuple(entries),
        fan_out=FAN_OUT,
        follow=ROUND_FINISHED if finishes else None,
        from_game=("round_id",),
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
    """Insert ``entries`` and their outbox rows in the caller's transaction. An entry of
    a round's table gets the round's id (:func:`with_round`)."""
    if not entries:
        return
    conn.execute(insert(FeedRow), with_round(conn, entries))
    fan_out(conn, [e["entry_id"] for e in entries])


def record_seal(conn: Connection, game_id: str, last_seq: int, at: datetime) -> str:
    """The feed entry of a seal of the finished game's record up to ``last_seq``, in the
    sealing transaction: ``game.sealed`` the first time, ``game.record_updated`` at
    every later seal (the record grew after it: received tiles placed, East's Earthly
    Hand and its verdict, a director's ruling). Which type was written.

    Once by construction: ``game.sealed`` is inserted ``ON CONFLICT DO NOTHING`` against
    the partial unique index ``uq_feed_game_sealed`` (one per game, migration 0013), so
    of two processes sealing the same game at once, the second (waiting for the first's
    commit on PostgreSQL; serialised on SQLite) writes ``game.record_updated``."""
    data = {"last_seq": last_seq}
    [row] = with_round(conn, [new_entry("game.sealed", at, game_id=game_id, data=data)])
    dialect = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
    first = conn.execute(
        dialect(FeedRow)
        .values(row)
        .on_conflict_do_nothing(
            index_elements=[FeedRow.game_id], index_where=FeedRow.type == "game.sealed"
        )
        .returning(FeedRow.id)  # a row back: inserted (rowcount is not told with RETURNING)
    ).first()
    if first is not None:
        fan_out(conn, [row["entry_id"]])
        return "game.sealed"
    record(conn, [new_entry("game.record_updated", at, game_id=game_id, data=data)])
    return "game.record_updated"


def with_round(conn: Connection, entries: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``entries`` with ``round_id`` set from their game's row where they leave it
    ``None``: every entry of a round's table names its round, whoever writes it (a
    game's round is fixed when the game is created)."""
    rows = [dict(e) for e in entries]
    games = {r["game_id"] for r in rows if r["game_id"] is not None and r["round_id"] is None}
    if games:
        query = select(GameRow.id, GameRow.round_id).where(GameRow.id.in_(games))
        found = {game.id: game.round_id for game in conn.execute(query)}
        for row in rows:
            if row["round_id"] is None and row["game_id"] is not None:
                row["round_id"] = found.get(row["game_id"])
    return rows


def of_organiser(organiser_id: str) -> ColumnElement[bool]:
    """The :meth:`Feed.read` ``scope`` of an organiser: the entries of its own games (a
    round's tables included: they carry its id) and of its own rounds, and the
    ``webhook.disabled`` entries of its own endpoints; nobody else's."""
    return or_(
        FeedRow.game_id.in_(select(GameRow.id).where(GameRow.organiser_id == organiser_id)),
        FeedRow.round_id.in_(select(RoundRow.id).where(RoundRow.organiser_id == organiser_id)),
        and_(
            FeedRow.type == "webhook.disabled",
            FeedRow.data["organiser_id"].as_string() == organiser_id,
        ),
    )


def parse_cursor(cursor: str | None) -> int:
    """The position after which to read (0: from the start)."""
    if cursor is None or cursor == "":
        return 0
    found = _CURSOR.fullmatch(cursor)  # not match: "$" lets a last newline through
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
        the cursor to read on from.

        ``scope``: a condition on :class:`FeedRow` an entry must meet, e.g. an organiser's
        (:func:`of_organiser`). Its cursors are the same order's, so a scoped or filtered
        reader resumes as any other. The head (the newest position) is read first and
        the page reads up to it: positions are given as a prefix, so nothing at or below
        it can appear later. A full page reads on from its last entry; a short one from
        the head, past every entry the filter or scope skipped (a checkpoint), so the next
        poll does not scan them again.

        Refused: a malformed cursor (:class:`InvalidCursor`), one past the head
        (:class:`CursorAhead`: never given, and reading from it would silently skip
        whatever is written up to it) and an unknown type (:class:`UnknownEntryType`)."""
        start = parse_cursor(after)
        types = check_types(types)
        limit = max(1, min(limit, MAX_PAGE))
        order = self._order()
        query = select(*FeedRow.__table__.columns, order.label("place")).where(order > start)
        if types:
            query = query.where(FeedRow.type.in_(types))
        if scope is not None:
            query = query.where(scope)
        with self.core.reading() as conn:
            head = conn.execute(select(func.max(order))).scalar() or 0
            if start > head:
                raise CursorAhead(
                    f"{after!r} is past the newest entry of this feed ({cursor_of(head)}): "
                    "this feed never gave it. Read on from the last cursor you kept, or "
                    "leave 'after' out to read from the start."
                )
            query = query.where(order <= head)
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
        if len(entries) == limit:
            return entries, entries[-1].cursor
        return entries, cursor_of(head)

    def _order(self) -> Any:
        """The feed's order: ``id`` on SQLite (writes serialised), ``position`` else."""
        return FeedRow.id if self.core.dialect == "sqlite" else FeedRow.position

    def head(self) -> str:
        """The cursor of the newest positioned entry (read on from here: only what comes)."""
        order = self._order()
        with self.core.reading() as conn:
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
        with self.core.reading() as conn:
            if conn.execute(UNPOSITIONED).first() is None:
                return 0
        with self.core.writing() as conn:
            return sequence(conn)


def now() -> datetime:
    return datetime.now(UTC)

"""The write path's statements: read a game's head, append what one write decided.

An append stores nothing unless the game is still where its writer found it: at the
expected ``last_seq`` and ``epoch`` (:class:`Head`), with the command id not yet used
and no quarantine open. On PostgreSQL it is **one statement**: every part of it (the
event rows, the projection, the command id, an anchor when one is due, and any
:class:`Rider`, rows of another table the write carries, such as a feed entry, and what
its :class:`Follow` does with the game's moved row: a round's count of finished tables) hangs
on ``moved``, the guarded update of the game's row, so a game that moved meanwhile gets
nothing written and the statement answers no row. On SQLite (``BEGIN IMMEDIATE``
already holds the write lock) the game's row is updated first, its rowcount the guard,
then one statement per table, each compiled once and handed to ``sqlite3`` (``on_sqlite.py``).

Reading a head is one statement without a lock; after a lost race the writer reads it
again *under the game's lock* (``SELECT … FOR UPDATE`` then the read, one pipeline, one
round trip), which no other writer can then overtake. The PostgreSQL statements go to
psycopg itself (:func:`_on_driver`: prepared, no SQLAlchemy execution per call), inside
SQLAlchemy's transaction, with SQLAlchemy's events and error handling. See "The write
path" in ``docs/store.md`` and ``docs/bench/history.md`` for what each step cost.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

import orjson
import psycopg
from psycopg.rows import namedtuple_row
from psycopg.types.json import Jsonb
from sqlalchemy import Connection, Table, bindparam, exists, select, update
from sqlalchemy.dialects import postgresql
from sqlalchemy.sql import ClauseElement

from ...engine.clock_state import Clock
from ..database.models import (
    AnchorRow,
    CommandRow,
    EventRow,
    GameRow,
    JSONDoc,
    ProjectionRow,
    QuarantineRow,
)
from ..database.on_sqlite import announced, insert_rows, run_statement
from ..evidence import integrity

_EVENT_COLUMNS = ("seq", "type", "seat", "step", "payload", "prev_hash", "hash")
_ANCHOR_COLUMNS = ("seq", "head_hash", "finished", "created_at", "key_id", "signature")


@dataclass(frozen=True)
class Head:
    """Where a game stands: what a writer continues from, and what a process caches.

    ``snapshot`` is the projection at ``last_seq`` (``Table.snapshot()``), ``head_hash``
    the hash of row ``last_seq``, ``clock`` the game's clock (the engine's value, built
    once from the stored document where the head is read). Shared between threads: never
    mutated.
    """

    last_seq: int
    epoch: int
    head_hash: str
    snapshot: dict[str, Any] = field(repr=False)
    clock: Clock | None = field(repr=False)


class FanOut(Protocol):
    """Rows a rider's rows make in other tables (the webhooks' outbox of feed entries)."""

    def pg(self, inserted: str) -> str:
        """PostgreSQL: the body of one more part of the write's statement, over
        ``inserted`` (the name of the part that inserted the rider's rows, ``RETURNING *``)."""
        ...

    def after_insert(self, conn: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
        """SQLite: its statements, once the rider's rows are inserted."""
        ...


class Follow(Protocol):
    """What a rider's write does further with the game's row as it moved: the rows of a
    round whose last table the write finishes, say (``feed.RoundFinished``)."""

    def pg(self, inserted: str, number: int) -> list[str]:
        """PostgreSQL: more parts of the write's statement (named with ``number``), over
        ``moved`` (the game's row as updated: ``id``, ``round_id``) and ``inserted`` (the
        rider's part, ``RETURNING *``); the write's ``%(b_at)s`` is its moment."""
        ...

    def after_insert(self, conn: Connection, append: Append) -> None:
        """SQLite: its statements, once the rider's rows (and their fan-out) are inserted."""
        ...


@dataclass(frozen=True)
class Rider:
    """Rows of another table that a write carries: inserted by the write's own statement,
    only when the write stores its rows (an outbox entry, say). Every row has the same
    keys, which name columns of ``table``."""

    table: Table
    rows: tuple[Mapping[str, Any], ...]
    #: rows of further tables made from these, in the same statement (``outbox.FanOut``)
    fan_out: FanOut | None = None
    #: what the write does further with the game's moved row (``None``: nothing)
    follow: Follow | None = None
    #: columns a row leaves ``None`` that take the game's row's value (``round_id``: a
    #: round's table's feed entries name the round), read by the write itself
    from_game: tuple[str, ...] = ()

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(self.rows[0]) if self.rows else ()


@dataclass(frozen=True)
class Append:
    """Everything one write stores, decided before the first statement is sent.

    ``game`` holds the new values of the game's row by column: a column a write moves is
    one more entry here (both databases' statements are built from its keys). ``old_seq``
    and ``epoch`` are where the writer found the game: the append stores nothing unless
    the game is still there.
    """

    game_id: str
    command_id: str
    command: dict[str, Any]
    old_seq: int
    epoch: int
    at: datetime
    rows: list[dict[str, Any]]
    snapshot: dict[str, Any]
    game: dict[str, Any]
    anchor: dict[str, Any] | None
    riders: tuple[Rider, ...] = ()
    #: the clock the game's row stores (``game["clock"]`` is its document), for riders
    clock: Clock | None = None

    @property
    def first_seq(self) -> int:
        return self.old_seq + 1

    @property
    def last_seq(self) -> int:
        return self.old_seq + len(self.rows)


# -- reading the head ------------------------------------------------------------------------
#: PostgreSQL, after a lost race: lock first, then read. Under READ COMMITTED a statement
#: that waited for the lock sees the winner's new games row but not its other rows, so
#: the head is read by a second statement, after the lock. (SQLite's BEGIN IMMEDIATE is
#: the lock.)
LOCK_GAME = select(GameRow.last_seq).where(GameRow.id == bindparam("b_game")).with_for_update()

#: The game's head in one statement: no row when there is no game; ``projection_seq`` or
#: ``head_hash`` NULL when its projection or head row is missing.
READ_HEAD = (
    select(
        GameRow.last_seq,
        GameRow.epoch,
        GameRow.clock,
        ProjectionRow.seq.label("projection_seq"),
        ProjectionRow.snapshot,
        EventRow.hash.label("head_hash"),
        CommandRow.command.label("seen_command"),
        CommandRow.first_seq.label("seen_first"),
        CommandRow.last_seq.label("seen_last"),
        integrity.QUARANTINED.label("quarantined"),
    )
    .select_from(GameRow)
    .outerjoin(ProjectionRow, ProjectionRow.game_id == GameRow.id)
    .outerjoin(EventRow, (EventRow.game_id == GameRow.id) & (EventRow.seq == GameRow.last_seq))
    .outerjoin(
        CommandRow,
        (CommandRow.game_id == GameRow.id) & (CommandRow.command_id == bindparam("b_command")),
    )
    .where(GameRow.id == bindparam("b_game"))
)

EVENTS_OF = (
    select(EventRow)
    .where(
        EventRow.game_id == bindparam("b_game"),
        EventRow.seq.between(bindparam("b_first"), bindparam("b_last")),
    )
    .order_by(EventRow.seq)
)


def read_head(conn: Connection, game_id: str, command_id: str, *, lock: bool = False) -> Any:
    """The game's head (:data:`READ_HEAD`'s row; ``None``: no such game); ``lock``: under
    the game's row lock, held until the transaction ends."""
    if conn.dialect.name != "postgresql":
        params = {"b_game": game_id, "b_command": command_id}
        return conn.execute(READ_HEAD, params).first()
    return head_of(_on_driver(conn, pg_read(game_id, command_id, lock=lock)))


def pg_read(game_id: str, command_id: str, *, lock: bool) -> list[tuple[str, dict[str, Any]]]:
    """PostgreSQL's statements of a head's read: with ``lock``, the lock and the read,
    sent as one pipeline (the read is queued behind the lock and runs once it is held)."""
    params = {"b_game": game_id, "b_command": command_id}
    read = (pg_sql(READ_HEAD), params)
    return [(pg_sql(LOCK_GAME), params), read] if lock else [read]


def head_of(rows: Sequence[Any]) -> Any:
    """The head's row from the first rows of :func:`pg_read`'s statements."""
    if len(rows) == 2 and rows[0] is None:  # no game row to lock
        return None
    return rows[-1]


def events_of(conn: Connection, game_id: str, first: int, last: int) -> list[Any]:
    """The stored rows ``first..last`` of the game (a seen command's)."""
    return conn.execute(EVENTS_OF, events_params(game_id, first, last)).all()


def events_params(game_id: str, first: int, last: int) -> dict[str, Any]:
    return {"b_game": game_id, "b_first": first, "b_last": last}


_COMPILED: dict[int, str] = {}
_PG_DIALECT = postgresql.psycopg.dialect()  # type: ignore[attr-defined]


def pg_sql(statement: ClauseElement) -> str:
    """``statement`` as psycopg's SQL text (compiled once)."""
    key = id(statement)
    if key not in _COMPILED:
        _COMPILED[key] = str(statement.compile(dialect=_PG_DIALECT))
    return _COMPILED[key]


def _on_driver(conn: Connection, statements: Sequence[tuple[str, dict[str, Any]]]) -> list[Any]:
    """The first row of each statement (``None``: no row), run by psycopg in one pipeline
    (one round trip) when there are several.

    The statements run in ``conn``'s transaction (SQLAlchemy still begins and commits
    it). Each is announced to SQLAlchemy's ``before_cursor_execute`` listeners as if it
    ran there, and a driver error goes through SQLAlchemy's own handling (wrapped as a
    ``DBAPIError``, a lost connection invalidated), so the store's errors read the same.
    """
    driver = conn.connection.driver_connection
    announce = announced(conn)
    cursors = []
    sql, params = statements[0]
    # a pipeline saves a round trip per statement after the first, and costs CPU of its
    # own (~15 µs): one statement goes without
    pipeline = driver.pipeline() if len(statements) > 1 else nullcontext()
    try:
        with pipeline:
            for sql, params in statements:
                if announce:
                    conn.dispatch.before_cursor_execute(conn, None, sql, params, None, False)
                cursor = driver.cursor(row_factory=namedtuple_row)
                cursor.execute(sql, params, prepare=True)
                cursors.append(cursor)
        return [cursor.fetchone() if cursor.description else None for cursor in cursors]
    except psycopg.Error as exc:
        conn._handle_dbapi_exception(exc, sql, params, None, None)  # raises it, wrapped
        raise


# -- writing -------------------------------------------------------------------------------
def write(conn: Connection, append: Append) -> bool:
    """Store ``append``; ``False`` (nothing stored) when the game was not where its writer
    found it, or the command id is taken."""
    if conn.dialect.name == "postgresql":
        return _write_postgresql(conn, append)
    return _write_sqlite(conn, append)


def _write_postgresql(conn: Connection, append: Append) -> bool:
    """One statement: every part hangs on ``moved``."""
    return _on_driver(conn, [pg_append(append)])[0] is not None


def pg_append(append: Append) -> tuple[str, dict[str, Any]]:
    """PostgreSQL's one statement of ``append`` and its parameters (it answers a row
    exactly when it stored)."""
    values = {f"g_{column}": _pg(value) for column, value in append.game.items()}
    params: dict[str, Any] = {
        "b_game": append.game_id,
        "b_old": append.old_seq,
        "b_epoch": append.epoch,
        "b_command_id": append.command_id,
        "b_command": _jsonb(append.command),
        "b_first": append.first_seq,
        "b_last": append.last_seq,
        "b_at": append.at,
        "b_events": _jsonb([{c: r[c] for c in _EVENT_COLUMNS} for r in append.rows]),
        "b_snapshot": _jsonb(append.snapshot),
        **values,
    }
    if append.anchor is not None:
        params.update({f"a_{c}": append.anchor[c] for c in _ANCHOR_COLUMNS})
    for number, rider in enumerate(append.riders):
        params[f"r_{number}"] = _jsonb([_json_ready(row) for row in rider.rows])
    riders = tuple(
        (rider.table, rider.columns, rider.fan_out, rider.follow, rider.from_game)
        for rider in append.riders
    )
    return _pg_statement(tuple(append.game), append.anchor is not None, riders), params


_PG_STATEMENTS: dict[tuple[Any, ...], str] = {}


def _pg_statement(
    game_columns: tuple[str, ...],
    anchored: bool,
    riders: tuple[
        tuple[Table, tuple[str, ...], FanOut | None, Follow | None, tuple[str, ...]], ...
    ],
) -> str:
    """The one statement of a write on PostgreSQL (built once per shape)."""
    key = (game_columns, anchored, riders)
    if key not in _PG_STATEMENTS:
        sets = ", ".join(f"{c} = %(g_{c})s" for c in game_columns)
        recordset = ", ".join(
            f"{c} {'jsonb' if c == 'payload' else 'int' if c == 'seq' else 'text'}"
            for c in _EVENT_COLUMNS
        )
        parts = [
            f"moved AS (UPDATE games SET {sets} "
            "WHERE id = %(b_game)s AND last_seq = %(b_old)s AND epoch = %(b_epoch)s "
            "AND NOT EXISTS (SELECT 1 FROM commands WHERE game_id = %(b_game)s "
            "AND command_id = %(b_command_id)s) "
            "AND NOT EXISTS (SELECT 1 FROM quarantines WHERE game_id = %(b_game)s "
            "AND lifted_at IS NULL) RETURNING id, round_id)",
            f"appended AS (INSERT INTO events (game_id, {', '.join(_EVENT_COLUMNS)}, "
            "created_at, command_id) "
            "SELECT moved.id, e.*, %(b_at)s, %(b_command_id)s FROM moved, "
            f"jsonb_to_recordset(%(b_events)s) AS e({recordset}))",
            "projected AS (UPDATE projections SET seq = %(b_last)s, snapshot = %(b_snapshot)s "
            "FROM moved WHERE projections.game_id = moved.id)",
            "remembered AS (INSERT INTO commands (game_id, command_id, command, first_seq, "
            "last_seq) SELECT id, %(b_command_id)s, %(b_command)s, %(b_first)s, %(b_last)s "
            "FROM moved)",
        ]
        if anchored:
            parts.append(
                f"anchored AS (INSERT INTO anchors (game_id, {', '.join(_ANCHOR_COLUMNS)}) "
                f"SELECT id, {', '.join(f'%(a_{c})s' for c in _ANCHOR_COLUMNS)} FROM moved)"
            )
        for number, (table, columns, fan_out, follow, from_game) in enumerate(riders):
            types = ", ".join(f"{c} {_pg_type(table, c)}" for c in columns)
            names = ", ".join(columns)
            values = ", ".join(
                f"coalesce(r.{c}, moved.{c})" if c in from_game else f"r.{c}" for c in columns
            )
            returning = " RETURNING *" if fan_out is not None or follow is not None else ""
            parts.append(
                f"rider_{number} AS (INSERT INTO {table.name} ({names}) SELECT {values} "
                f"FROM moved, jsonb_to_recordset(%(r_{number})s) AS r({types}){returning})"
            )
            if fan_out is not None:
                parts.append(f"fan_out_{number} AS ({fan_out.pg(f'rider_{number}')})")
            if follow is not None:
                parts += follow.pg(f"rider_{number}", number)
        _PG_STATEMENTS[key] = f"WITH {', '.join(parts)} SELECT id FROM moved"
    return _PG_STATEMENTS[key]


def _pg_type(table: Table, column: str) -> str:
    return str(table.c[column].type.compile(dialect=postgresql.dialect()))


def _json_ready(row: Mapping[str, Any]) -> dict[str, Any]:
    """A rider's row as JSON for ``jsonb_to_recordset`` (times as ISO text)."""
    return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in row.items()}


def _pg(value: Any) -> Any:
    return _jsonb(value) if isinstance(value, dict | list) else value


def _json_bytes(value: Any) -> bytes:
    """A JSONB parameter's text, by orjson (the snapshot: ~2 µs against ``json``'s ~22;
    PostgreSQL parses it into the same value). Keys that are not text become text, as
    ``json.dumps`` makes them."""
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)


def _jsonb(value: Any) -> Jsonb:
    return Jsonb(value, dumps=_json_bytes)


_GAMES = GameRow.__table__
_EVENTS: Table = EventRow.__table__  # type: ignore[assignment]
_COMMANDS: Table = CommandRow.__table__  # type: ignore[assignment]
_ANCHORS: Table = AnchorRow.__table__  # type: ignore[assignment]
_MOVE_GAME: dict[tuple[str, ...], Any] = {}
_MOVE_PROJECTION = (
    update(ProjectionRow)
    .where(ProjectionRow.game_id == bindparam("b_game"))
    .values(seq=bindparam("b_seq"), snapshot=bindparam("b_snapshot", type_=JSONDoc))
)
_SEEN = exists().where(
    CommandRow.game_id == bindparam("b_game"), CommandRow.command_id == bindparam("b_command_id")
)
_QUARANTINED = exists().where(
    QuarantineRow.game_id == bindparam("b_game"), QuarantineRow.lifted_at.is_(None)
)


def _move_game(game_columns: tuple[str, ...]) -> Any:
    """The guarded games update for these columns (built once per shape)."""
    if game_columns not in _MOVE_GAME:
        _MOVE_GAME[game_columns] = (
            update(GameRow)
            .where(
                GameRow.id == bindparam("b_game"),
                GameRow.last_seq == bindparam("b_old"),
                GameRow.epoch == bindparam("b_epoch"),
                ~_SEEN,
                ~_QUARANTINED,
            )
            .values({c: bindparam(f"g_{c}", type_=_GAMES.c[c].type) for c in game_columns})
        )
    return _MOVE_GAME[game_columns]


def _write_sqlite(conn: Connection, append: Append) -> bool:
    """The game's row first: when it did not move, nothing else is written. Each
    statement goes to ``sqlite3`` itself (``on_sqlite.py``)."""
    moved = run_statement(
        conn,
        _move_game(tuple(append.game)),
        {
            "b_game": append.game_id,
            "b_old": append.old_seq,
            "b_epoch": append.epoch,
            "b_command_id": append.command_id,
            **{f"g_{c}": v for c, v in append.game.items()},
        },
    )
    if moved.rowcount != 1:
        return False
    insert_rows(conn, _EVENTS, tuple(append.rows[0]), append.rows)
    run_statement(
        conn,
        _MOVE_PROJECTION,
        {"b_game": append.game_id, "b_seq": append.last_seq, "b_snapshot": append.snapshot},
    )
    command = {
        "game_id": append.game_id,
        "command_id": append.command_id,
        "command": append.command,
        "first_seq": append.first_seq,
        "last_seq": append.last_seq,
    }
    insert_rows(conn, _COMMANDS, tuple(command), (command,))
    if append.anchor is not None:
        insert_rows(conn, _ANCHORS, tuple(append.anchor), (append.anchor,))
    for rider in append.riders:
        if rider.rows:
            rows = _from_game(conn, append.game_id, rider)
            insert_rows(conn, rider.table, rider.columns, rows)
            if rider.fan_out is not None:
                rider.fan_out.after_insert(conn, rows)
            if rider.follow is not None:
                rider.follow.after_insert(conn, append)
    return True


def _from_game(conn: Connection, game_id: str, rider: Rider) -> Sequence[Mapping[str, Any]]:
    """SQLite: the rider's rows with its ``from_game`` columns filled from the game's row
    (PostgreSQL's statement takes them from ``moved``)."""
    if not rider.from_game:
        return rider.rows
    names = ", ".join(rider.from_game)
    game = conn.exec_driver_sql(f"SELECT {names} FROM games WHERE id = ?", (game_id,)).one()
    return tuple(
        {
            **row,
            **{c: v for c, v in zip(rider.from_game, game, strict=True) if row.get(c) is None},
        }
        for row in rider.rows
    )

"""The command path's statements: read a game's head, write what one command caused.

A command costs the database few round trips: on PostgreSQL the lock and the read in one
pipeline, one statement that writes everything (events, projection, game, command id,
anchor, notify), then the commit; on SQLite (``BEGIN IMMEDIATE`` already holds the write
lock) the read and one statement per table. On PostgreSQL the command's statements go to
psycopg itself (:func:`_on_driver`: prepared, pipelined, no SQLAlchemy execution per
call), inside SQLAlchemy's transaction, with SQLAlchemy's events and error handling.
Every write of a command hangs on the move of its game row
(``last_seq`` still the one read), so a game that moved meanwhile gets nothing written.
See "The command path" in ``docs/performance.md`` for what each step costs.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import namedtuple_row
from psycopg.types.json import Jsonb
from sqlalchemy import Connection, bindparam, insert, select, update
from sqlalchemy.sql import ClauseElement

from ..engine.events import Event
from . import integrity
from .hashing import row_hash
from .models import AnchorRow, CommandRow, EventRow, GameRow, JSONDoc, ProjectionRow

NOTIFY_CHANNEL = "charleston_events"
#: the events of a seat's pass command: their row names the step the seat answered
PASS_COMMAND_EVENTS = frozenset(
    {"pass_confirmed", "pass_changed", "pass_withdrawn", "ding_dong_given"}
)
_EVENT_COLUMNS = ("seq", "type", "seat", "step", "payload", "prev_hash", "hash")
_ANCHOR_COLUMNS = ("seq", "head_hash", "finished", "created_at", "key_id", "signature")


@dataclass(frozen=True)
class Effects:
    """Everything one accepted command writes, decided before the first write.

    ``game`` holds the new values of the game's row by column: a column the command
    moves is one more entry here (both databases' statements are built from its keys).
    """

    game_id: str
    command_id: str
    command: dict[str, Any]
    old_seq: int
    at: datetime
    rows: list[dict[str, Any]]
    snapshot: dict[str, Any]
    game: dict[str, Any]
    anchor: dict[str, Any] | None

    @property
    def first_seq(self) -> int:
        return self.old_seq + 1

    @property
    def last_seq(self) -> int:
        return self.old_seq + len(self.rows)

    @property
    def notice(self) -> str:
        """The ``pg_notify`` payload listeners wait for: ``<game_id>:<last_seq>``."""
        return f"{self.game_id}:{self.last_seq}"


def event_row(
    game_id: str,
    seq: int,
    type_: str,
    seat: str | None,
    step: str | None,
    payload: dict[str, Any],
    command_id: str | None,
    created_at: datetime,
    prev_hash: str,
) -> dict[str, Any]:
    """One events row, its hash sealing ``prev_hash``."""
    fields = {
        "game_id": game_id,
        "seq": seq,
        "type": type_,
        "seat": seat,
        "step": step,
        "payload": payload,
        "command_id": command_id,
        "created_at": created_at,
        "prev_hash": prev_hash,
    }
    return {**fields, "hash": row_hash(**fields)}


def chained_rows(
    last_seq: int,
    head_hash: str,
    game_id: str,
    command_id: str,
    items: Sequence[tuple[Event, str | None]],
    now: datetime,
) -> list[dict[str, Any]]:
    """The rows of ``items`` (each event with its step) after row ``last_seq`` whose hash
    is ``head_hash``, chained by hash."""
    prev = head_hash
    rows: list[dict[str, Any]] = []
    for offset, (ev, step) in enumerate(items, start=1):
        seat = ev.seat.value if ev.seat else None
        row = event_row(
            game_id, last_seq + offset, ev.type, seat, step, ev.payload, command_id, now, prev
        )
        prev = row["hash"]
        rows.append(row)
    return rows


# -- reading the head ------------------------------------------------------------------------
#: PostgreSQL: lock first, then read. Under READ COMMITTED a statement that waited for the
#: lock sees the winner's new games row but not its other rows, so the head is read by a
#: second statement, after the lock. (SQLite's BEGIN IMMEDIATE is the lock.)
LOCK_GAME = select(GameRow.last_seq).where(GameRow.id == bindparam("b_game")).with_for_update()

#: The game's head in one statement: no row when there is no game; ``projection_seq`` or
#: ``head_hash`` NULL when its projection or head row is missing.
READ_HEAD = (
    select(
        GameRow.last_seq,
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


def read_head(conn: Connection, game_id: str, command_id: str) -> Any:
    """The game's head under the write lock (``None``: no such game)."""
    params = {"b_game": game_id, "b_command": command_id}
    if conn.dialect.name == "postgresql":
        # one round trip: the read is queued behind the lock and runs once it is held
        locked, head = _on_driver(
            conn, [(_sql(conn, LOCK_GAME), params), (_sql(conn, READ_HEAD), params)]
        )
        return None if locked is None else head
    return conn.execute(READ_HEAD, params).first()


_COMPILED: dict[tuple[type, int], str] = {}


def _sql(conn: Connection, statement: ClauseElement) -> str:
    """``statement`` as the driver's SQL text (compiled once per dialect)."""
    key = (type(conn.dialect), id(statement))
    if key not in _COMPILED:
        _COMPILED[key] = str(statement.compile(dialect=conn.dialect))
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
    announce = conn._has_events or conn.engine._has_events
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
def write(conn: Connection, effects: Effects) -> bool:
    """Write ``effects``; ``False`` (nothing written) when the game was not at ``old_seq``."""
    if conn.dialect.name == "postgresql":
        return _write_postgresql(conn, effects)
    return _write_sqlite(conn, effects)


def _write_postgresql(conn: Connection, effects: Effects) -> bool:
    """One statement: every write hangs on ``moved``, and the notice is sent with it."""
    values = {f"g_{column}": _pg(value) for column, value in effects.game.items()}
    params: dict[str, Any] = {
        "b_game": effects.game_id,
        "b_old": effects.old_seq,
        "b_command_id": effects.command_id,
        "b_command": Jsonb(effects.command),
        "b_first": effects.first_seq,
        "b_last": effects.last_seq,
        "b_at": effects.at,
        "b_events": Jsonb([{c: r[c] for c in _EVENT_COLUMNS} for r in effects.rows]),
        "b_snapshot": Jsonb(effects.snapshot),
        "b_channel": NOTIFY_CHANNEL,
        "b_notice": effects.notice,
        **values,
    }
    if effects.anchor is not None:
        params.update({f"a_{c}": effects.anchor[c] for c in _ANCHOR_COLUMNS})
    sql = _pg_statement(tuple(effects.game), effects.anchor is not None)
    return _on_driver(conn, [(sql, params)])[0] is not None


_PG_STATEMENTS: dict[tuple[tuple[str, ...], bool], str] = {}


def _pg_statement(game_columns: tuple[str, ...], anchored: bool) -> str:
    """The one statement of a command on PostgreSQL (built once per shape)."""
    key = (game_columns, anchored)
    if key not in _PG_STATEMENTS:
        sets = ", ".join(f"{c} = %(g_{c})s" for c in game_columns)
        recordset = ", ".join(
            f"{c} {'jsonb' if c == 'payload' else 'int' if c == 'seq' else 'text'}"
            for c in _EVENT_COLUMNS
        )
        anchor = (
            f", anchor AS (INSERT INTO anchors (game_id, {', '.join(_ANCHOR_COLUMNS)}) "
            f"SELECT id, {', '.join(f'%(a_{c})s' for c in _ANCHOR_COLUMNS)} FROM moved)"
            if anchored
            else ""
        )
        _PG_STATEMENTS[key] = (
            f"WITH moved AS (UPDATE games SET {sets} "
            "WHERE id = %(b_game)s AND last_seq = %(b_old)s RETURNING id), "
            f"appended AS (INSERT INTO events (game_id, {', '.join(_EVENT_COLUMNS)}, "
            "created_at, command_id) "
            f"SELECT moved.id, e.*, %(b_at)s, %(b_command_id)s FROM moved, "
            f"jsonb_to_recordset(%(b_events)s) AS e({recordset})), "
            "projected AS (UPDATE projections SET seq = %(b_last)s, snapshot = %(b_snapshot)s "
            "FROM moved WHERE projections.game_id = moved.id), "
            "remembered AS (INSERT INTO commands (game_id, command_id, command, first_seq, "
            "last_seq) SELECT id, %(b_command_id)s, %(b_command)s, %(b_first)s, %(b_last)s "
            f"FROM moved){anchor} "
            "SELECT pg_notify(%(b_channel)s, %(b_notice)s) FROM moved"
        )
    return _PG_STATEMENTS[key]


def _pg(value: Any) -> Any:
    return Jsonb(value) if isinstance(value, dict | list) else value


_GAMES = GameRow.__table__
_MOVE_GAME: dict[tuple[str, ...], Any] = {}
_INSERT_EVENTS = insert(EventRow)
_INSERT_COMMAND = insert(CommandRow)
_INSERT_ANCHOR = insert(AnchorRow)
_MOVE_PROJECTION = (
    update(ProjectionRow)
    .where(ProjectionRow.game_id == bindparam("b_game"))
    .values(seq=bindparam("b_seq"), snapshot=bindparam("b_snapshot", type_=JSONDoc))
)


def _move_game(game_columns: tuple[str, ...]) -> Any:
    """The games update for these columns (built once per shape)."""
    if game_columns not in _MOVE_GAME:
        _MOVE_GAME[game_columns] = (
            update(GameRow)
            .where(GameRow.id == bindparam("b_game"), GameRow.last_seq == bindparam("b_old"))
            .values({c: bindparam(f"g_{c}", type_=_GAMES.c[c].type) for c in game_columns})
        )
    return _MOVE_GAME[game_columns]


def _write_sqlite(conn: Connection, effects: Effects) -> bool:
    """The game's row first: when it did not move, nothing else is written."""
    moved = conn.execute(
        _move_game(tuple(effects.game)),
        {
            "b_game": effects.game_id,
            "b_old": effects.old_seq,
            **{f"g_{c}": v for c, v in effects.game.items()},
        },
    )
    if moved.rowcount != 1:
        return False
    conn.execute(_INSERT_EVENTS, effects.rows)
    conn.execute(
        _MOVE_PROJECTION,
        {"b_game": effects.game_id, "b_seq": effects.last_seq, "b_snapshot": effects.snapshot},
    )
    conn.execute(
        _INSERT_COMMAND,
        {
            "game_id": effects.game_id,
            "command_id": effects.command_id,
            "command": effects.command,
            "first_seq": effects.first_seq,
            "last_seq": effects.last_seq,
        },
    )
    if effects.anchor is not None:
        conn.execute(_INSERT_ANCHOR, effects.anchor)
    return True

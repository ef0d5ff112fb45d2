"""SQLite statements sent to ``sqlite3`` itself, inside SQLAlchemy's transaction.

A write's statements (the game's guarded update, its event rows, projection, command id
and anchor, and the rows that ride on it: a feed entry and its webhooks' outbox rows,
``append.Rider``) cost, executed through SQLAlchemy, about a fifth of a command's CPU on
SQLite: the statement's compiled-cache lookup, its parameters processed one by one, a
result built for a statement that returns nothing. PostgreSQL's write is one statement
handed to psycopg (``append._on_driver``); here each of them is handed to ``sqlite3``
(its own prepared-statement cache): SQLAlchemy's statement compiled once
(:func:`run_statement`) or a plain ``INSERT`` (:func:`insert_rows`), each value converted
by its column type's SQLAlchemy bind processor, so the stored text is the same a
SQLAlchemy execution stores (and reads back the same).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any, cast

from sqlalchemy import Connection, Table
from sqlalchemy.sql import ClauseElement
from sqlalchemy.sql.compiler import SQLCompiler

_SQLITE_INSERTS: dict[tuple[int, tuple[str, ...]], tuple[str, list[Any]]] = {}
#: a statement (by identity; kept, so its id stays its own) compiled for SQLite: its text,
#: its parameters' names in order and their bind processors
_SQLITE_COMPILED: dict[int, tuple[ClauseElement, str, tuple[str, ...], tuple[Any, ...]]] = {}


def run_statement(conn: Connection, statement: ClauseElement, params: Mapping[str, Any]) -> Any:
    """Run SQLAlchemy's ``statement`` with ``params`` (by bind name) on ``conn``'s
    ``sqlite3`` connection, in its transaction; the ``sqlite3`` cursor (its
    ``rowcount``). Compiled once per statement, as SQLAlchemy's cache would."""
    key = id(statement)
    if key not in _SQLITE_COMPILED:
        dialect = conn.dialect
        compiled = cast(SQLCompiler, statement.compile(dialect=dialect))
        names = tuple(compiled.positiontup or ())
        processors = tuple(
            compiled.binds[name].type.dialect_impl(dialect).bind_processor(dialect)
            for name in names
        )
        _SQLITE_COMPILED[key] = (statement, str(compiled), names, processors)
    _, sql, names, processors = _SQLITE_COMPILED[key]
    values = tuple(
        params[n] if p is None else p(params[n]) for n, p in zip(names, processors, strict=True)
    )
    return on_sqlite_driver(conn, sql, [values])


def insert_rows(
    conn: Connection, table: Table, columns: tuple[str, ...], rows: Sequence[Mapping[str, Any]]
) -> None:
    """Insert ``rows`` (each with ``columns``) into ``table`` in ``conn``'s transaction: one
    statement text per table and columns, and the columns' bind processors, found once."""
    key = (id(table), columns)
    if key not in _SQLITE_INSERTS:
        marks = ", ".join("?" for _ in columns)
        sql = f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES ({marks})"
        dialect = conn.dialect
        processors = [
            table.c[c].type.dialect_impl(dialect).bind_processor(dialect) for c in columns
        ]
        _SQLITE_INSERTS[key] = (sql, processors)
    sql, processors = _SQLITE_INSERTS[key]
    values = [
        tuple(row[c] if p is None else p(row[c]) for c, p in zip(columns, processors, strict=True))
        for row in rows
    ]
    on_sqlite_driver(conn, sql, values)


def on_sqlite_driver(conn: Connection, sql: str, values: Sequence[Sequence[Any]]) -> Any:
    """Run ``sql`` once per parameter tuple of ``values`` on ``conn``'s ``sqlite3``
    connection, in its transaction (SQLAlchemy began it: ``BEGIN IMMEDIATE``); the
    ``sqlite3`` cursor.

    As ``append._on_driver`` does for psycopg: the statement is announced to SQLAlchemy's
    ``before_cursor_execute`` listeners, and a driver error goes through SQLAlchemy's
    handling (a ``DBAPIError``, typed by the store like any other)."""
    driver = conn.connection.driver_connection
    many = len(values) != 1
    params: Any = values if many else values[0]
    if announced(conn):
        conn.dispatch.before_cursor_execute(conn, None, sql, params, None, many)
    try:
        if many:
            return driver.executemany(sql, values)
        return driver.execute(sql, params)
    except sqlite3.Error as exc:
        conn._handle_dbapi_exception(exc, sql, params, None, None)  # raises it, wrapped
        raise


def announced(conn: Connection) -> bool:
    """Whether a statement sent to the driver itself must be announced to SQLAlchemy's
    ``before_cursor_execute`` listeners: only where one listens (an engine with other
    listeners, ``begin`` or ``checkout`` say, has none for statements)."""
    if conn._has_events and conn.dispatch.before_cursor_execute:  # on this connection
        return True
    return conn.engine._has_events and bool(conn.engine.dispatch.before_cursor_execute)

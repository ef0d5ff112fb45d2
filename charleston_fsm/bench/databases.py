"""The two databases a bench run measures: a scratch SQLite file and a scratch PostgreSQL
database (created on the server ``--database-url`` names, dropped afterwards)."""

from __future__ import annotations

import sqlite3
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from ..store import GameStore
from ..store.database.urls import render, resolve_url
from .figures import DEFAULT_PG


class NoPostgres(Exception):
    """The PostgreSQL server of a bench run cannot give it a scratch database."""


@dataclass(frozen=True)
class Database:
    """One scratch database: the store's URL and a way to open the bare driver on it."""

    name: str  # "SQLite" or "PostgreSQL"
    url: str

    @property
    def is_postgres(self) -> bool:
        return self.name == "PostgreSQL"

    @property
    def libpq(self) -> str:
        """The PostgreSQL database as a libpq URL (for psycopg and pgbench)."""
        return render(resolve_url(self.url).set(drivername="postgresql"))

    def connect(self) -> Any:
        """A bare driver connection (psycopg or sqlite3), the floor's own path."""
        if self.is_postgres:
            return psycopg.connect(self.libpq)
        path = resolve_url(self.url).database
        conn = sqlite3.connect(path, timeout=30, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        return conn

    def store(self) -> GameStore:
        return GameStore(self.url)


@contextmanager
def sqlite_database() -> Iterator[Database]:
    with tempfile.TemporaryDirectory(prefix="charleston-bench-") as tmp:
        database = Database("SQLite", f"sqlite:///{Path(tmp) / 'bench.sqlite3'}")
        _migrate(database)
        yield database


@contextmanager
def postgres_database(admin_url: str = DEFAULT_PG) -> Iterator[Database]:
    """A scratch database on the server of ``admin_url`` (:class:`NoPostgres` when it
    cannot be created there)."""
    admin = render(resolve_url(admin_url).set(drivername="postgresql"))
    name = f"charleston_bench_{uuid.uuid4().hex[:8]}"
    try:
        with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
    except psycopg.Error as exc:
        shown = resolve_url(admin_url).render_as_string(hide_password=True)
        raise NoPostgres(
            f"Cannot create a scratch database on {shown}: {str(exc).strip()}. Start "
            "PostgreSQL, name another server with --database-url, or pass --sqlite-only."
        ) from None
    try:
        database = Database("PostgreSQL", render(resolve_url(admin_url).set(database=name)))
        _migrate(database)
        yield database
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _migrate(database: Database) -> None:
    store = database.store()
    try:
        store.core.upgrade()
    finally:
        store.dispose()

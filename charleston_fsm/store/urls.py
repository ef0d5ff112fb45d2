"""Which database: an explicit URL, ``$CHARLESTON_DATABASE_URL``, or a SQLite file."""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy.engine import URL, make_url

ENV_VAR = "CHARLESTON_DATABASE_URL"
DEFAULT_URL = "sqlite:///var/charleston.sqlite3"


def resolve_url(url: str | URL | None = None) -> URL:
    """The SQLAlchemy URL to use; plain ``postgresql://`` URLs get the psycopg 3 driver.

    A SQLite file's folder is created (the default file is relative to the working
    directory: ``var/charleston.sqlite3``).
    """
    raw = url if url is not None else os.environ.get(ENV_VAR) or DEFAULT_URL
    parsed = make_url(raw)
    if parsed.drivername in ("postgresql", "postgres", "postgresql+psycopg2"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database or ""
        if database and database != ":memory:" and not database.startswith("file:"):
            Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    return parsed


def render(url: URL) -> str:
    """The URL as a string, password included (for Alembic and child processes)."""
    return url.render_as_string(hide_password=False)

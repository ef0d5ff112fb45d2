"""Which database: an explicit URL, ``$CHARLESTON_DATABASE_URL``, or a SQLite file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sqlalchemy.engine import URL, make_url

ENV_VAR = "CHARLESTON_DATABASE_URL"
#: where the notices' ``LISTEN`` connection goes when the pool's URL is a pooler in
#: transaction mode (PgBouncer), which cannot carry ``LISTEN`` (docs/deploy.md)
LISTEN_ENV_VAR = "CHARLESTON_LISTEN_DATABASE_URL"
DEFAULT_URL = "sqlite:///var/charleston.sqlite3"
#: psycopg's own connection options given in the URL's query (libpq knows none of them,
#: so they are taken out before the URL reaches libpq): ``prepare_threshold=none``
#: turns off psycopg's server-side prepared statements, which a pooler in transaction
#: mode cannot carry (a statement prepared on one server connection is run on another)
DRIVER_OPTIONS = ("prepare_threshold",)


def resolve_url(url: str | URL | None = None) -> URL:
    """The SQLAlchemy URL to use; plain ``postgresql://`` URLs get the psycopg 3 driver.

    A SQLite file's folder is created (the default file is relative to the working
    directory: ``var/charleston.sqlite3``).
    """
    raw = url if url is not None else os.environ.get(ENV_VAR) or DEFAULT_URL
    parsed = make_url(raw)
    if parsed.drivername in ("postgresql", "postgres", "postgresql+psycopg2"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    if parsed.get_backend_name() == "postgresql":
        parsed = _hosts(parsed)
        driver_options(parsed)  # a wrong value is refused here, before any connection
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database or ""
        if database and database != ":memory:" and not database.startswith("file:"):
            Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    return parsed


def render(url: URL) -> str:
    """The URL as a string, password included (for Alembic and child processes)."""
    return url.render_as_string(hide_password=False)


def _hosts(url: URL) -> URL:
    """A multi-host URL in the form SQLAlchemy reads (one ``host=HOST:PORT`` each).

    libpq's own forms are taken too: ``host=a:5432,b:5432`` and ``host=a,b&port=5432,5433``
    (what an operator copies from a libpq connection string). With
    ``target_session_attrs=read-write`` libpq tries the hosts in order and keeps the one
    that accepts writes: after a failover, the new primary."""
    hosts = url.query.get("host")
    if not isinstance(hosts, str) or "," not in hosts:
        return url
    names = hosts.split(",")
    ports = url.query.get("port")
    given = ports.split(",") if isinstance(ports, str) and ports else []
    if given and len(given) not in (1, len(names)):
        raise ValueError(f"{len(names)} hosts but {len(given)} ports in the database URL")
    if len(given) == 1:
        given = given * len(names)
    joined = [
        f"{name}:{given[i]}" if given and ":" not in name else name for i, name in enumerate(names)
    ]
    return url.difference_update_query(["host", "port"]).update_query_dict({"host": joined})


def driver_options(url: URL) -> dict[str, Any]:
    """psycopg's options of ``url``'s query (:data:`DRIVER_OPTIONS`), as psycopg takes them."""
    given = url.query.get("prepare_threshold")
    if given is None:
        return {}
    value = given if isinstance(given, str) else given[-1]
    if value.lower() in ("none", "off", ""):
        return {"prepare_threshold": None}
    if value.isdigit():
        return {"prepare_threshold": int(value)}
    raise ValueError(
        f"prepare_threshold={value!r} in the database URL: give a whole number or 'none' "
        "(no prepared statements, for PgBouncer in transaction mode)"
    )


def without_driver_options(url: URL) -> URL:
    """``url`` without psycopg's options: what libpq is given."""
    return url.difference_update_query(DRIVER_OPTIONS)


def libpq_conninfo(url: URL) -> str:
    """A libpq connection string for a PostgreSQL URL, every host of a multi-host one
    included, as SQLAlchemy's psycopg dialect passes it (for connections made without
    the pool: the notices')."""
    from psycopg.conninfo import make_conninfo
    from sqlalchemy.dialects.postgresql.psycopg import PGDialect_psycopg

    _, params = PGDialect_psycopg().create_connect_args(
        without_driver_options(url.set(drivername="postgresql+psycopg"))
    )
    params.pop("context", None)
    return make_conninfo("", **{k: v for k, v in params.items() if v not in (None, "")})


def listen_url() -> str | None:
    """The URL of the notices' ``LISTEN`` connection, when it is not the pool's."""
    return os.environ.get(LISTEN_ENV_VAR) or None

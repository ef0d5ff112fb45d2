"""The database schema's state against this code's migrations, and what to do about it.

``current`` is the only state the store serves from. The others are told apart so that
each gets its own advice: ``empty`` (migrate it), ``outdated`` (back up, then migrate),
``newer`` (a later version of the code migrated it: run that version, never migrate
back), ``unversioned`` (tables not made by these migrations: refuse them) and
``incomplete`` (at this code's revision, but tables or columns are missing: a migration
did not finish, or someone dropped them).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Literal

from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, inspect
from sqlalchemy.engine import URL

from ..errors import SchemaNotCurrent
from .models import metadata
from .urls import render

MIGRATIONS_PACKAGE = "charleston_fsm.migrations"
VERSION_TABLE = "alembic_version"

SchemaStatus = Literal["empty", "current", "outdated", "newer", "unversioned", "incomplete"]


@cache
def migrations_dir() -> Path:
    """Where the installed package keeps Alembic's scripts (importlib, never the checkout).

    The repository's ``migrations/`` is the package ``charleston_fsm.migrations``: in an
    editable install importlib finds it at the root, in a wheel inside the package.
    """
    try:
        found = Path(str(resources.files(MIGRATIONS_PACKAGE)))
    except ModuleNotFoundError:
        found = None
    if found is None or not (found / "env.py").is_file() or not (found / "versions").is_dir():
        raise SchemaNotCurrent(
            f"The package {MIGRATIONS_PACKAGE} (Alembic's env.py and versions/) is not "
            f"installed{f' at {found}' if found else ''}: reinstall charleston-fsm from a "
            "wheel or its repository (pip install .), which ships migrations/ inside it."
        )
    return found


def alembic_config(url: URL | None = None) -> Config:
    """Alembic's configuration for the migrations shipped in the package."""
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    if url is not None:
        config.set_main_option("sqlalchemy.url", render(url).replace("%", "%%"))
    return config


@dataclass(frozen=True)
class SchemaState:
    """A state and the sentence an operator needs (the store's, the CLI's, /readyz's)."""

    status: SchemaStatus
    message: str

    @property
    def current(self) -> bool:
        return self.status == "current"


def schema_state(conn: Connection) -> SchemaState:
    """Compare the database behind ``conn`` with the migrations of this code."""
    script = ScriptDirectory.from_config(alembic_config())
    heads = set(script.get_heads())
    known = {revision.revision for revision in script.walk_revisions()}
    current = set(MigrationContext.configure(conn).get_current_heads())
    inspector = inspect(conn)
    tables = set(inspector.get_table_names()) - {VERSION_TABLE}
    if not current:
        if tables:
            return SchemaState(
                "unversioned",
                f"The database has tables ({_names(tables)}) but no {VERSION_TABLE} "
                "revision: they were not made by charleston-fsm's migrations. Use an "
                "empty database for charleston-fsm (it will not write into these tables).",
            )
        return SchemaState("empty", "The database has no tables yet: run 'charleston-fsm migrate'.")
    if current - known:
        return SchemaState(
            "newer",
            f"The database schema is at revision {_names(current)}, newer than this "
            f"version of the code (which knows up to {_names(heads)}): run the version of "
            "charleston-fsm that migrated it. Do not migrate it with this one.",
        )
    if current != heads:
        return SchemaState(
            "outdated",
            f"The database schema is at revision {_names(current)}, older than this "
            f"version of the code ({_names(heads)}): back it up, then run "
            "'charleston-fsm migrate'.",
        )
    missing = _missing(inspector, tables)
    if missing:
        return SchemaState(
            "incomplete",
            f"The database schema is marked {_names(current)} but lacks {_names(missing)}: "
            "a migration did not finish or something was dropped. Restore the database "
            "from a backup; the service does not serve from it.",
        )
    return SchemaState("current", f"The database schema is current ({_names(current)}).")


def _missing(inspector: object, tables: set[str]) -> list[str]:
    """Tables and columns of the models the database lacks."""
    missing: list[str] = []
    for table in metadata.sorted_tables:
        if table.name not in tables:
            missing.append(f"table {table.name}")
            continue
        present = {c["name"] for c in inspector.get_columns(table.name)}  # type: ignore[attr-defined]
        missing += [f"column {table.name}.{c.name}" for c in table.columns if c.name not in present]
    return missing


def _names(items: set[str] | list[str]) -> str:
    shown = sorted(items) if isinstance(items, set) else items
    return ", ".join(shown[:6]) + (f" and {len(shown) - 6} more" if len(shown) > 6 else "")

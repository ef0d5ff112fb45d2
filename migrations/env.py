"""Alembic environment: runs on a connection handed over by GameStore, or on a URL."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine, pool

from charleston_fsm.store.database.models import metadata
from charleston_fsm.store.database.urls import resolve_url

config = context.config


def run_on(connection) -> None:  # type: ignore[no-untyped-def]
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_offline() -> None:
    url = config.get_main_option("sqlalchemy.url") or resolve_url()
    context.configure(url=str(url), target_metadata=metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        run_on(connection)
        return
    url = config.get_main_option("sqlalchemy.url") or resolve_url()
    engine = create_engine(url, poolclass=pool.NullPool)
    with engine.connect() as connection:
        run_on(connection)
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()

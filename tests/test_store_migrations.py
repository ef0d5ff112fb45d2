"""Migrations: empty -> head -> base -> head on PostgreSQL, and models == migrations."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect

from charleston_fsm.store import GameStore, NewGame
from charleston_fsm.store.database.models import metadata
from charleston_fsm.store.games.bots import play_bots

TABLES = {
    "games",
    "events",
    "commands",
    "projections",
    "game_credentials",
    "anchors",
    "quarantines",
    "rounds",
    "spectator_links",
    "credential_changes",
    "organisers",
    "feed",
    "webhook_endpoints",
    "webhook_outbox",
    "webhook_attempts",
}
#: the platform's tables: one log of every game (its order is global, so it is not keyed
#: by game) and the webhooks' (keyed by endpoint); kept whole on one node, as rounds are
PLATFORM_TABLES = {"feed", "webhook_endpoints", "webhook_outbox", "webhook_attempts"}


def pending_diff(store: GameStore) -> list:
    with store.engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        return compare_metadata(context, metadata)


def tables(store: GameStore) -> set[str]:
    return set(inspect(store.engine).get_table_names()) - {"alembic_version"}


@pytest.mark.postgres
def test_upgrade_downgrade_upgrade_on_postgres(pg_empty_url: str) -> None:
    store = GameStore(pg_empty_url)
    try:
        assert store.core.schema_status() == "empty"
        assert tables(store) == set()
        store.core.upgrade()
        assert store.core.schema_status() == "current"
        assert tables(store) == TABLES
        game_id = store.registry.create_game(NewGame(seed=1))
        store.core.downgrade("base")
        assert tables(store) == set()
        assert store.core.schema_status() == "empty"
        store.core.upgrade()
        assert store.core.schema_status() == "current"
        assert store.registry.games() == []
        assert store.registry.create_game(NewGame(seed=1)) != game_id
        assert pending_diff(store) == []
    finally:
        store.dispose()


def test_upgrade_on_a_fresh_sqlite_file(tmp_path) -> None:
    store = GameStore(f"sqlite:///{tmp_path / 'sub' / 'fresh.sqlite3'}")  # folder is created
    try:
        assert store.core.schema_status() == "empty"
        store.core.upgrade()
        store.core.upgrade()  # idempotent
        assert store.core.schema_status() == "current"
        store.core.downgrade("base")
        assert tables(store) == set()
        store.core.upgrade()
        assert tables(store) == TABLES
    finally:
        store.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def own_store(request: pytest.FixtureRequest) -> Iterator[GameStore]:
    """A migrated store on a database no other test connects to: a migration's DDL waits
    for every lock on its tables, so another connection's write can deadlock with it."""
    fixture = "sqlite_url" if request.param == "sqlite" else "pg_empty_url"
    store = GameStore(request.getfixturevalue(fixture))
    try:
        store.core.upgrade()
        yield store
    finally:
        store.dispose()


def test_a_downgrade_keeps_every_game_record(own_store: GameStore) -> None:
    """Down to 0001 and up again: the games' rows stay (SQLite's batch mode would rebuild
    games, and dropping the old table with foreign keys on deleted every game's events)."""
    store = own_store
    game_id = store.registry.create_game(NewGame(seed=3))
    play_bots(store, game_id, seed=3)
    rows = len(store.reads.events(game_id))
    # the finished game's seal runs on the store's sealing thread after the commit (it
    # reads the game, then writes its anchor): a downgrade begun beside it deadlocked
    # with it on PostgreSQL (CI: the DROP INDEX on games against the seal's insert)
    store.writes.wait_for_seals()
    store.core.downgrade("0001")
    store.core.upgrade()
    assert len(store.reads.events(game_id)) == rows
    assert store.reads.table(game_id).finished


def test_models_match_migrations(store: GameStore) -> None:
    """No pending autogenerate diff: the models and the migrations describe one schema."""
    assert pending_diff(store) == []


@pytest.mark.postgres
def test_postgres_uses_jsonb_and_game_keyed_constraints(pg_store: GameStore) -> None:
    inspector = inspect(pg_store.engine)
    payload = next(c for c in inspector.get_columns("events") if c["name"] == "payload")
    assert type(payload["type"]).__name__ == "JSONB"
    for table in TABLES - PLATFORM_TABLES:
        keys = inspector.get_pk_constraint(table)["constrained_columns"]
        assert keys[0] in ("game_id", "id"), table
        for unique in inspector.get_unique_constraints(table):
            assert "game_id" in unique["column_names"], (table, unique)
    assert inspector.get_pk_constraint("events")["constrained_columns"] == ["game_id", "seq"]
    assert inspector.get_pk_constraint("commands")["constrained_columns"] == [
        "game_id",
        "command_id",
    ]


def test_default_url_and_environment(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    from charleston_fsm.store import resolve_url

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CHARLESTON_DATABASE_URL", raising=False)
    url = resolve_url()
    assert str(url) == "sqlite:///var/charleston.sqlite3"
    assert (tmp_path / "var").is_dir()
    monkeypatch.setenv("CHARLESTON_DATABASE_URL", "postgresql://u@db:5432/games")
    assert resolve_url().drivername == "postgresql+psycopg"
    assert resolve_url("postgres://u@db/x").drivername == "postgresql+psycopg"

"""Schema states on both backends: a database newer than the code, tables without
``alembic_version``, a half-migrated schema. The store names each, ``serve`` and
``migrate`` refuse them with that sentence (no traceback), and a running service's
``/readyz`` fails with it while its requests answer 503, never 500."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from alembic.script import ScriptDirectory
from api_helpers import Game, running
from sqlalchemy import text
from test_cli import cli

from charleston_fsm.store import GameStore, alembic_config

#: how each state is made from a current database, and words its message must hold
BREAKS = {
    "newer": (
        "UPDATE alembic_version SET version_num = '9999_from_a_later_release'",
        "newer than this version of the code",
    ),
    "unversioned": ("DROP TABLE alembic_version", "not made by charleston-fsm's migrations"),
    "incomplete": ("DROP TABLE projections", "lacks table projections"),
}


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def own_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A migrated database of its own (these tests break it), once per backend."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'own.sqlite3'}"
    else:
        url = request.getfixturevalue("pg_empty_url")
    with opened(url) as store:
        store.core.upgrade()
    return url


@contextmanager
def opened(url: str) -> Iterator[GameStore]:
    store = GameStore(url)
    try:
        yield store
    finally:
        store.dispose()


def run_sql(url: str, statement: str) -> None:
    with opened(url) as store, store.engine.begin() as conn:
        conn.execute(text(statement))


@pytest.mark.parametrize("state", BREAKS)
def test_the_store_names_each_state(own_url: str, state: str) -> None:
    statement, words = BREAKS[state]
    run_sql(own_url, statement)
    with opened(own_url) as store:
        schema = store.core.schema_state()
    assert schema.status == state
    assert words in schema.message


@pytest.mark.parametrize("state", BREAKS)
def test_serve_and_migrate_refuse_with_the_reason(own_url: str, state: str) -> None:
    statement, words = BREAKS[state]
    run_sql(own_url, statement)
    for command in (["serve", "--port", "1"], ["migrate"]):
        done = cli(*command, "--database-url", own_url, check=False)
        said = " ".join((done.stdout + done.stderr).split())  # the console wraps lines
        assert done.returncode == 2, said
        assert words in said, said
        assert "Traceback" not in said
    with opened(own_url) as store:
        assert store.core.schema_status() == state  # nothing was migrated


def test_an_outdated_schema_is_told_to_migrate(own_url: str) -> None:
    revisions = list(ScriptDirectory.from_config(alembic_config()).walk_revisions())
    if len(revisions) < 2:
        pytest.skip("one migration only: no revision is older than the code")
    run_sql(own_url, f"UPDATE alembic_version SET version_num = '{revisions[1].revision}'")
    done = cli("serve", "--port", "1", "--database-url", own_url, check=False)
    said = " ".join((done.stdout + done.stderr).split())
    assert done.returncode == 2 and "older than this version" in said
    assert "charleston-fsm migrate" in said


def test_readyz_fails_with_the_reason_and_requests_answer_503(own_url: str, tmp_path: Path) -> None:
    with running(own_url, tmp_path) as server, server.client() as anon:
        game = Game.create(server, seed=3)
        east = game.clients["east"]
        assert east.get(game.path()).status_code == 200  # the role is now cached

        run_sql(own_url, BREAKS["incomplete"][0])
        ready = anon.get("/readyz")
        assert ready.status_code == 503, ready.text
        assert ready.headers["content-type"] == "application/problem+json"
        assert ready.json()["code"] == "schema_incomplete"
        assert "lacks table projections" in ready.json()["detail"]
        for response in (
            east.get(game.path()),
            game.command("east", {"type": "place_tiles", "command_id": "p-1"}),
        ):
            assert response.status_code == 503, response.text
            assert response.json()["code"] == "schema_not_current"
            assert "X-Request-ID" in response.headers

        run_sql(own_url, BREAKS["newer"][0])
        ready = anon.get("/readyz")
        assert (ready.status_code, ready.json()["code"]) == (503, "schema_newer")
        game.close()


def test_an_empty_database_is_migrated_by_serve_only(tmp_path: Path) -> None:
    """``serve`` migrates an empty database; commands that only read refuse it."""
    url = f"sqlite:///{tmp_path / 'empty.sqlite3'}"
    done = cli("verify", "--database-url", url, check=False)
    assert done.returncode == 2 and "no tables yet" in done.stdout
    with running(url, tmp_path) as server:
        assert httpx.get(f"{server.base_url}/readyz").status_code == 200

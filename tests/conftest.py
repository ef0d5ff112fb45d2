"""Shared fixtures. Database fixtures live beside the store tests' needs (see below)."""

# -- database fixtures -----------------------------------------------------------------
#
#   store         a migrated GameStore, parametrized over both backends: [sqlite], [postgres]
#   db_url        the URL behind ``store`` (same parametrization), for code that opens
#                 its own GameStore (another process, the HTTP app)
#   sqlite_store  / sqlite_url    SQLite only (a fresh file in tmp_path)
#   pg_store      / pg_url        PostgreSQL only
#   pg_empty_url  a fresh PostgreSQL database with no tables (migration tests)
#   pg_admin_url  the server's admin URL (session)
#
# Every test starts from an empty, migrated database: PostgreSQL's is created (unique
# name) and migrated once per session, emptied (TRUNCATE) before each test and dropped at
# the end; SQLite's is a fresh copy of a migrated file in the test's tmp_path.
#
# PostgreSQL comes from $CHARLESTON_TEST_DATABASE_URL, else
# postgresql+psycopg://postgres@127.0.0.1:5432/postgres, used as admin to create and drop
# the databases. When no server answers, PostgreSQL tests are skipped with a warning and
# a line in the terminal summary; under CI=true they fail instead.

from __future__ import annotations

import os
import shutil
import tempfile
import time
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from sqlalchemy.engine import make_url

from charleston_fsm.store import GameStore
from charleston_fsm.store.database.urls import render, resolve_url

PG_ENV = "CHARLESTON_TEST_DATABASE_URL"
PG_DEFAULT = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
_RUN = uuid.uuid4().hex[:8]
_pg_problem: list[str] = []  # why PostgreSQL tests were skipped (for the summary)

# Anchors are signed with a key file of this test run (inherited by the CLI and serve
# processes the tests start), never the developer's own ~/.config/charleston-fsm key.
os.environ.setdefault(
    "CHARLESTON_ANCHOR_KEY_FILE",
    str(Path(tempfile.mkdtemp(prefix="charleston-anchor-")) / "anchor.key"),
)


class PostgresUnavailableWarning(UserWarning):
    """No PostgreSQL server answered: its tests were skipped."""


def _libpq(url: str) -> str:
    """A SQLAlchemy URL as a libpq connection string (psycopg.connect)."""
    return render(make_url(url).set(drivername="postgresql"))


def _with_database(url: str, name: str) -> str:
    return render(resolve_url(url).set(database=name))


def _admin(admin_url: str) -> psycopg.Connection:
    return psycopg.connect(_libpq(admin_url), autocommit=True, connect_timeout=5)


def _drop(admin_url: str, name: str) -> None:
    with _admin(admin_url) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def limited_role(admin_url: str, prefix: str, limit: int) -> Iterator[str]:
    """The URL of a throwaway role allowed ``limit`` connections, owning a throwaway
    database; both dropped after (use with ``yield from`` in a fixture)."""
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    with _admin(admin_url) as conn:
        conn.execute(f'CREATE ROLE "{name}" LOGIN CONNECTION LIMIT {int(limit)}')
        conn.execute(f'CREATE DATABASE "{name}" OWNER "{name}"')
    try:
        yield _with_database(admin_url, name).replace("postgres@", f"{name}@", 1)
    finally:
        _drop(admin_url, name)
        with _admin(admin_url) as conn:
            conn.execute(f'DROP ROLE IF EXISTS "{name}"')


@pytest.fixture(scope="session")
def pg_admin_url() -> str:
    """The PostgreSQL admin URL; skips (fails under CI=true) when no server answers."""
    url = render(resolve_url(os.environ.get(PG_ENV) or PG_DEFAULT))
    if _pg_problem:
        _unavailable(_pg_problem[0])
    try:
        with _admin(url) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        reason = f"PostgreSQL unreachable at {make_url(url)!r}: {str(exc).strip()}"
        _pg_problem.append(reason)
        _unavailable(reason)
    return url


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true: PostgreSQL tests must run)", pytrace=False)
    warnings.warn(PostgresUnavailableWarning(reason), stacklevel=2)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def _pg_database(pg_admin_url: str) -> Iterator[str]:
    """This session's database (a unique name), migrated to head once, dropped at the end."""
    name = f"charleston_test_{_RUN}"
    with _admin(pg_admin_url) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        url = _with_database(pg_admin_url, name)
        store = GameStore(url)
        store.core.upgrade()
        store.dispose()
        yield url
    finally:
        _drop(pg_admin_url, name)


_counter = iter(range(1_000_000))
_TABLES = (
    "quarantines, anchors, game_credentials, projections, commands, events, games, "
    "spectator_links, credential_changes, organisers, feed, webhook_attempts, webhook_outbox, "
    "webhook_endpoints"
)


class LeftConnectionWarning(UserWarning):
    """An earlier test left a connection open on the session's database (named by it)."""


#: how long a closing connection of an earlier test may take to leave the server
_LEAVING_SECONDS = 3.0


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Every PostgreSQL connection a test opens, its serve processes' too, is named after
    it (``PGAPPNAME``, read by libpq): one still open after it is traced to the test that
    left it (``pg_url``). Set before any fixture of the test, so a module's ``serve``
    started for its first test carries the module's name."""
    os.environ["PGAPPNAME"] = _connection_name(item.nodeid)


def _connection_name(nodeid: str) -> str:
    """``file::test`` within PostgreSQL's 63 bytes, the file first (``_left_behind``)."""
    return nodeid.rsplit("/", 1)[-1][:63]


def _left_behind(conn: psycopg.Connection, module: str) -> list[tuple[int, str, str, str]]:
    """Other clients on this database not of this test's file (a module's own ``serve``
    legitimately outlives the test that started it): pid, name, state, query."""
    rows = conn.execute(
        "SELECT pid, application_name, coalesce(state, ''), left(query, 160) "
        "FROM pg_stat_activity WHERE datname = current_database() "
        "AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
    ).fetchall()
    return [row for row in rows if not row[1].startswith(f"{module}::")]


def _without_strangers(conn: psycopg.Connection, module: str) -> None:
    """Ends the connections an earlier test left (after a moment to close by themselves)
    and warns with their names: a worker of a finished test writing into the next test's
    database once deadlocked a migration with it."""
    deadline = time.monotonic() + _LEAVING_SECONDS
    while (strangers := _left_behind(conn, module)) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid, name, state, query in strangers:
        warnings.warn(
            LeftConnectionWarning(
                f"a connection named {name!r} was still open ({state}: {query!r}); ended"
            ),
            stacklevel=2,
        )
        conn.execute("SELECT pg_terminate_backend(%s)", (pid,))


@pytest.fixture
def pg_url(_pg_database: str, request: pytest.FixtureRequest) -> str:
    """The session's migrated PostgreSQL database, emptied for this test.

    Emptying needs every connection of the previous test closed: dispose the stores you
    open yourself (the ``*store`` fixtures do). One left open is ended, with a warning
    naming the test that opened it.
    """
    module = _connection_name(request.node.nodeid).split("::", 1)[0]
    with psycopg.connect(_libpq(_pg_database), autocommit=True) as conn:
        _without_strangers(conn, module)
        conn.execute("SET lock_timeout = '20s'")
        conn.execute(f"TRUNCATE {_TABLES}")
    return _pg_database


@pytest.fixture
def pg_empty_url(pg_admin_url: str) -> Iterator[str]:
    """A fresh PostgreSQL database with no tables at all (dropped afterwards)."""
    name = f"charleston_test_{_RUN}_{next(_counter)}_empty"
    with _admin(pg_admin_url) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield _with_database(pg_admin_url, name)
    finally:
        _drop(pg_admin_url, name)


@pytest.fixture(scope="session")
def _sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sqlite-template") / "template.sqlite3"
    store = GameStore(f"sqlite:///{path}")
    store.core.upgrade()
    store.dispose()
    return path


@pytest.fixture
def sqlite_url(tmp_path: Path, _sqlite_template: Path) -> str:
    """A fresh, migrated SQLite file for this test."""
    return _copy_of(_sqlite_template, tmp_path / "charleston.sqlite3")


def _copy_of(template: Path, path: Path) -> str:
    """The URL of a copy of the migrated ``template`` at ``path``."""
    shutil.copyfile(template, path)
    return f"sqlite:///{path}"


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def module_db_url(
    request: pytest.FixtureRequest, _sqlite_template: Path, tmp_path_factory: pytest.TempPathFactory
) -> str:
    """A migrated database of each backend shared by a module's tests (for one ``serve``
    per database and module; PostgreSQL: the session's database, which ``pg_url``
    empties for the other tests, so a module's tests make games of their own)."""
    if request.param == "postgres":
        return request.getfixturevalue("_pg_database")
    return _copy_of(_sqlite_template, tmp_path_factory.mktemp("module-db") / "db.sqlite3")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest) -> str:
    """A fresh, migrated database of each backend (the URL; see ``store``)."""
    fixture = "sqlite_url" if request.param == "sqlite" else "pg_url"
    return request.getfixturevalue(fixture)


def _store(url: str) -> Iterator[GameStore]:
    store = GameStore(url)
    try:
        yield store
    finally:
        store.dispose()


@pytest.fixture
def store(db_url: str) -> Iterator[GameStore]:
    """A migrated GameStore on a fresh database, once per backend."""
    yield from _store(db_url)


@pytest.fixture
def pg_store(pg_url: str) -> Iterator[GameStore]:
    yield from _store(pg_url)


@pytest.fixture
def sqlite_store(sqlite_url: str) -> Iterator[GameStore]:
    yield from _store(sqlite_url)


# -- browser fixtures -------------------------------------------------------------------
#
#   web_browser   one Debian Chromium per module (web_helpers.browser_or_skip): Playwright's
#                 sync API holds an event loop in the thread while it runs, so a session-
#                 long browser would refuse asyncio.run() to every later test of the
#                 same process (with pytest-xdist, any file may come after a browser's)
#   web_server    one `serve` on a SQLite file for the whole session: the browser tests
#                 create their own games and rounds in it, so they share it


@pytest.fixture(scope="module")
def web_browser() -> Iterator[object]:
    from web_helpers import browser_or_skip

    yield from browser_or_skip()


@pytest.fixture(scope="session")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    from api_helpers import running

    tmp = tmp_path_factory.mktemp("web")
    with running(f"sqlite:///{tmp / 'web.sqlite3'}", tmp) as server:
        yield server


def pytest_report_header() -> str:
    """Say which form of the repetitive tests runs (tests/budget.py), so a log tells."""
    from budget import LONG

    if LONG:
        return "charleston: long forms (CHARLESTON_LONG_TESTS=1): every example and pair"
    return "charleston: bounded forms; CHARLESTON_LONG_TESTS=1 runs the long ones"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _pg_problem:
        terminalreporter.write_sep("!", "PostgreSQL tests SKIPPED", red=True, bold=True)
        terminalreporter.write_line(
            f"{_pg_problem[0]}\n-> start a server (scripts/ensure-postgres.sh) or set {PG_ENV}."
        )

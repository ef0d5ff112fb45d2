"""A PostgreSQL primary and a streaming standby for the read-replica tests, started by the
project's own script (``scripts/pg-standby.sh``): a fresh database per module on the
primary, migrated, and seen on the standby before the tests use it.

Skipped, with the script's sentence, only when no PostgreSQL server binaries are
installed; any other failure to start fails the test (under CI=true too).
"""

from __future__ import annotations

import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

from charleston_fsm.store import GameStore

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "pg-standby.sh"
NO_BINARIES = 3  # the script's exit status when PostgreSQL's server binaries are missing


@dataclass(frozen=True)
class Topology:
    primary: str  # the test database on the primary (postgresql://…)
    standby: str  # the same database on the standby

    def on_standby(self, sql: str) -> None:
        with psycopg.connect(self.standby, autocommit=True) as conn:
            conn.execute(sql)


def _script(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *args], capture_output=True, text=True, timeout=300, check=False
    )


def _on(url: str, database: str) -> str:
    return url.rsplit("/", 1)[0] + "/" + database


@contextmanager
def standby_topology() -> Iterator[Topology]:
    """The topology (started here unless it already runs, and then stopped after)."""
    was_running = _script("status").returncode == 0
    started = _script("start")
    if started.returncode == NO_BINARIES:
        pytest.skip(f"scripts/pg-standby.sh cannot start a standby: {started.stderr.strip()}")
    assert started.returncode == 0, started.stdout + started.stderr
    urls = dict(line.split(" ", 1) for line in started.stdout.splitlines() if " " in line)
    name = f"charleston_standby_{uuid.uuid4().hex[:8]}"
    admin = urls["primary"]
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    topology = Topology(_on(urls["primary"], name), _on(urls["standby"], name))
    try:
        store = GameStore(topology.primary)
        store.core.upgrade()
        store.dispose()
        _wait_for_schema(topology.standby)
        yield topology
    finally:
        with psycopg.connect(urls["standby"], autocommit=True) as conn:
            conn.execute("SELECT pg_wal_replay_resume()")  # a test that paused it failed
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if not was_running:
            _script("stop")


def _wait_for_schema(standby: str, timeout: float = 60) -> None:
    """Until the standby has replayed the migrations (the games table is there)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with psycopg.connect(standby, autocommit=True) as conn:
                if conn.execute("SELECT to_regclass('public.games')").fetchone()[0]:
                    return
        except psycopg.OperationalError:
            pass  # the database itself is not replayed yet
        assert time.monotonic() < deadline, "the standby did not replay the migrations"
        time.sleep(0.1)

"""A floor that cannot get its connections (another job holds the server's or the role's
slots) waits for them, then says so in plain lines: never a traceback (issue 30, item 5:
the bench beside a job holding 60 connections)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import conftest
import pytest

from charleston_fsm.bench import floors
from charleston_fsm.bench.databases import Database
from charleston_fsm.cli.errors import known_failure

pytestmark = pytest.mark.postgres


@pytest.fixture
def two_connection_role(pg_admin_url: str) -> Iterator[str]:
    """A throwaway role allowed 2 connections, owning a throwaway database."""
    yield from conftest.limited_role(pg_admin_url, "charleston_floor", 2)


def test_a_floor_without_connection_slots_waits_then_says_what_to_do(
    two_connection_role: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if shutil.which("pgbench") is None:
        pytest.skip("pgbench is not installed")
    monkeypatch.setattr(floors, "SLOT_WAIT_SECONDS", 2)  # the waiting, shortened
    database = Database(name="PostgreSQL", url=two_connection_role)
    with pytest.raises(floors.FloorFailed) as failed:
        floors.pgbench_rate(database, 4, 1)  # 4 clients, 2 slots: never enough
    lines = known_failure(failed.value)
    assert lines is not None and len(lines) == 2, lines
    assert "could not open its 4 connections" in lines[0] and "no slot left" in lines[0]
    assert "fewer connections are held" in lines[1]
    assert "Traceback" not in " ".join(lines)


def test_a_floor_with_its_slots_is_measured(two_connection_role: str) -> None:
    if shutil.which("pgbench") is None:
        pytest.skip("pgbench is not installed")
    database = Database(name="PostgreSQL", url=two_connection_role)
    assert floors.pgbench_rate(database, 1, 1) > 0  # one client and create_tables: 2

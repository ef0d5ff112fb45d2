"""Exactly once across processes: a round started at a set time by two ``serve``
processes starts each of its tables once, all in the same instant; a seat's token
replaced on one process, or a spectator's link revoked there, is refused by the other
within a second (each process forgets what it remembered: ``api/token_cache.py``)."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from api_helpers import Server, StreamReader, ok, running

from charleston_fsm.engine.moments import iso, parse_time

TABLES = 6


def until(condition, what: str, timeout: float = 60):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)
    return value


@pytest.mark.rule("SVC-12", "SVC-14", "SVC-16")
def test_exactly_once_and_at_once_on_two_processes(db_url: str, tmp_path: Path) -> None:
    """Both checks on one pair of processes (two starts cost more than the checks)."""
    with running(db_url, tmp_path, "a") as first, running(db_url, tmp_path, "b") as second:
        a_round_started_at_a_time_starts_each_table_once(first, second)
        a_token_replaced_on_one_is_refused_on_the_other_within_a_second(first, second)


def a_round_started_at_a_time_starts_each_table_once(first: Server, second: Server) -> None:
    start = datetime.now(UTC) + timedelta(seconds=4)
    with first.client() as client:
        created = client.post(
            "/v1/rounds",
            json={
                "table": {"seed": 60, "clock": {"confirm_pass": 60}},
                "count": TABLES,
                "start": iso(start),
            },
        )
    assert created.status_code == 201, created.text
    tables = created.json()["tables"]
    with second.client(created.json()["token"]) as room:
        listing = ok(room.get(f"/v1/rounds/{created.json()['round_id']}"))
        assert listing["counts"]["held"] == TABLES
        until(
            lambda: ok(room.get(f"/v1/rounds/{created.json()['round_id']}"))["counts"]["held"] == 0,
            "every table to start",
        )
    for table in tables:
        with second.client(table["tokens"]["director"]) as desk:
            rows = ok(desk.get(f"/v1/games/{table['game_id']}/events"))["events"]
            clock = ok(desk.get(f"/v1/games/{table['game_id']}"))["view"]["clock"]
        started = [r for r in rows if r["type"] == "game_started"]
        assert len(started) == 1, (table["table"], started)  # once, whichever process
        assert started[0]["payload"]["at"] == iso(start)  # the same instant everywhere
        assert started[0]["command_id"] == f"start:{iso(start)}"
        due = {parse_time(d["due_at"]) for d in clock["deadlines"].values()}
        assert due == {start + timedelta(seconds=60)}


def a_token_replaced_on_one_is_refused_on_the_other_within_a_second(
    first: Server, second: Server
) -> None:
    with first.client() as client:
        created = client.post("/v1/games", json={"seed": 61}).json()
    game_id, tokens = created["game_id"], created["tokens"]
    path = f"/v1/games/{game_id}"
    with second.client(tokens["south"]) as old, second.client(tokens["spectator"]) as watch:
        assert ok(old.get(path))["role"] == "south"  # remembered by the second process
        ok(watch.get(f"{path}/spectate"))
        stream = StreamReader(f"{second.base_url}{path}/stream", tokens["south"])
        try:
            with first.client(tokens["director"]) as desk:
                ok(desk.post(f"{path}/seats/south/token", json={}))
                replaced = time.monotonic()
                until(lambda: old.get(path).status_code == 401, "the old token refused")
                assert time.monotonic() - replaced < 1.0
                ok(desk.delete(f"{path}/spectator"))
                revoked = time.monotonic()
                until(lambda: watch.get(f"{path}/spectate").status_code == 401, "revoked")
                assert time.monotonic() - revoked < 1.0
            until(lambda: any(m[0] == "invalid_token" for m in stream.messages), "the end")
        finally:
            stream.close()

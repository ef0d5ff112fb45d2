"""Exactly once across processes: a round started at a set time by two ``serve``
processes starts each of its tables once, all in the same instant; a seat's token
replaced on one process, or a spectator's link revoked there, is refused by the other
within a second (each process forgets what it remembered: ``api/token_cache.py``).

A round's pause is one act: when the database fails on the last table's row, no table
is paused (the rows written before it go with the transaction). Seats handed to the
service's bot outlive the processes that handed them: two new processes play them, one
bot per seat, to the end."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from api_helpers import Server, StreamReader, created_ahead, ok, running
from sqlalchemy import create_engine

from charleston_fsm.engine.moments import iso, parse_time
from charleston_fsm.engine.seats import SEATS
from charleston_fsm.store.database.urls import resolve_url

TABLES = 6


def until(condition, what: str, timeout: float = 60):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)
    return value


@pytest.mark.rule("SVC-11", "SVC-12", "SVC-14", "SVC-16")
def test_exactly_once_and_at_once_on_two_processes(db_url: str, tmp_path: Path) -> None:
    """Every check on one pair of processes (two starts cost more than the checks), then
    on a second pair after both of the first have stopped."""
    with running(db_url, tmp_path, "a") as first, running(db_url, tmp_path, "b") as second:
        a_round_started_at_a_time_starts_each_table_once(first, second)
        a_token_replaced_on_one_is_refused_on_the_other_within_a_second(first, second)
        a_round_paused_while_the_database_fails_pauses_no_table(db_url, first, second)
        game = seats_handed_to_the_bot_while_held(first)
    # both processes are gone: who plays each seat is in the database alone
    with running(db_url, tmp_path, "c") as third, running(db_url, tmp_path, "d") as fourth:
        the_bot_plays_them_after_a_restart_once_per_seat(third, fourth, game)


def a_round_started_at_a_time_starts_each_table_once(first: Server, second: Server) -> None:
    created, start = created_ahead(
        first,
        "/v1/rounds",
        {"table": {"seed": 60, "clock": {"confirm_pass": 60}}, "count": TABLES},
    )
    tables = created["tables"]
    with second.client(created["token"]) as room:
        listing = ok(room.get(f"/v1/rounds/{created['round_id']}"))
        if datetime.now(UTC) < start:  # answered before the start: nothing started yet
            assert listing["counts"]["held"] == TABLES
        until(
            lambda: ok(room.get(f"/v1/rounds/{created['round_id']}"))["counts"]["held"] == 0,
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


@contextmanager
def refused_rows(url: str, game_id: str, kind: str) -> Iterator[None]:
    """The database refuses to store a ``kind`` row of ``game_id`` (a trigger raises) while
    the block runs: a real failure of the database, in the middle of a transaction."""
    engine = create_engine(resolve_url(url))
    sqlite = engine.dialect.name == "sqlite"
    when = f"NEW.game_id = '{game_id}' AND NEW.type = '{kind}'"
    try:
        with engine.begin() as conn:
            if sqlite:
                conn.exec_driver_sql(
                    f"CREATE TRIGGER refuse_row BEFORE INSERT ON events WHEN {when} "
                    "BEGIN SELECT RAISE(ABORT, 'refused by the test'); END"
                )
            else:
                conn.exec_driver_sql(
                    "CREATE FUNCTION refuse_row() RETURNS trigger LANGUAGE plpgsql AS "
                    "$$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$"
                )
                conn.exec_driver_sql(
                    f"CREATE TRIGGER refuse_row BEFORE INSERT ON events FOR EACH ROW "
                    f"WHEN ({when}) EXECUTE FUNCTION refuse_row()"
                )
        yield
    finally:
        with engine.begin() as conn:
            on = "" if sqlite else " ON events"
            conn.exec_driver_sql(f"DROP TRIGGER IF EXISTS refuse_row{on}")
            if not sqlite:
                conn.exec_driver_sql("DROP FUNCTION IF EXISTS refuse_row()")
        engine.dispose()


def a_round_paused_while_the_database_fails_pauses_no_table(
    url: str, first: Server, second: Server
) -> None:
    with first.client() as client:
        created = client.post(
            "/v1/rounds", json={"table": {"seed": 62, "clock": {"confirm_pass": 600}}, "count": 3}
        )
    assert created.status_code == 201, created.text
    round_id, token = created.json()["round_id"], created.json()["token"]
    tables = created.json()["tables"]
    # the act writes the tables in the order of their ids: the last one fails, after the
    # other two were written in the same transaction
    last = max(t["game_id"] for t in tables)
    act = f"/v1/rounds/{round_id}/pause"
    with first.client(token) as room, refused_rows(url, last, "clock_paused"):
        failed = room.post(act, json={"command_id": "pause-1"})
        assert failed.status_code in (409, 500), failed.text  # conflict (SQLite), failure (PG)
    with second.client(token) as room:
        assert ok(room.get(f"/v1/rounds/{round_id}"))["counts"]["paused"] == 0
    for table in tables:  # on both processes: none is paused, no row of the act is kept
        for server in (first, second):
            assert paused_rows(server, table) == [], table["table"]
    with first.client(token) as room:  # the same act again, the database well
        again = ok(room.post(act, json={"command_id": "pause-1"}))
    assert again["done"] == 3 and not any(t["duplicate"] for t in again["tables"])
    for table in tables:
        assert [r["payload"] for r in paused_rows(second, table)] == [{"round": round_id}]


def paused_rows(server: Server, table: dict[str, Any]) -> list[dict[str, Any]]:
    """The table's ``clock_paused`` rows, and its clock paused exactly when there is one."""
    with server.client(table["tokens"]["director"]) as desk:
        rows = ok(desk.get(f"/v1/games/{table['game_id']}/events"))["events"]
        clock = ok(desk.get(f"/v1/games/{table['game_id']}"))["view"]["clock"]
    found = [r for r in rows if r["type"] == "clock_paused"]
    assert bool(clock["paused"]) == bool(found), clock
    return found


def seats_handed_to_the_bot_while_held(server: Server) -> dict[str, Any]:
    """A held table whose four seats the director hands to the bot: nothing runs yet."""
    with server.client() as client:
        created = client.post("/v1/games", json={"seed": 63, "start": "held"})
    assert created.status_code == 201, created.text
    game = created.json()
    with server.client(game["tokens"]["director"]) as desk:
        for seat in SEATS:
            body = {"type": "hand_to_bot", "seat": seat.value, "command_id": f"bot-{seat.value}"}
            ok(desk.post(f"/v1/games/{game['game_id']}/director/commands", json=body))
        clock = ok(desk.get(f"/v1/games/{game['game_id']}"))["view"]["clock"]
    assert clock["held"] and sorted(clock["bots"]) == sorted(s.value for s in SEATS)
    return game  # type: ignore[no-any-return]


def the_bot_plays_them_after_a_restart_once_per_seat(
    third: Server, fourth: Server, game: dict[str, Any]
) -> None:
    path = f"/v1/games/{game['game_id']}"
    with third.client(game["tokens"]["director"]) as desk:
        ok(desk.post(f"{path}/director/commands", json={"type": "start_game"}))
        until(lambda: ok(desk.get(path))["view"]["game"]["finished"], "the bots to finish")
        rows = ok(desk.get(f"{path}/events"))["events"]
        verified = ok(desk.get(f"{path}/verify"))
    assert verified["ok"], verified
    # the seat_taken rows and the start came from the first pair; every pass after them
    # from the bot, each seat's once per pass (a second bot of a seat would be a second
    # confirmation of that seat in that step, or a refused command: none)
    taken = [r for r in rows if r["type"] == "seat_taken"]
    assert [(r["seat"], r["payload"]["by"]) for r in taken] == [(s.value, "bot") for s in SEATS]
    by_pass: list[Counter[str]] = [Counter()]  # each seat's confirmations, pass by pass
    for row in rows:
        if row["type"] == "pass_confirmed":
            by_pass[-1][row["seat"]] += 1
        elif row["type"] == "pass_resolved":
            by_pass.append(Counter())
    passes = [seats for seats in by_pass if seats]
    assert len(passes) >= 3 and all(set(s.values()) == {1} for s in passes), by_pass
    ids = [r["command_id"] for r in rows if r["type"] == "pass_confirmed"]
    assert len(ids) == len(set(ids))
    with fourth.client(game["tokens"]["director"]) as desk:
        assert ok(desk.get(path))["view"]["game"]["finished"]  # the other process agrees

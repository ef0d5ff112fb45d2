"""A round run as a round, over real HTTP on both databases: the start gate (held, a start
time, a round's start), round-wide pause and resume as one act, time added to a
deadline, seats handed to the bot and back or to a substitute with a new token, calls
to the director and their answers; each a row of the chain, a line of the audit, and
part of a record that verifies offline."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
from api_helpers import Game, Server, StreamReader, created_ahead, ok, running

from charleston_fsm.engine.moments import iso, parse_time
from charleston_fsm.engine.tiles import is_joker
from charleston_fsm.ledger.record_verify import verify_record


@pytest.fixture(scope="module")
def server(module_db_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One ``serve`` per database for the module (each test plays games of its own)."""
    with running(module_db_url, tmp_path_factory.mktemp("round-control")) as served:
        yield served


def direct(game: Game, body: dict[str, Any]) -> httpx.Response:
    return game.clients["director"].post(game.path("/director/commands"), json=body)


def events(game: Game, role: str = "director") -> list[dict[str, Any]]:
    return ok(game.clients[role].get(game.path("/events")))["events"]


def until(condition: Callable[[], Any], what: str, timeout: float = 30) -> Any:
    """Poll ``condition`` until it is true (a generous deadline, never a sleep)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def passable(game: Game, seat: str) -> list[int]:
    view = game.view(seat)
    return [t["id"] for t in view["rack"] if not is_joker(t["id"])][:3]


@pytest.mark.rule("SVC-12")
def test_a_held_table_takes_nothing_until_its_director_starts_it(server: Server) -> None:
    game = Game.create(server, seed=5, start="held", clock={"confirm_pass": 60})
    try:
        view = game.view("east")
        assert view["clock"]["held"] and view["allowed_commands"] == []
        assert view["rack"]  # seats see their racks
        tiles = passable(game, "east")
        refused = game.command("east", {"type": "confirm_pass", "tiles": tiles})
        assert refused.status_code == 409
        assert refused.json()["code"] == "table_not_started"
        assert refused.json()["rule"] == "SVC-12"
        assert direct(game, {"type": "pause_clock"}).json()["code"] == "clock_not_running"
        held_due = parse_time(game.view("director")["clock"]["deadlines"]["east"]["due_at"])

        started = ok(direct(game, {"type": "start_game"}))
        row = started["events"][0]
        assert row["type"] == "game_started" and not row["payload"]["scheduled"]
        at = parse_time(row["payload"]["at"])
        clock = game.view("east")["clock"]
        assert not clock["held"] and clock["started_at"] == row["payload"]["at"]
        # the deadline counts from the start, not from the creation
        assert parse_time(clock["due_at"]) == at + timedelta(seconds=60) >= held_due
        assert "confirm_pass" in game.view("east")["allowed_commands"]
        ok(game.command("east", {"type": "confirm_pass", "tiles": tiles}))
        again = direct(game, {"type": "start_game"})
        assert again.status_code == 409 and again.json()["code"] == "already_started"
    finally:
        game.close()


@pytest.mark.rule("SVC-12")
def test_a_start_time_starts_the_table_by_itself_at_that_instant(server: Server) -> None:
    created, start = created_ahead(server, "/v1/games", {"seed": 6, "clock": {"confirm_pass": 30}})
    game = Game.of(server, created)
    try:
        assert game.view("west")["clock"]["start_at"] == iso(start)
        rows = until(lambda: [e for e in events(game) if e["type"] == "game_started"], "the start")
        assert len(rows) == 1
        assert rows[0]["payload"]["at"] == iso(start) and rows[0]["payload"]["scheduled"]
        assert rows[0]["command_id"] == f"start:{iso(start)}"
        due = game.view("west")["clock"]["due_at"]
        assert parse_time(due) == start + timedelta(seconds=30)
        with server.client() as client:
            refused = client.post("/v1/games", json={"start": "2020-01-01T00:00:00Z"})
            assert refused.status_code == 422
            assert refused.json()["code"] == "start_in_the_past"
            unzoned = client.post("/v1/games", json={"start": "2030-01-01T00:00:00"})
            assert unzoned.status_code == 422 and unzoned.json()["code"] == "invalid_start"
    finally:
        game.close()


@pytest.mark.rule("SVC-11", "SVC-12")
def test_a_round_starts_pauses_and_resumes_as_one_act(server: Server) -> None:
    with server.client() as client:
        created = client.post(
            "/v1/rounds",
            json={
                "table": {"seed": 30, "clock": {"confirm_pass": 90}},
                "count": 3,
                "start": "held",
            },
        ).json()
        refused = client.post("/v1/rounds", json={"tables": [{"start": "held"}], "start": "held"})
    assert refused.status_code == 422 and "give 'start' for the round" in refused.json()["detail"]
    round_id, token = created["round_id"], created["token"]
    games = [
        Game(
            server,
            t["game_id"],
            t["tokens"],
            {r: server.client(t["tokens"][r]) for r in ("east", "director")},
        )
        for t in created["tables"]
    ]
    rc = server.client(token)
    try:
        listing = ok(rc.get(f"/v1/rounds/{round_id}"))
        assert listing["counts"]["held"] == 3
        paused = rc.post(f"/v1/rounds/{round_id}/pause")
        assert paused.status_code == 409 and paused.json()["code"] == "clock_not_running"
        # one table is started by its own director first: the round starts the others
        ok(direct(games[1], {"type": "start_game"}))
        started = ok(rc.post(f"/v1/rounds/{round_id}/start", json={"command_id": "go"}))
        assert [t["done"] for t in started["tables"]] == [True, False, True]
        assert started["tables"][1]["code"] == "already_started"
        moments = {
            next(e for e in events(g) if e["type"] == "game_started")["payload"]["at"]
            for g in (games[0], games[2])
        }
        assert moments == {started["at"]}  # one instant for every table it started
        retried = ok(rc.post(f"/v1/rounds/{round_id}/start", json={"command_id": "go"}))
        assert [t["duplicate"] for t in retried["tables"] if t["done"]] == [True, True]

        ok(rc.post(f"/v1/rounds/{round_id}/pause"))
        for game in games:
            assert game.view("east")["clock"]["paused"]
            rows = [e for e in events(game) if e["type"] == "clock_paused"]
            assert len(rows) == 1 and rows[0]["payload"] == {"round": round_id}
        assert ok(rc.get(f"/v1/rounds/{round_id}"))["counts"]["paused"] == 3
        tiles = passable(games[0], "east")
        ok(games[0].command("east", {"type": "confirm_pass", "tiles": tiles}))  # plays on
        resumed = ok(rc.post(f"/v1/rounds/{round_id}/resume"))
        assert resumed["done"] == 3
        assert not any(g.view("east")["clock"]["paused"] for g in games)
        audit = games[0].clients["director"].get(games[0].path("/audit?format=text")).text
        assert "(the whole round)" in audit
        # a seat's or a table's token opens no round act
        with server.client(games[0].tokens["director"]) as other:
            assert other.post(f"/v1/rounds/{round_id}/pause").status_code == 401
    finally:
        rc.close()
        for game in games:
            game.close()


@pytest.mark.rule("SVC-13")
def test_time_added_to_a_seat_and_to_every_awaited_seat(server: Server) -> None:
    game = Game.create(server, seed=8, clock={"confirm_pass": 40, "on_expiry": "flag_late"})
    try:
        before = parse_time(game.view("south")["clock"]["due_at"])
        added = ok(
            direct(
                game,
                {"type": "extend_time", "seat": "south", "seconds": 25, "reason": "a phone call"},
            )
        )
        row = added["events"][0]
        assert row["type"] == "time_extended" and row["seat"] == "south"
        clock = game.view("south")["clock"]
        assert parse_time(clock["due_at"]) == before + timedelta(seconds=25)
        assert clock["extended"] == {"seconds": 25.0, "reason": "a phone call"}
        assert game.view("east")["clock"]["extended"] is None  # another seat's is its own
        # the seat that confirmed is not awaited: nothing to extend for it
        ok(game.command("east", {"type": "confirm_pass", "tiles": passable(game, "east")}))
        refused = direct(game, {"type": "extend_time", "seat": "east", "seconds": 5})
        assert refused.status_code == 409 and refused.json()["code"] == "nothing_to_extend"
        everyone = ok(direct(game, {"type": "extend_time", "seconds": 10}))
        assert sorted(everyone["events"][0]["payload"]["due_at"]) == ["north", "south", "west"]
        assert game.view("south")["clock"]["extended"]["seconds"] == 35.0
        bad = direct(game, {"type": "extend_time", "seconds": "10"})
        assert bad.status_code == 422 and bad.json()["code"] == "invalid_command"
        # every seat is told (the stream carries it; the seat's own events show it)
        shown = [e for e in events(game, "west") if e["type"] == "time_extended"]
        assert shown[0]["payload"]["reason"] == "a phone call"
    finally:
        game.close()


@pytest.mark.rule("SVC-14")
def test_a_seat_handed_to_the_bot_plays_on_and_comes_back(server: Server) -> None:
    game = Game.create(server, seed=9, players={"north": "Nell"})
    try:
        handed = ok(direct(game, {"type": "hand_to_bot", "seat": "north"}))
        assert handed["events"][0]["payload"] == {
            "by": "bot",
            "label": None,
            "token_replaced": False,
        }
        # the bot plays the seat (the clock's deadline of kind bot, in whichever process)
        until(
            lambda: any(
                e["type"] == "pass_confirmed" and e["seat"] == "north" for e in events(game)
            ),
            "the bot's pass",
        )
        view = game.view("north")
        assert view["clock"]["bot"] and view["allowed_commands"] == []
        refused = game.command("north", {"type": "withdraw_pass"})
        assert refused.status_code == 409 and refused.json()["code"] == "seat_played_by_bot"
        again = direct(game, {"type": "hand_to_bot", "seat": "north"})
        assert again.json()["code"] == "seat_already_with_bot"
        ok(direct(game, {"type": "hand_back", "seat": "north", "label": "Nell again"}))
        assert not game.view("north")["clock"]["bot"]
        ok(game.command("north", {"type": "withdraw_pass"}))  # the person plays again
        assert direct(game, {"type": "hand_back", "seat": "north"}).json()["code"] == (
            "seat_not_with_bot"
        )
        audit = ok(game.clients["director"].get(game.path("/audit")))
        assert [(e["by"], e["label"]) for e in audit["seating"]["north"]] == [
            ("human", "Nell"),
            ("bot", None),
            ("human", "Nell again"),
        ]
    finally:
        game.close()


@pytest.mark.rule("SVC-14")
def test_a_substitute_gets_a_new_token_and_the_old_one_opens_nothing(server: Server) -> None:
    game = Game.create(server, seed=10)
    old = game.tokens["south"]
    reader = StreamReader(f"{server.base_url}{game.path('/stream')}", old)
    try:
        ok(game.clients["south"].get(game.path()))  # remembered by this process
        answer = ok(
            game.clients["director"].post(
                game.path("/seats/south/token"), json={"label": "substitute: R. Chen"}
            )
        )
        assert answer["link"] == f"/table/{game.game_id}#token={answer['token']}"
        assert answer["events"][0]["payload"] == {
            "by": "human",
            "label": "substitute: R. Chen",
            "token_replaced": True,
            "name": None,  # none given: the seat is named by its wind from now on
            "player_id": None,
            "deadline": "fresh",
        }
        refused = game.clients["south"].get(game.path())
        assert refused.status_code == 401 and refused.json()["code"] == "invalid_token"
        with server.client(answer["token"]) as new:
            assert ok(new.get(game.path()))["role"] == "south"
        # the old token's stream ends with one invalid_token message
        until(lambda: any(m[0] == "invalid_token" for m in reader.messages), "the stream's end")
        with server.client(game.tokens["east"]) as seat:
            refused = seat.post(game.path("/seats/east/token"), json={})
        assert refused.status_code == 403
    finally:
        reader.close()
        game.close()


@pytest.mark.rule("SVC-15")
def test_a_seat_calls_the_director_who_answers(server: Server) -> None:
    game = Game.create(server, seed=11)
    stream = StreamReader(f"{server.base_url}{game.path('/stream')}", game.tokens["east"])
    try:
        called = ok(
            game.clients["west"].post(game.path("/call"), json={"reason": "East took a tile back"})
        )
        row = called["events"][0]
        assert row["type"] == "director_called" and row["payload"] == {}  # not even the caller
        assert game.view("west")["clock"]["called_at"] == row["created_at"].replace("+00:00", "Z")
        for seat in ("east", "south", "north"):
            shown = [e for e in events(game, seat) if e["type"] == "director_called"]
            assert shown == [{**shown[0], "payload": {}}]
        whole = [e for e in events(game) if e["type"] == "director_called"]
        assert whole[0]["payload"] == {"reason": "East took a tile back"}
        assert stream.wait_for_seq(row["seq"])  # another seat's stream: the call, not why
        assert [m[2]["payload"] for m in stream.messages if m[0] == "director_called"] == [{}]
        calls = game.view("director")["clock"]["calls"]
        assert calls["west"]["reason"] == "East took a tile back"
        second = game.clients["west"].post(game.path("/call"), json={})
        assert second.status_code == 409 and second.json()["code"] == "director_already_called"
        assert game.clients["director"].post(game.path("/call"), json={}).status_code == 403
        answered = ok(
            direct(
                game,
                {
                    "type": "answer_call",
                    "seat": "west",
                    "answer": "ruling",
                    "kind": "warning",
                    "text": "East is warned",
                },
            )
        )
        assert [e["type"] for e in answered["events"]] == ["ruling_recorded", "call_answered"]
        assert answered["events"][1]["payload"]["answer"] == "ruling"
        assert game.view("west")["clock"]["called_at"] is None
        again = direct(game, {"type": "answer_call", "seat": "west", "answer": "cleared"})
        assert again.status_code == 409 and again.json()["code"] == "no_open_call"
        half = direct(game, {"type": "answer_call", "seat": "west", "answer": "ruling"})
        assert half.status_code == 422
        ok(game.clients["east"].post(game.path("/call"), json={}))
        ok(direct(game, {"type": "answer_call", "seat": "east", "answer": "cleared"}))
        audit = game.clients["director"].get(game.path("/audit?format=text")).text
        assert "West calls the director: East took a tile back" in audit
        assert "The director answers East's call: cleared" in audit
    finally:
        stream.close()
        game.close()


@pytest.mark.rule("SVC-12", "SVC-14", "SVC-15", "SVC-16")
def test_a_run_round_is_in_its_record_results_and_audit(server: Server) -> None:
    with server.client() as client:
        created = ok_created(
            client.post(
                "/v1/rounds",
                json={
                    "tables": [
                        {
                            "seed": 40,
                            "label": "A",
                            "players": {"east": "Ann"},
                            "clock": {"confirm_pass": 600},
                        }
                    ],
                    "start": "held",
                    "spectator_delay": 30,
                },
            )
        )
    table = created["tables"][0]
    assert created["links"]["spectator"].startswith(f"/watch/round/{created['round_id']}#token=")
    assert table["links"]["spectator"].startswith(f"/watch/{table['game_id']}#token=")
    game = Game(
        server,
        table["game_id"],
        table["tokens"],
        {r: server.client(t) for r, t in table["tokens"].items()},
    )
    rc = server.client(created["token"])
    try:
        ok(rc.post(f"/v1/rounds/{created['round_id']}/start"))
        ok(rc.post(f"/v1/rounds/{created['round_id']}/pause"))
        ok(rc.post(f"/v1/rounds/{created['round_id']}/resume"))
        extend = {"type": "extend_time", "seat": "south", "seconds": 30, "reason": "a spill"}
        ok(direct(game, extend))
        ok(direct(game, {"type": "hand_to_bot", "seat": "west"}))
        ok(
            game.clients["director"].post(
                game.path("/seats/east/token"), json={"label": "substitute: Bo"}
            )
        )
        ok(game.clients["north"].post(game.path("/call"), json={"reason": "why"}))
        ok(direct(game, {"type": "answer_call", "seat": "north", "answer": "cleared"}))
        ok(game.clients["director"].post(game.path("/spectator"), json={"delay": 45}))
        results = ok(rc.get(f"/v1/rounds/{created['round_id']}/results"))["tables"][0]
        assert [e["label"] for e in results["seats"]["east"]] == ["Ann", "substitute: Bo"]
        assert [e["by"] for e in results["seats"]["west"]] == ["human", "bot"]
        csv = rc.get(f"/v1/rounds/{created['round_id']}/results?format=csv").text
        assert "east: Ann, then substitute: Bo from seq" in csv
        record = game.clients["director"].get(game.path("/record")).text
        with httpx.Client(base_url=server.base_url) as anon:
            key = ok(anon.get("/v1/anchor-key"))["public_key"]
        verdict = verify_record(record, key)
        assert verdict.ok, verdict.findings
        for kind in (
            "game_started",
            "clock_paused",
            "clock_resumed",
            "time_extended",
            "seat_taken",
            "director_called",
            "call_answered",
            "spectator_link",
        ):
            assert f'"type": "{kind}"' in record or f'"type":"{kind}"' in record
        changed = record.replace('"substitute: Bo"', '"substitute: Al"', 1)
        assert not verify_record(changed, key).ok
        audit = game.clients["director"].get(game.path("/audit?format=text")).text
        for line in (
            "The table starts by the director (the whole round), at",
            "The director pauses the clock (the whole round)",
            "The director adds 30 s for South: a spill",
            "West is played by the service's bot",
            "East is played by substitute: Bo with a new token",
            "North calls the director: why",
            "The director answers North's call: cleared",
            "A spectator link is issued (delay 45 s)",
        ):
            assert line in audit, line
    finally:
        rc.close()
        game.close()


def ok_created(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 201, response.text
    return response.json()  # type: ignore[no-any-return]

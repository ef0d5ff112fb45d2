"""Stable player ids and a complete seat hand-over, over real HTTP on both databases.

A platform gives each seat its own ``player_id`` at creation; a substitute brings their
own (and their name, which is the seat's name from then on). Both are followed through
every place a platform or a person reads a seat: the views of every seat, the
director's and the spectators', the round's listing, the results (JSON and CSV), the
signed record, the audit, the feed and a real webhook receiver. A substitute sitting
down gets the step's whole time (or what was left, when the director keeps it).
"""

from __future__ import annotations

import csv
import io
import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from api_helpers import Game, Server, ok, running
from feed_helpers import Receiver, assert_no_tiles, receiver

from charleston_fsm.engine.moments import parse_time

IDS = {"east": "p-1001", "south": "p-1002", "west": "p-1003", "north": "p-1004"}
NAMES = {"east": "Ann", "south": "Bea", "west": "Cy", "north": "Di"}
JSON = {"content-type": "application/json"}
ENV = {"CHARLESTON_WEBHOOK_ALLOW": "127.0.0.1", "CHARLESTON_WEBHOOK_TIMEOUT": "5"}


@pytest.fixture(scope="module")
def hook() -> Iterator[Receiver]:
    with receiver() as got:
        yield got


@pytest.fixture(scope="module")
def server(
    module_db_url: str, tmp_path_factory: pytest.TempPathFactory, hook: Receiver
) -> Iterator[Server]:
    with running(module_db_url, tmp_path_factory.mktemp("player-ids"), env=ENV) as served:
        with served.client() as client:
            made = client.post("/v1/webhooks", json={"url": hook.url})
            assert made.status_code == 201, made.text
        yield served


def until(condition: Callable[[], Any], what: str, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def feed_of(server: Server, game_id: str) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    after = ""
    with server.client() as client:
        while True:
            page = ok(client.get("/v1/feed", params={"after": after, "limit": 500}))
            entries += page["entries"]
            if not page["entries"]:
                break
            after = page["next"]
    return [e for e in entries if e["game_id"] == game_id]


@pytest.mark.parametrize(
    ("bad", "status"),
    [
        ("", 422),
        ("p 1", 422),
        (" p1", 422),
        ("x" * 129, 422),
        ("é", 422),
        ("a\nb", 422),
        ("a\x00b", 422),
        ("\ud800", 422),
        (1042, 400),  # not text at all: a malformed body, as for every text field
        (["p"], 400),
    ],
    ids=[
        "empty",
        "space",
        "lead",
        "long",
        "non-ascii",
        "newline",
        "nul",
        "surrogate",
        "int",
        "list",
    ],
)
def test_a_player_id_is_refused_unless_plain_and_bounded(
    server: Server, bad: Any, status: int
) -> None:
    # a lone surrogate is no text at all: refused as every text field refuses one
    code = ("invalid_player_id", "invalid_text") if status == 422 else ("invalid_request",)
    with server.client() as client:
        for path, body, where in (
            ("/v1/games", {"player_ids": {"east": bad}}, "player_ids.east"),
            ("/v1/rounds", {"tables": [{"player_ids": {"south": bad}}]}, "Table 1: player_ids"),
        ):
            refused = client.post(path, content=json.dumps(body), headers=JSON)
            assert refused.status_code == status, refused.text
            problem = refused.json()
            assert problem["code"] in code and where in problem["detail"], problem
    game = Game.create(server, seed=2)
    try:
        refused = game.clients["director"].post(
            game.path("/seats/east/token"), content=json.dumps({"player_id": bad}), headers=JSON
        )
        assert refused.status_code == status, refused.text
        assert refused.json()["code"] in code and "player_id" in refused.json()["detail"]
        assert game.view("east")["seat"] == "east"  # nothing changed: the token still opens
    finally:
        game.close()
    with server.client() as client:  # the longest id is taken
        longest = {"player_ids": {"east": "x" * 128, "north": "~!p:42/AZ"}}
        assert client.post("/v1/games", json=longest).status_code == 201


def test_player_ids_and_a_substitutes_name_reach_every_reader(
    server: Server, hook: Receiver
) -> None:
    table = {"seed": 41, "players": NAMES, "player_ids": IDS, "clock": {"confirm_pass": 600}}
    with server.client() as client:
        created = client.post("/v1/rounds", json={"name": "R7", "tables": [table]})
    assert created.status_code == 201, created.text
    made = created.json()
    round_id, tokens = made["round_id"], made["tables"][0]["tokens"]
    game = Game(server, made["tables"][0]["game_id"], tokens)
    game.clients = {r: server.client(t) for r, t in tokens.items() if r != "spectator"}
    rc = server.client(made["token"])
    try:
        director = game.clients["director"]
        ruling = {"type": "record_ruling", "kind": "warning", "seat": "south", "text": "slow"}
        ok(director.post(game.path("/director/commands"), json=ruling))
        answer = ok(
            director.post(
                game.path("/seats/south/token"),
                json={"name": "Rae Chen", "player_id": "p-2002", "label": "substitute"},
            )
        )
        taken = answer["events"][0]
        assert taken["payload"] == {
            "by": "human",
            "label": "substitute",
            "token_replaced": True,
            "name": "Rae Chen",
            "player_id": "p-2002",
            "deadline": "fresh",
        }
        ok(director.post(game.path("/director/commands"), json={**ruling, "text": "again"}))
        ok(
            director.post(
                game.path("/director/commands"), json={"type": "hand_to_bot", "seat": "south"}
            )
        )
        ok(
            director.post(
                game.path("/director/commands"), json={"type": "hand_back", "seat": "south"}
            )
        )
        renamed = {**NAMES, "south": "Rae Chen"}
        # every view names the substitute; the old token opens nothing
        assert game.clients["south"].get(game.path()).status_code == 401
        with server.client(answer["token"]) as sub:
            mine = ok(sub.get(game.path()))["view"]
        assert mine["seat"] == "south" and mine["game"]["players"] == renamed
        assert game.view("east")["game"]["players"] == renamed
        assert game.view("director")["game"]["players"] == renamed
        spectator = made["tables"][0]["links"]["spectator"].split("#token=")[1]
        with server.client(spectator) as watcher:
            assert ok(watcher.get(game.path("/spectate")))["players"] == renamed
        listing = ok(rc.get(f"/v1/rounds/{round_id}"))
        assert listing["tables"][0]["players"] == renamed
        # the results: the seat's name and id now, and who sat it when
        results = ok(rc.get(f"/v1/rounds/{round_id}/results"))["tables"][0]
        assert results["players"] == renamed
        assert results["player_ids"] == {**IDS, "south": "p-2002"}
        south = results["seats"]["south"]
        assert [(e["by"], e["name"], e["player_id"]) for e in south] == [
            ("human", "Bea", "p-1002"),
            ("human", "Rae Chen", "p-2002"),
            ("bot", "Rae Chen", "p-2002"),
            ("human", "Rae Chen", "p-2002"),
        ]
        assert south[1]["seq"] == taken["seq"] and south[1]["token_replaced"]
        text = rc.get(f"/v1/rounds/{round_id}/results?format=csv").text
        row = next(csv.DictReader(io.StringIO(text)))
        assert row["players"] == "East Ann; South Rae Chen; West Cy; North Di"
        assert row["player_ids"] == "East p-1001; South p-2002; West p-1003; North p-1004"
        assert (
            f"south: Bea [p-1002], then Rae Chen [p-2002] from seq {taken['seq']}" in row["seats"]
        )
        # the signed record and the audit keep both ids
        lines = [json.loads(x) for x in director.get(game.path("/record")).text.splitlines()]
        rows = [x for x in lines if "type" in x and "payload" in x]
        first = next(x for x in rows if x["type"] == "game_created")
        assert first["payload"]["player_ids"] == IDS
        assert any(
            x["type"] == "seat_taken" and x["payload"].get("player_id") == "p-2002" for x in rows
        )
        audit = ok(director.get(game.path("/audit")))
        assert audit["player_ids"] == IDS
        assert audit["seating"]["south"][1]["player_id"] == "p-2002"
        words = director.get(game.path("/audit?format=text")).text
        assert (
            "South is played by Rae Chen (substitute) with a new token [player id p-2002]" in words
        )
        # the feed: ids on creation, beside every seat it names, the substitute's from then on
        entries = until(
            lambda: (
                (found := feed_of(server, game.game_id))
                and sum(e["type"] == "game.ruling" for e in found) == 2
                and found
            ),
            "the feed's entries",
        )
        created_entry = next(e for e in entries if e["type"] == "game.created")
        assert created_entry["data"]["player_ids"] == IDS
        rulings = [e["data"] for e in entries if e["type"] == "game.ruling"]
        assert [(r["seat"], r["player_id"]) for r in rulings] == [
            ("south", "p-1002"),
            ("south", "p-2002"),
        ]
        seat_taken = [e["data"] for e in entries if e["type"] == "game.seat_taken"]
        assert seat_taken[0] == {
            "by": "human",
            "token_replaced": True,
            "seat": "south",
            "player_id": "p-2002",
        }
        assert [d["by"] for d in seat_taken] == ["human", "bot", "human"]
        for entry in entries:
            assert_no_tiles(entry)
            assert "Rae Chen" not in json.dumps(entry)  # names stay off the feed (no change)
        # the webhooks: the same entries, ids and all, at a real receiver
        wanted = {e["id"]: e for e in entries if e["type"] in ("game.seat_taken", "game.ruling")}

        def delivered() -> dict[str, Any]:
            got = {d.entry["data"]["id"]: d.entry["data"] for d in hook.accepted()}
            return {i: got[i] for i in wanted if i in got}

        got = until(lambda: len(d := delivered()) == len(wanted) and d, "the webhooks")
        for entry_id, entry in wanted.items():
            assert got[entry_id]["data"] == entry["data"]
    finally:
        rc.close()
        game.close()


def deadline_of(game: Game, seat: str) -> dict[str, Any]:
    return game.view("director")["clock"]["deadlines"][seat]  # type: ignore[no-any-return]


def test_a_substitute_gets_the_steps_whole_time_unless_the_director_keeps_what_was_left(
    server: Server,
) -> None:
    game = Game.create(server, seed=43, clock={"confirm_pass": 600}, players=NAMES)
    try:
        director = game.clients["director"]
        before = deadline_of(game, "east")
        fresh = ok(director.post(game.path("/seats/east/token"), json={"name": "Eve"}))
        at = parse_time(fresh["events"][0]["created_at"])
        after = deadline_of(game, "east")
        assert after["seconds"] == 600
        assert parse_time(after["due_at"]) > parse_time(before["due_at"])
        assert abs((parse_time(after["due_at"]) - at).total_seconds() - 600) < 1
        kept_before = deadline_of(game, "south")
        kept = ok(
            director.post(game.path("/seats/south/token"), json={"name": "Sol", "deadline": "kept"})
        )
        assert kept["events"][0]["payload"]["deadline"] == "kept"
        assert deadline_of(game, "south")["due_at"] == kept_before["due_at"]
        refused = director.post(game.path("/seats/west/token"), json={"deadline": "later"})
        assert refused.status_code == 400 and "'fresh' or 'kept'" in refused.json()["detail"]
        # a substitute without a name is named by the seat alone, never as the one replaced
        ok(director.post(game.path("/seats/north/token"), json={"label": "a stand-in"}))
        assert game.view("west")["game"]["players"] == {"east": "Eve", "south": "Sol", "west": "Cy"}
    finally:
        game.close()


def test_a_game_without_a_clock_keeps_its_ids_through_a_substitution(server: Server) -> None:
    game = Game.create(server, seed=44, player_ids={"west": "w-1"})
    try:
        ok(game.clients["director"].post(game.path("/seats/west/token"), json={"player_id": "w-2"}))
        ruling = {"type": "record_ruling", "kind": "note", "seat": "west", "text": "noted"}
        ok(game.clients["director"].post(game.path("/director/commands"), json=ruling))
        entries = until(
            lambda: [e for e in feed_of(server, game.game_id) if e["type"] == "game.ruling"],
            "the ruling's entry",
        )
        assert entries[0]["data"]["player_id"] == "w-2"
        clock = game.view("east")["clock"]
        assert clock is None or clock["due_at"] is None  # no clock: no deadline to show
    finally:
        game.close()

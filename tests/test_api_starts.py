"""When a table starts, over real HTTP on both databases: ``start`` read exactly as
docs/api.md says (ISO 8601 with its zone, ``now``, ``held``, and for a single game
``all_present``), anything else a 422 with a sentence and nothing created, never a 500;
a game that starts once all its players have opened their links; and the deal's seed,
which passes 2**53, given as text."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from api_helpers import Game, Server, ok, running

from charleston_fsm.engine.moments import parse_time


@pytest.fixture(scope="module")
def server(module_db_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running(module_db_url, tmp_path_factory.mktemp("starts")) as served:
        yield served


def _ahead(**delta: float) -> str:
    return (datetime.now(UTC) + timedelta(**delta)).isoformat()


#: (what is sent, the problem's code, words its detail holds)
REFUSED: list[tuple[Any, str, str]] = [
    (4102444800, "invalid_start", "Unix seconds are not taken"),
    (4102444800.5, "invalid_start", "Unix seconds are not taken"),
    ("4102444800", "invalid_start", "ISO 8601 with its zone"),
    ("2030-01-01T00:00:00", "invalid_start", "not a time with its zone"),
    ("2030-01-01", "invalid_start", "not a time with its zone"),
    ("18:00Z", "invalid_start", "not a time with its zone"),
    ("2030-W01-1T00:00Z", "invalid_start", "not a time with its zone"),
    ("tomorrow", "invalid_start", "'held'"),
    ("", "invalid_start", "'now'"),
    ("NOW", "invalid_start", "'now'"),
    (None, "invalid_start", "not text"),
    (True, "invalid_start", "not text"),
    ([], "invalid_start", "not text"),
    ({"at": "2030-01-01T00:00:00Z"}, "invalid_start", "not text"),
    ("9999-12-31T23:59:59-12:00", "invalid_start", "no time the calendar holds"),
    ("0001-01-01T00:00:00+14:00", "invalid_start", "no time the calendar holds"),
    ("2027-02-30T10:00:00Z", "invalid_start", "no time the calendar holds"),
    ("2030-01-01T25:00:00Z", "invalid_start", "no time the calendar holds"),
    ("2020-01-01T00:00:00Z", "start_in_the_past", "has passed"),
    ("x" * 5000, "invalid_start", "…"),
]


def _refused(answer: httpx.Response, code: str, words: str) -> None:
    assert answer.status_code == 422, answer.text
    assert answer.headers["content-type"].startswith("application/problem+json")
    problem = answer.json()
    assert problem["code"] == code and problem["rule"] == "SVC-12", problem
    assert words in problem["detail"], problem["detail"]
    assert len(problem["detail"]) <= 1000


@pytest.mark.rule("SVC-12")
@pytest.mark.parametrize(("start", "code", "words"), REFUSED, ids=lambda v: repr(v)[:30])
def test_a_start_that_is_not_what_the_api_takes_is_a_422_for_a_game_and_a_round(
    server: Server, start: Any, code: str, words: str
) -> None:
    with server.client() as client:
        cursor = _feed_end(client)
        _refused(client.post("/v1/games", json={"seed": 1, "start": start}), code, words)
        body = {"table": {"seed": 1}, "count": 2, "start": start}
        _refused(client.post("/v1/rounds", json=body), code, words)
        # nothing was created: the feed announces no game and no round (other tests' bots
        # may still be playing theirs)
        created = {"after": cursor, "types": ["game.created", "round.created"]}
        assert ok(client.get("/v1/feed", params=created))["entries"] == []


def _feed_end(client: httpx.Client) -> str | None:
    """The feed's cursor after its last entry."""
    cursor = None
    while True:
        page = ok(client.get("/v1/feed", params={"after": cursor} if cursor else {}))
        if not page["entries"]:
            return cursor
        cursor = page["next"]


@pytest.mark.rule("SVC-12")
def test_a_start_too_far_ahead_and_all_present_in_a_round_are_refused(server: Server) -> None:
    with server.client() as client:
        far = client.post("/v1/games", json={"start": _ahead(days=400)})
        _refused(far, "start_too_far", "more than 366 days ahead")
        round_ = client.post("/v1/rounds", json={"table": {}, "count": 1, "start": "all_present"})
        _refused(round_, "invalid_start", "'all_present' is for a single game")


@pytest.mark.rule("SVC-12")
@pytest.mark.parametrize(
    "start",
    [
        "now",
        "held",
        "all_present",
        pytest.param("in an hour, UTC", id="Z"),
        pytest.param("in an hour, +02:00", id="offset"),
        pytest.param("in 300 days, lower case", id="lower"),
    ],
)
def test_what_docs_api_md_names_is_taken(server: Server, start: str) -> None:
    at: datetime | None = None
    if start.startswith("in "):
        days = 300 if "300 days" in start else 0
        at = (datetime.now(UTC) + timedelta(days=days, hours=1)).replace(microsecond=0)
        text = at.isoformat().replace("+00:00", "Z")
        if "+02:00" in start:  # the same moment, as a clock two hours east of UTC reads it
            text = (at + timedelta(hours=2)).replace(tzinfo=None).isoformat() + "+02:00"
        if "lower" in start:
            text = text.replace("T", "t").replace("Z", "z")
        start = text
    game = Game.create(server, seed=3, bots=["south", "west", "north"], start=start)
    try:
        clock = game.view("director")["clock"]
        if at is not None:
            assert clock["held"] and parse_time(clock["start_at"]) == at
        else:
            assert clock["held"] == (start != "now")
            assert clock["awaiting"] == (["east"] if start == "all_present" else None)
    finally:
        game.close()


def _rows(game: Game, kind: str) -> list[dict[str, Any]]:
    events = ok(game.clients["director"].get(game.path("/events")))["events"]
    return [e for e in events if e["type"] == kind]


@pytest.mark.rule("SVC-12")
def test_a_game_starts_once_all_its_players_have_opened_their_links(server: Server) -> None:
    """Two people and two bots: nothing runs until both people are there; the last
    arrival starts the table, and every deadline (the bots' first look too) counts from
    that moment, however long after Create it came."""
    game = Game.create(
        server,
        seed=8,
        bots=["west", "north"],
        bot_pace=2,
        start="all_present",
        clock={"confirm_pass": 60},
    )
    try:
        east = game.view("east")
        assert east["clock"]["held"] and east["clock"]["awaiting"] == ["east", "south"]
        assert east["allowed_commands"] == []
        refused = game.command("east", {"type": "confirm_pass", "tiles": game.plain("east")})
        assert refused.status_code == 409 and refused.json()["code"] == "table_not_started"
        assert "waiting for: East, South" in refused.json()["detail"]
        # the director is no seat: it starts the table from the desk, it does not arrive
        director = game.clients["director"].post(game.path("/present"))
        assert director.status_code == 403, director.text

        first = ok(game.clients["east"].post(game.path("/present")))
        assert [e["type"] for e in first["events"]] == ["seat_arrived"]
        assert first["events"][0]["payload"] == {"waiting": ["south"]}
        assert first["view"]["clock"]["held"] and first["view"]["clock"]["awaiting"] == ["south"]
        again = ok(game.clients["east"].post(game.path("/present")))  # a page opened twice
        assert again["duplicate"] and len(_rows(game, "seat_arrived")) == 1

        before = datetime.now(UTC)
        last = ok(game.clients["south"].post(game.path("/present")))
        assert [e["type"] for e in last["events"]] == ["seat_arrived", "game_started"]
        started = last["events"][1]["payload"]
        assert started["seated"] and not started["scheduled"] and started["held_seconds"] > 0
        at = parse_time(started["at"])
        assert at >= before - timedelta(seconds=1)
        clock = game.view("director")["clock"]
        assert not clock["held"] and clock["awaiting"] is None
        assert parse_time(clock["started_at"]) == at
        for seat, deadline in clock["deadlines"].items():
            # a person's 60 s and a bot's first look (three times its pace, at least
            # half of it) run from the start, not from Create
            least = 60 if deadline["kind"] == "confirm_pass" else 3 * 2 * 0.5
            assert parse_time(deadline["due_at"]) >= at + timedelta(seconds=least), seat
        assert game.view("east")["allowed_commands"]
        late = game.clients["east"].post(game.path("/present"))
        assert late.status_code == 200 and late.json()["duplicate"]
        audit = ok(game.clients["director"].get(game.path("/audit"), params={"format": "json"}))
        assert [c["type"] for c in audit["clock"]][:3] == [
            "seat_arrived",
            "seat_arrived",
            "game_started",
        ]
        text = game.clients["director"].get(game.path("/audit"), params={"format": "text"}).text
        assert "once every player had opened their page" in text
    finally:
        game.close()


@pytest.mark.rule("SVC-12")
def test_a_seat_arriving_where_none_is_awaited_is_a_409(server: Server) -> None:
    for start in ("held", "now"):
        game = Game.create(server, seed=9, start=start)
        try:
            answer = game.clients["north"].post(game.path("/present"))
            assert answer.status_code == 409 and answer.json()["code"] == "not_awaited"
        finally:
            game.close()
    # bots on every seat: nobody to wait for, so the game starts at once
    game = Game.create(
        server, seed=10, start="all_present", bots=["east", "south", "west", "north"]
    )
    try:
        assert not game.view("director")["clock"]["held"]
    finally:
        game.close()


def test_a_seed_past_2_53_is_given_as_text_everywhere_the_api_names_it(server: Server) -> None:
    seed = 1522576437359389660  # past 2**53: a JavaScript number reads 1522576437359389700
    assert seed > 2**53 and float(seed) != seed
    game = Game.create(server, seed=str(seed))  # a page sends it as text, exactly
    try:
        created = _rows(game, "game_created")[0]
        assert created["payload"]["seed"] == str(seed)
        audit = ok(game.clients["director"].get(game.path("/audit")))
        assert audit["seed"] == str(seed)
        assert (
            f"seed {seed}"
            in game.clients["director"].get(game.path("/audit"), params={"format": "text"}).text
        )
        # the signed record keeps the number its hash covers
        record = game.clients["director"].get(game.path("/record")).text
        rows = [json.loads(line) for line in record.splitlines()]
        first = next(r for r in rows if r.get("type") == "game_created")
        assert first["payload"]["seed"] == seed
    finally:
        game.close()

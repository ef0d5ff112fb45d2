"""A whole game over real HTTP, four clients with their own tokens, on SQLite and PostgreSQL.

At every step, every seat reads everything it may read (its view, the event listing, a
replay, the stream, its command responses and refusals) and none of it may carry the id
of a tile that seat has never held. The streams must deliver every event, resolutions
included, to every subscribed seat; with two service processes on one PostgreSQL, a
command sent to process A reaches the streams served by process B.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_helpers import Game, Knowledge, StreamReader, play_over_http, running, tile_ids
from budget import backends_by

from charleston_fsm.cli.common import DEMO_SEED, DEMO_SEEDS
from charleston_fsm.engine.commands import Command
from charleston_fsm.engine.seats import SEATS
from charleston_fsm.engine.tiles import is_joker

SEAT_NAMES = [s.value for s in SEATS]
PAYLOAD_TYPES = {
    "pass_confirmed",
    "tiles_transferred",
    "pass_resolved",
    "tiles_placed",
    "vote_cast",
    "courtesy_offered",
    "courtesy_agreed",
    "state_changed",
    "charleston_ended",
}


def _director_seq(game: Game) -> tuple[dict[str, Any], int]:
    view = game.view("director")
    events = game.clients["director"].get(game.path("/events")).json()
    return view, events["last_seq"]


# nmjl with the demo's seed: two blind passes, both courtesy pairs exchange;
# house: a Second Charleston in its own order, courtesy counts chosen freely (no offers);
# four_winds: six exchanges and three Ding Dongs, then a Ready
GAMES = {"nmjl": DEMO_SEED, "house": 3, "four_winds": DEMO_SEEDS["four_winds"]}


@pytest.mark.rule("PASS-11")
@pytest.mark.parametrize(("db_url", "ruleset"), backends_by(sorted(GAMES)), indirect=["db_url"])
def test_full_game_four_clients_nothing_leaks(db_url: str, tmp_path: Path, ruleset: str) -> None:
    seed = GAMES[ruleset]
    with running(db_url, tmp_path) as server:
        game = Game.create(
            server,
            ruleset=ruleset,
            seed=seed,
            players={"east": "Ann", "south": "Bea", "west": "Cy"},
        )
        knowledge = Knowledge()
        view, seq = _director_seq(game)
        knowledge.update(view, seq)
        streams = {
            role: StreamReader(server.base_url + game.path("/stream"), game.tokens[role])
            for role in [*SEAT_NAMES, "director"]
        }
        checked: dict[str, int] = {"views": 0, "events": 0, "replays": 0, "errors": 0}
        seen_types: dict[str, set[str]] = {s: set() for s in SEAT_NAMES}

        def check(seat: str, what: str, payload: Any) -> None:
            leaked = knowledge.leaks(seat, payload)
            assert not leaked, f"{seat} saw foreign tiles {sorted(leaked)} in {what}"

        def after_command(command: Command, response: httpx.Response) -> None:
            body = response.json()
            view, seq = _director_seq(game)
            knowledge.update(view, seq)
            actor = command.seat.value
            check(actor, f"the response to {command.type}", body)
            assert body["view"]["seat"] == actor
            for seat in SEAT_NAMES:
                client = game.clients[seat]
                own = client.get(game.path())
                assert own.json()["role"] == seat
                check(seat, "its view", own.json())
                listing = client.get(game.path("/events")).json()
                check(seat, "the event listing", listing)
                assert listing["last_seq"] == seq
                seen_types[seat] |= {e["type"] for e in listing["events"]}
                assert all("hash" not in e and "prev_hash" not in e for e in listing["events"])
                replay = client.get(game.path("/replay"), params={"seq": seq})
                assert replay.status_code == 200, replay.text
                check(seat, "a replay", replay.json())
                # a refusal: four tiles of its own rack are never a valid pass
                rack = [t["id"] for t in own.json()["view"]["rack"] if not is_joker(t["id"])]
                refused = client.post(
                    game.path("/commands"),
                    json={"type": "confirm_pass", "tiles": rack[:4], "command_id": f"x{seq}"},
                )
                assert refused.status_code in (409, 422), refused.text
                assert refused.headers["content-type"] == "application/problem+json"
                check(seat, "a refusal", refused.json())
                checked["views"] += 1
                checked["events"] += 1
                checked["replays"] += 1
                checked["errors"] += 1

        given = play_over_http(game, seed, after_command=after_command)
        director = game.view("director")
        assert director["game"]["finished"], director["game"]
        full = game.clients["director"].get(game.path("/events")).json()["events"]
        last = full[-1]["seq"]
        courtesy = [
            e for e in full if e["type"] == "tiles_transferred" and "PAIR" in e["payload"]["step"]
        ]
        expected = set(PAYLOAD_TYPES)
        if ruleset == "four_winds":
            ding_dongs = [e for e in full if e["type"] == "ding_dong_requested"]
            assert len(ding_dongs) == 3
            expected -= {"vote_cast", "courtesy_offered", "courtesy_agreed"}
            expected |= {"ding_dong_requested", "ding_dong_given", "ready_declared"}
        elif ruleset == "nmjl":
            assert courtesy, "no courtesy tiles changed hands"
            assert any(e["type"] == "pass_resolved" and e["payload"]["blind"] for e in full)
            assert any(e["type"] == "courtesy_agreed" and e["payload"]["count"] for e in full)
        else:
            assert courtesy, "no courtesy tiles changed hands"
            assert any(e["payload"].get("step") == "CHARLESTON_P2_R" for e in full)
            expected -= {"courtesy_offered", "courtesy_agreed"}
        for seat in SEAT_NAMES:
            assert seen_types[seat] >= expected, expected - seen_types[seat]

        # every stream got every event, in order, redacted for its seat
        resolutions = [e["seq"] for e in full if e["type"] == "pass_resolved"]
        for role, stream in streams.items():
            assert stream.wait_for_seq(last), f"{role}'s stream stopped short: {stream.error!r}"
            got = stream.events()
            assert [e["seq"] for e in got] == list(range(1, last + 1)), role
            assert [e["seq"] for e in got if e["type"] == "pass_resolved"] == resolutions
            if role != "director":
                for event in got:
                    leaked = knowledge.leaks(role, event, at_seq=event["seq"])
                    assert not leaked, f"{role}'s stream leaked {sorted(leaked)} in {event}"
        assert any(tile_ids(e) for e in streams["director"].events())
        for stream in streams.values():
            stream.close()
        game.close()
        assert given > 30 and checked["views"] == 4 * given

    # the logs: JSON lines, the game id on every line of a request about it, no tiles
    lines = server.log_lines()
    requests = [line for line in lines if line.get("msg") == "request"]
    assert len(requests) > 8 * given
    for line in requests:
        if line["path"].startswith(f"/v1/games/{game.game_id}"):
            assert line["game_id"] == game.game_id
    refused = [line for line in lines if line.get("msg") == "refused"]
    assert len(refused) >= 4 * given  # one provoked refusal per seat per command
    assert all(line["game_id"] == game.game_id for line in refused)
    for line in lines:
        assert not tile_ids(line), line
        assert "tiles" not in line and "rack" not in line


@pytest.mark.postgres
def test_two_processes_share_one_postgres(pg_url: str, tmp_path: Path) -> None:
    """Commands go to process A; the streams are served by process B (LISTEN/NOTIFY)."""
    with running(pg_url, tmp_path, "a") as a, running(pg_url, tmp_path, "b") as b:
        game = Game.create(a, seed=11)
        streams = {
            seat: StreamReader(b.base_url + game.path("/stream"), game.tokens[seat])
            for seat in SEAT_NAMES
        }
        sent_at: dict[int, float] = {}

        def after_command(command: Command, response: httpx.Response) -> None:
            for event in response.json()["events"]:
                sent_at[event["seq"]] = time.perf_counter()

        play_over_http(game, 11, after_command=after_command)
        full = game.clients["director"].get(game.path("/events")).json()["events"]
        last = full[-1]["seq"]
        resolutions = [e["seq"] for e in full if e["type"] == "pass_resolved"]
        assert len(resolutions) >= 3
        latencies = []
        for seat, stream in streams.items():
            assert stream.wait_for_seq(last, timeout=10), f"{seat}: {stream.error!r}"
            received = {int(m[1]): m[3] for m in stream.messages if m[1]}
            assert sorted(received) == list(range(1, last + 1)), seat
            latencies += [received[s] - sent_at[s] for s in resolutions if s in sent_at]
            stream.close()
        game.close()
        # B learns of A's commands through PostgreSQL, not by polling (which is 15 s)
        assert max(latencies) < 2.0, latencies
        print(f"\ncross-process stream latency: max {max(latencies) * 1000:.1f} ms")


def test_stream_resumes_after_a_seq(sqlite_url: str, tmp_path: Path) -> None:
    with running(sqlite_url, tmp_path) as server:
        game = Game.create(server, seed=3)
        play_over_http(game, 3)
        last = game.clients["south"].get(game.path("/events")).json()["last_seq"]
        stream = StreamReader(server.base_url + game.path("/stream"), game.tokens["south"], 10)
        assert stream.wait_for_seq(last)
        assert [e["seq"] for e in stream.events()] == list(range(11, last + 1))
        stream.close()
        game.close()


@pytest.mark.postgres
def test_listener_reconnects_after_losing_its_connection(pg_url: str, tmp_path: Path) -> None:
    """Process B's LISTEN connection is killed; B reconnects and its streams catch up."""
    import psycopg
    from sqlalchemy.engine import make_url

    libpq = make_url(pg_url).set(drivername="postgresql").render_as_string(hide_password=False)
    database = make_url(pg_url).database
    with running(pg_url, tmp_path, "a") as a, running(pg_url, tmp_path, "b") as b:
        game = Game.create(a, seed=12)
        stream = StreamReader(b.base_url + game.path("/stream"), game.tokens["west"])
        with psycopg.connect(libpq, autocommit=True) as admin:
            killed = admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = %s AND query LIKE 'LISTEN%%'",
                (database,),
            ).fetchall()
        assert len(killed) == 2  # one listener per process
        rack = [t["id"] for t in game.view("west")["rack"] if not is_joker(t["id"])]
        sent = game.command("west", {"type": "confirm_pass", "tiles": rack[:3]})
        assert sent.status_code == 200
        seq = sent.json()["events"][-1]["seq"]
        assert stream.wait_for_seq(seq, timeout=10), stream.error
        deadline = time.monotonic() + 10
        while httpx.get(f"{b.base_url}/readyz").status_code != 200:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        stream.close()
        game.close()
    assert any(line.get("msg") == "listen connection lost" for line in b.log_lines())

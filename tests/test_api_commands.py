"""Commands over real HTTP: idempotent retries (body id or Idempotency-Key), races, replay."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import unquote

import pytest
from api_helpers import Game, play_over_http, running


def _count(game: Game) -> int:
    return len(game.clients["director"].get(game.path("/events")).json()["events"])


@pytest.mark.rule("SVC-06")
def test_retry_with_the_same_command_id_is_idempotent(db_url: str, tmp_path: Path) -> None:
    with running(db_url, tmp_path) as server:
        game = Game.create(server, seed=4)
        body = {"type": "confirm_pass", "tiles": game.plain("east"), "command_id": "e-1"}
        first = game.command("east", body)
        assert first.status_code == 200 and first.json()["duplicate"] is False
        stored = _count(game)
        again = game.command("east", body)
        assert again.status_code == 200, again.text
        assert again.json()["duplicate"] is True
        assert again.headers["idempotent-replayed"] == "true"
        assert again.json()["events"] == first.json()["events"]
        assert again.json()["command_id"] == "e-1"
        assert _count(game) == stored

        # the Idempotency-Key header does the same
        tiles = game.plain("south")
        header = {"Idempotency-Key": "s-1"}
        one = game.command("south", {"type": "confirm_pass", "tiles": tiles}, headers=header)
        two = game.command("south", {"type": "confirm_pass", "tiles": tiles}, headers=header)
        assert (one.json()["duplicate"], two.json()["duplicate"]) == (False, True)
        assert one.json()["events"] == two.json()["events"]

        # the same id for another command is refused; ids are scoped per seat
        other = game.command("south", {"type": "withdraw_pass", "command_id": "s-1"})
        assert other.status_code == 409 and other.json()["code"] == "command_id_conflict"
        west = game.command(
            "west", {"type": "confirm_pass", "tiles": game.plain("west"), "command_id": "e-1"}
        )
        assert west.status_code == 200 and west.json()["duplicate"] is False
        # the seat sees its own command ids in the listing, never another seat's
        listing = game.clients["west"].get(game.path("/events")).json()["events"]
        ids = {e["seq"]: e.get("command_id") for e in listing}
        assert [e.get("command_id") for e in listing if e["seat"] == "east"] == [None]
        assert "e-1" in ids.values()

        # without an id a command is still accepted, and the answer names the id the
        # service made up, so a retry with it is recognised
        body = {"type": "confirm_pass", "tiles": game.plain("north")}
        north = game.command("north", body)
        assert north.status_code == 200
        assert any(e["type"] == "pass_resolved" for e in north.json()["events"])
        made_up = north.json()["command_id"]
        assert made_up.startswith("auto-") and north.headers["Command-ID"] == made_up
        retry = game.command("north", {**body, "command_id": made_up})
        assert retry.json()["duplicate"] is True
        assert retry.json()["events"] == north.json()["events"]
        game.close()


def test_every_command_answer_names_the_command_id(db_url: str, tmp_path: Path) -> None:
    """Success, duplicate and every refusal carry the id: body ``command_id`` and the
    ``Command-ID`` header (percent-encoded); only a malformed id has none."""
    with running(db_url, tmp_path) as server:
        game = Game.create(server, seed=5)
        tiles = game.plain("east")
        refusals = {
            "wrong-count": ({"type": "confirm_pass", "tiles": tiles[:2]}, "east", 422),
            "not-now": ({"type": "vote", "choice": "stop"}, "east", 409),
            "other-seat": ({"type": "place_tiles", "seat": "south"}, "east", 403),
            "director": ({"type": "place_tiles"}, "director", 403),
        }
        for command_id, (body, role, status) in refusals.items():
            if role == "director":  # refused before its body is read: the header names it
                refused = game.command(role, body, headers={"Idempotency-Key": command_id})
            else:
                refused = game.command(role, {**body, "command_id": command_id})
            assert refused.status_code == status, refused.text
            assert refused.headers["content-type"].startswith("application/problem+json")
            assert refused.json()["command_id"] == command_id
            assert refused.headers["Command-ID"] == command_id
        # without a seat's token the body is never read (bounded input): the answer names
        # the id only when it came in the Idempotency-Key header
        with server.client("not-a-token") as stranger:
            unknown = stranger.post(
                game.path("/commands"), json={"type": "place_tiles", "command_id": "in-body"}
            )
            keyed = stranger.post(
                game.path("/commands"),
                json={"type": "place_tiles"},
                headers={"Idempotency-Key": "in-header"},
            )
        assert unknown.status_code == 401 and "command_id" not in unknown.json()
        assert "Command-ID" not in unknown.headers
        assert keyed.status_code == 401
        assert keyed.json()["command_id"] == keyed.headers["Command-ID"] == "in-header"

        odd = "ü 1%"
        first = game.command("east", {"type": "confirm_pass", "tiles": tiles, "command_id": odd})
        again = game.command("east", {"type": "confirm_pass", "tiles": tiles, "command_id": odd})
        for answer in (first, again):
            assert answer.status_code == 200, answer.text
            assert answer.json()["command_id"] == odd
            assert answer.headers["Command-ID"] == "%C3%BC%201%25"
            assert unquote(answer.headers["Command-ID"]) == odd
        assert again.json()["duplicate"] is True

        too_long = game.command("east", {"type": "place_tiles", "command_id": "x" * 101})
        assert too_long.status_code == 400 and too_long.json()["code"] == "invalid_command_id"
        assert "command_id" not in too_long.json() and "Command-ID" not in too_long.headers
        game.close()


def test_concurrent_retries_store_once(db_url: str, tmp_path: Path) -> None:
    with running(db_url, tmp_path) as server:
        game = Game.create(server, seed=9)
        body = {"type": "confirm_pass", "tiles": game.plain("west"), "command_id": "w-race"}
        before = _count(game)
        clients = [server.client(game.tokens["west"]) for _ in range(8)]
        with ThreadPoolExecutor(8) as pool:
            responses = list(pool.map(lambda c: c.post(game.path("/commands"), json=body), clients))
        for c in clients:
            c.close()
        assert [r.status_code for r in responses] == [200] * 8, [r.text for r in responses]
        assert sorted(r.json()["duplicate"] for r in responses) == [False] + [True] * 7
        assert _count(game) == before + 1
        game.close()


def test_replay_views_per_role(sqlite_url: str, tmp_path: Path) -> None:
    """Director: the whole table at seq N; a seat: its own seat view at seq N."""
    with running(sqlite_url, tmp_path) as server:
        game = Game.create(server, seed=5)
        start = game.view("south")
        play_over_http(game, 5)
        at_start = game.clients["south"].get(game.path("/replay"), params={"seq": 1}).json()
        assert at_start["role"] == "south"
        assert at_start["view"]["rack"] == start["rack"]
        assert "seats" not in at_start["view"]
        whole = game.clients["director"].get(game.path("/replay"), params={"seq": 1}).json()
        assert whole["view"]["seats"]["south"]["rack"] == start["rack"]
        final = game.clients["director"].get(game.path("/replay")).json()["view"]
        assert final == game.view("director")
        audit = game.clients["director"].get(game.path("/audit"))
        assert audit.status_code == 200 and audit.json()
        text = game.clients["director"].get(game.path("/audit"), params={"format": "text"})
        assert text.headers["content-type"].startswith("text/plain") and text.text
        verify = game.clients["director"].get(game.path("/verify")).json()
        assert verify["ok"] is True and verify["first_bad_seq"] is None
        game.close()


def test_four_seats_confirm_at_the_same_moment(db_url: str, tmp_path: Path) -> None:
    """The table's real rush: everyone confirms at once; every command lands, one resolution."""
    with running(db_url, tmp_path) as server:
        for seed in range(3):
            game = Game.create(server, seed=30 + seed)
            bodies = {
                seat: {"type": "confirm_pass", "tiles": game.plain(seat), "command_id": "p1"}
                for seat in ("east", "south", "west", "north")
            }
            with ThreadPoolExecutor(4) as pool:
                responses = list(pool.map(lambda s, g=game, b=bodies: g.command(s, b[s]), bodies))
            assert [r.status_code for r in responses] == [200] * 4, [r.text for r in responses]
            events = game.clients["director"].get(game.path("/events")).json()["events"]
            assert [e["type"] for e in events].count("pass_resolved") == 1
            assert game.view("east")["step"]["label"] == "First Charleston: pass Across"
            game.close()

"""Ruleset ``four_winds`` over real HTTP: every refusal of the exchanges and of Ding Dong,
the director closing the window, and the audit of what happened, on both backends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from api_helpers import Game, ok, running

from charleston_fsm.engine.tiles import is_joker

OTHERS = {
    "east": ["south", "west", "north"],
    "south": ["east", "west", "north"],
    "west": ["east", "south", "north"],
    "north": ["east", "south", "west"],
}


def _refused(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["code"] == code, response.text
    return response.json()


def _gifts(tiles: list[int], receivers: list[str | None]) -> dict[str, Any]:
    return {
        "type": "give_ding_dong",
        "gifts": [{"tile": t, "to": r} for t, r in zip(tiles, receivers, strict=True)],
    }


@pytest.mark.rule("FW-01", "FW-02", "PASS-10", "SVC-01")
def test_exchange_refusals_over_http(db_url: str, tmp_path: Path) -> None:
    with running(db_url, tmp_path) as server:
        with server.client() as anonymous:
            rules = ok(anonymous.get("/v1/rulesets/four_winds"))
        assert rules["options"]["round"] == {
            "type": "string",
            "default": "east",
            "choices": ["east", "south", "west", "north"],
        }
        assert [s["state"] for s in rules["steps"]][:2] == ["EXCHANGE_1_EW", "EXCHANGE_2_SN"]
        game = Game.create(server, ruleset="four_winds", seed=5)
        assert game.view("east")["step"]["to"] == "west"
        west = game.plain("west", place=True)
        _refused(
            game.command("west", {"type": "confirm_pass", "tiles": west}), 409, "exchange_turn"
        )
        east = game.plain("east", place=True)
        ok(game.command("east", {"type": "confirm_pass", "tiles": east}))
        # West never names what East gives it (the same answer as for any foreign tile)
        named = game.command("west", {"type": "confirm_pass", "tiles": [east[0], *west[:2]]})
        problem = _refused(named, 422, "responder_own_tiles_only")
        assert "face down" in problem["detail"]
        south = game.plain("south", place=True)
        _refused(
            game.command("south", {"type": "confirm_pass", "tiles": south}), 409, "seat_not_in_step"
        )
        _refused(
            game.command("west", {"type": "confirm_pass", "tiles": west[:2], "blind": 1}),
            422,
            "blind_pass_not_allowed",
        )
        _refused(game.command("east", {"type": "vote", "choice": "stop"}), 409, "not_in_ruleset")
        answer = ok(game.command("west", {"type": "confirm_pass", "tiles": west}))
        assert "EXCHANGE_2_SN" in answer["view"]["game"]["state"]
        assert sorted(t["id"] for t in game.view("west")["received"]) == sorted(east)
        game.close()


@pytest.mark.rule("FW-04", "FW-05", "FW-06", "FW-07", "FW-08")
def test_ding_dong_over_http(db_url: str, tmp_path: Path) -> None:
    with running(db_url, tmp_path) as server:
        # the East round with the Charleston only on the North round: Ding Dong at once
        game = Game.create(
            server,
            ruleset="four_winds",
            seed=8,
            options={"charleston": "last_round", "ding_dong_max": 1},
        )
        assert game.view("director")["game"]["state"] == ["DING_DONG_OPEN"]
        assert "request_ding_dong" in game.view("east")["allowed_commands"]
        _refused(
            game.command("south", {"type": "request_ding_dong"}),
            422,
            "only_east_requests_ding_dong",
        )
        answer = ok(game.command("east", {"type": "request_ding_dong"}))
        assert answer["events"][0]["type"] == "ding_dong_requested"
        east = game.plain("east", place=True)
        bad = {
            "ding_dong_to_self": ["east", "west", "north"],
            "ding_dong_to_nobody": ["south", None, "north"],
            "ding_dong_same_receiver": ["south", "south", "north"],
        }
        for code, receivers in bad.items():
            _refused(game.command("east", _gifts(east, receivers)), 422, code)
        _refused(
            game.command("east", _gifts([east[0], east[0], east[1]], OTHERS["east"])),
            422,
            "tile_named_twice",
        )
        joker = next((t["id"] for t in game.view("east")["rack"] if is_joker(t["id"])), None)
        if joker is not None:
            _refused(
                game.command("east", _gifts([joker, *east[:2]], OTHERS["east"])),
                422,
                "joker_passed",
            )
        given = {}
        for seat in OTHERS:
            given[seat] = game.plain(seat, place=True)
            ok(game.command(seat, _gifts(given[seat], OTHERS[seat])))
        # all twelve moved at once: each seat got one tile from each other seat
        for seat in OTHERS:
            got = {t["id"] for t in game.view(seat)["received"]}
            expected = {given[g][OTHERS[g].index(seat)] for g in OTHERS if g != seat}
            assert got == expected
        _refused(game.command("east", {"type": "request_ding_dong"}), 409, "ding_dong_limit")
        # the window closes only at the director's word (or a Ready)
        _refused(game.command("north", {"type": "close_ding_dong"}), 409, "director_command")
        seat_try = game.clients["north"].post(
            game.path("/director/commands"), json={"type": "close_ding_dong"}
        )
        assert seat_try.status_code == 403
        closed = game.clients["director"].post(
            game.path("/director/commands"), json={"type": "close_ding_dong", "command_id": "c1"}
        )
        body = ok(closed)
        assert body["events"][0]["type"] == "ding_dong_closed"
        assert body["view"]["game"]["finished"] is True
        again = game.clients["director"].post(
            game.path("/director/commands"), json={"type": "close_ding_dong", "command_id": "c1"}
        )
        assert ok(again)["duplicate"] is True
        _refused(game.command("east", {"type": "request_ding_dong"}), 409, "ding_dong_closed")
        audit = game.clients["director"].get(game.path("/audit"), params={"format": "text"})
        assert "East requests Ding Dong number 1" in audit.text
        assert "The director closes the Ding Dong window" in audit.text
        assert ok(game.clients["director"].get(game.path("/verify")))["ok"] is True
        game.close()


@pytest.mark.rule("FW-04", "FW-06", "FW-07")
def test_ding_dong_after_ready_disabled_and_miscounted_over_http(
    db_url: str, tmp_path: Path
) -> None:
    with running(db_url, tmp_path) as server:
        # Ding Dong only on the North round: this East round has none
        off = Game.create(server, ruleset="four_winds", seed=3, options={"ding_dong": "last_round"})
        problem = _refused(
            off.command("east", {"type": "request_ding_dong"}), 409, "ding_dong_disabled"
        )
        assert "East round" in problem["detail"]
        off.close()
        game = Game.create(server, ruleset="four_winds", seed=4, options={"charleston": "off"})
        ok(game.command("east", {"type": "request_ding_dong"}))
        two = game.plain("south", 2, place=True)
        problem = _refused(game.command("south", _gifts(two, ["east", "west"])), 422, "wrong_count")
        assert problem["rule"] == "FW-04"
        for seat in OTHERS:
            ok(game.command(seat, _gifts(game.plain(seat, place=True), OTHERS[seat])))
        answer = ok(game.command("west", {"type": "declare_ready"}))
        assert answer["events"][0]["type"] == "ready_declared"
        assert answer["view"]["game"]["finished"] is True
        problem = _refused(
            game.command("east", {"type": "request_ding_dong"}), 409, "ding_dong_after_ready"
        )
        assert "West has declared Ready" in problem["detail"]
        game.close()

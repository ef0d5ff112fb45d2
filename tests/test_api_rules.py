"""The late objection, the empty First Left and the Earthly Hand's 14 tiles, over real HTTP.

Each seat plays through its own token only, on SQLite and PostgreSQL; the director's
audit must show who objected and when.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from api_helpers import Game, ok, running

from charleston_fsm.engine.seats import SEATS

SEAT_NAMES = [s.value for s in SEATS]


def _confirm(game: Game, seat: str, count: int = 3, blind: int = 0) -> dict[str, Any]:
    tiles = game.plain(seat, count, place=True)
    return ok(game.command(seat, {"type": "confirm_pass", "tiles": tiles, "blind": blind}))


def _pass(game: Game) -> None:
    for seat in SEAT_NAMES:
        _confirm(game, seat)


def _vote_all(game: Game) -> None:
    for seat in SEAT_NAMES:
        ok(game.command(seat, {"type": "vote", "choice": "continue"}))


def _hand(game: Game, seat: str) -> list[int]:
    view = game.view(seat)
    return sorted(t["id"] for t in view["rack"] + view["received"])


def _state(game: Game) -> list[str]:
    return game.view("director")["game"]["state"]


@pytest.mark.rule("NMJL-05")
def test_late_objection_over_http(db_url: str, tmp_path: Path) -> None:
    with running(db_url, tmp_path) as server:
        game = Game.create(server, ruleset="nmjl", seed=11)
        for _ in range(3):
            _pass(game)
        _vote_all(game)
        assert _state(game) == ["CHARLESTON_P2_L"]
        _confirm(game, "south")
        assert "vote" in game.view("north")["allowed_commands"]
        answer = ok(game.command("north", {"type": "vote", "choice": "stop"}))
        late = answer["events"][0]
        assert late["type"] == "vote_cast" and late["seat"] == "north"
        assert late["payload"] == {
            "choice": "stop",
            "late": True,
            "step": "CHARLESTON_P2_L",
            "dropped": ["south"],
        }
        assert "COURTESY_PASS" in _state(game)
        assert game.view("south")["selection"] is None  # the dropped choice is gone
        audit = game.clients["director"].get(game.path("/audit"), params={"format": "text"})
        assert audit.status_code == 200
        line = next(x for x in audit.text.splitlines() if "late objection" in x)
        assert "North votes stop" in line and "CHARLESTON_P2_L" in line
        assert "dropped: South" in line
        assert f"seq {late['seq']}" in line or str(late["seq"]) in line
        game.close()


@pytest.mark.rule("NMJL-06")
def test_stop_refused_once_the_second_charleston_first_pass_resolved(
    db_url: str, tmp_path: Path
) -> None:
    with running(db_url, tmp_path) as server:
        game = Game.create(server, ruleset="nmjl", seed=12)
        for _ in range(3):
            _pass(game)
        _vote_all(game)
        _pass(game)
        assert _state(game) == ["CHARLESTON_P2_A"]
        refused = game.command("west", {"type": "vote", "choice": "stop"})
        assert refused.status_code == 409, refused.text
        problem = refused.json()
        assert problem["code"] == "second_charleston_mandatory"
        assert "mandatory" in problem["detail"]
        assert _state(game) == ["CHARLESTON_P2_A"]
        game.close()


@pytest.mark.rule("NMJL-11")
def test_empty_first_left_goes_to_the_vote_over_http(db_url: str, tmp_path: Path) -> None:
    with running(db_url, tmp_path) as server:
        game = Game.create(server, ruleset="nmjl", seed=13)
        _pass(game)
        _pass(game)
        before = {s: _hand(game, s) for s in SEAT_NAMES}
        for seat in SEAT_NAMES:
            _confirm(game, seat, count=0, blind=3)
        assert _state(game) == ["CHARLESTON_DECIDE_STOP"]
        assert {s: _hand(game, s) for s in SEAT_NAMES} == before  # nothing moved
        assert game.view("east")["game"]["finished"] is False
        assert "vote" in game.view("east")["allowed_commands"]
        game.close()


@pytest.mark.rule("NMJL-15")
def test_earthly_hand_needs_14_tiles_over_http(db_url: str, tmp_path: Path) -> None:
    with running(db_url, tmp_path) as server:
        game = Game.create(server, ruleset="house", seed=14)
        for _ in range(3):
            _pass(game)
        ok(game.command("east", {"type": "vote", "choice": "stop"}))
        _confirm(game, "east", count=2)
        _confirm(game, "west", count=0)
        _confirm(game, "south", count=1)
        _confirm(game, "north", count=1)
        east = game.view("east")
        assert east["game"]["finished"] is True
        assert east["game"]["hand_sizes"]["east"] == 12
        assert "declare_mah_jongg" not in east["allowed_commands"]
        refused = game.command("east", {"type": "declare_mah_jongg"})
        assert refused.status_code == 422, refused.text
        assert refused.json()["code"] == "earthly_hand_tile_count"
        assert "12" in refused.json()["detail"]
        game.close()

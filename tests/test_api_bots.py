"""The platform hands seats to the service's bots over HTTP; a person plays the rest."""

from __future__ import annotations

import random
import time
from pathlib import Path

from api_helpers import Game, command_body, running

from charleston_fsm.engine.bots import Bot
from charleston_fsm.engine.seats import Seat


def test_three_bots_and_one_client_finish_a_game(db_url: str, tmp_path: Path) -> None:
    with running(db_url, tmp_path) as server:
        game = Game.create(server, seed=21)
        for seat in ("south", "west", "north"):
            started = game.clients[seat].post(game.path("/bot"), params={"seed": 5})
            assert started.status_code == 202 and started.json()["started"] is True
        again = game.clients["south"].post(game.path("/bot")).json()
        assert again["started"] is False  # already playing
        refused = game.clients["director"].post(game.path("/bot"))
        assert refused.status_code == 403

        me = Bot(seat=Seat.EAST, rng=random.Random(1))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            view = game.view("east")
            command = me.decide(view)
            if command is not None:
                body = {**command_body(command), "command_id": f"me-{game.sent}"}
                game.sent += 1
                assert game.command("east", body).status_code == 200
            elif view["game"]["finished"]:
                break
            else:
                time.sleep(0.02)
        director = game.view("director")
        assert director["game"]["finished"], director["game"]
        # the bots also place what they received once the Charleston is over
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(
            game.view(s)["received"] for s in ("south", "west", "north")
        ):
            time.sleep(0.05)
        assert not any(game.view(s)["received"] for s in ("south", "west", "north"))
        stopped = game.clients["west"].delete(game.path("/bot")).json()
        assert stopped["stopped"] is False  # it had finished on its own
        game.close()
    assert any(line.get("msg") == "bot command" for line in server.log_lines())


def test_four_bots_play_alone_and_can_be_stopped(sqlite_url: str, tmp_path: Path) -> None:
    with running(sqlite_url, tmp_path) as server:
        game = Game.create(server, seed=22)
        for seat in ("east", "south", "west", "north"):
            assert game.clients[seat].post(game.path("/bot")).status_code == 202
        deadline = time.monotonic() + 60
        while not game.view("director")["game"]["finished"]:
            assert time.monotonic() < deadline, "the bots did not finish"
            time.sleep(0.1)
        other = Game.create(server, seed=23)
        assert other.clients["north"].post(other.path("/bot")).status_code == 202
        assert other.clients["north"].delete(other.path("/bot")).json()["stopped"] is True
        game.close()
        other.close()

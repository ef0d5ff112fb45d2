"""The bench's floor route (``api/bench_floor.py``): only a service the bench starts
(``serve --bench-floor``) has it; there it authenticates a seat's token as a command does
and stores exactly one row; a plain service answers 404 at its path."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from api_helpers import Game, running

from charleston_fsm.api.bench_floor import TABLE


def _rows(sqlite_url: str) -> int:
    with sqlite3.connect(sqlite_url.removeprefix("sqlite:///")) as conn:
        return int(conn.execute(f"SELECT count(*) FROM {TABLE}").fetchone()[0])


def test_a_plain_service_has_no_floor_route(sqlite_url: str, tmp_path: Path) -> None:
    with running(sqlite_url, tmp_path) as server:
        game = Game.create(server, seed=5)
        east = game.tokens["east"]
        with server.client(east) as client:
            answer = client.post(f"/bench/floor/{game.game_id}", json={})
        assert answer.status_code == 404
        assert "bench" not in str(server.client().get("/openapi.json").json()["paths"])
        game.close()
    with sqlite3.connect(sqlite_url.removeprefix("sqlite:///")) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert TABLE not in tables  # nothing of the bench in a production database


def test_the_bench_floor_route_authenticates_and_stores_one_row(
    sqlite_url: str, tmp_path: Path
) -> None:
    with running(sqlite_url, tmp_path, args=["--bench-floor"]) as server:
        game = Game.create(server, seed=5)
        path = f"/bench/floor/{game.game_id}"
        events = game.clients["director"].get(game.path("/events")).json()["events"]
        with server.client() as anonymous:
            assert anonymous.post(path, json={}).status_code == 401
        with server.client("not-a-token-of-this-game") as stranger:
            assert stranger.post(path, json={}).status_code == 401
        with server.client(game.tokens["director"]) as director:
            refused = director.post(path, json={})
        assert refused.status_code == 403
        assert _rows(sqlite_url) == 0  # the refusals stored nothing
        with server.client(game.tokens["east"]) as east:
            for stored in (1, 2):
                answer = east.post(path, json={})
                assert answer.status_code == 200, answer.text
                assert answer.json() == {"game_id": game.game_id, "stored": 1}
                assert _rows(sqlite_url) == stored
            assert east.get(path).status_code == 405
            assert east.post("/bench/floor/no-such-game", json={}).status_code == 404
        # the game itself is untouched
        assert game.clients["director"].get(game.path("/events")).json()["events"] == events
        assert "bench" not in str(server.client().get("/openapi.json").json()["paths"])
        game.close()

"""Every error class over real HTTP: 400, 401, 403, 404, 409, 422, all as problem+json."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from api_helpers import Game, running

from charleston_fsm.engine.tiles import is_joker
from charleston_fsm.rulebook import get_rule

JOKERS = [t for t in range(152) if is_joker(t)]
EXPLICIT = {  # East holds a joker: passing it is a rule refusal
    "east": [*JOKERS[:2], *range(0, 12)],
    "south": list(range(12, 25)),
    "west": list(range(25, 38)),
    "north": list(range(38, 51)),
}


def problem(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    """Assert an RFC 9457 problem with our extensions, and return it."""
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert body["status"] == status
    assert body["code"] == code, body
    assert body["type"].endswith(code)
    assert body["title"] and body["detail"]
    assert "rule" in body and "kind" in body
    if body["kind"] != "server":  # every refusal names a rule of the rule book
        assert body["rule_text"] == get_rule(body["rule"]).statement, body
    return body


@pytest.mark.rule("SVC-05", "SVC-02")
def test_every_error_class(db_url: str, tmp_path: Path) -> None:
    with running(db_url, tmp_path) as server, server.client() as anon:
        game = Game.create(server, hands=EXPLICIT)
        other = Game.create(server, seed=2)
        east, director = game.clients["east"], game.clients["director"]
        path = game.path()

        # 401: no token, a malformed header, a token of nothing or of another game
        body = problem(anon.get(path), 401, "missing_token")
        assert body["kind"] == "auth"
        assert anon.get(path).headers["www-authenticate"].startswith("Bearer")
        problem(
            anon.get(path, headers={"Authorization": "Basic eDp5"}), 401, "malformed_authorization"
        )
        problem(anon.get(path, headers={"Authorization": "Bearer nope"}), 401, "invalid_token")
        problem(other.clients["east"].get(path), 401, "invalid_token")
        problem(other.clients["director"].get(path + "/audit"), 401, "invalid_token")

        # 403: a seat where only the director may read; the director playing; another seat
        for tail in ("/audit", "/verify", "/diagram"):
            problem(east.get(path + tail), 403, "director_only")
        problem(
            director.post(path + "/commands", json={"type": "place_tiles"}),
            403,
            "director_cannot_play",
        )
        problem(
            east.post(path + "/commands", json={"type": "vote", "choice": "stop", "seat": "south"}),
            403,
            "seat_mismatch",
        )

        # 404: no such game (with any token), no such event, no such route or ruleset
        body = problem(east.get("/v1/games/does-not-exist"), 404, "game_not_found")
        assert body["kind"] == "not_found"
        problem(anon.get("/v1/games/does-not-exist/events"), 404, "game_not_found")
        problem(
            east.post("/v1/games/does-not-exist/commands", json={"type": "place_tiles"}),
            404,
            "game_not_found",
        )
        problem(director.get(path + "/replay", params={"seq": 999}), 404, "event_not_found")
        problem(anon.get("/v1/nothing-here"), 404, "not_found")
        problem(anon.get("/v1/rulesets/mahjong-solitaire"), 404, "unknown_ruleset")

        # 409: valid commands at the wrong moment
        body = problem(
            east.post(path + "/commands", json={"type": "vote", "choice": "stop"}),
            409,
            "not_allowed_now",
        )
        assert body["kind"] == "not_now" and body["rule"] == "NMJL-02"
        problem(
            east.post(path + "/commands", json={"type": "withdraw_pass"}), 409, "nothing_confirmed"
        )
        ok = east.post(path + "/commands", json={"type": "confirm_pass", "tiles": [0, 1, 2]})
        assert ok.status_code == 200, ok.text
        problem(
            east.post(path + "/commands", json={"type": "confirm_pass", "tiles": [3, 4, 5]}),
            409,
            "already_confirmed",
        )

        # 422: rule refusals (kind rule) ...
        south = game.clients["south"]
        body = problem(
            game.clients["east"].post(
                path + "/commands", json={"type": "change_pass", "tiles": [JOKERS[0], 3, 4]}
            ),
            422,
            "joker_passed",
        )
        assert body["detail"] == "Jokers cannot be passed during the Charleston."
        assert body["kind"] == "rule" and body["rule"] == "PASS-03"
        problem(
            south.post(path + "/commands", json={"type": "confirm_pass", "tiles": [12]}),
            422,
            "wrong_count",
        )
        body = problem(
            south.post(path + "/commands", json={"type": "confirm_pass", "tiles": [12, 13, 0]}),
            422,
            "tile_not_in_hand",
        )
        problem(
            south.post(path + "/commands", json={"type": "confirm_pass", "tiles": [12, 12, 13]}),
            422,
            "tile_named_twice",
        )
        problem(
            south.post(path + "/commands", json={"type": "challenge_dead_hand", "target": "west"}),
            422,
            "dead_hand_challenge_refused",
        )
        problem(south.post(path + "/commands", json={"type": "fly"}), 422, "invalid_command")
        problem(
            south.post(path + "/commands", json={"type": "confirm_pass", "tiles": "12"}),
            422,
            "invalid_command",
        )
        # ... and setup refusals (kind setup)
        for create, code in [
            ({"ruleset": "chess"}, "unknown_ruleset"),
            ({"options": {"blind_pass": "sometimes"}}, "invalid_option"),
            ({"options": {"dragons": 3}}, "invalid_option"),
            ({"hands": {**EXPLICIT, "north": EXPLICIT["south"]}}, "invalid_deal"),
            ({"hands": {**EXPLICIT, "east": EXPLICIT["east"][:13]}}, "invalid_deal"),
            ({"seed": 1, "hands": EXPLICIT}, "seed_or_hands"),
        ]:
            body = problem(anon.post("/v1/games", json=create), 422, code)
            assert body["kind"] == "setup"

        # 400: requests that do not follow the OpenAPI document
        problem(
            anon.post(
                "/v1/games", content=b"{not json", headers={"Content-Type": "application/json"}
            ),
            400,
            "invalid_request",
        )
        problem(anon.post("/v1/games", json={"seats": 4}), 400, "invalid_request")
        problem(anon.post("/v1/games", json={"seed": "soon"}), 400, "invalid_request")
        problem(south.post(path + "/commands", json=[1, 2, 3]), 400, "invalid_request")
        problem(
            south.post(
                path + "/commands",
                json={"type": "place_tiles", "command_id": "a"},
                headers={"Idempotency-Key": "b"},
            ),
            400,
            "command_id_mismatch",
        )
        problem(
            south.post(path + "/commands", json={"type": "place_tiles", "command_id": "x" * 101}),
            400,
            "invalid_command_id",
        )
        problem(
            anon.get("/v1/rulesets/nmjl/diagram", params={"format": "gif"}),
            400,
            "unknown_diagram_format",
        )

        # nothing refused above changed the game: only East's confirmation is recorded
        events = director.get(path + "/events").json()["events"]
        assert [e["type"] for e in events] == ["game_created", "pass_confirmed"]
        game.close()
        other.close()


@pytest.mark.rule("SVC-05")
@pytest.mark.parametrize("key_header", ["missing", "wrong", "right"])
def test_platform_key_guards_game_creation(
    sqlite_url: str, tmp_path: Path, key_header: str
) -> None:
    env = {"CHARLESTON_PLATFORM_KEY": "platform-secret"}
    with running(sqlite_url, tmp_path, env=env) as server, server.client() as anon:
        headers = {
            "missing": {},
            "wrong": {"Authorization": "Bearer not-the-key"},
            "right": {"Authorization": "Bearer platform-secret"},
        }[key_header]
        response = anon.post("/v1/games", json={"seed": 1}, headers=headers)
        if key_header == "missing":
            problem(response, 401, "missing_platform_key")
        elif key_header == "wrong":
            problem(response, 403, "wrong_platform_key")
        else:
            assert response.status_code == 201
            assert response.headers["location"] == f"/v1/games/{response.json()['game_id']}"

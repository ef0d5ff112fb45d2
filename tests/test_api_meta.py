"""OpenAPI, rulesets, diagrams and health over real HTTP."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from api_helpers import Game, Server, running

from charleston_fsm.engine.rulesets import RULESETS


@pytest.fixture(scope="module")
def server(_sqlite_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One ``serve`` on SQLite for the checks that read documents or play a game of their
    own (each test's game has its own id): a start per check cost more than the check."""
    path = tmp_path_factory.mktemp("meta") / "meta.sqlite3"
    shutil.copyfile(_sqlite_template, path)
    with running(f"sqlite:///{path}", path.parent) as served:
        yield served


def test_openapi_rulesets_health(server: Server) -> None:
    with server.client() as anon:
        spec = anon.get("/openapi.json").json()
        for path in [
            "/v1/games",
            "/v1/games/{game_id}",
            "/v1/games/{game_id}/commands",
            "/v1/games/{game_id}/events",
            "/v1/games/{game_id}/replay",
            "/v1/games/{game_id}/audit",
            "/v1/games/{game_id}/verify",
            "/v1/games/{game_id}/stream",
            "/v1/games/{game_id}/diagram",
            "/v1/rulesets",
            "/v1/rulesets/{name}/diagram",
            "/healthz",
            "/readyz",
        ]:
            assert path in spec["paths"], path
        assert "HTTPBearer" in spec["components"]["securitySchemes"]
        commands = spec["paths"]["/v1/games/{game_id}/commands"]["post"]["responses"]
        for status in ("400", "401", "403", "404", "409", "415", "422"):
            assert list(commands[status]["content"]) == ["application/problem+json"], status
        # every operation with a body documents an encoded body and a text not kept
        for path, operations in spec["paths"].items():
            for method, operation in operations.items():
                if "requestBody" in operation:
                    assert {"415", "422"} <= set(operation["responses"]), (method, path)
        assert commands["200"]["content"]["application/json"]["schema"]["$ref"].endswith(
            "/CommandResult"
        )
        assert "HTTPValidationError" not in spec["components"]["schemas"]

        rulesets = {r["name"]: r for r in anon.get("/v1/rulesets").json()["rulesets"]}
        assert set(rulesets) == set(RULESETS)
        nmjl, house = rulesets["nmjl"], rulesets["house"]
        assert nmjl["options"]["blind_pass"] == {"type": "boolean", "default": True}
        assert house["options"]["blind_pass"]["default"] is False
        assert house["options"]["courtesy_mode"]["choices"] == ["agreed_min", "asymmetric"]
        assert [s["state"] for s in nmjl["steps"]][:3] == [
            "CHARLESTON_P1_R",
            "CHARLESTON_P1_A",
            "CHARLESTON_P1_L",
        ]
        assert anon.get("/v1/rulesets/house").json() == house

        assert anon.get("/healthz").json() == {"status": "ok", "pid": server.proc.pid}
        ready = anon.get("/readyz").json()
        assert ready["status"] == "ready" and ready["schema"] == "current"


def test_diagrams(db_url: str, tmp_path: Path) -> None:
    with running(db_url, tmp_path) as server, server.client() as anon:
        dot = anon.get("/v1/rulesets/nmjl/diagram", params={"format": "dot"})
        assert dot.status_code == 200 and "digraph" in dot.text
        assert "CHARLESTON_P1_R" in dot.text
        mermaid = anon.get("/v1/rulesets/house/diagram", params={"format": "mermaid"})
        assert mermaid.status_code == 200 and "stateDiagram" in mermaid.text
        game = Game.create(server, seed=1)
        live = game.clients["director"].get(game.path("/diagram"), params={"format": "dot"})
        assert live.status_code == 200 and "CHARLESTON_P1_R" in live.text
        assert live.text != dot.text  # the active state is highlighted
        if shutil.which("dot"):
            svg = anon.get("/v1/rulesets/nmjl/diagram")
            assert svg.headers["content-type"].startswith("image/svg+xml")
            assert "<svg" in svg.text
        game.close()


@pytest.mark.parametrize("role", ["east", "director"])
def test_game_view_by_token(server: Server, role: str) -> None:
    game = Game.create(server, seed=8, players={"east": "Ann"})
    body = game.clients[role].get(game.path()).json()
    assert body["role"] == role and body["game_id"] == game.game_id
    if role == "director":
        assert set(body["view"]["seats"]) == {"east", "south", "west", "north"}
    else:
        assert body["view"]["seat"] == "east" and len(body["view"]["rack"]) == 14
        assert "seats" not in body["view"]
    game.close()


def test_web_pages_and_the_joker_rule(server: Server) -> None:
    """The service serves its web client (outside the API document) and names the rule a
    page shows when a joker is picked: the very words of the refusal."""
    with server.client() as anon:
        front = anon.get("/")
        assert front.status_code == 200 and "/static/front.js" in front.text
        for page, module in (("/table/any-id", "table.js"), ("/desk/any-id", "desk.js")):
            answer = anon.get(page)
            assert answer.status_code == 200 and f"/static/{module}" in answer.text
        script = anon.get("/static/api.js")
        assert script.status_code == 200
        assert "javascript" in script.headers["content-type"]
        assert anon.get("/static/nothing.js").status_code == 404
        spec = anon.get("/openapi.json").json()
        assert not [p for p in spec["paths"] if not p.startswith(("/v1/", "/healthz", "/readyz"))]

        rule = anon.get("/v1/rulesets/nmjl").json()["joker_rule"]
        game = Game.create(server, ruleset="nmjl", seed=7)
        for seat in ("east", "south", "west", "north"):
            rack = game.view(seat)["rack"]
            jokers = [t["id"] for t in rack if t["face"] == "J"]
            if jokers:
                others = [t["id"] for t in rack if t["face"] != "J"][:2]
                refused = game.command(
                    seat, {"type": "confirm_pass", "tiles": [*others, jokers[0]]}
                )
                break
        assert refused.status_code == 422
        assert rule == {"rule": refused.json()["rule"], "message": refused.json()["detail"]}
        game.close()
    front_door = f"open http://127.0.0.1:{server.port}/ in a browser"
    assert any(front_door in line["msg"] for line in server.log_lines())


def test_openapi_says_the_bearer_is_optional_without_a_platform_key(
    server: Server, sqlite_url: str, tmp_path: Path
) -> None:
    """Issue 17 N9: with no platform key, creating games and rounds takes no token, and
    the document says so (an empty alternative); with a key, the bearer is required."""
    with server.client() as anon:
        spec = anon.get("/openapi.json").json()
        for path in ("/v1/games", "/v1/rounds"):
            assert {} in spec["paths"][path]["post"]["security"], path
        assert {} not in spec["paths"]["/v1/games/{game_id}/commands"]["post"]["security"]
    env = {"CHARLESTON_PLATFORM_KEY": "k"}
    with running(sqlite_url, tmp_path, name="keyed", env=env) as keyed, keyed.client() as anon:
        spec = anon.get("/openapi.json").json()
        for path in ("/v1/games", "/v1/rounds"):
            assert {} not in spec["paths"][path]["post"]["security"], path


def test_a_wrong_method_names_every_method_of_the_path(server: Server) -> None:
    """Issue 17 N9: ``/bot`` takes POST and DELETE (two routes); a 405 names both."""
    with server.client() as anon:
        game = Game.create(server, seed=1)
        for method in ("OPTIONS", "PUT", "GET"):
            answer = anon.request(method, game.path("/bot"))
            assert answer.status_code == 405, answer.text
            assert answer.headers["Allow"] == "DELETE, POST", (method, answer.headers)
        commands = anon.request("PUT", game.path("/commands"))
        assert commands.status_code == 405 and commands.headers["Allow"] == "POST"
        game.close()

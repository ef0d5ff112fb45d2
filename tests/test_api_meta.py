"""OpenAPI, rulesets, diagrams and health over real HTTP."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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
        schemes = spec["components"]["securitySchemes"]
        holders = {"SeatToken", "DirectorToken", "RoundToken", "SpectatorToken"}
        assert set(schemes) == {*holders, "PlatformKey", "OrganiserKey"}
        assert {s["type"] for s in schemes.values()} == {"http"}
        assert {s["scheme"] for s in schemes.values()} == {"bearer"}
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


#: the operations that take no token, whatever the service's settings
PUBLIC = {
    "GET /healthz",
    "GET /readyz",
    "GET /v1/anchor-key",
    "GET /v1/rulesets",
    "GET /v1/rulesets/{name}",
    "GET /v1/rulesets/{name}/diagram",
}


def anonymous_answers(served: Server, key: str | None) -> list[tuple[str, Any, int]]:
    """Each operation of the document, sent without a token: its status. Path ids are a
    real game's and round's (an unknown one is a 404 before any 401), required query
    parameters are given, a body is ``{}``; a stream is read up to its status. Each
    answer as (operation, its declared security, status)."""
    creator = {"Authorization": f"Bearer {key}"} if key else {}
    with served.client() as anon:
        spec = anon.get("/openapi.json").json()
        game = anon.post("/v1/games", json={"seed": 1}, headers=creator).json()
        table = {"seed": 2}
        made = anon.post("/v1/rounds", json={"table": table, "count": 1}, headers=creator)
        ids = {
            "game_id": game["game_id"],
            "round_id": made.json()["round_id"],
            "seat": "east",
            "name": "nmjl",
            "organiser_id": "org_unknown",
            "endpoint_id": "ep_" + "0" * 24,
            "entry_id": "e_unknown",
        }
        answers = []
        for path, operations in spec["paths"].items():
            for method, operation in operations.items():
                params = operation.get("parameters", [])
                query = {
                    p["name"]: 1 if p["schema"].get("type") == "integer" else "x"
                    for p in params
                    if p["in"] == "query" and p.get("required")
                }
                body = {"json": {}} if "requestBody" in operation else {}
                url = path.format(**ids)
                with anon.stream(method, url, params=query, **body) as answer:
                    where = f"{method.upper()} {path}"
                    answers.append((where, operation.get("security"), answer.status_code))
        return answers


@pytest.mark.parametrize("key", [None, "the-platform-key"])
def test_each_operation_declares_the_tokens_it_takes_and_none_where_it_takes_none(
    server: Server, sqlite_url: str, tmp_path: Path, key: str | None
) -> None:
    """Issue 36: every operation's ``security`` is what it does. An operation that
    answers a caller without a token declares an empty alternative ({}): the public
    ones, and those of the platform's key or an organiser's where the service has no
    platform key (issue 17 N9: creating and listing games and rounds, the feed, the
    webhooks); every other one refuses that caller (401, or 403 for organiser management
    on a service that has no platform key) and lists only the tokens it takes."""
    env = {"CHARLESTON_PLATFORM_KEY": key} if key else {}
    if key:
        with running(sqlite_url, tmp_path, name="keyed", env=env) as keyed:
            answers = anonymous_answers(keyed, key)
    else:
        answers = anonymous_answers(server, key)
    platform_or_organiser = [{"PlatformKey": []}, {"OrganiserKey": []}]
    open_to_anyone = []
    for operation, security, status in answers:
        where = f"{operation} -> {status}, declared {security}"
        if operation in PUBLIC:
            assert security is None and status not in (401, 403), where
        elif security and {} in security:
            assert key is None and security[1:] == platform_or_organiser, where
            assert status not in (401, 403), where
            open_to_anyone.append(operation)
        else:
            assert security, where
            assert status in (401, 403), where
    if key is None:
        for operation in (
            "GET /v1/games",
            "POST /v1/games",
            "GET /v1/rounds",
            "POST /v1/rounds",
            "GET /v1/feed",
            "GET /v1/webhooks",
            "POST /v1/webhooks",
        ):
            assert operation in open_to_anyone, operation
    else:
        assert open_to_anyone == []


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

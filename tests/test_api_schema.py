"""Every answer of a played game is what the OpenAPI document says it is.

A whole game is played over real HTTP against a ``serve`` subprocess, on both backends;
every response (create, views of every seat and of the director, commands, events,
replays, audit, verify, rulesets, bots, health, errors) goes through an httpx response
hook that validates its body with ``jsonschema`` against the schema the service's own
``/openapi.json`` declares for that operation, status and content type. The views are
closed objects (``additionalProperties: false``), so a field that appears, disappears or
changes type without its model changing fails here.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_helpers import Game, play_over_http, running
from budget import backends_by
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from charleston_fsm.api.schemas_commands import ANNOTATION_MODELS
from charleston_fsm.engine.commands import COMMAND_MODELS, DIRECTOR_COMMANDS

#: the views, where every field must be closed, typed and described, and what carries them
VIEW_COMPONENTS = ("SeatView", "DirectorView")
VIEW_CARRIERS = {
    "SeatGameView": "SeatView",
    "DirectorGameView": "DirectorView",
    "CommandResult": "SeatView",
    "SeatReplay": "SeatView",
    "DirectorReplay": "DirectorView",
}


class Contract:
    """Checks responses against the OpenAPI document (an httpx response hook)."""

    def __init__(self, spec: Mapping[str, Any]) -> None:
        self.spec = spec
        self.routes = [
            (re.compile("^" + re.sub(r"\{[^}]+\}", "[^/]+", path) + "$"), path)
            for path in spec["paths"]
        ]
        self.validators: dict[tuple[str, str, str, str], Draft202012Validator] = {}
        self.checked: Counter[str] = Counter()

    def operation(self, method: str, path: str) -> tuple[str, dict[str, Any]]:
        for pattern, template in self.routes:
            if pattern.match(path) and method.lower() in self.spec["paths"][template]:
                return template, self.spec["paths"][template][method.lower()]
        raise AssertionError(f"{method} {path} is not in the OpenAPI document")

    def __call__(self, response: httpx.Response) -> None:
        response.read()
        self.check(response)

    def check(self, response: httpx.Response) -> None:
        method, path = response.request.method, response.request.url.path
        template, operation = self.operation(method, path)
        status = str(response.status_code)
        where = f"{method} {template} -> {status}"
        assert status in operation["responses"], f"{where} is not documented: {response.text}"
        media = response.headers["content-type"].split(";")[0].strip()
        content = operation["responses"][status].get("content", {})
        assert media in content, f"{where}: {media} is not documented (only {list(content)})"
        body = response.json() if media.endswith("json") else response.text
        error = best_match(self.validator(template, method, status, media).iter_errors(body))
        assert error is None, f"{where}: {error.json_path}: {error.message}"
        self.checked[f"{where} {media}"] += 1

    def validator(self, template: str, method: str, status: str, media: str) -> Any:
        key = (template, method, status, media)
        if key not in self.validators:
            schema = self.spec["paths"][template][method.lower()]["responses"][status]
            schema = schema["content"][media].get("schema")
            assert schema, f"{method} {template} -> {status} {media} declares no schema"
            root = {"components": self.spec["components"], "allOf": [schema]}
            Draft202012Validator.check_schema(root)
            self.validators[key] = Draft202012Validator(root)
        return self.validators[key]

    def watch(self, client: httpx.Client) -> httpx.Client:
        client.event_hooks = {"response": [self]}
        return client


# -- the document itself ---------------------------------------------------------------------
TYPED = {"type", "$ref", "anyOf", "oneOf", "allOf", "enum", "const"}


def reachable(spec: Mapping[str, Any], names: tuple[str, ...]) -> Iterator[tuple[str, Any]]:
    """Every (where, schema) reachable from the named components, following ``$ref``."""
    schemas = spec["components"]["schemas"]
    seen: set[str] = set(names)
    todo: list[tuple[str, Any]] = [(name, schemas[name]) for name in names]
    while todo:
        where, schema = todo.pop()
        yield where, schema
        ref = schema.get("$ref", "").rsplit("/", 1)[-1]
        if ref and ref not in seen:
            seen.add(ref)
            todo.append((ref, schemas[ref]))
        todo += [(f"{where}.{p}", s) for p, s in schema.get("properties", {}).items()]
        for key in ("items", "additionalProperties", "propertyNames"):
            if isinstance(schema.get(key), dict):
                todo.append((f"{where}/{key}", schema[key]))
        for key in ("prefixItems", "anyOf", "oneOf", "allOf"):
            todo += [(f"{where}/{key}", s) for s in schema.get(key, [])]


def view_contract_problems(spec: Mapping[str, Any]) -> list[str]:
    """What keeps the views from being a closed, typed, described contract."""
    found = []
    for where, schema in reachable(spec, VIEW_COMPONENTS):
        if not TYPED & set(schema):
            found.append(f"{where}: untyped (anything goes)")
        if schema.get("additionalProperties") is True:
            found.append(f"{where}: additionalProperties: true")
        if schema.get("type") == "object":
            extra = schema.get("additionalProperties")
            if "properties" in schema and extra is not False:
                found.append(f"{where}: open to fields it does not name")
            if "properties" not in schema and not isinstance(extra, dict):
                found.append(f"{where}: an object of anything")
        for name, prop in schema.get("properties", {}).items():
            if not prop.get("description"):
                found.append(f"{where}.{name}: no description")
    return found


def test_the_views_are_closed_typed_and_described(sqlite_url: str, tmp_path: Path) -> None:
    with running(sqlite_url, tmp_path) as server, server.client() as anon:
        spec = anon.get("/openapi.json").json()
    assert view_contract_problems(spec) == []
    schemas = spec["components"]["schemas"]
    commands = schemas["SeatView"]["properties"]["allowed_commands"]["items"]["enum"]
    assert set(commands) == set(COMMAND_MODELS)
    step = schemas["SeatStep"]["properties"]
    for field in ("count", "count_range", "blind_allowed", "blind_max", "passable", "from", "to"):
        assert field in step and field in schemas["SeatStep"]["required"], field
    # each view travels in its carrier as the typed view, never as a loose object
    for carrier, view in VIEW_CARRIERS.items():
        assert schemas[carrier]["properties"]["view"]["$ref"].endswith(f"/{view}"), carrier
    game = spec["paths"]["/v1/games/{game_id}"]["get"]["responses"]["200"]
    union = game["content"]["application/json"]["schema"]
    assert union["discriminator"]["mapping"]["director"].endswith("/DirectorGameView")
    assert union["discriminator"]["mapping"]["east"].endswith("/SeatGameView")


def test_the_contract_check_finds_open_untyped_and_undescribed_fields() -> None:
    """The check above can fail: each kind of looseness is reported."""
    closed = {"type": "object", "additionalProperties": False}
    spec = {
        "components": {
            "schemas": {
                "SeatView": {
                    **closed,
                    "properties": {
                        "loose": {"type": "object", "additionalProperties": True},
                        "bare": {"type": "integer"},
                        "items": {"type": "array", "items": {}, "description": "x"},
                        "open": {"$ref": "#/components/schemas/Open", "description": "x"},
                    },
                },
                "Open": {"type": "object", "properties": {}},
                "DirectorView": {**closed, "properties": {}},
            }
        }
    }
    assert sorted(view_contract_problems(spec)) == [
        "Open: open to fields it does not name",
        "SeatView.bare: no description",
        "SeatView.items/items: untyped (anything goes)",
        "SeatView.loose: additionalProperties: true",
        "SeatView.loose: an object of anything",
        "SeatView.loose: no description",
    ]


# -- a played game -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("db_url", "ruleset"), backends_by(["four_winds", "house", "nmjl"], turn=1), indirect=["db_url"]
)
def test_every_answer_of_a_played_game_is_as_documented(
    db_url: str, tmp_path: Path, ruleset: str
) -> None:
    with running(db_url, tmp_path) as server:
        with server.client() as anon:
            contract = Contract(anon.get("/openapi.json").json())
            contract.watch(anon)
            assert anon.get("/healthz").status_code == 200
            assert anon.get("/readyz").status_code == 200
            assert anon.get("/v1/rulesets").status_code == 200
            assert anon.get(f"/v1/rulesets/{ruleset}").status_code == 200
            assert anon.get("/v1/rulesets/nope").status_code == 404
            bad = anon.post("/v1/games", json={"ruleset": ruleset, "options": {"x": 1}})
            assert bad.status_code == 422
            assert anon.post("/v1/games", content=b"{not json").status_code == 400

        game = Game.create(server, ruleset=ruleset, seed=11, players={"east": "Ann"})
        for client in game.clients.values():
            contract.watch(client)
        with server.client() as anon:
            contract.watch(anon)
            created = anon.post("/v1/games", json={"ruleset": ruleset, "seed": 3})
            assert created.status_code == 201
            assert anon.get(game.path()).status_code == 401
            with server.client("not-a-token") as stranger:
                contract.watch(stranger)
                assert stranger.get(game.path()).status_code == 401
            with server.client(game.tokens["east"]) as east:
                contract.watch(east)
                assert east.get("/v1/games/nope").status_code in (401, 404)

        # refusals before anything moves: problem+json, as documented
        assert game.command("east", {"type": "vote", "choice": "stop"}).status_code == 409
        wrong = {"type": "confirm_pass", "tiles": game.plain("east", 2)}
        assert game.command("east", wrong).status_code == 422
        assert game.command("east", {"type": "nonsense"}).status_code == 422
        assert game.command("director", {"type": "place_tiles"}).status_code == 403
        assert game.clients["east"].get(game.path("/audit")).status_code == 403
        first = {"type": "confirm_pass", "tiles": game.plain("east"), "command_id": "c-1"}
        assert game.command("east", first).status_code == 200
        assert game.command("east", first).json()["duplicate"] is True

        def director_looks(command: Any, response: httpx.Response) -> None:
            game.view("director")

        play_over_http(game, seed=11, after_command=director_looks)
        assert game.view("director")["game"]["finished"]

        last = 0
        for client in game.clients.values():
            events = client.get(game.path("/events"))
            assert events.status_code == 200
            last = events.json()["last_seq"]
            assert client.get(game.path("/events"), params={"after": 5}).status_code == 200
            for seq in (1, last // 2, last):
                assert client.get(game.path("/replay"), params={"seq": seq}).status_code == 200
            assert client.get(game.path("/replay")).status_code == 200
            assert client.get(game.path()).status_code == 200
        director = game.clients["director"]
        assert director.get(game.path("/replay"), params={"seq": last + 1}).status_code == 404
        assert director.get(game.path("/audit")).status_code == 200
        assert director.get(game.path("/audit"), params={"format": "text"}).status_code == 200
        assert director.get(game.path("/verify")).status_code == 200
        assert game.clients["west"].post(game.path("/bot")).status_code == 202
        assert game.clients["west"].delete(game.path("/bot")).status_code == 200
        assert director.post(game.path("/bot")).status_code == 403
        game.close()
        if ruleset == "four_winds":  # the director's own command: closing the Ding Dong window
            window = Game.create(server, ruleset=ruleset, seed=2, options={"charleston": "off"})
            for client in window.clients.values():
                contract.watch(client)
            closing = window.clients["director"].post(
                window.path("/director/commands"), json={"type": "close_ding_dong"}
            )
            assert closing.status_code == 200, closing.text
            assert (
                window.clients["east"]
                .post(window.path("/director/commands"), json={"type": "close_ding_dong"})
                .status_code
                == 403
            )
            window.close()

    checked = contract.checked
    for operation in (
        "POST /v1/games -> 201",
        "GET /v1/games/{game_id} -> 200",
        "POST /v1/games/{game_id}/commands -> 200",
        "POST /v1/games/{game_id}/commands -> 409",
        "POST /v1/games/{game_id}/commands -> 422",
        "GET /v1/games/{game_id}/replay -> 200",
        "GET /v1/games/{game_id}/audit -> 200",
        "POST /v1/games/{game_id}/bot -> 202",
        "DELETE /v1/games/{game_id}/bot -> 200",
    ):
        assert any(k.startswith(operation) for k in checked), (operation, sorted(checked))
    assert sum(checked.values()) > 100


# -- what the document declares for every operation -----------------------------------------
def served_document(sqlite_url: str, tmp_path: Path) -> dict[str, Any]:
    with running(sqlite_url, tmp_path) as server, server.client() as anon:
        spec: dict[str, Any] = anon.get("/openapi.json").json()
    return spec


def test_every_command_of_every_role_is_a_body_of_the_document(
    sqlite_url: str, tmp_path: Path
) -> None:
    """Issue 36: each command route's body is a discriminated union of the commands its
    token may send, each the engine's own model (its fields, types and constraints) with
    ``command_id``; none is left out (``extend_time``, ``hand_to_bot``, ``hand_back`` …)."""
    spec = served_document(sqlite_url, tmp_path)
    schemas = spec["components"]["schemas"]
    paths = spec["paths"]
    routes = {
        "SeatCommand": "/v1/games/{game_id}/commands",
        "DirectorCommand": "/v1/games/{game_id}/director/commands",
    }
    for union, path in routes.items():
        body = paths[path]["post"]["requestBody"]
        assert body["required"] is True
        assert body["content"]["application/json"]["schema"] == {
            "$ref": f"#/components/schemas/{union}"
        }
    engine = {
        "SeatCommand": {n: m for n, m in COMMAND_MODELS.items() if n not in DIRECTOR_COMMANDS},
        "DirectorCommand": {
            **{n: m for n, m in COMMAND_MODELS.items() if n in DIRECTOR_COMMANDS},
            **ANNOTATION_MODELS,
        },
    }
    assert set(engine["DirectorCommand"]) == DIRECTOR_COMMANDS
    assert {"extend_time", "hand_to_bot", "hand_back", "judge_declaration"} <= DIRECTOR_COMMANDS
    for union, models in engine.items():
        declared = schemas[union]
        mapping = declared["discriminator"]["mapping"]
        assert declared["discriminator"]["propertyName"] == "type"
        assert set(mapping) == set(models), union
        assert sorted(m["$ref"] for m in declared["oneOf"]) == sorted(mapping.values())
        for name, model in models.items():
            member = schemas[mapping[name].rsplit("/", 1)[-1]]
            fields = set(model.model_fields)
            if union == "SeatCommand":
                fields.add("seat")  # optional: the token's own
            elif name not in ANNOTATION_MODELS:
                fields.discard("seat")  # the director names no seat of a chart command
            assert set(member["properties"]) == fields | {"command_id"}, name
            assert member["properties"]["type"]["const"] == name
            assert "type" in member["required"] and member["additionalProperties"] is False
            engine_schema = model.model_json_schema()["properties"]
            for field in fields - {"type", "seat"}:
                assert member["properties"][field].keys() >= engine_schema[field].keys() - {
                    "$ref"
                }, (name, field)


def test_every_answer_declares_its_schema_and_every_operation_its_name(
    sqlite_url: str, tmp_path: Path
) -> None:
    """A client generated from the document gets a type for every answer: each 2xx
    answer with a body names a schema (not FastAPI's empty one), each error is a
    problem+json, and each operation has a unique id (the generated function's name)."""
    spec = served_document(sqlite_url, tmp_path)
    found, ids = [], []
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            ids.append(operation["operationId"])
            for status, response in operation["responses"].items():
                for media, content in response.get("content", {}).items():
                    where = f"{method.upper()} {path} -> {status} {media}"
                    if not content.get("schema"):
                        found.append(f"{where}: no schema")
                    if status.startswith(("4", "5")) and media != "application/problem+json":
                        found.append(f"{where}: an error that is not problem+json")
                if status.startswith("2") and status != "204" and not response.get("content"):
                    found.append(f"{method.upper()} {path} -> {status}: no body declared")
    assert found == []
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)

"""The command route answers every body exactly as FastAPI's own handler of it does.

``api/command_route.py`` runs JSON-object bodies itself and hands every other body to
FastAPI's handler of the same route. Over real HTTP each kind of body gets its answer and
a refusal stores nothing; then the same bodies go, in order, to the app as built and to
one whose command route runs FastAPI's handler for every body (the app in-process, over
ASGI, on two fresh databases from one seed) and every answer must match (status, headers
that matter, body without the request id). The route is the one the document declares:
one route, first in the app.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_helpers import Game, ok, running
from fastapi.routing import APIRoute, request_response
from starlette.requests import Request
from starlette.responses import Response
from test_api_errors import problem

from charleston_fsm.api.app import create_app
from charleston_fsm.api.auth import ROLES, token_hash
from charleston_fsm.api.bodies import check_body
from charleston_fsm.api.command_route import CommandRoute
from charleston_fsm.api.deps import run_guard
from charleston_fsm.api.notify import Notifier
from charleston_fsm.engine.tiles import is_joker
from charleston_fsm.store import GameStore, NewGame

TOKENS = {role: f"token-of-{role}-0123456789abcdef" for role in ROLES}
JSON = "application/json"
PATH = "/v1/games/{game_id}/commands"


def nested(depth: int, value: bytes = b"[]") -> bytes:
    """A command whose extra field nests ``depth`` objects deep (answered 500 by a
    recursion error before issue 30: about 4 KB at depth 1,000)."""
    return b'{"type": "withdraw_pass", "x": ' + b'{"a": ' * depth + value + b"}" * depth + b"}"


def bodies(tiles: list[int]) -> list[tuple[str, dict[str, str], bytes]]:
    """(what, headers, body): every way a client may send a command body."""
    confirm = f'{{"type": "confirm_pass", "tiles": {tiles}}}'.encode()
    return [
        ("no content type", {}, confirm),
        ("text/plain", {"Content-Type": "text/plain"}, confirm),
        ("malformed JSON", {"Content-Type": JSON}, b'{"type": "confirm_pass",'),
        ("an array", {"Content-Type": JSON}, b"[1, 2, 3]"),
        ("a string", {"Content-Type": JSON}, b'"confirm_pass"'),
        ("empty", {"Content-Type": JSON}, b""),
        ("NaN (json reads it, orjson not)", {"Content-Type": JSON}, b'{"type": NaN}'),
        ("an integer past 64 bits", {"Content-Type": JSON}, b'{"type": 123456789012345678901}'),
        ("an id past 64 bits", {"Content-Type": JSON}, b'{"type": "ready", "command_id": 1e400}'),
        ("a float", {"Content-Type": JSON}, b'{"type": "confirm_pass", "tiles": [1.5, 2, 3]}'),
        ("a byte-order mark (json reads it)", {"Content-Type": JSON}, b"\xef\xbb\xbf" + confirm),
        ("not a command", {"Content-Type": JSON}, b'{"type": "chess"}'),
        ("a bad command id", {"Content-Type": JSON}, b'{"type": "ready", "command_id": [1]}'),
        ("another seat", {"Content-Type": JSON}, b'{"type": "ready", "seat": "south"}'),
        ("withdraw, the fast path", {"Content-Type": JSON}, b'{"type": "withdraw_pass"}'),
        ("JSON with charset", {"Content-Type": "application/json; charset=utf-8"}, confirm),
        ("a +json type", {"Content-Type": "application/x+json"}, b'{"type": "withdraw_pass"}'),
        ("nested 30 deep", {"Content-Type": JSON}, nested(30)),
        ("nested 500 deep", {"Content-Type": JSON}, nested(500)),
        ("nested 1023 deep", {"Content-Type": JSON}, nested(1022, b"[1.5]")),
        ("arrays 5000 deep", {"Content-Type": JSON}, b"[" * 5000 + b"]" * 5000),
        ("nested, no content type", {}, nested(700)),
        ("gzip", {"Content-Type": JSON, "Content-Encoding": "gzip"}, b'{"type": "withdraw_pass"}'),
        ("a numeric command id", {"Content-Type": JSON}, b'{"type": "ready", "command_id": 7}'),
        ("confirm by id", {"Content-Type": JSON, "Idempotency-Key": "k1"}, confirm),
        ("the same id again", {"Content-Type": JSON, "Idempotency-Key": "k1"}, confirm),
    ]


def test_each_kind_of_body_over_http(sqlite_url: str, tmp_path: Path) -> None:
    with running(sqlite_url, tmp_path) as server:
        game = Game.create(server, seed=3)
        east = game.clients["east"]
        path = game.path("/commands")
        tiles = game.plain("east")
        answers = {
            what: east.post(path, content=body, headers=headers)
            for what, headers, body in bodies(tiles)
        }
        refused = {
            "no content type": (400, "invalid_request"),
            "text/plain": (400, "invalid_request"),
            "malformed JSON": (400, "invalid_request"),
            "an array": (400, "invalid_request"),
            "a string": (400, "invalid_request"),
            "empty": (400, "invalid_request"),
            "NaN (json reads it, orjson not)": (422, "invalid_command"),
            "an integer past 64 bits": (422, "invalid_command"),
            "not a command": (422, "invalid_command"),
            "a float": (422, "invalid_command"),
            "a bad command id": (400, "invalid_command_id"),
            "another seat": (403, "seat_mismatch"),
            "nested 30 deep": (422, "invalid_command"),  # within the bound: the command's
            "nested 500 deep": (400, "invalid_request"),
            "nested 1023 deep": (400, "invalid_request"),
            "arrays 5000 deep": (400, "invalid_request"),
            "nested, no content type": (400, "invalid_request"),
            "gzip": (415, "unsupported_content_encoding"),
            "a numeric command id": (400, "invalid_command_id"),
        }
        for what, (status, code) in refused.items():
            problem(answers[what], status, code)
        for what in ("nested 500 deep", "nested 1023 deep", "arrays 5000 deep"):
            assert "more than 32 levels deep" in answers[what].json()["detail"], what
        assert "Content-Encoding" in answers["gzip"].json()["detail"]
        assert "string" in answers["a numeric command id"].json()["detail"]
        stored = {
            "a byte-order mark (json reads it)": "pass_confirmed",
            "withdraw, the fast path": "pass_withdrawn",
            "JSON with charset": "pass_confirmed",
            "a +json type": "pass_withdrawn",
            "confirm by id": "pass_confirmed",
        }
        for what, event in stored.items():
            assert [e["type"] for e in ok(answers[what])["events"]] == [event], what
        first, again = ok(answers["confirm by id"]), ok(answers["the same id again"])
        assert (first["duplicate"], again["duplicate"]) == (False, True)
        assert again["events"] == first["events"]
        assert answers["the same id again"].headers["Idempotent-Replayed"] == "true"
        # the refusals stored nothing: five commands, five events after the deal
        events = ok(east.get(game.path("/events")))["events"]
        assert [e["seq"] for e in events] == list(range(1, 7))
        assert not [line for line in server.log_lines() if line.get("level") == "error"]
        game.close()


async def _answers(
    url: str, *, fast: bool, threads: list[str] | None = None
) -> list[tuple[Any, ...]]:
    """What the app answers to :func:`bodies`, in order, on a new game of seed 3;
    ``threads``: gets the name of each thread a command was decided in."""
    store = GameStore(url)
    app = create_app(store, notifier=Notifier(), clock_interval=None)
    route = app.router.routes[0]  # the command route is the first route of the app
    assert isinstance(route, CommandRoute) and route.name == "post_command"
    if not fast:
        route.app = request_response(_fastapi_only(route))
    game_id = store.registry.create_game(
        NewGame(seed=3, credentials={r: token_hash(t) for r, t in TOKENS.items()})
    )
    auth = {"Authorization": f"Bearer {TOKENS['east']}"}
    try:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            view = (await client.get(f"/v1/games/{game_id}", headers=auth)).json()["view"]
            tiles = [t["id"] for t in view["rack"] if not is_joker(t["id"])][:3]
            out = []
            for what, headers, body in bodies(tiles):
                response = await client.post(
                    f"/v1/games/{game_id}/commands", content=body, headers={**auth, **headers}
                )
                answer = response.json()
                for varying in ("request_id", "game_id", "instance"):
                    answer.pop(varying, None)
                if "events" in answer:
                    answer["events"] = [
                        {**e, "created_at": None, "command_id": None} for e in answer["events"]
                    ]
                    answer["view"].pop("clock", None)
                command_id = answer.get("command_id", "")
                if str(command_id).startswith("auto-"):
                    answer["command_id"] = "auto"
                kept = ("content-type", "idempotent-replayed", "allow")
                out.append(
                    (what, response.status_code, answer, *(response.headers.get(h) for h in kept))
                )
            return out
    finally:
        store.dispose()


def _fastapi_only(route: CommandRoute) -> Callable[[Request], Awaitable[Response]]:
    """The route's handler as FastAPI builds it, behind the same token guard and body
    check (``deps.TokenFirstRoute``'s): the reference the fast reading must match."""
    handler = APIRoute.get_route_handler(route)

    async def reference(request: Request) -> Response:
        await run_guard(route.endpoint.token_guard, request)
        await check_body(request)
        return await handler(request)

    return reference


def test_one_command_route_declared_and_served(sqlite_url: str) -> None:
    """The document's ``post_command`` is the route that runs: one route at its path,
    the first the app matches, and no other route answers POST there."""
    store = GameStore(sqlite_url)
    try:
        app = create_app(store, notifier=Notifier(), clock_interval=None)
        at_path = [r for r in app.routes if getattr(r, "path", None) == PATH]
        assert len(at_path) == 1 and isinstance(at_path[0], CommandRoute)
        assert app.router.routes[0] is at_path[0]
        operation = app.openapi()["paths"][PATH]["post"]
        assert operation["operationId"] == "post_command"
    finally:
        store.dispose()


def test_the_fast_reading_answers_as_fastapi_does(sqlite_url: str, tmp_path: Path) -> None:
    other = tmp_path / "reference.sqlite3"
    other.write_bytes(Path(sqlite_url.removeprefix("sqlite:///")).read_bytes())
    fast = asyncio.run(_answers(sqlite_url, fast=True))
    reference = asyncio.run(_answers(f"sqlite:///{other}", fast=False))
    for got, expected in zip(fast, reference, strict=True):
        assert got == expected, got[0]


def test_a_command_hashes_its_token_once_and_judges_it_once(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 34: the guard and the endpoint share one digest and one judgement (before:
    four SHA-256 a command); a token not yet remembered is looked up in the store once."""
    from charleston_fsm.api import deps

    hashed: list[str] = []
    judged: list[str] = []
    real_hash, real_lookup = deps.token_hash, deps.TokenCache.get
    monkeypatch.setattr(deps, "token_hash", lambda t: hashed.append(t) or real_hash(t))
    monkeypatch.setattr(
        deps.TokenCache, "get", lambda self, key: judged.append(key) or real_lookup(self, key)
    )
    store = GameStore(sqlite_url)
    app = create_app(store, notifier=Notifier(), clock_interval=None)
    game_id = store.registry.create_game(
        NewGame(seed=3, credentials={r: token_hash(t) for r, t in TOKENS.items()})
    )
    auth = {"Authorization": f"Bearer {TOKENS['east']}", "Content-Type": JSON}

    async def send() -> list[int]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            statuses = []
            for body in (b'{"type": "ready"}', b'{"type": "ready"}'):
                hashed.clear()
                judged.clear()
                answer = await client.post(
                    f"/v1/games/{game_id}/commands", content=body, headers=auth
                )
                statuses.append(answer.status_code)
                assert hashed == [TOKENS["east"]], hashed  # one digest, first or remembered
                assert len(judged) == 1, judged  # one judgement of the role
            return statuses

    try:
        assert asyncio.run(send())[0] in (200, 409, 422)
    finally:
        store.dispose()

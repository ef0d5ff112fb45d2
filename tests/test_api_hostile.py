"""Hostile input answered 4xx with a sentence on every POST route, on both databases
(issue 30: R1, R2, R3, R6, R9), over real HTTP, and nothing stored by a refusal.

- R1: a body nested 500-1023 deep was a 500 (a recursion error) on the command
  route; every body deeper than the service's bound is now a 400 naming the bound, on
  every route that takes a body.
- R2/R3: NUL or a lone surrogate in a verdict's, a ruling's or any free text was a 500 on
  one database or both; every text field is a 422 naming the field.
- R6: the director who lost the race to judge a declaration judged invalid heard
  "Nothing is declared"; it hears that it was judged, and how.
- R9: a numeric command id was stored as text, a gzip body was read as plain JSON, and
  the first of two Authorization headers won.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_helpers import Game, ok, running
from test_api_errors import problem

JSON = {"Content-Type": "application/json"}
#: a JSON type the command route leaves to FastAPI's own handler (api/command_route.py)
PLUS_JSON = {"Content-Type": "application/x+json"}
NUL, SURROGATE = "a\x00b", "a\ud800b"


def post(client: httpx.Client, path: str, body: Any, **headers: str) -> httpx.Response:
    """``body`` as JSON with every non-ASCII character escaped: a lone surrogate travels
    as the ``\\ud800`` escape, which is valid JSON (httpx's own ``json=`` cannot send it)."""
    return client.post(path, content=json.dumps(body).encode(), headers={**JSON, **headers})


def new_round(response: httpx.Response) -> dict[str, Any]:
    """The answer of a round's creation (201)."""
    assert response.status_code == 201, response.text
    return response.json()  # type: ignore[no-any-return]


def record(game: Game) -> list[dict[str, Any]]:
    """Every row of the game, as its director reads them."""
    return ok(game.clients["director"].get(game.path("/events")))["events"]


def deep(depth: int) -> bytes:
    return b"{" + b'"a": {' * depth + b"}" * depth + b', "x": 1}'


def test_a_deep_body_is_400_on_every_route_that_takes_one(db_url: str, tmp_path: Path) -> None:
    with running(db_url, tmp_path) as server, server.client() as platform:
        game = Game.create(server, seed=4)
        created = new_round(platform.post("/v1/rounds", json={"table": {"seed": 1}, "count": 1}))
        round_path = f"/v1/rounds/{created['round_id']}"
        round_director = server.client(created["token"])
        before = record(game)
        routes = [
            (game.clients["east"], game.path("/commands")),
            (game.clients["east"], game.path("/call")),
            (game.clients["director"], game.path("/director/commands")),
            (game.clients["director"], game.path("/seats/south/token")),
            (game.clients["director"], game.path("/quarantine/lift")),
            (game.clients["director"], game.path("/spectator")),
            (platform, "/v1/games"),
            (platform, "/v1/rounds"),
            (round_director, round_path + "/start"),
            (round_director, round_path + "/spectator"),
        ]
        for client, path in routes:
            for depth in (33, 500, 1023, 9000):  # 9000: 54 KB, within the body limit
                for headers in (JSON, {}):  # the route's own reading, and FastAPI's
                    answer = client.post(path, content=deep(depth), headers=headers)
                    body = problem(answer, 400, "invalid_request")
                    assert "more than 32 levels deep" in body["detail"], (path, depth)
        # within the bound, a body is read: the route's own refusal
        within = game.clients["east"].post(game.path("/commands"), content=deep(31), headers=JSON)
        problem(within, 422, "invalid_command")
        assert record(game) == before
        assert not [line for line in server.log_lines() if line.get("level") == "error"]
        round_director.close()
        game.close()


def text_fields(game: Game, text: str) -> list[tuple[str, str, dict[str, Any], str]]:
    """(role, path, body, the field the refusal names): every free text of every route."""
    director = game.path("/director/commands")
    return [
        ("director", director, {"type": "record_ruling", "kind": "note", "text": text}, "text"),
        ("director", director, {"type": "judge_declaration", "verdict": "valid", "text": text},
         "text"),
        ("director", director, {"type": "extend_time", "seconds": 5, "reason": text}, "reason"),
        ("director", director, {"type": "hand_back", "seat": "west", "label": text}, "label"),
        ("director", director,
         {"type": "answer_call", "seat": "west", "answer": "ruling", "kind": "note", "text": text},
         "text"),
        ("west", game.path("/call"), {"reason": text}, "reason"),
        ("director", game.path("/seats/west/token"), {"label": text}, "label"),
        ("director", game.path("/quarantine/lift"), {"note": text}, "note"),
        ("platform", "/v1/games", {"players": {"east": text}}, "players.east"),
        ("platform", "/v1/games", {"ruleset": text}, "ruleset"),
        ("platform", "/v1/rounds", {"name": text, "table": {"seed": 1}, "count": 1}, "name"),
        ("platform", "/v1/rounds", {"tables": [{"seed": 1, "label": text}]}, "Table 1: label"),
    ]  # fmt: skip


@pytest.mark.rule("SVC-02", "NMJL-21")
def test_every_text_field_refuses_nul_surrogates_and_length_by_name(
    db_url: str, tmp_path: Path
) -> None:
    with running(db_url, tmp_path) as server, server.client() as platform:
        game = Game.create(server, seed=4)
        ok(game.command("east", {"type": "declare_mah_jongg"}))  # a verdict to give
        before = record(game)
        clients = {**game.clients, "platform": platform}
        for text, why in ((NUL, "NUL"), (SURROGATE, "lone surrogate"), ("x" * 3000, "at most")):
            for role, path, body, field in text_fields(game, text):
                answer = post(clients[role], path, body)
                assert answer.status_code == 422, (role, path, field, answer.text)
                detail = answer.json()["detail"]
                assert answer.json()["code"] in ("invalid_text", "invalid_command"), detail
                assert f"{field}: " in detail and why in detail, (path, detail)
        assert record(game) == before  # nothing stored, on either database
        # the same fields take text, line breaks and all
        judged = post(
            game.clients["director"],
            game.path("/director/commands"),
            {"type": "judge_declaration", "verdict": "invalid", "text": "not a hand\nof the card"},
        )
        assert ok(judged)["events"][0]["payload"]["text"] == "not a hand\nof the card"
        assert not [line for line in server.log_lines() if line.get("level") == "error"]
        game.close()


def judge_at_once(server: Any, game: Game, verdicts: tuple[str, str]) -> list[httpx.Response]:
    """Two directors' verdicts in flight together over real HTTP (two clients let go by
    one barrier): the answers, in the order they came."""
    clients = [server.client(game.tokens["director"]) for _ in verdicts]
    gate = threading.Barrier(len(verdicts))
    answers: list[httpx.Response] = []

    def judge(client: httpx.Client, verdict: str) -> None:
        gate.wait()
        body = {"type": "judge_declaration", "verdict": verdict, "text": "race"}
        answers.append(client.post(game.path("/director/commands"), json=body))

    threads = [
        threading.Thread(target=judge, args=pair) for pair in zip(clients, verdicts, strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    for client in clients:
        client.close()
    return answers


@pytest.mark.rule("NMJL-21")
def test_the_director_who_loses_the_race_to_judge_hears_it_was_judged(
    db_url: str, tmp_path: Path
) -> None:
    """Two directors judge East's Heavenly Hand invalid at once: one verdict is stored,
    the other hears that it was judged, how, and what to do (it heard "Nothing is
    declared" when the first verdict set the hand aside)."""
    with running(db_url, tmp_path) as server:
        for seed in (10, 11):
            game = Game.create(server, seed=seed)
            ok(game.command("east", {"type": "declare_mah_jongg"}))
            answers = judge_at_once(server, game, ("invalid", "invalid"))
            assert sorted(a.status_code for a in answers) == [200, 409], [a.text for a in answers]
            lost = next(a for a in answers if a.status_code == 409)
            body = problem(lost, 409, "declaration_already_judged")
            assert "already judged invalid by the director" in body["detail"], body
            assert "set aside" in body["detail"] and "ruling" in body["detail"]
            judged = [e for e in record(game) if e["type"] == "declaration_judged"]
            assert len(judged) == 1
            game.close()
        # in sequence, a valid verdict's second judge hears the game ended with it
        game = Game.create(server, seed=3)
        ok(game.command("east", {"type": "declare_mah_jongg"}))
        director = game.clients["director"]
        verdict = {"type": "judge_declaration", "verdict": "valid", "text": "a hand"}
        ok(director.post(game.path("/director/commands"), json=verdict))
        again = director.post(game.path("/director/commands"), json={**verdict, "text": "b"})
        body = problem(again, 409, "declaration_already_judged")
        assert "already judged valid" in body["detail"] and "ended" in body["detail"]
        game.close()


def test_lax_parsing_is_refused_on_both_command_routes(db_url: str, tmp_path: Path) -> None:
    """R9: a numeric command id, a body with a content encoding and two Authorization
    headers are refused, on the command route's own reading (``application/json``) and FastAPI's (a
    ``+json`` type, which FastAPI reads), and on the director's and the platform's routes."""
    with running(db_url, tmp_path) as server, server.client() as anonymous:
        game = Game.create(server, seed=6)
        before = record(game)
        east, director = game.tokens["east"], game.tokens["director"]
        routes = [
            (east, game.path("/commands"), {"type": "withdraw_pass"}),
            (director, game.path("/director/commands"), {"type": "pause_clock"}),
        ]
        for token, path, command in routes:
            for headers in (JSON, PLUS_JSON):
                auth = {"Authorization": f"Bearer {token}"}
                for number in (7, 7.5, True, [7]):
                    body = json.dumps({**command, "command_id": number}).encode()
                    answer = anonymous.post(path, content=body, headers={**headers, **auth})
                    refused = problem(answer, 400, "invalid_command_id")
                    assert "must be a JSON string" in refused["detail"], refused
                for encoding in ("gzip", "deflate", "br"):
                    answer = anonymous.post(
                        path,
                        content=json.dumps(command).encode(),
                        headers={**headers, **auth, "Content-Encoding": encoding},
                    )
                    refused = problem(answer, 415, "unsupported_content_encoding")
                    assert "Content-Encoding" in refused["detail"]
                two = [
                    *headers.items(),
                    ("Authorization", f"Bearer {token}"),
                    ("Authorization", "Bearer not-a-token"),
                ]
                answer = anonymous.post(path, content=json.dumps(command).encode(), headers=two)
                refused = problem(answer, 400, "repeated_authorization")
                assert "exactly one" in refused["detail"]
        # reads and game creation too: never the first header's role by luck
        two = [("Authorization", f"Bearer {director}"), ("Authorization", "Bearer x")]
        problem(anonymous.get(game.path("/events"), headers=two), 400, "repeated_authorization")
        gzip = {**JSON, "Content-Encoding": "gzip"}
        problem(anonymous.post("/v1/games", content=b"{}", headers=gzip), 415,
                "unsupported_content_encoding")  # fmt: skip
        assert record(game) == before
        # "identity" is no encoding at all, and a string id is taken as it is
        taken = anonymous.post(
            game.path("/commands"),
            content=b'{"type": "declare_mah_jongg", "command_id": "7"}',
            headers={**JSON, "Content-Encoding": "identity", "Authorization": f"Bearer {east}"},
        )
        assert ok(taken)["command_id"] == "7"
        game.close()

"""A fuzz of the command routes and of every free-text field with hostile values, over
real HTTP, on both databases (issue 30).

Each example takes one route's well-formed body and puts a hostile value in one of its
fields, as a new field, or around the whole body: text with NUL, lone surrogates, text
of any size (past the body limit too), values nested up to thousands deep, and values of
the wrong type. The seat's command goes both ways the service reads it: as JSON (the
hot route) and as ``application/x+json`` (FastAPI's route). Every answer must be below
500; every refusal a problem+json with a sentence; and a refusal changes nothing: the
database's games and event rows are counted before and after each one.

Bounded for CI: ``CHARLESTON_HOSTILE_EXAMPLES`` examples per database (default 40: a
few seconds on a quiet machine; 400 with ``CHARLESTON_LONG_TESTS=1``; a fixed set under
``CI=true``, new ones on every other run). The long form::

    CHARLESTON_HOSTILE_EXAMPLES=2000 ./dev test tests/test_api_hostile_fuzz.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from api_helpers import Game, ok, running
from budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text
from test_api_hostile import new_round

from charleston_fsm.store import GameStore

EXAMPLES = int(os.environ.get("CHARLESTON_HOSTILE_EXAMPLES") or examples(40, 400))

#: text no database keeps, or too much of it
HOSTILE_TEXT = st.one_of(
    st.text(max_size=8).map(lambda t: t + "\x00" + t),
    st.sampled_from(["\ud800", "a\udfffb", "\udc00\ud800", "x\ud83d"]),
    st.integers(65, 70_000).map(lambda n: "x" * n),
    st.text(st.characters(categories=["Cs", "Cc", "Lo", "So"]), max_size=12),
)
#: JSON values of every other type, and numbers past every column
WRONG_TYPE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**63, max_value=2**80),
    st.floats(allow_nan=True, allow_infinity=True),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


def nested(depth: int, leaf: Any) -> Any:
    """``leaf`` inside ``depth`` arrays and objects (built without recursion)."""
    value = leaf
    for level in range(depth):
        value = [value] if level % 2 else {"a": value}
    return value


DEEP = st.builds(nested, st.integers(2, 3000), st.one_of(st.just(1), HOSTILE_TEXT))
HOSTILE = st.one_of(HOSTILE_TEXT, WRONG_TYPE, DEEP)


def routes(game: Game, round_path: str) -> list[tuple[str, str, dict[str, Any], dict[str, str]]]:
    """(role, path, a well-formed body, headers): every route with a free text, and the
    seat's command both ways the service reads it."""
    director = game.path("/director/commands")
    json_type = {"Content-Type": "application/json"}
    fastapi = {"Content-Type": "application/x+json"}  # read by FastAPI's route, not the hot one
    return [
        ("east", game.path("/commands"), {"type": "withdraw_pass", "command_id": "c"}, json_type),
        ("east", game.path("/commands"), {"type": "vote", "choice": "stop"}, fastapi),
        ("director", director, {"type": "record_ruling", "kind": "note", "text": "t"}, json_type),
        ("director", director, {"type": "judge_declaration", "verdict": "valid", "text": "t"},
         fastapi),
        ("director", director, {"type": "extend_time", "seconds": 5, "reason": "r"}, json_type),
        ("director", director, {"type": "hand_back", "seat": "west", "label": "l"}, json_type),
        ("director", director,
         {"type": "answer_call", "seat": "west", "answer": "ruling", "kind": "note", "text": "t"},
         json_type),
        ("west", game.path("/call"), {"reason": "r", "command_id": "c"}, json_type),
        ("director", game.path("/seats/north/token"), {"label": "l"}, json_type),
        ("director", game.path("/quarantine/lift"), {"note": "n"}, json_type),
        ("platform", "/v1/games", {"players": {"east": "Ann"}, "ruleset": "nmjl"}, json_type),
        ("platform", "/v1/rounds", {"name": "R", "tables": [{"seed": 1, "label": "T"}]}, fastapi),
        ("round", round_path + "/pause", {"command_id": "c"}, json_type),
    ]  # fmt: skip


def counts(store: GameStore) -> tuple[int, ...]:
    """What the database holds: games, event rows, commands, rounds, new tokens."""
    with store.engine.connect() as conn:
        return tuple(
            conn.scalar(text(f"SELECT count(*) FROM {table}"))
            for table in ("games", "events", "commands", "rounds", "credential_changes")
        )


@st.composite
def hostile_requests(draw: st.DrawFn, count: int) -> tuple[int, str, Any]:
    """A route's index and its body with one hostile value in it."""
    index = draw(st.integers(0, count - 1))
    return index, draw(st.sampled_from(["field", "new field", "whole body"])), draw(HOSTILE)


def spoiled(body: dict[str, Any], where: str, value: Any, pick: int) -> Any:
    """``body`` with ``value`` in one field (the ``pick``-th), beside them, or as all of it."""
    if where == "whole body":
        return value
    body = dict(body)
    if where == "new field":
        body[value if isinstance(value, str) else "extra"] = value
    else:
        keys = sorted(body)
        body[keys[pick % len(keys)]] = value
    return body


def test_hostile_values_are_refused_with_a_sentence_and_change_nothing(
    db_url: str, tmp_path: Path
) -> None:
    with running(db_url, tmp_path) as server, server.client() as platform:
        store = GameStore(db_url)
        game = Game.create(server, seed=21)
        ok(game.command("east", {"type": "declare_mah_jongg"}))  # a verdict to give
        created = new_round(platform.post("/v1/rounds", json={"table": {"seed": 2}, "count": 1}))
        round_client = server.client(created["token"])
        clients = {**game.clients, "platform": platform, "round": round_client}
        table = routes(game, f"/v1/rounds/{created['round_id']}")
        seen: set[int] = set()

        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            derandomize=os.environ.get("CI") == "true",
            suppress_health_check=list(HealthCheck),
        )
        @given(request=hostile_requests(len(table)), pick=st.integers(0, 8))
        def send(request: tuple[int, str, Any], pick: int) -> None:
            index, where, value = request
            role, path, body, headers = table[index]
            sent = spoiled(body, where, value, pick)
            before = counts(store)
            answer = clients[role].post(path, content=json.dumps(sent).encode(), headers=headers)
            assert answer.status_code < 500, (path, answer.text[:500])
            if answer.status_code < 400:
                return
            seen.add(answer.status_code)
            assert answer.headers["content-type"] == "application/problem+json", answer.text
            problem = answer.json()
            assert problem["status"] == answer.status_code
            detail = problem["detail"]
            assert isinstance(detail, str) and " " in detail.strip(), problem
            assert counts(store) == before, (path, problem)  # a refusal stores nothing

        try:
            send()
        finally:
            round_client.close()
            game.close()
            store.dispose()
        assert seen & {400, 422}, seen
        assert not [line for line in server.log_lines() if line.get("level") == "error"]

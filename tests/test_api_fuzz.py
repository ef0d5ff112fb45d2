"""A property-based fuzz of every operation of ``/openapi.json``, over real HTTP.

Schemathesis generates requests from the document the running service publishes, both
fitting it (positive) and not (negative); this test aims them at a real game with real
tokens of every role (so they reach past 401 and 404) or at hostile values (NUL bytes,
integers past any column, non-ASCII digits, long strings). Every answer must be
documented for its operation (status and content type), conform to its documented
schema, never be a 5xx, and every error must be a problem+json with the documented
fields. Bounded for CI: ``CHARLESTON_FUZZ_EXAMPLES`` examples per operation and mode
(default 20, 200 with ``CHARLESTON_LONG_TESTS=1``; a fixed set under ``CI=true``, new
ones on every other run); set it to a few hundred for the long form.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import requests
import schemathesis
from api_helpers import Game, running
from budget import examples
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

EXAMPLES = int(os.environ.get("CHARLESTON_FUZZ_EXAMPLES") or examples(20, 200))
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
PROBLEM_FIELDS = {"type", "title", "status", "detail", "code", "kind", "rule"}
#: values seen to break services like this one: NUL, integers past INTEGER and BIGINT,
#: digits int() takes that are not ASCII, long strings (a lone surrogate cannot travel
#: in a URL or header: tests/test_api_input.py sends one in a body)
HOSTILE = [
    "a\x00b",
    "2147483648",
    str(2**63),
    str(10**20),
    "\u0663",
    "\u00b2",
    "9" * 5000,
    "x" * 5000,
    "-1",
]
SEQ_HEADERS = ("Last-Event-ID",)


def fuzz_operation(
    operation: Any, mode: schemathesis.GenerationMode, game: Game, base_url: str
) -> None:
    tokens = {**game.tokens, "unknown": "not-a-token"}
    roles = ["east", "director", "south", "west", "north", "unknown"]  # early ones drawn most
    seats = game.view("director")["seats"]
    racks = {seat: [t["id"] for t in seats[seat]["rack"]] for seat in seats}

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=os.environ.get("CI") == "true",  # CI: the same examples each run
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(
        case=operation.as_strategy(generation_mode=mode),
        who=st.sampled_from([*roles, None]),
        aim=st.sampled_from(["game", "game", "generated", "hostile"]),
        hostile=st.sampled_from(HOSTILE),
        data=st.data(),
    )
    def run(case: Any, who: str | None, aim: str, hostile: str, data: st.DataObject) -> None:
        aim_at(case, game, aim, hostile)
        if aim == "game" and case.path.endswith("/commands") and isinstance(case.body, dict):
            case.body = data.draw(commands(racks.get(who, [])))
        if who is not None:
            case.headers = {**(case.headers or {}), "Authorization": f"Bearer {tokens[who]}"}
        response = send(case, base_url)
        case.validate_response(response, checks=CHECKS)
        if response.status_code >= 400:
            assert response.headers["content-type"] == "application/problem+json"
            body = response.json()
            assert set(body) >= PROBLEM_FIELDS, body
            assert body["status"] == response.status_code
            assert body["type"].endswith(body["code"])

    try:
        run()
    except Unsatisfiable:
        # only a negative run can be: no value of this operation's inputs (say, a
        # path string of any content) goes against the document
        assert mode == schemathesis.GenerationMode.NEGATIVE, operation.label


def real(game: Game) -> dict[str, str]:
    return {"game_id": game.game_id, "name": "nmjl"}


def commands(rack: list[int]) -> st.SearchStrategy[dict[str, Any]]:
    """Commands that could be valid now: every type, tiles from the seat's dealt rack."""
    return st.one_of(
        st.fixed_dictionaries(
            {
                "type": st.sampled_from(["confirm_pass", "change_pass"]),
                "tiles": st.lists(st.sampled_from(rack or [0]), min_size=3, max_size=3),
            },
            optional={"blind": st.integers(0, 3), "command_id": st.text(max_size=8)},
        ),
        st.sampled_from(
            [
                {"type": "place_tiles"},
                {"type": "withdraw_pass"},
                {"type": "vote", "choice": "stop"},
                {"type": "vote", "choice": "continue"},
                {"type": "offer_courtesy", "count": 2},
                {"type": "declare_mah_jongg"},
                {"type": "challenge_dead_hand", "target": "west"},
            ]
        ),
    )


def aim_at(case: Any, game: Game, aim: str, hostile: str) -> None:
    """Point the case at the real game, or put a hostile value where a value goes."""
    path = case.path_parameters or {}
    if aim == "game":
        path.update({k: v for k, v in real(game).items() if k in path})
    if aim != "hostile":
        return
    spots = [(path, key) for key in path]
    spots += [(case.query, key) for key in (case.query or {})]
    if hostile.isprintable():  # a NUL in a header is not HTTP: uvicorn answers it, in text
        spots += [(case.headers, key) for key in (case.headers or {}) if key in SEQ_HEADERS]
    if spots:
        container, key = spots[len(hostile) % len(spots)]
        container[key] = hostile


def send(case: Any, base_url: str) -> requests.Response:
    """The case over HTTP; a stream's 200 is only read up to its headers."""
    kwargs = case.as_transport_kwargs(base_url=base_url)
    headers = {
        k: v.encode() if isinstance(v, str) and not v.isascii() else v
        for k, v in (kwargs.pop("headers", None) or {}).items()
    }
    response = requests.request(**kwargs, headers=headers, stream=True, timeout=30)
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        response.close()
        response._content = b""
    return response


@pytest.mark.slow
def test_every_operation_answers_as_documented(db_url: str, tmp_path: Path) -> None:
    with running(db_url, tmp_path) as server:
        game = Game.create(server, seed=17, players={"east": "Ann"})
        schema = schemathesis.openapi.from_url(f"{server.base_url}/openapi.json")
        operations = [result.ok() for result in schema.get_all_operations()]
        assert len(operations) >= 15
        for operation in operations:
            for mode in schemathesis.GenerationMode:
                fuzz_operation(operation, mode, game, server.base_url)
        assert not [line for line in server.log_lines() if line.get("level") == "error"]
        game.close()

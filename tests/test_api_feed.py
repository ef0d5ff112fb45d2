"""The feed as a platform's reader meets it over a real ``serve`` (SQLite file): hostile
cursors and types refused with a sentence and never a 5xx, filtered pages and streams
reading on past what they skip, and a stream held open across body-timeout periods
with heartbeats and checkpoints, nothing in the log.

The stream is held ``CHARLESTON_FEED_HOLD_SECONDS`` (default 3: three of the test
server's 1 s body-timeout periods); the long form holds it 2 minutes::

    CHARLESTON_FEED_HOLD_SECONDS=120 ./dev test tests/test_api_feed.py -k stays_open
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import httpx
import pytest
from api_helpers import Server, running

KEY = "the-platform-key"
ENV = {"CHARLESTON_PLATFORM_KEY": KEY}
AUTH = {"Authorization": f"Bearer {KEY}"}
HOLD_SECONDS = float(os.environ.get("CHARLESTON_FEED_HOLD_SECONDS") or 3)


@pytest.fixture
def server(sqlite_url: str, tmp_path: Path):
    # a body must arrive within 1 s; heartbeats every second (checkpoints as often)
    env = {**ENV, "CHARLESTON_BODY_TIMEOUT": "1", "CHARLESTON_FEED_HEARTBEAT": "1"}
    with running(sqlite_url, tmp_path, env=env) as serving:
        yield serving


def api(server: Server, method: str, path: str, **kwargs) -> httpx.Response:
    headers = {**AUTH, **kwargs.pop("headers", {})}
    return httpx.request(method, f"{server.base_url}{path}", headers=headers, timeout=30, **kwargs)


def opened(server: Server, query: str) -> httpx.Response:
    """The stream's answer to ``query`` (raw, already encoded), read as far as its status."""
    url = f"{server.base_url}/v1/feed/stream?{query}"
    with httpx.stream("GET", url, headers=AUTH, timeout=30) as answer:
        if answer.status_code != 200:
            answer.read()
        return answer


#: cursors the feed never gave, malformed or well-formed (raw query text)
HOSTILE_CURSORS = [
    "p", "p-1", "p1e3", "p%201", "p1%0A", "P1", "1", "x" * 5000, "p" + "9" * 30,
    "%00", "p%00", "%ED%A0%80", "p%D9%A1", "%E2%80%AE", "p1%0D%0A",
]  # fmt: skip
HOSTILE_TYPES = [
    "nope", "game.nope", "GAME.CREATED", "*", "x" * 100, "%00", "%ED%A0%80",
    "game.created&types=nope", "..", "game%0Acreated",
]  # fmt: skip


def test_hostile_cursors_and_types_are_refused_with_a_sentence_never_a_5xx(
    server: Server,
) -> None:
    for seed in (1, 2):
        assert api(server, "POST", "/v1/games", json={"seed": seed}).status_code == 201
    whole = api(server, "GET", "/v1/feed").json()
    head = whole["entries"][-1]["cursor"]
    for query in ("after=p999999", f"after=p{int(head[1:]) + 1}"):
        for answer in (api(server, "GET", f"/v1/feed?{query}"), opened(server, query)):
            problem = answer.json()
            assert answer.status_code == 400 and problem["code"] == "cursor_ahead", problem
            assert "past the newest entry" in problem["detail"] and head in problem["detail"]
    for cursor in HOSTILE_CURSORS:
        for answer in (
            api(server, "GET", f"/v1/feed?after={cursor}"),
            opened(server, f"after={cursor}"),
        ):
            assert 400 <= answer.status_code < 500, (cursor, answer.status_code, answer.text)
            assert answer.json()["detail"], cursor
    for types in HOSTILE_TYPES:
        for answer in (
            api(server, "GET", f"/v1/feed?types={types}"),
            opened(server, f"types={types}"),
        ):
            assert answer.status_code == 422, (types, answer.status_code, answer.text)
            assert answer.json()["detail"], types
    unknown = api(server, "GET", "/v1/feed?types=game.created&types=game.won").json()
    assert unknown["code"] == "unknown_entry_type" and "game.won" in unknown["detail"]
    # what the feed gave stays good: its head, and a known type
    assert api(server, "GET", f"/v1/feed?after={head}").json() == {"entries": [], "next": head}
    assert api(server, "GET", "/v1/feed?types=game.created").status_code == 200
    assert not [line for line in server.log_lines() if line.get("level") == "error"]


def test_a_filtered_page_reads_on_past_what_it_skipped(server: Server) -> None:
    for seed in (1, 2, 3):
        assert api(server, "POST", "/v1/games", json={"seed": seed}).status_code == 201
    head = api(server, "GET", "/v1/feed").json()["next"]
    page = api(server, "GET", "/v1/feed", params={"types": "round.created"}).json()
    assert page == {"entries": [], "next": head}  # past the three it skipped
    made = api(server, "POST", "/v1/rounds", json={"table": {"seed": 4}, "count": 1})
    assert made.status_code == 201, made.text
    later = api(server, "GET", "/v1/feed", params={"types": "round.created", "after": head}).json()
    assert [e["type"] for e in later["entries"]] == ["round.created"]
    assert later["next"] == api(server, "GET", "/v1/feed", params={"after": head}).json()["next"]


def test_the_stream_stays_open_with_heartbeats_and_checkpoints(server: Server) -> None:
    """A filtered stream held across several body-timeout periods: heartbeat comments
    keep coming, a checkpoint moves its id past the entries it skipped, an entry it
    wants arrives on the same connection, and the log has no error line from then on
    (the server's start, shared by the module's tests, may warn of its new anchor key)."""
    since = len(server.log_lines())
    made = api(server, "POST", "/v1/games", json={"seed": 1})  # skipped by the filter
    assert made.status_code == 201
    skipped = api(server, "GET", "/v1/feed").json()["next"]
    heartbeats, checkpoints, entries = 0, [], []
    started = time.monotonic()
    round_made = threading.Event()
    url = f"{server.base_url}/v1/feed/stream?types=round.created"
    with httpx.stream("GET", url, headers=AUTH, timeout=30) as stream:
        assert stream.status_code == 200
        event = None
        for line in stream.iter_lines():
            if line.startswith(":"):
                heartbeats += 1
            elif line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                (checkpoints if event == "checkpoint" else entries).append(json.loads(line[5:]))
            held = time.monotonic() - started
            if held >= HOLD_SECONDS and checkpoints and not round_made.is_set():
                round_made.set()  # held long enough: now something the filter wants
                body = {"table": {"seed": 2}, "count": 1}
                assert api(server, "POST", "/v1/rounds", json=body).status_code == 201
            if entries:
                break
            assert held < HOLD_SECONDS + 60, (heartbeats, checkpoints, entries)
    held = time.monotonic() - started
    assert held >= HOLD_SECONDS and heartbeats >= 2
    assert checkpoints[0]["cursor"] == skipped  # past the game it skipped
    assert [e["type"] for e in entries] == ["round.created"]
    assert int(entries[0]["cursor"][1:]) > int(skipped[1:])
    logged = server.log_lines()[since:]
    assert not [line for line in logged if line.get("level") in ("error", "warning")], logged
    assert not [line for line in logged if line.get("status") == 408]

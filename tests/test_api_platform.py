"""The platform's routes over a real ``serve`` (SQLite file): the feed as pages and as a
stream, webhook endpoints registered, listed, paused, resumed, deleted and their log,
every route behind the platform key."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest
from api_helpers import Server, running
from feed_helpers import assert_no_tiles, receiver

from charleston_fsm.ledger.webhook_signatures import verify

KEY = "the-platform-key"
ENV = {"CHARLESTON_PLATFORM_KEY": KEY, "CHARLESTON_WEBHOOK_ALLOW": "127.0.0.1"}
AUTH = {"Authorization": f"Bearer {KEY}"}


@pytest.fixture
def server(sqlite_url: str, tmp_path: Path):
    with running(sqlite_url, tmp_path, env=ENV) as serving:
        yield serving


def api(server: Server, method: str, path: str, **kwargs) -> httpx.Response:
    headers = {**AUTH, **kwargs.pop("headers", {})}
    return httpx.request(method, f"{server.base_url}{path}", headers=headers, timeout=30, **kwargs)


def test_every_platform_route_wants_the_platform_key(server: Server) -> None:
    for method, path in (
        ("GET", "/v1/feed"),
        ("GET", "/v1/feed/stream"),
        ("POST", "/v1/webhooks"),
        ("GET", "/v1/webhooks"),
        ("GET", "/v1/webhooks/ep_x"),
        ("POST", "/v1/webhooks/ep_x/pause"),
        ("POST", "/v1/webhooks/ep_x/resume"),
        ("DELETE", "/v1/webhooks/ep_x"),
    ):
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            answer = httpx.request(method, f"{server.base_url}{path}", headers=headers)
            assert answer.status_code in (401, 403), (method, path, answer.text)


def test_the_feed_pages_and_streams_from_a_cursor(server: Server) -> None:
    for seed in (1, 2, 3):
        assert api(server, "POST", "/v1/games", json={"seed": seed}).status_code == 201
    page = api(server, "GET", "/v1/feed", params={"limit": 2}).json()
    assert [e["type"] for e in page["entries"]] == ["game.created"] * 2
    rest = api(server, "GET", "/v1/feed", params={"after": page["next"]}).json()
    assert len(rest["entries"]) == 1 and rest["entries"][0]["cursor"] == rest["next"]
    for entry in page["entries"] + rest["entries"]:
        assert_no_tiles(entry)
    bad = api(server, "GET", "/v1/feed", params={"after": "yesterday"})
    assert bad.status_code == 400 and "not a feed cursor" in bad.json()["detail"]
    only = api(server, "GET", "/v1/feed", params={"types": "round.created"}).json()
    assert only["entries"] == []

    # the stream: from Last-Event-ID (a reconnecting EventSource), ids are cursors
    first = page["entries"][0]["cursor"]
    headers = {**AUTH, "Last-Event-ID": first}
    events = []
    with httpx.stream(
        "GET", f"{server.base_url}/v1/feed/stream", headers=headers, timeout=30
    ) as stream:
        for line in stream.iter_lines():
            if line.startswith("data:"):
                events.append(json.loads(line[5:]))
            if len(events) == 2:
                break
    assert [e["cursor"] for e in events] == [
        page["entries"][1]["cursor"],
        rest["entries"][0]["cursor"],
    ]


def test_webhook_endpoints_and_their_delivery_log(server: Server) -> None:
    refused = api(server, "POST", "/v1/webhooks", json={"url": "http://10.0.0.1/hook"})
    assert refused.status_code == 422 and "private, loopback" in refused.json()["detail"]
    unknown = api(
        server,
        "POST",
        "/v1/webhooks",
        json={"url": "http://127.0.0.1/", "event_types": ["game.won"]},
    )
    assert unknown.status_code == 422 and "Unknown entry types" in unknown.json()["detail"]
    with receiver() as got:
        made = api(
            server, "POST", "/v1/webhooks", json={"url": got.url, "event_types": ["game.created"]}
        )
        assert made.status_code == 201, made.text
        endpoint = made.json()
        assert endpoint["secret"].startswith("whsec_") and endpoint["status"] == "active"
        assert api(server, "POST", "/v1/games", json={"seed": 4}).status_code == 201
        got.wait_for(lambda: len(got.accepted()) == 1)
        [delivery] = got.accepted()
        assert verify(delivery.headers, delivery.body, secret=endpoint["secret"])
        listed = api(server, "GET", "/v1/webhooks").json()["endpoints"]
        assert [e["id"] for e in listed] == [endpoint["id"]] and "secret" not in listed[0]

        paused = api(server, "POST", f"/v1/webhooks/{endpoint['id']}/pause").json()
        assert paused["status"] == "paused"
        assert api(server, "POST", "/v1/games", json={"seed": 5}).status_code == 201
        time.sleep(0.2)  # not an assertion of timing: the log below says it is pending
        deadline = time.monotonic() + 30
        while True:
            log = api(server, "GET", f"/v1/webhooks/{endpoint['id']}").json()
            if log["pending"] == 1 or time.monotonic() > deadline:
                break
        assert log["pending"] == 1 and log["delivered"] == 1
        assert log["attempts"][0]["status_code"] == 204
        api(server, "POST", f"/v1/webhooks/{endpoint['id']}/resume")
        got.wait_for(lambda: len(got.accepted()) == 2)
        assert api(server, "DELETE", f"/v1/webhooks/{endpoint['id']}").status_code == 204
        assert api(server, "GET", f"/v1/webhooks/{endpoint['id']}").status_code == 404

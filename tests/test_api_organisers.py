"""Organisers' keys over real HTTP (``charleston-fsm serve`` processes): every route of the
service tried with organiser A's key against organiser B's (and the platform's) games
and rounds, refused with nothing stored; the same routes on A's own resources answered
as their own director's tokens are answered; and keys rotated and revoked across two
processes, the old key refused at once here and within a second there. The feed and the
webhooks too: A's feed holds none of B's entries, A's key cannot touch B's endpoints, and
A's endpoint (a real receiver) gets none of B's entries.

The routes are enumerated from the FastAPI application itself, so a route added later
and not classified here fails :func:`test_every_route_is_classified`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_helpers import Server, cli, ok, running
from fastapi import routing
from feed_helpers import Receiver, receiver
from sqlalchemy import func, select
from test_api_errors import problem

from charleston_fsm.api.app import create_app
from charleston_fsm.store import GameStore, hash_token
from charleston_fsm.store.database.models import FeedRow, OrganiserRow, WebhookOutboxRow, metadata

PLATFORM_KEY = "platform-key-of-the-organisers-test"
ENV = {"CHARLESTON_PLATFORM_KEY": PLATFORM_KEY, "CHARLESTON_WEBHOOK_ALLOW": "127.0.0.1"}

# What each route is, for an organiser's key (method, path template) -> kind:
#   public     takes no token: the key may get no more than an anonymous caller
#   game       a game's seat or director route (``authenticate``): the key directs its own
#              games (a seat route refuses it as it refuses a director's token)
#   round      a round director's route: the key directs its own rounds
#   spectator  a spectator link's route: no director's token opens it, nor the key
#   platform   organiser management: the platform key only
#   organiser  one organiser: the platform key or that organiser's own key
#   create     creates a game, round or webhook endpoint: the key's own
#   list       lists games or rounds: the key's own
#   scoped     the feed and the webhook endpoints: the key sees its own organiser's only
#   webhook    one webhook endpoint: the platform key, or its organiser's own key
ROUTES: dict[tuple[str, str], str] = {
    ("GET", "/openapi.json"): "public",
    ("GET", "/docs"): "public",
    ("GET", "/docs/oauth2-redirect"): "public",
    ("GET", "/redoc"): "public",
    ("GET", "/healthz"): "public",
    ("GET", "/readyz"): "public",
    ("GET", "/"): "public",
    ("GET", "/table/{game_id}"): "public",
    ("GET", "/desk/{game_id}"): "public",
    ("GET", "/room/{round_id}"): "public",
    ("GET", "/watch/round/{round_id}"): "public",
    ("GET", "/watch/{game_id}"): "public",
    ("GET", "/rounds/new"): "public",
    ("GET", "/compare/{round_id}"): "public",
    ("GET", "/static/{path}"): "public",
    ("GET", "/v1/anchor-key"): "public",
    ("GET", "/v1/rulesets"): "public",
    ("GET", "/v1/rulesets/{name}"): "public",
    ("GET", "/v1/rulesets/{name}/diagram"): "public",
    ("POST", "/v1/games"): "create",
    ("POST", "/v1/rounds"): "create",
    ("GET", "/v1/games"): "list",
    ("GET", "/v1/rounds"): "list",
    ("POST", "/v1/organisers"): "platform",
    ("GET", "/v1/organisers"): "platform",
    ("POST", "/v1/organisers/{organiser_id}/key"): "platform",
    ("DELETE", "/v1/organisers/{organiser_id}/key"): "platform",
    ("GET", "/v1/organisers/{organiser_id}"): "organiser",
    ("POST", "/v1/webhooks"): "create",
    ("GET", "/v1/feed"): "scoped",
    ("GET", "/v1/feed/stream"): "scoped",
    ("GET", "/v1/webhooks"): "scoped",
    ("GET", "/v1/webhooks/{endpoint_id}"): "webhook",
    ("POST", "/v1/webhooks/{endpoint_id}/pause"): "webhook",
    ("POST", "/v1/webhooks/{endpoint_id}/resume"): "webhook",
    ("DELETE", "/v1/webhooks/{endpoint_id}"): "webhook",
    ("POST", "/v1/webhooks/{endpoint_id}/rotate-secret"): "webhook",
    ("POST", "/v1/webhooks/{endpoint_id}/recover"): "webhook",
    ("POST", "/v1/webhooks/{endpoint_id}/resend/{entry_id}"): "webhook",
    ("GET", "/v1/games/{game_id}"): "game",
    ("POST", "/v1/games/{game_id}/commands"): "game",
    ("GET", "/v1/games/{game_id}/events"): "game",
    ("GET", "/v1/games/{game_id}/replay"): "game",
    ("GET", "/v1/games/{game_id}/stream"): "game",
    ("GET", "/v1/games/{game_id}/audit"): "game",
    ("GET", "/v1/games/{game_id}/verify"): "game",
    ("GET", "/v1/games/{game_id}/quarantine"): "game",
    ("POST", "/v1/games/{game_id}/quarantine/lift"): "game",
    ("GET", "/v1/games/{game_id}/diagram"): "game",
    ("POST", "/v1/games/{game_id}/director/commands"): "game",
    ("POST", "/v1/games/{game_id}/call"): "game",
    ("POST", "/v1/games/{game_id}/present"): "game",
    ("POST", "/v1/games/{game_id}/seats/{seat}/token"): "game",
    ("POST", "/v1/games/{game_id}/spectator"): "game",
    ("DELETE", "/v1/games/{game_id}/spectator"): "game",
    ("GET", "/v1/games/{game_id}/record"): "game",
    ("GET", "/v1/games/{game_id}/replay/diagram"): "game",
    ("POST", "/v1/games/{game_id}/bot"): "game",
    ("DELETE", "/v1/games/{game_id}/bot"): "game",
    ("GET", "/v1/rounds/{round_id}"): "round",
    ("POST", "/v1/rounds/{round_id}/start"): "round",
    ("POST", "/v1/rounds/{round_id}/pause"): "round",
    ("POST", "/v1/rounds/{round_id}/resume"): "round",
    ("POST", "/v1/rounds/{round_id}/spectator"): "round",
    ("DELETE", "/v1/rounds/{round_id}/spectator"): "round",
    ("GET", "/v1/rounds/{round_id}/results"): "round",
    ("GET", "/v1/rounds/{round_id}/comparison"): "round",
    ("GET", "/v1/games/{game_id}/spectate"): "spectator",
    ("GET", "/v1/games/{game_id}/spectate/events"): "spectator",
    ("GET", "/v1/games/{game_id}/spectate/stream"): "spectator",
    ("GET", "/v1/rounds/{round_id}/spectate"): "spectator",
}

#: a body or query that passes validation, per route (the refusal must be the key's)
BODIES: dict[tuple[str, str], dict[str, Any]] = {
    ("POST", "/v1/games/{game_id}/commands"): {"json": {"type": "place_tiles"}},
    ("POST", "/v1/games/{game_id}/call"): {"json": {"reason": "a question"}},
    ("POST", "/v1/games/{game_id}/quarantine/lift"): {"json": {"note": "checked"}},
    ("POST", "/v1/games/{game_id}/director/commands"): {
        "json": {"type": "record_ruling", "kind": "note", "text": "seen", "command_id": "r1"}
    },
    ("POST", "/v1/games/{game_id}/seats/{seat}/token"): {"json": {"label": "substitute"}},
    ("POST", "/v1/games/{game_id}/spectator"): {"json": {"delay": 0}},
    ("POST", "/v1/rounds/{round_id}/start"): {"json": {"command_id": "s1"}},
    ("POST", "/v1/rounds/{round_id}/pause"): {"json": {"command_id": "p1"}},
    ("POST", "/v1/rounds/{round_id}/resume"): {"json": {"command_id": "r1"}},
    ("POST", "/v1/rounds/{round_id}/spectator"): {"json": {"delay": 0}},
    ("POST", "/v1/webhooks/{endpoint_id}/rotate-secret"): {"json": {"grace_seconds": 60}},
    ("POST", "/v1/webhooks/{endpoint_id}/recover"): {"json": {"since": "2026-01-01T00:00:00Z"}},
    ("GET", "/v1/games/{game_id}/diagram"): {"params": {"format": "mermaid"}},
    ("GET", "/v1/games/{game_id}/replay/diagram"): {"params": {"seq": 1, "format": "mermaid"}},
    ("GET", "/v1/rulesets/{name}/diagram"): {"params": {"format": "mermaid"}},
    ("POST", "/v1/games"): {"json": {"seed": 5}},
    ("POST", "/v1/rounds"): {"json": {"table": {"seed": 6}, "count": 2}},
    ("POST", "/v1/organisers"): {"json": {"name": "Sneaky"}},
}
STREAMS = {
    "/v1/games/{game_id}/stream",
    "/v1/games/{game_id}/spectate/stream",
    "/v1/feed/stream",
}


def app_routes(url: str) -> set[tuple[str, str]]:
    """Every (method, path) the service's application serves (HEAD aside)."""
    store = GameStore(url)
    try:
        app = create_app(store, platform_key=PLATFORM_KEY, clock_interval=None)
        found = set()
        for context in routing.iter_route_contexts(app.routes):
            methods = getattr(context, "methods", None) or {"GET"}  # a mount serves GET
            for method in methods - {"HEAD"}:
                found.add((method, context.path_format))
        return found
    finally:
        store.dispose()


def test_every_route_is_classified(sqlite_url: str) -> None:
    """A new route must say here what an organiser's key may do with it."""
    served = app_routes(sqlite_url)
    assert served - ROUTES.keys() == set(), "classify these routes in ROUTES"
    assert ROUTES.keys() - served == set(), "these routes are gone: remove them from ROUTES"


# -- the world: two organisers, the platform, and what each created ----------------------------
@dataclass
class Organiser:
    organiser_id: str
    key: str


@dataclass
class Target:
    """The ids a route's path is filled with, and who else may open them."""

    game_id: str
    round_id: str
    director: str  # the game's own director token
    round_token: str  # the round's own token
    endpoint_id: str = ""  # a webhook endpoint made with the same key


def create_organiser(platform: httpx.Client, name: str) -> Organiser:
    created = platform.post("/v1/organisers", json={"name": name})
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["name"] == name and body["active"] is True
    assert created.headers["location"] == f"/v1/organisers/{body['organiser_id']}"
    return Organiser(body["organiser_id"], body["key"])


def create_target(
    server: Server, key: str, *, start: str = "now", hook: Receiver | None = None
) -> Target:
    """A game and a round of two tables, created with ``key`` (and first, with ``hook``,
    a webhook endpoint sending to it, which gets the entries of what follows)."""
    endpoint_id = ""
    with server.client(key) as client:
        if hook is not None:
            endpoint = client.post("/v1/webhooks", json={"url": hook.url})
            assert endpoint.status_code == 201, endpoint.text
            endpoint_id = endpoint.json()["id"]
        game = client.post("/v1/games", json={"seed": 11, "start": start})
        assert game.status_code == 201, game.text
        table = {"seed": 12, "clock": {"confirm_pass": 600}}
        round_ = client.post("/v1/rounds", json={"table": table, "count": 2, "start": start})
        assert round_.status_code == 201, round_.text
    return Target(
        game.json()["game_id"],
        round_.json()["round_id"],
        game.json()["tokens"]["director"],
        round_.json()["token"],
        endpoint_id,
    )


def acts_last(route: tuple[str, str]) -> tuple[int, tuple[str, str]]:
    """Start a round before pausing it, and pause it (or an endpoint) before resuming it;
    delete the endpoint last of all."""
    if route == ("DELETE", "/v1/webhooks/{endpoint_id}"):
        return 4, route
    acts = ("/start", "/pause", "/resume")
    last = [i for i, act in enumerate(acts, start=1) if route[1].endswith(act)]
    return (last[0] if last else 0), route


def fill(path: str, target: Target, organiser_id: str) -> str:
    return (
        path.replace("{game_id}", target.game_id)
        .replace("{round_id}", target.round_id)
        .replace("{organiser_id}", organiser_id)
        .replace("{endpoint_id}", target.endpoint_id)
        .replace("{entry_id}", "0" * 32)  # no such delivery: 404 for the endpoint's owner
        .replace("{seat}", "east")
        .replace("{name}", "nmjl")
        .replace("{path}", "api.js")
    )


def call(client: httpx.Client, method: str, template: str, path: str) -> tuple[int, str | None]:
    """The status and problem code of one request (a stream: its status, then closed)."""
    extra = BODIES.get((method, template), {})
    if template in STREAMS:
        with client.stream(method, path, **extra) as response:
            if response.status_code == 200:
                return 200, None
            response.read()
    else:
        response = client.request(method, path, **extra)
    if response.headers.get("content-type") == "application/problem+json":
        return response.status_code, response.json()["code"]
    return response.status_code, None


def snapshot(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table of the store: what "nothing changed" is checked against."""
    store = GameStore(url)
    try:
        with store.engine.connect() as conn:
            return {
                table.name: sorted(
                    (tuple(map(repr, row)) for row in conn.execute(select(table))), key=repr
                )
                for table in metadata.sorted_tables
            }
    finally:
        store.dispose()


def settle(url: str) -> None:
    """Wait until the serve process's background work is done (every outbox row sent, and
    on PostgreSQL every feed entry positioned): what a snapshot is compared against."""
    store = GameStore(url)
    try:

        def quiet() -> bool:
            with store.engine.connect() as conn:
                pending = conn.execute(
                    select(func.count()).where(WebhookOutboxRow.status == "pending")
                ).scalar()
                unplaced = conn.execute(
                    select(func.count()).where(FeedRow.position.is_(None))
                ).scalar()
            return pending == 0 and (store.core.dialect == "sqlite" or unplaced == 0)

        wait_until(quiet, "the deliveries and the feed's positions", timeout=120)
    finally:
        store.dispose()


def feed_of(client: httpx.Client) -> list[dict[str, Any]]:
    """Every entry of the feed the client's key reads, page by page."""
    entries: list[dict[str, Any]] = []
    after = None
    while True:
        page = ok(
            client.get("/v1/feed", params={"limit": 7, **({"after": after} if after else {})})
        )
        entries += page["entries"]
        if len(page["entries"]) < 7:
            return entries
        after = page["next"]


@contextmanager
def world(url: str, tmp_path: Path) -> Iterator[tuple[Server, Organiser, Organiser]]:
    with running(url, tmp_path, env=ENV) as server, server.client(PLATFORM_KEY) as platform:
        first = create_organiser(platform, "Organiser A")
        second = create_organiser(platform, "Organiser B")
        yield server, first, second


# -- the test of every route --------------------------------------------------------------------
EXPECTED_REFUSAL = {
    "game": (403, "not_your_game"),
    "round": (403, "not_your_round"),
    "spectator": (401, "invalid_token"),
    "platform": (403, "platform_key_only"),
    "organiser": (403, "not_your_organiser"),
    "webhook": (403, "not_your_webhook"),
}


@pytest.mark.rule("SVC-05")
def test_an_organisers_key_is_refused_every_route_of_another_and_directs_its_own(
    db_url: str, tmp_path: Path
) -> None:
    with (
        world(db_url, tmp_path) as (server, a, b),
        receiver() as a_got,
        receiver() as b_got,
        receiver() as everything_got,
        receiver() as spare,
    ):
        with server.client(a.key) as key:
            made = key.post("/v1/webhooks", json={"url": a_got.url})
        assert made.status_code == 201 and made.json()["organiser_id"] == a.organiser_id
        a_hook = made.json()["id"]
        with server.client(PLATFORM_KEY) as platform:
            made = platform.post("/v1/webhooks", json={"url": everything_got.url})
        assert made.status_code == 201 and made.json()["organiser_id"] is None
        theirs = create_target(server, b.key, hook=b_got)
        platforms = create_target(server, PLATFORM_KEY, hook=spare)
        # a table of B's round, as well as B's single game and the platform's
        with server.client(b.key) as client:
            b_table = ok(client.get(f"/v1/rounds/{theirs.round_id}"))["tables"][0]["game_id"]
        targets = [theirs, Target(b_table, theirs.round_id, "", "", theirs.endpoint_id), platforms]
        served = app_routes(db_url)
        settle(db_url)
        before = snapshot(db_url)
        with server.client(a.key) as key, server.client() as anonymous:
            tried = set()
            for target in targets:
                for method, template in sorted(served):
                    kind = ROUTES[(method, template)]
                    path = fill(template, target, b.organiser_id)
                    if kind == "create":
                        continue  # creates A's own: tried below
                    got = call(key, method, template, path)
                    if kind == "public":
                        expected = call(anonymous, method, template, path)
                    elif kind == "list":
                        got = call(key, method, template, f"{path}?organiser={b.organiser_id}")
                        expected = (403, "not_your_organiser")
                    elif kind == "scoped":
                        expected = (200, None)  # what it holds: A's own (below)
                    else:
                        expected = EXPECTED_REFUSAL[kind]
                    assert got == expected, (method, path, kind)
                    tried.add((method, template))
        assert tried == served - {k for k, v in ROUTES.items() if v == "create"}
        assert snapshot(db_url) == before, "a refused request changed the store"

        # A's own: each route answers A's key as it answers the game's director token and
        # the round's token (the platform key: a feed or an endpoint), on twin games, rounds
        # and endpoints made alike
        own, twin = (
            create_target(server, a.key, start="held", hook=spare),
            create_target(server, a.key, start="held", hook=spare),
        )
        with server.client(a.key) as key:
            for method, template in sorted(served, key=acts_last):
                kind = ROUTES[(method, template)]
                if kind in ("create", "list"):
                    continue
                path, twin_path = (fill(template, t, a.organiser_id) for t in (own, twin))
                got = call(key, method, template, path)
                token = {"round": twin.round_token, "scoped": PLATFORM_KEY, "webhook": PLATFORM_KEY}
                with server.client(token.get(kind, twin.director)) as director:
                    expected = call(director, method, template, twin_path)
                if kind == "platform":
                    assert got == (403, "platform_key_only"), (method, path)
                elif kind == "organiser":
                    assert got[0] == 200, (method, path, got)
                else:
                    assert got == expected, (method, path, kind)
            # the key opens a table of its own round as its director
            table = ok(key.get(f"/v1/rounds/{own.round_id}"))["tables"][1]["game_id"]
            assert ok(key.get(f"/v1/games/{table}"))["role"] == "director"

        # creation and listing: A's own, and only A's
        with server.client(a.key) as key:
            game = key.post("/v1/games", json={"seed": 5})
            assert game.status_code == 201 and game.json()["organiser_id"] == a.organiser_id
            round_ = key.post("/v1/rounds", json={"table": {"seed": 6}, "count": 2})
            assert round_.status_code == 201 and round_.json()["organiser_id"] == a.organiser_id
            games = ok(key.get("/v1/games", params={"limit": 500}))
            rounds = ok(key.get("/v1/rounds"))
        mine = {own.game_id, twin.game_id, game.json()["game_id"]}
        listed = {g["game_id"] for g in games["games"]}
        assert mine <= listed
        assert {g["organiser_id"] for g in games["games"]} == {a.organiser_id}
        assert theirs.game_id not in listed and platforms.game_id not in listed
        assert games["total"] == len(listed) == 3 + 3 * 2  # 3 games, 3 rounds of 2 tables
        assert {r["round_id"] for r in rounds["rounds"]} == {
            own.round_id,
            twin.round_id,
            round_.json()["round_id"],
        }
        with server.client(PLATFORM_KEY) as platform:
            everything = ok(platform.get("/v1/games", params={"limit": 500}))
            assert everything["total"] == 3 * 3 + 3 * 2
            of_b = ok(platform.get("/v1/rounds", params={"organiser": b.organiser_id}))
            assert [r["round_id"] for r in of_b["rounds"]] == [theirs.round_id]
            a_games = ok(
                platform.get("/v1/games", params={"organiser": a.organiser_id, "limit": 500})
            )
            a_rounds = ok(platform.get("/v1/rounds", params={"organiser": a.organiser_id}))
            whole = feed_of(platform)

        # the feed and the webhooks: A's own entries, none of B's (nor the platform's)
        ours = {g["game_id"] for g in a_games["games"]} | {
            r["round_id"] for r in a_rounds["rounds"]
        }
        expected_feed = [e for e in whole if {e["game_id"], e["round_id"]} & ours]
        b_ids = {theirs.game_id, theirs.round_id, b_table}
        assert any({e["game_id"], e["round_id"]} & b_ids for e in whole)
        with server.client(a.key) as key:
            a_feed = feed_of(key)
            assert a_feed == expected_feed and a_feed  # the same entries, cursors and order
            assert not any({e["game_id"], e["round_id"]} & b_ids for e in a_feed)
            listed = ok(key.get("/v1/webhooks"))["endpoints"]
            assert [e["id"] for e in listed] == [a_hook]  # own's and twin's were deleted
            a_gets = {e["id"] for e in expected_feed}
            wait_until(
                lambda: ok(key.get(f"/v1/webhooks/{a_hook}"))["delivered"] >= len(a_gets),
                "A's entries delivered to A's endpoint",
                timeout=120,
            )
            log = ok(key.get(f"/v1/webhooks/{a_hook}"))
            # no outbox row of anyone else's entries
            assert (log["delivered"], log["pending"], log["failed"]) == (len(a_gets), 0, 0)
        received = {d.entry["data"]["id"]: d.entry["data"] for d in a_got.accepted()}
        assert set(received) == a_gets
        assert not any({e["game_id"], e["round_id"]} & b_ids for e in received.values())
        # the platform's endpoint got B's entries (they were sent, to whom they belong)
        settle(db_url)
        to_platform = {d.entry["data"]["id"] for d in everything_got.accepted()}
        to_b = {d.entry["data"]["id"] for d in b_got.accepted()}
        b_entries = {e["id"] for e in whole if {e["game_id"], e["round_id"]} & b_ids}
        assert b_entries <= to_b and b_entries <= to_platform and to_b.isdisjoint(a_gets)


# -- keys: stored hashed, rotated, revoked, in every process ---------------------------------
def wait_until(predicate: Callable[[], bool], what: str, timeout: float = 30) -> None:
    """Poll: the watch forgets within a second; a busy machine may take longer."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def status(server: Server, key: str, path: str) -> tuple[int, str | None]:
    with server.client(key) as client:
        response = client.get(path)
    code = response.json().get("code") if response.status_code >= 400 else None
    return response.status_code, code


@pytest.mark.rule("SVC-05")
def test_a_rotated_or_revoked_key_is_refused_at_once_here_and_soon_on_another_process(
    db_url: str, tmp_path: Path
) -> None:
    with (
        running(db_url, tmp_path, "first", env=ENV) as first,
        running(db_url, tmp_path, "second", env=ENV) as second,
        first.client(PLATFORM_KEY) as platform,
    ):
        a = create_organiser(platform, "Organiser A")
        own = create_target(first, a.key)
        game, listing = f"/v1/games/{own.game_id}", f"/v1/rounds/{own.round_id}"
        # the second process learns the key (and remembers it)
        for path in (game, listing, "/v1/games"):
            assert status(second, a.key, path)[0] == 200

        # stored as its sha256 only
        store = GameStore(db_url)
        try:
            with store.engine.connect() as conn:
                row = conn.execute(select(OrganiserRow)).one()
        finally:
            store.dispose()
        assert row.key_hash == hash_token(a.key)
        assert a.key not in repr(tuple(row))

        rotated = ok(platform.post(f"/v1/organisers/{a.organiser_id}/key"))
        new_key = rotated["key"]
        assert new_key != a.key and rotated["key_rotated_at"] and rotated["active"]
        # refused at once on the process that rotated it
        assert status(first, a.key, game) == (401, "invalid_token")
        assert status(first, a.key, listing) == (401, "invalid_token")
        assert status(first, a.key, "/v1/games") == (403, "wrong_platform_key")
        # and on the other within a second or so (its credential watch)
        wait_until(lambda: status(second, a.key, game) == (401, "invalid_token"), "game")
        assert status(second, a.key, listing) == (401, "invalid_token")
        assert status(second, a.key, "/v1/games") == (403, "wrong_platform_key")
        for server in (first, second):
            assert status(server, new_key, game)[0] == 200
            assert status(server, new_key, listing)[0] == 200

        revoked = ok(platform.delete(f"/v1/organisers/{a.organiser_id}/key"))
        assert revoked["revoked_at"] and revoked["active"] is False
        assert status(first, new_key, game) == (401, "organiser_key_revoked")
        wait_until(
            lambda: status(second, new_key, game) == (401, "organiser_key_revoked"), "revoked"
        )
        assert status(second, new_key, listing) == (401, "organiser_key_revoked")
        assert status(second, new_key, "/v1/games") == (401, "organiser_key_revoked")
        # its games keep their own tokens
        assert status(second, own.director, game)[0] == 200
        assert status(second, own.round_token, listing)[0] == 200
        listed = ok(platform.get("/v1/organisers"))["organisers"]
        assert [(o["organiser_id"], o["active"]) for o in listed] == [(a.organiser_id, False)]

        again = ok(platform.post(f"/v1/organisers/{a.organiser_id}/key"))
        assert again["active"] is True and again["revoked_at"] is None
        assert status(second, again["key"], game)[0] == 200
        assert status(first, new_key, game) == (401, "invalid_token")


@pytest.mark.rule("SVC-05")
def test_organisers_need_the_platform_key_and_a_good_request(
    sqlite_url: str, tmp_path: Path
) -> None:
    with running(sqlite_url, tmp_path, env=ENV) as server, server.client() as anonymous:
        problem(anonymous.post("/v1/organisers", json={"name": "x"}), 401, "missing_platform_key")
        problem(anonymous.get("/v1/organisers"), 401, "missing_platform_key")
        with server.client("not-a-key") as wrong:
            problem(wrong.post("/v1/organisers", json={"name": "x"}), 403, "wrong_platform_key")
        with server.client(PLATFORM_KEY) as platform:
            problem(platform.post("/v1/organisers", json={"name": "  "}), 422, "invalid_organiser")
            problem(platform.post("/v1/organisers", json={}), 400, "invalid_request")
            problem(platform.post("/v1/organisers/nobody/key"), 404, "organiser_not_found")
            problem(platform.delete("/v1/organisers/nobody/key"), 404, "organiser_not_found")
            problem(platform.get("/v1/organisers/nobody"), 404, "organiser_not_found")
            assert ok(platform.get("/v1/organisers")) == {"organisers": []}
    with running(sqlite_url, tmp_path, "keyless") as keyless, keyless.client() as anyone:
        refused = problem(anyone.post("/v1/organisers", json={"name": "x"}), 403, "no_platform_key")
        assert "CHARLESTON_PLATFORM_KEY" in refused["detail"]


def test_simulate_creates_the_round_with_an_organisers_key(sqlite_url: str, tmp_path: Path) -> None:
    """``simulate --url --organiser-key``: the round is the organiser's, listed by its key."""
    with running(sqlite_url, tmp_path, env=ENV) as server, server.client(PLATFORM_KEY) as platform:
        a = create_organiser(platform, "Organiser A")
        done = cli("simulate", "--url", server.base_url, "--tables", "1", "--organiser-key", a.key)
        assert "1 tables created" in done.stdout, done.stdout
        with server.client(a.key) as key:
            rounds = ok(key.get("/v1/rounds"))["rounds"]
        assert len(rounds) == 1 and rounds[0]["organiser_id"] == a.organiser_id
        assert ok(platform.get("/v1/rounds"))["total"] == 1

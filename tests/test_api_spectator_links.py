"""Spectators' links over real HTTP on both databases: a table's link and a round's, in
the create answers; what each opens (the spectator routes of its table or round, nothing
else) and what it never opens (a seat's view, the desk, a command, the record); a delay
past an hour refused, changing nothing; a link issued again with a delay (the old one
opens nothing, the new one waits for rows that old) and revoked, each a row of the
table's chain."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from api_helpers import Server, ok, running, tile_ids


@pytest.fixture(scope="module")
def server(module_db_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One ``serve`` per database for the module (each test makes games of its own)."""
    with running(module_db_url, tmp_path_factory.mktemp("spectator-links")) as served:
        yield served


def created(server: Server, path: str, body: dict[str, Any]) -> dict[str, Any]:
    with server.client() as client:
        answer = client.post(path, json=body)
    assert answer.status_code == 201, answer.text
    return answer.json()  # type: ignore[no-any-return]


def refused(answer: httpx.Response, *statuses: int) -> dict[str, Any]:
    """A refusal with one of ``statuses``, a problem document that carries no tile."""
    assert answer.status_code in statuses, (answer.status_code, answer.text)
    problem = answer.json()
    assert problem["code"] and tile_ids(problem) == set(), problem
    return problem  # type: ignore[no-any-return]


def link_rows(server: Server, game_id: str, director: str) -> list[dict[str, Any]]:
    with server.client(director) as desk:
        rows = ok(desk.get(f"/v1/games/{game_id}/events"))["events"]
    return [r["payload"] for r in rows if r["type"] == "spectator_link"]


@pytest.mark.rule("SVC-16")
def test_a_tables_link_opens_its_spectator_routes_and_nothing_else(server: Server) -> None:
    with server.client() as client:
        too_long = client.post("/v1/games", json={"seed": 80, "spectator_delay": 3601})
    assert "spectator_delay" in refused(too_long, 400)["detail"]  # a malformed body
    game = created(server, "/v1/games", {"seed": 80})
    game_id, tokens = game["game_id"], game["tokens"]
    path = f"/v1/games/{game_id}"
    assert game["links"]["spectator"] == f"/watch/{game_id}#token={tokens['spectator']}"
    with server.client(tokens["spectator"]) as watch:
        shown = ok(watch.get(f"{path}/spectate"))
        assert shown["role"] == "spectator" and shown["delay"] == 0
        assert shown["view"]["game"]["hand_sizes"] == {
            "east": 14,
            "south": 13,
            "west": 13,
            "north": 13,
        }
        dealt = ok(watch.get(f"{path}/spectate/events"))["events"]
        assert [(e["type"], e["payload"]) for e in dealt] == [("game_created", {})]
        # a spectator's token opens no seat's view, no desk, no command, no record
        refused(watch.get(path), 401, 403)
        refused(watch.get(f"{path}/events"), 401, 403)
        refused(watch.get(f"{path}/stream"), 401, 403)
        refused(watch.get(f"{path}/audit"), 401, 403)
        refused(watch.get(f"{path}/record"), 401, 403)
        refused(watch.post(f"{path}/commands", json={"type": "withdraw_pass"}), 401, 403)
        refused(watch.post(f"{path}/call", json={}), 401, 403)
        body = {"type": "pause_clock"}
        refused(watch.post(f"{path}/director/commands", json=body), 401, 403)
        refused(watch.post(f"{path}/spectator", json={}), 401, 403)
    for role in ("east", "director"):  # and no other token opens the spectator's routes
        with server.client(tokens[role]) as other:
            refused(other.get(f"{path}/spectate"), 401)

    with server.client(tokens["director"]) as desk:
        past_an_hour = desk.post(f"{path}/spectator", json={"delay": 3601})
        assert "delay" in refused(past_an_hour, 400)["detail"]
        assert link_rows(server, game_id, tokens["director"]) == []  # nothing changed
        with server.client(tokens["spectator"]) as watch:
            ok(watch.get(f"{path}/spectate"))
        issued = ok(desk.post(f"{path}/spectator", json={"delay": 3600}))
        assert issued["delay"] == 3600
        assert issued["link"] == f"/watch/{game_id}#token={issued['token']}"
        with server.client(tokens["spectator"]) as old:
            refused(old.get(f"{path}/spectate"), 401)
        with server.client(issued["token"]) as behind:
            # the game is younger than an hour: nothing of it is shown yet
            waiting = refused(behind.get(f"{path}/spectate"), 409)
            assert waiting["code"] == "behind_delay"
            assert int(behind.get(f"{path}/spectate").headers["Retry-After"]) > 3500
            assert ok(behind.get(f"{path}/spectate/events"))["events"] == []
        ok(desk.delete(f"{path}/spectator"))
        with server.client(issued["token"]) as revoked:
            refused(revoked.get(f"{path}/spectate"), 401)
    assert link_rows(server, game_id, tokens["director"]) == [
        {"action": "issued", "delay": 3600},
        {"action": "revoked", "delay": None},
    ]


@pytest.mark.rule("SVC-16")
def test_a_rounds_link_lists_its_tables_and_is_issued_again_or_revoked(server: Server) -> None:
    round_ = created(server, "/v1/rounds", {"name": "Round 8", "table": {"seed": 81}, "count": 2})
    round_id, watch_token = round_["round_id"], round_["spectator_token"]
    listing_path = f"/v1/rounds/{round_id}/spectate"
    assert round_["links"]["spectator"] == f"/watch/round/{round_id}#token={watch_token}"
    first = round_["tables"][0]
    with server.client(watch_token) as watch:
        listing = ok(watch.get(listing_path))
        assert [t["table"] for t in listing["tables"]] == [1, 2]
        assert all(t["state_labels"] for t in listing["tables"])  # live: where each is
        assert tile_ids(listing) == set()
        ok(watch.get(f"/v1/games/{first['game_id']}/spectate"))  # it opens each table
        refused(watch.get(f"/v1/games/{first['game_id']}"), 401, 403)  # not a seat's view
        refused(watch.get(f"/v1/rounds/{round_id}"), 401, 403)  # nor the room
    for token in (first["tokens"]["spectator"], round_["token"], first["tokens"]["east"]):
        with server.client(token) as other:
            refused(other.get(listing_path), 401)

    with server.client(round_["token"]) as room:
        refused(room.post(f"/v1/rounds/{round_id}/spectator", json={"delay": 3601}), 400)
        with server.client(watch_token) as watch:
            ok(watch.get(listing_path))  # the refusal changed nothing
        again = ok(room.post(f"/v1/rounds/{round_id}/spectator", json={"delay": 60}))
        with server.client(watch_token) as old:
            refused(old.get(listing_path), 401)
            refused(old.get(f"/v1/games/{first['game_id']}/spectate"), 401)
        with server.client(again["token"]) as behind:
            listing = ok(behind.get(listing_path))
            # behind a delay, only what creation fixed: where a table is would be newer
            assert listing["delay"] == 60
            assert all("state_labels" not in t for t in listing["tables"])
            waiting = refused(behind.get(f"/v1/games/{first['game_id']}/spectate"), 409)
            assert waiting["code"] == "behind_delay"
        ok(room.delete(f"/v1/rounds/{round_id}/spectator"))
        with server.client(again["token"]) as revoked:
            refused(revoked.get(listing_path), 401)
            refused(revoked.get(f"/v1/games/{first['game_id']}/spectate"), 401)
    with server.client(first["tokens"]["director"]) as desk:  # a table's token: not the round's
        refused(desk.post(f"/v1/rounds/{round_id}/spectator", json={}), 401, 403)

"""Spectators' links over real HTTP on both databases: a table's link and a round's, in
the create answers; what each opens (the spectator routes of its table or round, nothing
else) and what it never opens (a seat's view, the desk, a command, the record); a delay
past an hour refused, changing nothing; a link issued again with a delay (the old one
opens nothing, the new one waits for rows that old) and revoked, each a row of the
table's chain. A round's delay holds on every link of its tables: the links its creation
answers with, links issued later (a shorter delay refused), the round's link issued
again with a longer one; a featured table's live link is an explicit choice, labelled
live wherever a link's delay is stated."""

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
            # behind a delay, where a table stood then: nothing is a minute old yet
            assert listing["delay"] == 60
            for t in listing["tables"]:
                assert t["as_of"] is None and t["shown_from"] and t["state_labels"] == [], t
                assert t["phase"] is None and t["finished"] is False
            waiting = refused(behind.get(f"/v1/games/{first['game_id']}/spectate"), 409)
            assert waiting["code"] == "behind_delay"
        ok(room.delete(f"/v1/rounds/{round_id}/spectator"))
        with server.client(again["token"]) as revoked:
            refused(revoked.get(listing_path), 401)
            refused(revoked.get(f"/v1/games/{first['game_id']}/spectate"), 401)
    with server.client(first["tokens"]["director"]) as desk:  # a table's token: not the round's
        refused(desk.post(f"/v1/rounds/{round_id}/spectator", json={}), 401, 403)


def spectated(server: Server, game_id: str, token: str) -> httpx.Response:
    with server.client(token) as watch:
        return watch.get(f"/v1/games/{game_id}/spectate")


@pytest.mark.rule("SVC-16")
def test_a_rounds_delay_holds_on_every_link_of_its_tables(server: Server) -> None:
    body = {"table": {"seed": 82}, "count": 3, "spectator_delay": 40, "live_tables": [2]}
    round_ = created(server, "/v1/rounds", body)
    round_id = round_["round_id"]
    first, featured, third = round_["tables"]
    # every link states its delay: the round's, but the featured table's live link
    assert [t["spectator"] for t in round_["tables"]] == [
        {"delay": 40, "live": False},
        {"delay": 0, "live": True},
        {"delay": 40, "live": False},
    ]
    for table in (first, third):  # the table's own link is as far behind as the round's
        waiting = refused(spectated(server, table["game_id"], table["tokens"]["spectator"]), 409)
        assert waiting["code"] == "behind_delay"
    live = ok(spectated(server, featured["game_id"], featured["tokens"]["spectator"]))
    assert live["delay"] == 0 and live["live"] is True
    # the round's own link shows the featured table behind the round's delay
    refused(spectated(server, featured["game_id"], round_["spectator_token"]), 409)

    with server.client() as client:  # a table's own delay may be longer, never shorter
        shorter = client.post(
            "/v1/rounds", json={"tables": [{"seed": 1, "spectator_delay": 5}], "spectator_delay": 9}
        )
        assert refused(shorter, 422)["code"] == "below_round_delay"
        unknown = client.post("/v1/rounds", json={**body, "live_tables": [4]})
        assert refused(unknown, 422)["code"] == "unknown_table"
        longer = client.post(
            "/v1/rounds",
            json={"tables": [{"seed": 1, "spectator_delay": 50}], "spectator_delay": 9},
        )
        assert longer.json()["tables"][0]["spectator"] == {"delay": 50, "live": False}

    path = f"/v1/games/{first['game_id']}/spectator"
    director = first["tokens"]["director"]
    with server.client(director) as desk:
        below = desk.post(path, json={"delay": 0})
        assert refused(below, 422)["code"] == "below_round_delay"
        both = desk.post(path, json={"live": True, "delay": 10})
        assert refused(both, 422)["code"] == "live_with_delay"
        assert link_rows(server, first["game_id"], director) == []  # nothing changed
        again = ok(desk.post(path, json={}))  # no delay given: the round's
        assert (again["delay"], again["live"]) == (40, False)
        refused(spectated(server, first["game_id"], again["token"]), 409)
        featured_now = ok(desk.post(path, json={"live": True}))
        assert (featured_now["delay"], featured_now["live"]) == (0, True)
        assert ok(spectated(server, first["game_id"], featured_now["token"]))["live"] is True
    assert link_rows(server, first["game_id"], director) == [
        {"action": "issued", "delay": 40},
        {"action": "issued", "delay": 0, "live": True},
    ]

    # the round's link issued again with a longer delay: every link of its tables
    # follows (but a live one); revoking the round's link keeps the round's delay
    with server.client(round_["token"]) as room:
        longer_round = ok(room.post(f"/v1/rounds/{round_id}/spectator", json={"delay": 120}))
        assert (longer_round["delay"], longer_round["live"]) == (120, False)
        kept = ok(room.post(f"/v1/rounds/{round_id}/spectator", json={}))
        assert kept["delay"] == 120  # no delay given: the round's as it is
        ok(room.delete(f"/v1/rounds/{round_id}/spectator"))
    waiting = spectated(server, third["game_id"], third["tokens"]["spectator"])
    assert refused(waiting, 409)["code"] == "behind_delay"
    assert int(waiting.headers["Retry-After"]) > 60  # 120 s behind now, not 40
    with server.client(third["tokens"]["spectator"]) as watch:
        listed = ok(watch.get(f"/v1/games/{third['game_id']}/spectate/events"))
    assert (listed["delay"], listed["live"], listed["events"]) == (120, False, [])
    assert ok(spectated(server, featured["game_id"], featured["tokens"]["spectator"]))["live"]

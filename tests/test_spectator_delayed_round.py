"""Every spectator payload of a delayed round, walked: the round's listing, and per table
the view, the events and the stream, each through the table's own link and through the
round's (the calls the watch pages make). None carries a concealed tile (no tile id, no
face, no field that holds tiles, no reason the director or a seat gave), and none shows
a moment newer than the round's delay: each row, view and table of the listing is
checked against the moment its answer arrived, and each view (and each table of the
listing) against the director's replay of the table at the row it says it shows."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_helpers import StreamReader, ok, running, tile_ids

from charleston_fsm.engine.moments import parse_time

DELAY = 4  # seconds every spectator link of the round lags behind
TABLES = 2
CLOCK = {"confirm_pass": 4, "vote": 4, "courtesy": 4, "place_tiles": 4, "on_expiry": "auto_play"}
SECRET = "a spill on 5B#17 and RD"  # a reason a spectator must never read
FACE = re.compile(r"\b([1-9][BCD]|[ESWN]W|[RGW]D)\b|\b(Bam|Crack|Dot|Dragon|Flower|Joker|Soap)\b")
#: fields that hold tiles (or rebuild them) in a seat's or the director's payloads, and
#: a reason (the director's for added time, a seat's call): only how a Charleston ended
#: is a public reason
TILE_FIELDS = {
    "face",
    "tiles",
    "rack",
    "racks",
    "received",
    "deal",
    "hands",
    "wall",
    "seed",
    "gifts",
    "from_hand",
    "forwarded",
    "selection",
    "hash",
    "prev_hash",
    "reason",
}


def concealed(payload: Any) -> list[str]:
    """What in ``payload`` could tell a concealed tile: ids, faces, tile fields."""
    found = [f"tile id {t}" for t in sorted(tile_ids(payload))]

    def walk(data: Any, row: str | None = None) -> None:
        if isinstance(data, dict):
            for key, value in data.items():
                if key in TILE_FIELDS and not (key == "reason" and row == "charleston_ended"):
                    found.append(f"field {key!r} ({row or 'not a row'})")
                walk(value, data.get("type") if key == "payload" else row)
        elif isinstance(data, list):
            for item in data:
                walk(item)
        elif isinstance(data, str) and (FACE.search(data) or SECRET in data):
            found.append(f"text {data!r}")

    walk(payload)
    return found


class Walk:
    """Every spectator answer of the round, with the moment it arrived."""

    def __init__(self, base: str, created: dict[str, Any]) -> None:
        self.round_id = created["round_id"]
        self.round_link = httpx.Client(base_url=base, headers=_auth(created["spectator_token"]))
        self.tables = created["tables"]
        self.links = {  # (game, which link) -> its client
            (t["game_id"], which): httpx.Client(base_url=base, headers=_auth(token))
            for t in self.tables
            for which, token in (
                ("table", t["tokens"]["spectator"]),
                ("round", created["spectator_token"]),
            )
        }
        self.answers: list[tuple[str, datetime, int, Any]] = []  # (where, arrived, status, body)

    def look(self) -> None:
        self._get("round listing", self.round_link, f"/v1/rounds/{self.round_id}/spectate")
        for (game_id, which), client in self.links.items():
            self._get(f"view {which}", client, f"/v1/games/{game_id}/spectate")
            self._get(f"events {which}", client, f"/v1/games/{game_id}/spectate/events")

    def _get(self, where: str, client: httpx.Client, path: str) -> None:
        answer = client.get(path)
        arrived = datetime.now(UTC)
        assert answer.status_code in (200, 409), (where, answer.text)
        self.answers.append((where, arrived, answer.status_code, answer.json()))

    def close(self) -> None:
        self.round_link.close()
        for client in self.links.values():
            client.close()


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.mark.rule("SVC-16")
def test_every_spectator_payload_of_a_delayed_round_is_behind_and_tile_free(
    sqlite_url: str, tmp_path: Path
) -> None:
    with running(sqlite_url, tmp_path) as server, server.client() as client:
        table = {"bots": ["east", "south", "west"], "bot_pace": 0.3, "clock": CLOCK}
        answer = client.post(
            "/v1/rounds",
            json={"table": table, "count": TABLES, "start": "held", "spectator_delay": DELAY},
        )
        assert answer.status_code == 201, answer.text
        created = answer.json()
        assert {t["spectator"]["delay"] for t in created["tables"]} == {DELAY}
        walk = Walk(server.base_url, created)
        streams = {
            (t["game_id"], which): StreamReader(
                f"{server.base_url}/v1/games/{t['game_id']}/spectate/stream", token, after=0
            )
            for t in created["tables"]
            for which, token in (
                ("table", t["tokens"]["spectator"]),
                ("round", created["spectator_token"]),
            )
        }
        wall = time.time() - time.perf_counter()  # the readers stamp with perf_counter
        try:
            walk.look()  # held: nothing is DELAY seconds old yet
            with server.client(created["token"]) as room:
                ok(room.post(f"/v1/rounds/{created['round_id']}/start"))
            for t in created["tables"]:  # North is nobody: its clock plays it
                with server.client(t["tokens"]["director"]) as desk:
                    extend = {
                        "type": "extend_time",
                        "seat": "north",
                        "seconds": 1,
                        "reason": SECRET,
                    }
                    ok(desk.post(f"/v1/games/{t['game_id']}/director/commands", json=extend))
                with server.client(t["tokens"]["north"]) as north:
                    ok(north.post(f"/v1/games/{t['game_id']}/call", json={"reason": SECRET}))
            rows = play_until_finished(server, created, walk)
            while True:  # rows may follow the end (a late clock's): wait until none come
                for (game_id, _which), stream in streams.items():
                    assert stream.wait_for_seq(rows[game_id][-1]["seq"], timeout=30 + DELAY)
                again = stored_rows(server, created)
                if again == rows:
                    break
                rows = again
            walk.look()  # every row is older than the delay now
        finally:
            for stream in streams.values():
                stream.close()
            walk.close()
        replays = Replays(server, created)
        check_the_walk(walk, rows, replays)
        check_the_streams(streams, rows, wall)
        assert SECRET not in server.log_path.read_text()


def play_until_finished(
    server: Any, created: dict[str, Any], walk: Walk
) -> dict[str, list[dict[str, Any]]]:
    """Look at every spectator route while the bots and the clock play; each table's rows
    once every table has finished (the director's, with their moments)."""
    deadline = time.monotonic() + 300
    directors = {t["game_id"]: t["tokens"]["director"] for t in created["tables"]}
    while True:
        walk.look()
        rows = stored_rows(server, created)
        if all(
            r[-1]["type"] == "charleston_ended" or _finished(server, g, directors[g])
            for g, r in rows.items()
        ):
            return rows
        assert time.monotonic() < deadline, "the round did not finish"
        time.sleep(0.3)


def stored_rows(server: Any, created: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Each table's rows as its director reads them, with their moments."""
    rows = {}
    for t in created["tables"]:
        with server.client(t["tokens"]["director"]) as desk:
            rows[t["game_id"]] = ok(desk.get(f"/v1/games/{t['game_id']}/events"))["events"]
    return rows


def _finished(server: Any, game_id: str, token: str) -> bool:
    with server.client(token) as desk:
        return bool(ok(desk.get(f"/v1/games/{game_id}"))["view"]["game"]["finished"])


class Replays:
    """The director's replay of a table at a row: what a view of that row must show."""

    def __init__(self, server: Any, created: dict[str, Any]) -> None:
        self.server = server
        self.directors = {t["game_id"]: t["tokens"]["director"] for t in created["tables"]}
        self.kept: dict[tuple[str, int], dict[str, Any]] = {}

    def game(self, game_id: str, seq: int) -> dict[str, Any]:
        if (game_id, seq) not in self.kept:
            with self.server.client(self.directors[game_id]) as desk:
                path = f"/v1/games/{game_id}/replay?seq={seq}"
                self.kept[game_id, seq] = ok(desk.get(path))["view"]["game"]
        return self.kept[game_id, seq]


def check_the_walk(walk: Walk, rows: dict[str, list[dict[str, Any]]], replays: Replays) -> None:
    moments = {g: {r["seq"]: parse_time(r["created_at"]) for r in rs} for g, rs in rows.items()}
    kinds = set()
    shown_views = 0
    for where, arrived, status, body in walk.answers:
        assert not concealed(body), (where, concealed(body))
        newest = arrived - timedelta(seconds=DELAY)  # the service cut before it answered
        kinds.add(where)
        if status == 409:
            assert where.startswith("view") and body["code"] == "behind_delay", body
            continue
        if where.startswith("events"):
            assert body["delay"] == DELAY and body["live"] is False
            for row in body["events"]:
                assert parse_time(row["created_at"]) <= newest, (where, row, arrived)
        elif where.startswith("view"):
            as_of = body["view"]["as_of"]
            at = moments[body["game_id"]][as_of["seq"]]
            assert parse_time(as_of["at"]) == at <= newest, (where, as_of, arrived)
            assert body["view"]["game"] == replays.game(body["game_id"], as_of["seq"])
            shown_views += 1
        else:
            assert body["delay"] == DELAY
            for t in body["tables"]:
                if t["as_of"] is None:
                    assert parse_time(t["shown_from"]) > newest, (t, arrived)
                    continue
                seq = t["as_of"]["seq"]
                assert moments[t["game_id"]][seq] <= newest, (t, arrived)
                game = replays.game(t["game_id"], seq)
                step = game["steps"][0]["label"] if game["steps"] else None
                assert (t["phase"], t["pass_number"], t["pass_total"], t["step"]) == (
                    game["phase"],
                    game["pass_number"],
                    game["pass_total"],
                    step,
                )
                assert t["finished"] == game["finished"]
                assert t["ending"] == ((game["ending"] or {}).get("text"))
    assert kinds == {"round listing", "view table", "view round", "events table", "events round"}
    assert shown_views, "no view was ever old enough to be shown"
    for game_id, game_rows in rows.items():  # what the walk must have met to mean anything
        types = {r["type"] for r in game_rows}
        assert {"time_extended", "director_called", "tiles_transferred"} <= types, types
        assert any(r["payload"].get("reason") == SECRET for r in game_rows), game_id


def check_the_streams(
    streams: dict[tuple[str, str], StreamReader],
    rows: dict[str, list[dict[str, Any]]],
    wall: float,
) -> None:
    for (game_id, which), stream in streams.items():
        seqs = []
        for event, _, data, received in stream.messages:
            assert not concealed(data), (which, concealed(data))
            if event == "subscribed":
                assert data["delay"] == DELAY
                continue
            age = wall + received - parse_time(data["created_at"]).timestamp()
            assert age >= DELAY - 0.05, (which, data["seq"], age)  # 50 ms: the clocks' reads
            seqs.append(data["seq"])
        assert seqs == [r["seq"] for r in rows[game_id]], (which, seqs)

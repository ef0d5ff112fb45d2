"""Duplicate rounds over real HTTP: one deal for every table, checked from each table's
signed record (not from the round's claim); the comparison (JSON and CSV) agrees with each
table's audit and record, holds its tiles back until every table has ended, and opens for
the round's director only; the round's and the tables' spectator links carry no tile nor
the deal's number; bad options are refused with nothing stored."""

from __future__ import annotations

import csv
import io
import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_helpers import StreamReader, ok, play_over_http, running, tile_ids
from test_api_rounds import create_round, stored, table_game
from test_api_schema import Contract

from charleston_fsm.engine.tiles import Deal, describe
from charleston_fsm.ledger.record_verify import verify_record
from charleston_fsm.store import GameStore, NewGame, play_bots
from charleston_fsm.tournament.duplicate import comparison_csv, round_comparison

SEATS = ("east", "south", "west", "north")
BOTS = list(SEATS)
SEED = 2**62 - 7  # past 2^53: a JavaScript number would read another deal


def wait_finished(server: Any, round_: dict[str, Any], tables: set[int], seconds: float = 120):
    """The round's listing once every table in ``tables`` has finished."""
    deadline = time.monotonic() + seconds
    with server.client(round_["token"]) as client:
        while True:
            listing = ok(client.get(f"/v1/rounds/{round_['round_id']}"))
            done = {t["table"] for t in listing["tables"] if t["finished"]}
            if tables <= done:
                return listing
            assert time.monotonic() < deadline, listing
            time.sleep(0.2)


def record_rows(server: Any, table: dict[str, Any]) -> list[dict[str, Any]]:
    """The table's signed record, verified offline against the service's public key."""
    with server.client(table["tokens"]["director"]) as client:
        text = client.get(f"/v1/games/{table['game_id']}/record").text
        key = ok(client.get("/v1/anchor-key"))["public_key"]
    verdict = verify_record(text, key)
    assert verdict.ok, verdict
    return [json.loads(line) for line in text.splitlines()]


@pytest.mark.rule("SVC-09")
@pytest.mark.rule("SVC-16")
def test_a_duplicate_round_deals_every_table_alike_and_compares_them(
    db_url: str, tmp_path: Path
) -> None:
    names = [{"east": f"E{n}", "south": f"S{n}"} for n in range(1, 5)]
    body = {
        "name": "Duplicate 1",
        "deal": "duplicate",
        "deal_seed": str(SEED),
        # tables 1-3 are played by the service's bots; table 4 by nobody until later
        "tables": [
            *({"bots": BOTS, "players": names[n], "label": f"T{n + 1}"} for n in range(3)),
            {"players": names[3], "label": "T4"},
        ],
    }
    with running(db_url, tmp_path) as server:
        round_ = create_round(server, body)
        assert round_["deal"] == "duplicate" and round_["deal_seed"] == str(SEED)
        path = f"/v1/rounds/{round_['round_id']}"
        assert (
            round_["links"]["comparison"]
            == f"/compare/{round_['round_id']}#token=" + (round_["token"])
        )
        with server.client(round_["token"]) as director:
            settings = ok(director.get(path))["settings"]
            assert settings["deal"] == "duplicate" and settings["deal_seed"] == str(SEED)

            # tables 1-3 end; table 4 has not passed: rows without a tile, nor the seed
            wait_finished(server, round_, {1, 2, 3})
            early = ok(director.get(f"{path}/comparison"))
            assert early["complete"] is False and "every table" in early["withheld"]
            assert early["hands"] is None and early["deal_seed"] is None
            assert tile_ids(early) == set() and str(SEED) not in json.dumps(early)
            assert [t["finished"] for t in early["tables"]] == [True, True, True, False]
            for t in early["tables"][:3]:
                assert t["stopped_after"] and t["ending"]
                assert all(s["passes"] is None for s in t["seats"].values())
            assert early["tables"][3]["seats"] == {} and early["tables"][3]["passes"] == []
            early_csv = director.get(f"{path}/comparison", params={"format": "csv"}).text
            assert "#" not in early_csv  # no tile written as a face and its id

            game = table_game(server, round_["tables"][3])
            try:
                play_over_http(game, seed=11)
            finally:
                game.close()
            wait_finished(server, round_, {1, 2, 3, 4})
            comparison = ok(director.get(f"{path}/comparison"))
            sheet = director.get(f"{path}/comparison", params={"format": "csv"})
            assert sheet.headers["content-type"].startswith("text/csv")
            audits = [ok(director.get(f"/v1/games/{t['game_id']}/audit")) for t in round_["tables"]]

        # every table was dealt the same tiles to the same winds, by its signed record
        records = [record_rows(server, t) for t in round_["tables"]]
        dealt = Deal.shuffled(SEED).to_dict()
        for rows in records:
            created = next(r for r in rows if r.get("kind") == "row" and r["seq"] == 1)
            assert created["type"] == "game_created"
            assert created["payload"]["deal"] == dealt
            assert created["payload"]["seed"] == SEED
            header = rows[0]
            assert header["kind"] == "header" and header["deal"] == dealt

        assert comparison["complete"] is True and comparison["withheld"] is None
        assert comparison["deal_seed"] == str(SEED)  # text: it exceeds 2^53
        assert comparison["hands"] == dealt["hands"]
        for t, audit, rows in zip(comparison["tables"], audits, records, strict=True):
            assert t["deal_matches"] is True and t["finished"]
            _agrees_with_audit(t, audit)
            _agrees_with_record(t, rows)
        _agrees_with_csv(comparison, sheet.text)

        # the comparison is the round director's: no seat, table director nor spectator
        comparison_path = f"{path}/comparison"
        one = round_["tables"][0]["tokens"]
        for token in (one["east"], one["director"], one["spectator"], round_["spectator_token"]):
            with server.client(token) as client:
                assert client.get(comparison_path).status_code == 401
        with server.client() as client:
            assert client.get(comparison_path).status_code == 401
        # a seat reads its own table: neither its view nor its rows name the deal's number
        # (from which every rack of every table follows)
        with server.client(one["east"]) as seat:
            game = f"/v1/games/{round_['tables'][0]['game_id']}"
            for answer in (seat.get(game), seat.get(f"{game}/events")):
                assert answer.status_code == 200 and str(SEED) not in answer.text
            other = f"/v1/games/{round_['tables'][1]['game_id']}"
            assert seat.get(other).status_code == 401  # nor another table of the round

        _spectators_see_no_tile(server, round_, records)
        assert str(SEED) not in server.log_path.read_text()  # nor the service's log


def _agrees_with_audit(table: dict[str, Any], audit: dict[str, Any]) -> None:
    """Each seat's passes are the audit's transfers from that seat, pass by pass; the
    stop is the audit's last resolved pass; the votes and courtesy counts are its own."""
    resolved = [p for p in audit["passes"] if p["resolved_seq"] is not None]
    assert [p["step"] for p in table["passes"]] == [p["step"] for p in resolved]
    assert table["stopped_after"]["step"] == resolved[-1]["step"]
    assert table["courtesy"] == [
        {"pair": a["pair"], "count": a["count"]} for a in audit["courtesy_agreements"]
    ]
    for seat in SEATS:
        mine = table["seats"][seat]
        expected = [
            (p["number"], p["step"], t["receiver"], t["from_hand"], t["forwarded"])
            for p in resolved
            for t in p["transfers"]
            if t["giver"] == seat
        ]
        shown = [(p["number"], p["step"], p["to"], p["tiles"], p["unseen"]) for p in mine["passes"]]
        assert shown == expected, (table["table"], seat)
        assert mine["votes"] == [v["choice"] for v in audit["votes"] if v["seat"] == seat]
        offers = [o["count"] for o in audit["courtesy_offers"] if o["seat"] == seat]
        assert mine["courtesy_offer"] == (offers[-1] if offers else None)


def _agrees_with_record(table: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    """Every tile transfer of the signed record is in the comparison once, and nothing else."""
    transfers = sorted(
        (r["seat"], r["payload"]["step"], r["payload"]["from_hand"], r["payload"]["forwarded"])
        for r in rows
        if r.get("kind") == "row" and r["type"] == "tiles_transferred"
    )
    shown = sorted(
        (seat, p["step"], p["tiles"], p["unseen"])
        for seat, s in table["seats"].items()
        for p in s["passes"]
    )
    assert shown == transfers
    ended = [r for r in rows if r.get("kind") == "row" and r["type"] == "charleston_ended"]
    assert ended and table["ended_reason"] == ended[-1]["payload"]["reason"]
    stops = sorted(
        r["seat"]
        for r in rows
        if r.get("kind") == "row" and r["type"] == "vote_cast" and r["payload"]["choice"] == "stop"
    )
    if stops:  # a vote to stop: the Second Charleston was not played
        assert table["stopped"]["how"] == "stopped" and sorted(table["stopped"]["by"]) == stops
        assert not any(p["step"].startswith("CHARLESTON_P2") for p in table["passes"])
    else:
        assert table["stopped"]["how"] in ("all_passes", "no_courtesy"), table["stopped"]


def _agrees_with_csv(comparison: dict[str, Any], text: str) -> None:
    """The CSV's lines are the JSON's passes, one per table, seat and pass."""
    lines = list(csv.DictReader(io.StringIO(text)))
    expected = []
    for t in comparison["tables"]:
        for seat, s in t["seats"].items():
            for p in s["passes"]:
                expected.append(
                    (str(t["table"]), seat, str(p["number"]), p["to"], describe(p["tiles"]))
                )
            if not s["passes"]:
                expected.append((str(t["table"]), seat, "", "", ""))
    assert [(r["table"], r["seat"], r["pass"], r["to"], r["tiles"]) for r in lines] == expected
    for r in lines:
        t = comparison["tables"][int(r["table"]) - 1]
        assert r["ending"] == t["ending"] and r["label"] == t["label"]
        assert r["stopped"] == t["stopped"]["how"]
        offer = t["seats"][r["seat"]]["courtesy_offer"]
        assert r["courtesy_offer"] == ("" if offer is None else str(offer))


def _spectators_see_no_tile(
    server: Any, round_: dict[str, Any], records: list[list[dict[str, Any]]]
) -> None:
    """The round's spectator link and each table's: the listing, the views, the events and
    the streams (read to each table's last row) carry no tile id and no deal number."""
    seen: list[tuple[str, Any]] = []
    with server.client(round_["spectator_token"]) as watch:
        seen.append(("round", ok(watch.get(f"/v1/rounds/{round_['round_id']}/spectate"))))
    for table, rows in zip(round_["tables"], records, strict=True):
        last = max(r["seq"] for r in rows if r.get("kind") == "row")
        base = f"/v1/games/{table['game_id']}/spectate"
        for token in (round_["spectator_token"], table["tokens"]["spectator"]):
            with server.client(token) as watch:
                seen.append(("view", ok(watch.get(base))))
                seen.append(("events", ok(watch.get(f"{base}/events"))))
            stream = StreamReader(f"{server.base_url}{base}/stream", token, after=0)
            try:
                assert stream.wait_for_seq(last, timeout=30)
            finally:
                stream.close()
            seen += [("stream", m[2]) for m in stream.messages]
    for where, payload in seen:
        assert tile_ids(payload) == set(), (where, payload)
        assert str(SEED) not in json.dumps(payload), where


def test_bad_duplicate_rounds_are_refused_and_nothing_is_stored(
    sqlite_url: str, tmp_path: Path
) -> None:
    dup: dict[str, Any] = {"deal": "duplicate", "table": {}, "count": 2}
    refusals = [
        ({**dup, "deal_seed": "12x"}, 422, "invalid_deal_seed", "decimal digits"),
        ({**dup, "deal_seed": ""}, 422, "invalid_deal_seed", "decimal digits"),
        ({**dup, "deal_seed": "-1"}, 422, "invalid_deal_seed", "decimal digits"),
        ({**dup, "deal_seed": "١٢"}, 422, "invalid_deal_seed", "decimal digits"),
        ({**dup, "deal_seed": str(2**62 + 1)}, 422, "invalid_deal_seed", "runs from 0"),
        ({**dup, "deal_seed": -1}, 422, "invalid_deal_seed", "runs from 0"),
        ({**dup, "deal_seed": 1.5}, 400, "invalid_request", "deal_seed"),
        ({**dup, "deal": "triplicate"}, 400, "invalid_request", "deal"),
        (
            {"table": {}, "count": 2, "deal_seed": "5"},
            422,
            "deal_seed_without_duplicate",
            '"deal": "duplicate"',
        ),
        (
            {**dup, "table": {"seed": 3}},
            422,
            "duplicate_table_deal",
            "The table: ",
        ),
        (
            {"deal": "duplicate", "tables": [{}, {"hands": {"east": [1]}}]},
            422,
            "duplicate_table_deal",
            "Table 2: ",
        ),
        (
            {"deal": "duplicate", "tables": [{}, {"ruleset": "house"}]},
            422,
            "duplicate_mixed_rules",
            "Table 2: its ruleset",
        ),
        (
            {"deal": "duplicate", "tables": [{}, {}, {"options": {"blind_pass": False}}]},
            422,
            "duplicate_mixed_rules",
            "Table 3: its options",
        ),
    ]
    with running(sqlite_url, tmp_path) as server, server.client() as client:
        contract = Contract(ok(client.get("/openapi.json")))
        contract.watch(client)  # every answer below is as /openapi.json documents it
        for body, status, code, words in refusals:
            answer = client.post("/v1/rounds", json=body)
            assert answer.status_code == status, (body, answer.text)
            problem = answer.json()
            assert problem["code"] == code and words in problem["detail"], (body, problem)
        assert stored(sqlite_url) == (0, 0)
        # the same options, given per table, are one rulebook; a seed is drawn once
        same = {"deal": "duplicate", "tables": [{"options": {"blind_pass": True}}, {}]}
        drawn = client.post("/v1/rounds", json=same)
        assert drawn.status_code == 201, drawn.text
        seed = drawn.json()["deal_seed"]
        assert isinstance(seed, str) and 0 <= int(seed) <= 2**62
        # a round dealt per table has no comparison (409), and no comparison link
        plain = create_round(server, {"table": {}, "count": 2})
        assert "comparison" not in plain["links"] and plain["deal_seed"] is None
        with server.client(plain["token"]) as director:
            contract.watch(director)
            answer = director.get(f"/v1/rounds/{plain['round_id']}/comparison")
            assert answer.status_code == 409 and answer.json()["code"] == "round_not_duplicate"
            unknown = director.get("/v1/rounds/nothing-here/comparison")
            assert unknown.status_code == 404
            bad_format = director.get(
                f"/v1/rounds/{drawn.json()['round_id']}/comparison", params={"format": "xls"}
            )
            assert bad_format.status_code in (400, 401)
        with server.client(drawn.json()["token"]) as director:
            contract.watch(director)
            early = ok(director.get(f"/v1/rounds/{drawn.json()['round_id']}/comparison"))
            assert early["complete"] is False and early["deal_seed"] is None
        statuses = {key.split(" -> ")[1].split()[0] for key in contract.checked}
        assert statuses == {"201", "200", "400", "404", "409", "422"}, contract.checked
        for table in drawn.json()["tables"]:
            director = httpx.Client(
                base_url=server.base_url,
                headers={"Authorization": f"Bearer {table['tokens']['director']}"},
            )
            with director:
                audit = ok(director.get(f"/v1/games/{table['game_id']}/audit"))
            assert audit["seed"] in (int(seed), seed)  # the engineer of issue 37.4 makes it text


@pytest.mark.parametrize("ruleset", ["house", "four_winds"])
def test_every_transfer_of_every_ruleset_is_compared_once(
    sqlite_store: GameStore, ruleset: str
) -> None:
    """The other rulesets' passes (the house Courtesy Pass, Four Winds' exchanges and
    repeated Ding Dongs) are each in the comparison once, under the pass that moved them;
    the comparison and its CSV name the deal's number as text."""
    store = sqlite_store
    digest = "0" * 64
    tables = [NewGame(ruleset, seed=SEED)] * 3
    round_id, games = store.rounds.create_round(
        tables, token_hash=digest, settings={"deal": "duplicate", "deal_seed": str(SEED)}
    )
    for n, game_id in enumerate(games):
        play_bots(store, game_id, seed=20 + n)
    comparison = round_comparison(store, round_id)
    assert comparison["complete"] and comparison["deal_seed"] == str(SEED)
    for t in comparison["tables"]:
        rows = store.reads.events(t["game_id"])
        moved = sorted(
            (r.seat, r.payload["step"], r.payload["from_hand"], r.payload["forwarded"])
            for r in rows
            if r.type == "tiles_transferred"
        )
        shown = sorted(
            (seat, p["step"], p["tiles"], p["unseen"])
            for seat, s in t["seats"].items()
            for p in s["passes"]
        )
        assert moved and shown == moved
        assert t["deal_matches"] and t["stopped"]["how"]
    lines = comparison_csv(comparison).splitlines()
    assert len(lines) == 1 + sum(
        max(1, len(s["passes"])) for t in comparison["tables"] for s in t["seats"].values()
    )

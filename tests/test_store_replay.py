"""Replay, projections, the hash chain and the audit, on games played by the package's bots."""

from __future__ import annotations

import json
import random
from itertools import count

import pytest
from budget import backends_by
from sqlalchemy import text

from charleston_fsm.engine.bots import bots_for, play, play_table
from charleston_fsm.engine.commands import ChangePass, ConfirmPass, DeclareMahJongg, WithdrawPass
from charleston_fsm.engine.seats import SEATS, Seat
from charleston_fsm.engine.table import Table, tiles_held
from charleston_fsm.engine.tiles import TILE_COUNT, Deal, is_joker
from charleston_fsm.engine.views import seat_view
from charleston_fsm.store import GameQuarantined, GameStore, NewGame, play_bots


def bot_game(store: GameStore, ruleset: str, seed: int, snapshots: dict | None = None) -> str:
    """A whole game through ``store.writes.execute``; ``snapshots``: {last_seq: table}."""
    game_id = store.registry.create_game(
        NewGame(ruleset, seed=seed, players={"east": "Ann", "north": "Dee"})
    )
    ids = count(1)

    def execute(command):
        result = store.writes.execute(game_id, command, command_id=f"c{next(ids)}")
        if snapshots is not None:
            snapshots[result.last_seq] = store.reads.table(game_id).snapshot()
        return [e.event for e in result.events]

    if snapshots is not None:
        snapshots[1] = store.reads.table(game_id).snapshot()
    play(
        execute,
        lambda s: seat_view(store.reads.table(game_id), s),
        bots_for(seed),
        rng=random.Random(seed),
    )
    return game_id


@pytest.mark.rule("SVC-04")
@pytest.mark.parametrize(("db_url", "ruleset"), backends_by(["nmjl", "house"]), indirect=["db_url"])
def test_replay_equals_projection_for_random_bot_games(store: GameStore, ruleset: str) -> None:
    games = [bot_game(store, ruleset, seed) for seed in range(6)]
    assert store.auditor.check_projections() == []
    for game_id in games:
        table = store.reads.table(game_id)
        assert table.finished
        assert sorted(tiles_held(table)) == list(range(TILE_COUNT))
        assert store.reads.replay(game_id).snapshot() == table.snapshot()
        assert store.tamper.verify(game_id).ok
    assert {g.status for g in store.registry.games()} == {"finished"}


def test_replay_at_every_seq_shows_what_the_live_game_showed(store: GameStore) -> None:
    snapshots: dict[int, dict] = {}
    game_id = bot_game(store, "nmjl", 7, snapshots)
    last = store.registry.last_seq(game_id)
    assert max(snapshots) == last
    boundaries = sorted(snapshots)
    for seq in range(1, last + 1):
        # a seq inside a command's rows shows the table after that command
        shown = snapshots[next(b for b in boundaries if b >= seq)]
        assert store.reads.replay(game_id, at=seq).snapshot() == shown, seq


def test_verify_names_a_changed_payload(store: GameStore) -> None:
    game_id = bot_game(store, "nmjl", 3)
    other = bot_game(store, "nmjl", 4)
    rows = store.reads.events(game_id)
    target = next(r for r in rows if r.type == "tiles_transferred" and r.seq > 20)
    swapped = target.payload["from_hand"][0] + 1
    with store.engine.begin() as conn:
        sql = (
            "UPDATE events SET payload = jsonb_set(payload, '{from_hand,0}', CAST(:tile AS jsonb))"
            if store.dialect == "postgresql"
            else "UPDATE events SET payload = json_set(payload, '$.from_hand[0]', :tile)"
        )
        conn.execute(
            text(sql + " WHERE game_id = :game AND seq = :seq"),
            {
                "tile": json.dumps(swapped) if store.dialect == "postgresql" else swapped,
                "game": game_id,
                "seq": target.seq,
            },
        )
    verdict = store.tamper.verify(game_id)
    assert not verdict.ok
    assert verdict.first_bad_seq == target.seq
    assert f"Row {target.seq}" in verdict.message
    assert store.tamper.verify(other).ok
    # the game is quarantined: nothing is served from the changed record
    assert verdict.quarantine is not None and verdict.quarantine["active"]
    assert store.auditor.check_projections() == [game_id]
    with pytest.raises(GameQuarantined):
        store.reads.replay(game_id)
    with pytest.raises(GameQuarantined):
        store.reads.events(game_id)
    report = store.auditor.audit(game_id)
    assert report.verification["first_bad_seq"] == target.seq
    assert f"BROKEN at seq {target.seq}" in report.to_text()


@pytest.mark.parametrize(
    ("column", "pg", "lite"),
    [
        ("created_at", "created_at + interval '1 second'", "datetime(created_at, '+1 second')"),
        ("seat", "'west'", "'west'"),
        ("command_id", "'forged'", "'forged'"),
        ("type", "'vote_cast'", "'vote_cast'"),
    ],
)
def test_verify_names_any_changed_column(store: GameStore, column: str, pg: str, lite: str) -> None:
    game_id = bot_game(store, "house", 2)
    seq = 12
    value = pg if store.dialect == "postgresql" else lite
    with store.engine.begin() as conn:
        conn.execute(
            text(f"UPDATE events SET {column} = {value} WHERE game_id = :game AND seq = :seq"),
            {"game": game_id, "seq": seq},
        )
    verdict = store.tamper.verify(game_id)
    assert (verdict.ok, verdict.first_bad_seq) == (False, seq)


def test_verify_names_a_deleted_or_rechained_row(store: GameStore) -> None:
    game_id = bot_game(store, "nmjl", 5)
    last = store.registry.last_seq(game_id)
    rows = store.reads.events(game_id)
    # the anchor of the last command pins all its rows: verify names the first of them
    first = min(r.seq for r in rows if r.command_id == rows[-1].command_id)
    with store.engine.begin() as conn:
        conn.execute(
            text("DELETE FROM events WHERE game_id = :game AND seq = :seq"),
            {"game": game_id, "seq": last},
        )
    verdict = store.tamper.verify(game_id)
    assert not verdict.ok and first <= verdict.first_bad_seq <= last, verdict.message
    with store.engine.begin() as conn:
        conn.execute(
            text("DELETE FROM events WHERE game_id = :game AND seq = 9"), {"game": game_id}
        )
    assert store.tamper.verify(game_id).first_bad_seq == 9


@pytest.mark.postgres
def test_full_game_on_postgres_replayed_at_every_seq_and_audited(pg_store: GameStore) -> None:
    snapshots: dict[int, dict] = {}
    seed = next(s for s in range(50) if _has_blind_pass(s))
    game_id = bot_game(pg_store, "nmjl", seed, snapshots)
    rows = pg_store.reads.events(game_id)
    boundaries = sorted(snapshots)
    for row in rows:
        shown = snapshots[next(b for b in boundaries if b >= row.seq)]
        assert pg_store.reads.replay(game_id, at=row.seq).snapshot() == shown
    assert pg_store.tamper.verify(game_id).ok

    report = pg_store.auditor.audit(game_id)
    data = report.to_dict()
    json.dumps(data)  # JSON-ready
    table = pg_store.reads.table(game_id)
    resolved = [r for r in rows if r.type == "pass_resolved"]
    assert [p.resolved_seq for p in report.passes if p.resolved_seq] == [r.seq for r in resolved]
    assert table.passes_resolved == len(resolved)
    transfers = [r for r in rows if r.type == "tiles_transferred"]
    assert sum(len(p.transfers) for p in report.passes) == len(transfers)
    for p in report.passes:
        for t in p.transfers:
            row = rows[t.seq - 1]
            assert (row.seat, row.payload["receiver"], row.payload["from_hand"]) == (
                t.giver,
                t.receiver,
                t.from_hand,
            )
        # everyone who gave in a standard pass confirmed first, with a time
        givers = {t.giver for t in p.transfers}
        confirmed = {c.seat for c in p.confirmations if c.action != "withdrawn"}
        assert givers <= confirmed
        assert all(c.at.endswith("Z") for c in p.confirmations)
    assert any(p.blind_routes for p in report.passes)
    for p in report.passes:
        for tile, route in p.blind_routes.items():
            assert len(route) >= 3 and int(tile) in (t for tr in p.transfers for t in tr.forwarded)
    votes = [(r.seq, r.seat, r.payload["choice"]) for r in rows if r.type == "vote_cast"]
    assert [(v["seq"], v["seat"], v["choice"]) for v in report.votes] == votes
    assert report.ended and report.ended["reason"] == table.ended_reason
    assert report.players == {"east": "Ann", "north": "Dee"}
    text_ = report.to_text()
    assert "Hash chain: intact" in text_
    for p in report.passes:
        assert p.label in text_
    assert "blind route" in text_


def _has_blind_pass(seed: int) -> bool:
    table = Table(Deal.shuffled(seed))
    play_table(table, seed)
    return any(e.type == "pass_resolved" and e.payload["blind"] for e in table.log)


def test_audit_keeps_changes_withdrawals_and_declarations(store: GameStore) -> None:
    def tiles(seat: Seat, skip: int = 0) -> list[int]:
        rack = store.reads.table(game_id).racks[seat]
        return [t for t in rack if not is_joker(t)][skip : skip + 3]

    game_id = store.registry.create_game(NewGame(seed=8))
    store.writes.execute(game_id, ConfirmPass(seat=Seat.EAST, tiles=tiles(Seat.EAST)))
    store.writes.execute(game_id, ChangePass(seat=Seat.EAST, tiles=tiles(Seat.EAST, 3)))
    store.writes.execute(game_id, ConfirmPass(seat=Seat.SOUTH, tiles=tiles(Seat.SOUTH)))
    store.writes.execute(game_id, WithdrawPass(seat=Seat.SOUTH))
    for seat in SEATS[1:]:
        store.writes.execute(game_id, ConfirmPass(seat=seat, tiles=tiles(seat)))
    first = store.auditor.audit(game_id).passes[0]
    assert first.step == "CHARLESTON_P1_R"
    assert [(c.seat, c.action) for c in first.confirmations] == [
        ("east", "confirmed"),
        ("east", "changed"),
        ("south", "confirmed"),
        ("south", "withdrawn"),
        ("south", "confirmed"),
        ("west", "confirmed"),
        ("north", "confirmed"),
    ]
    assert first.confirmations[1].tiles == first.transfers[0].from_hand

    heavenly = store.registry.create_game(NewGame(seed=9))
    store.writes.execute(heavenly, DeclareMahJongg(seat=Seat.EAST))
    report = store.auditor.audit(heavenly)
    assert [(d["seat"], d["kind"]) for d in report.declarations] == [("east", "heavenly")]
    assert report.ended and report.ended["reason"] == "Heavenly Hand declared"
    assert "East declares Mah Jongg (heavenly hand" in report.to_text()


def test_store_view_equals_the_view_of_a_fresh_table(store: GameStore) -> None:
    from charleston_fsm.engine.views import director_view

    game_id = store.registry.create_game(NewGame("nmjl", seed=12))
    checked = 0

    def view_of(seat: Seat) -> dict:
        nonlocal checked
        table = store.reads.table(game_id)
        for other in SEATS:
            assert store.reads.view(game_id, other) == seat_view(table, other)
        assert store.reads.view(game_id) == director_view(table)
        checked += 1
        return store.reads.view(game_id, seat.value)

    play_bots(store, game_id, 12, view_of=view_of)
    assert store.reads.table(game_id).finished and checked >= 40

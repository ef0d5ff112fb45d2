"""Verify and audit of many games: bulk reads, parallel processes, sealed anchors.

A finished game is replayed once when it finishes and its final anchor sealed with the
replay's digest; a sweep then replays only games no valid seal vouches for. Every kind
of tampering must still be named exactly as a one-game verify names it.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from api_helpers import cli
from sqlalchemy import update
from test_tamper import SEED, TAMPERING, Expected, cli_findings, edited_projection

from charleston_fsm.engine.bots import play_table
from charleston_fsm.engine.rulesets import RULESETS
from charleston_fsm.engine.table import Table
from charleston_fsm.engine.tiles import Deal
from charleston_fsm.store import GameStore, NewGame, play_bots
from charleston_fsm.store.database.models import AnchorRow

UNTOUCHED = 2


def finished_games(store: GameStore, count: int, first_seed: int = SEED) -> list[str]:
    games = []
    for seed in range(first_seed, first_seed + count):
        game_id = store.registry.create_game(NewGame(seed=seed))
        play_bots(store, game_id, seed)
        games.append(game_id)
    store.writes.wait_for_seals()  # each finishing command asked for its game's seal
    return games


def final_anchor(store: GameStore, game_id: str):  # type: ignore[no-untyped-def]
    return store.tamper.anchors(game_id)[-1]


def unseal(store: GameStore, game_id: str) -> None:
    """The final anchor as the service signed it before replays were sealed."""
    anchor = replace(final_anchor(store, game_id), replay_digest=None)
    signed = anchor.signed(
        store.anchor_key, anchor.game_id, anchor.seq, anchor.head_hash, True, anchor.created_at
    )
    with store.engine.begin() as conn:
        conn.execute(
            update(AnchorRow)
            .where(AnchorRow.game_id == game_id, AnchorRow.seq == anchor.seq)
            .values(replay_digest=None, signature=signed.signature)
        )


def found(verdict_findings) -> Expected:  # type: ignore[no-untyped-def]
    return {(f.kind, f.seq) for f in verdict_findings}


@pytest.mark.rule("SVC-08")
def test_a_sweep_names_each_tampering_among_many_serial_and_parallel(
    store: GameStore, db_url: str
) -> None:
    kinds = list(TAMPERING)
    games = finished_games(store, len(kinds) + UNTOUCHED)
    expected: dict[str, Expected] = {}
    for kind, game_id in zip(kinds, games, strict=False):
        expected[game_id] = TAMPERING[kind][0](store, game_id)

    serial = store.tamper.verify_all(jobs=1)
    parallel = store.tamper.verify_all(jobs=2)
    for sweep in (serial, parallel):
        by_game = {v.game_id: v for v in sweep.verifications}
        assert sorted(by_game) == sorted(games)
        for game_id in games:
            verdict = by_game[game_id]
            assert found(verdict.findings) == expected.get(game_id, set()), verdict.findings
            assert (verdict.quarantine is not None) is (game_id in expected)
        # only the projection edit leaves the rows and the sealed head intact: that game
        # and the untouched ones are checked against their seal, the others replayed
        assert sweep.replayed == len(kinds) - 1
        assert sweep.sealed == 0
        assert sweep.rows == sum(v.checked for v in sweep.verifications)
    assert [v.to_dict() for v in serial.verifications] == [
        v.to_dict() for v in parallel.verifications
    ]
    one_by_one = {g: store.tamper.verify(g).findings for g in games}
    assert {v.game_id: v.findings for v in serial.verifications} == one_by_one
    assert {q["game_id"] for q in store.tamper.quarantines()} == set(expected)

    forced = store.tamper.verify_all(replay=True, jobs=2)
    assert forced.replayed == len(games)
    assert {v.game_id: v.findings for v in forced.verifications} == one_by_one

    by_cli = cli("verify", "--jobs", "2", "--database-url", db_url, check=False)
    assert by_cli.returncode == 1
    assert cli_findings(by_cli.stdout) == set().union(*expected.values())
    assert f"{len(games)} game(s) verified: {UNTOUCHED} ok, {len(kinds)} failed" in by_cli.stdout
    assert f"{len(kinds) - 1} game(s) replayed through the chart" in by_cli.stdout


def test_a_finished_game_is_sealed_once_and_replayed_only_when_needed(
    store: GameStore,
) -> None:
    games = finished_games(store, 3)
    for game_id in games:  # the finishing command sealed each game's final anchor
        anchor = final_anchor(store, game_id)
        assert anchor.finished and anchor.replay_digest is not None
        assert store.anchor_key.checks(anchor)
    assert not store.tamper.verify(games[0]).replayed
    assert store.tamper.verify(games[0], replay=True).replayed

    unseal(store, games[1])  # as a game finished before seals were written
    first = store.tamper.verify_all()
    assert first.replayed == 1 and first.sealed == 1
    assert all(v.ok for v in first.verifications)
    again = store.tamper.verify_all()
    assert again.replayed == 0 and again.sealed == 0
    assert final_anchor(store, games[1]).replay_digest is not None

    # a seal changed without the key vouches for nothing: the game is replayed and named
    with store.engine.begin() as conn:
        conn.execute(
            update(AnchorRow)
            .where(
                AnchorRow.game_id == games[2], AnchorRow.seq == final_anchor(store, games[2]).seq
            )
            .values(replay_digest="0" * 64)
        )
    forged = store.tamper.verify_all(games[2:])
    (verdict,) = forged.verifications
    assert forged.replayed == 1
    assert found(verdict.findings) == {("anchor_bad_signature", verdict.recorded_seq)}


def test_a_live_game_is_replayed_and_not_sealed(store: GameStore) -> None:
    game_id = store.registry.create_game(NewGame(seed=SEED))
    swept = store.tamper.verify_all([game_id])
    assert swept.replayed == 1 and swept.sealed == 0 and swept.verifications[0].ok
    assert all(a.replay_digest is None for a in store.tamper.anchors(game_id))


def test_the_audit_of_many_games_is_each_games_audit(store: GameStore) -> None:
    games = finished_games(store, 3)
    swept = store.auditor.audit_all(jobs=2)
    assert sorted(swept.audits) == sorted(games)
    for game_id in games:
        assert swept.audits[game_id].to_dict() == store.auditor.audit(game_id).to_dict()


@pytest.mark.parametrize("ruleset", sorted(RULESETS))
def test_a_warm_fold_equals_a_fold_on_a_new_table(ruleset: str) -> None:
    """One warm table per chart class serves every game, across rulesets sharing it."""
    others = [name for name in sorted(RULESETS) if name != ruleset]
    for seed in range(6):
        table = Table(Deal.shuffled(seed), ruleset)
        play_table(table, seed)
        cold = Table.fold(table.deal, ruleset, table.options, table.log)
        warm = Table.fold(table.deal, ruleset, table.options, table.log, warm=True)
        assert warm.snapshot() == cold.snapshot() == table.snapshot()
        assert warm.finished and warm.log == table.log
        other = others[seed % len(others)]  # the next game may be of another ruleset
        Table.fold(Deal.shuffled(seed), other, None, [], warm=True)


def test_a_record_that_does_not_verify_is_not_sealed_nor_quarantined_by_the_seal(
    store: GameStore,
) -> None:
    (game_id,) = finished_games(store, 1)
    unseal(store, game_id)
    edited_projection(store, game_id)
    assert store.tamper.seal(game_id) is False
    assert store.tamper.quarantines(game_id) == []
    assert final_anchor(store, game_id).replay_digest is None


def test_bots_playing_from_the_answers_play_the_same_game(store: GameStore) -> None:
    """The bench stores its games with views from each command's answer (no read per
    view): the bots must see, decide and store exactly what they do reading the store."""
    logs = []
    for from_answers in (False, True):
        game_id = store.registry.create_game(NewGame(seed=SEED))
        given = play_bots(store, game_id, SEED, from_answers=from_answers)
        events = store.reads.events(game_id)
        assert events[-1].type == "charleston_complete" or store.reads.table(game_id).finished
        logs.append((given, [(e.type, e.seat, e.payload) for e in events[1:]]))
    assert logs[0] == logs[1]

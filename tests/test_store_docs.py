"""The director's queries in docs/store.md, run against PostgreSQL as written there."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlalchemy import text

from charleston_fsm.store import GameStore, NewGame, play_bots

DOC = Path(__file__).resolve().parents[1] / "docs" / "store.md"


def queries() -> dict[str, str]:
    """``<!-- query: name -->`` followed by a ```sql block; psql's :'var' becomes :var."""
    found = re.findall(r"<!-- query: (\w+) -->\s*```sql\n(.*?)```", DOC.read_text(), re.S)
    return {name: re.sub(r":'(\w+)'", r":\1", sql) for name, sql in found}


def game(store: GameStore, seed: int) -> str:
    game_id = store.registry.create_game(NewGame(seed=seed))
    play_bots(store, game_id, seed)
    return game_id


def test_the_doc_has_the_three_queries() -> None:
    assert set(queries()) == {"east_passed", "blind_games", "pass_confirmations"}


@pytest.mark.postgres
def test_director_queries_answer_from_the_events(pg_store: GameStore) -> None:
    games = [game(pg_store, seed) for seed in range(6)]
    sql = queries()
    with pg_store.engine.connect() as conn:

        def run(name: str, **binds: str) -> list:
            return conn.execute(text(sql[name]), binds).all()

        for game_id in games:
            rows = pg_store.reads.events(game_id)
            east = run("east_passed", game=game_id)
            expected = [
                (
                    r.seq,
                    r.step,
                    r.payload["receiver"],
                    r.payload["from_hand"],
                    r.payload["forwarded"],
                )
                for r in rows
                if r.type == "tiles_transferred" and r.seat == "east"
            ]
            assert [tuple(row[:5]) for row in east] == expected
            assert expected  # East passes in every game
            assert all(row.created_at is not None for row in east)

            for step in {r.step for r in rows if r.type == "pass_resolved"}:
                confirmations = run("pass_confirmations", game=game_id, step=step)
                expected = [
                    (r.seq, r.seat, r.type, r.payload.get("tiles"), r.payload.get("blind"))
                    for r in rows
                    if r.step == step and r.type.startswith("pass_") and r.type != "pass_resolved"
                ]
                got = [(c.seq, c.seat, c.type, c.tiles, c.blind) for c in confirmations]
                assert got == expected
                assert {c.seat for c in confirmations} >= {
                    r.seat for r in rows if r.step == step and r.type == "tiles_transferred"
                }

        blind = {row.game_id: row for row in run("blind_games")}
        expected_blind = {}
        for game_id in games:
            forwarded = [
                len(r.payload["forwarded"])
                for r in pg_store.reads.events(game_id)
                if r.type == "tiles_transferred" and r.payload["forwarded"]
            ]
            if forwarded:
                expected_blind[game_id] = (len(forwarded), sum(forwarded))
    assert expected_blind, "no bot game passed blind: pick other seeds"
    assert {g: (r.blind_handovers, r.tiles_forwarded_unseen) for g, r in blind.items()} == (
        expected_blind
    )

"""The unit of work (store/games/unit_of_work.py): the one bracket a game's write runs in.

Several games' plans in one unit are stored together or not at all; a failure forgets
what the process remembered of every game the unit touched (its next write reads the
game again), and the work after the commit (the head cached, the notice) is done only
once the unit has committed. Both backends.
"""

from __future__ import annotations

import pytest

from charleston_fsm.engine import annotations
from charleston_fsm.engine.errors import CharlestonError
from charleston_fsm.store import GameStore, NewGame


def _pause() -> annotations.Annotation:
    return annotations.pause({"type": "pause_clock"})


def test_a_failed_unit_stores_nothing_and_forgets_every_game_it_touched(
    store: GameStore,
) -> None:
    games = [
        store.registry.create_game(NewGame(seed=n, clock={"confirm_pass": 60})) for n in (1, 2)
    ]
    before = [store.registry.last_seq(g) for g in games]
    assert all(store.core.served.get(g) is not None for g in games)  # cached at creation
    heard: list[tuple[str, int | None]] = []
    store.core.notices.listen(lambda game_id, seq: heard.append((game_id, seq)))

    with pytest.raises(RuntimeError, match="after both plans"), store.writes.transaction() as work:
        for game_id in games:
            written = work.run(store.writes.annotation_plan(game_id, _pause(), "p", cached=True))
            assert written is not None and written.result.events
        raise RuntimeError("the block failed after both plans")
    assert [store.registry.last_seq(g) for g in games] == before  # neither is stored
    assert [store.core.served.get(g) for g in games] == [None, None]
    assert heard == []

    with store.writes.transaction() as work:
        done = [
            work.run(store.writes.annotation_plan(g, _pause(), "p", cached=True)) for g in games
        ]
        assert heard == []  # nothing is told before the commit
    seqs = [w.result.last_seq for w in done if w is not None]
    assert seqs == [b + 1 for b in before]
    assert [store.registry.last_seq(g) for g in games] == seqs
    assert [store.core.served.get(g).last_seq for g in games] == seqs  # type: ignore[union-attr]
    assert heard == list(zip(games, seqs, strict=True))


def test_a_refused_plan_leaves_the_others_of_its_unit_to_commit(store: GameStore) -> None:
    paused, running = (
        store.registry.create_game(NewGame(seed=n, clock={"confirm_pass": 60})) for n in (3, 4)
    )
    store.writes.annotate(paused, _pause(), "first")
    at = store.registry.last_seq(paused)
    with store.writes.transaction() as work:
        with pytest.raises(CharlestonError):  # already paused: refused, nothing written
            work.run(store.writes.annotation_plan(paused, _pause(), "again", cached=True))
        written = work.run(store.writes.annotation_plan(running, _pause(), "p", cached=True))
    assert written is not None and not written.result.duplicate
    assert store.registry.last_seq(paused) == at
    assert store.registry.last_seq(running) == written.result.last_seq


def test_a_unit_runs_one_transaction(store: GameStore) -> None:
    work = store.writes.transaction()
    with work:
        pass
    with pytest.raises(RuntimeError, match="one transaction"), work:
        pass
    with pytest.raises(RuntimeError, match="inside its with block"):
        _ = work.conn

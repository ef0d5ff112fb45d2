"""Bots that play like people: choices seeded by the game and the seat, a thinking pace a
table is created with, and votes that vary with the hand (engine/bots.py states the rates)."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from engine_helpers import E, new_table

from charleston_fsm.engine import clocks, errors
from charleston_fsm.engine.bots import Bot, play_table
from charleston_fsm.engine.commands import DeclareMahJongg
from charleston_fsm.engine.seats import SEATS, Seat
from charleston_fsm.engine.table import Table
from charleston_fsm.engine.tiles import Deal
from charleston_fsm.engine.views import seat_view
from charleston_fsm.store import GameStore, NewGame

BOTS = [Seat.SOUTH, Seat.WEST, Seat.NORTH]


def outcome(table: Table) -> str:
    """How the vote went: the Second Charleston played, or stopped."""
    return "stopped" if "stop" in table.votes.values() else "second"


def test_two_hundred_bot_games_show_both_outcomes_at_the_stated_rates() -> None:
    """200 shuffled deals of nmjl, four bots each: the vote goes both ways, about as the
    bots' docstring says (a stop in 40-50% of the games, about one vote in seven)."""
    games = Counter()
    votes = Counter()
    for seed in range(200):
        table = Table(Deal.shuffled(seed), "nmjl")
        play_table(table, seed)
        assert table.finished
        games[outcome(table)] += 1
        votes.update(table.votes.values())
    assert games["stopped"] and games["second"]
    assert 0.3 <= games["stopped"] / 200 <= 0.6, games
    assert 0.09 <= votes["stop"] / sum(votes.values()) <= 0.2, votes


def test_a_stop_is_likelier_with_a_hand_that_came_together() -> None:
    bot = Bot(seat=E)
    scattered = {"rack": [{"id": i * 4, "face": f"{i + 1}B"} for i in range(9)], "received": []}
    pairs = [{"id": i, "face": f"{i // 2 + 1}C"} for i in range(12)]
    together = {"rack": pairs, "received": []}
    assert bot.stop_chance(scattered) == pytest.approx(0.05)
    assert bot.stop_chance(together) == pytest.approx(0.05 + 0.07 * 6)
    assert Bot(seat=E, continue_rate=1.0).stop_chance(together) == 0.0  # a fixed rate


@pytest.mark.parametrize("seed", range(5))
def test_a_bot_passes_its_loose_tiles_before_breaking_a_pair(seed: int) -> None:
    view = seat_view(Table(Deal.shuffled(seed), "nmjl"), Seat.SOUTH)
    faces = Counter(t["face"] for t in view["rack"])
    loose = [t["id"] for t in view["rack"] if faces[t["face"]] == 1 and t["face"] != "J"]
    command = Bot(seat=Seat.SOUTH, rng=random.Random(seed), blind_rate=0).decide(view)
    assert command is not None and len(command.tiles) == 3
    if len(loose) >= 3:
        assert set(command.tiles) <= set(loose)
    else:
        assert set(loose) <= set(command.tiles)


def test_games_dealt_alike_get_different_bot_choices() -> None:
    """The same deal and the same order of play, in different games: the bots' choices
    follow the game (its seed and id), not only the seat and the seq."""
    table = Table(Deal.shuffled(5), "nmjl")
    first = {
        clocks.auto_player(Seat.SOUTH, 1, bot=True, game=f"5:game-{n}")
        .decide(seat_view(table, Seat.SOUTH))
        .tiles.__str__()  # type: ignore[union-attr]
        for n in range(12)
    }
    assert len(first) > 1
    same = clocks.auto_player(Seat.SOUTH, 1, bot=True, game="5:game-0")
    assert same.decide(seat_view(table, Seat.SOUTH)) == clocks.auto_player(
        Seat.SOUTH, 1, bot=True, game="5:game-0"
    ).decide(seat_view(table, Seat.SOUTH))  # every process chooses the same


def test_thinking_time_follows_the_pace() -> None:
    assert clocks.pace_for(None, BOTS) == clocks.DEFAULT_PACE  # people at the table
    assert clocks.pace_for(None, SEATS) == 0.0  # bots only
    assert clocks.pace_for(None, []) == 0.0
    assert clocks.pace_for(1.5, SEATS) == 1.5
    table = new_table("nmjl")
    doc = clocks.new_clock(None, BOTS, game="7:g", pace=2.0)
    first = [clocks.thinking(doc, table, s, seq) for s in BOTS for seq in range(1, 20)]
    assert all(2.0 * 0.5 * 3 <= t <= 2.0 * 1.5 * 3 for t in first)  # the first look
    assert len(set(first)) > 10
    table.execute(DeclareMahJongg(seat=E))  # no pass now: an ordinary decision's time
    later = [clocks.thinking(doc, table, s, seq) for s in BOTS for seq in range(1, 20)]
    assert all(1.0 <= t <= 3.0 for t in later)
    assert clocks.thinking(replace(doc, pace=0.0), table, Seat.SOUTH, 1) == 0.0


def _play_bots(store: GameStore, game_id: str) -> None:
    for _ in range(2000):
        if not store.clock_worker.fire_due_clocks():
            break
    assert store.reads.view(game_id)["game"]["finished"]


def test_twenty_bot_only_games_show_both_outcomes_of_the_vote(sqlite_store: GameStore) -> None:
    """Twenty stored games of four service bots (pace 0: bots only), seeds 21-40, the
    deadlines firing as in the service: some stop at the vote, some play the Second
    Charleston."""
    seen = Counter()
    for seed in range(21, 41):
        game_id = sqlite_store.registry.create_game(
            NewGame("nmjl", seed=seed, bots=[s.value for s in SEATS])
        )
        _play_bots(sqlite_store, game_id)
        seen[outcome(sqlite_store.reads.table(game_id))] += 1
    assert seen["stopped"] and seen["second"], seen


def test_east_declares_heavenly_while_three_bots_think(sqlite_store: GameStore) -> None:
    """With a pace, the bots take their first look at the rack before passing: East
    declares a Heavenly Hand meanwhile. With no pace they confirm at once, and East's
    window closes (NMJL-14)."""
    paced = sqlite_store.registry.create_game(
        NewGame("nmjl", seed=3, bots=[s.value for s in BOTS], pace=2)
    )
    deadlines = sqlite_store.reads.view(paced)["clock"]["deadlines"]
    assert {d["kind"] for d in deadlines.values()} == {"bot"}
    assert min(d["seconds"] for d in deadlines.values()) >= 3.0  # 2 s x 0.5 x 3
    soon = datetime.now(UTC) + timedelta(seconds=2)
    assert sqlite_store.clock_worker.fire_due_clocks(now=soon) == []  # still thinking
    sqlite_store.writes.execute(paced, DeclareMahJongg(seat=E))
    assert sqlite_store.reads.view(paced)["game"]["ending"]["how"] == "heavenly"

    hasty = sqlite_store.registry.create_game(
        NewGame("nmjl", seed=3, bots=[s.value for s in BOTS], pace=0)
    )
    sqlite_store.clock_worker.fire_due_clocks()
    with pytest.raises(errors.HeavenlyHandTooLate):
        sqlite_store.writes.execute(hasty, DeclareMahJongg(seat=E))

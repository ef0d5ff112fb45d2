"""A warm fold equals a cold fold, whatever the thread folded before (issue 17).

Replay, verify and seal fold a game's rows into this thread's one table of the chart
class (``Table.fold(..., warm=True)``), redealt per game. Where a chart starts depends
on the game's options (a Four Winds round without a Charleston starts at the Ding Dong
window, or is over at once), so a warm fold that kept the previous game's start
disagreed with the projection: a valid game was quarantined depending on which game the
process had folded first. These properties fold random games of every ruleset and
option set, in any order, warm and cold, and compare everything a reader sees.
"""

from __future__ import annotations

import itertools
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from api_helpers import Game, ok, running
from budget import examples, sample
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from charleston_fsm.engine.bots import Bot
from charleston_fsm.engine.charts.four_winds import FourWindsOptions, Schedule
from charleston_fsm.engine.charts.standard import CourtesyMode, SecondCharlestonOrder
from charleston_fsm.engine.events import Event
from charleston_fsm.engine.seats import SEATS
from charleston_fsm.engine.table import Table
from charleston_fsm.engine.tiles import Deal
from charleston_fsm.engine.views import director_view, seat_view
from charleston_fsm.store import GameStore, NewGame, play_bots


@dataclass(frozen=True)
class Recorded:
    """A game as a store keeps it: ruleset, options, deal and the recorded events."""

    ruleset: str
    options: dict[str, Any]
    seed: int
    events: tuple[Event, ...]

    def fold(self, *, warm: bool) -> Table:
        return Table.fold(
            Deal.shuffled(self.seed), self.ruleset, self.options, self.events, warm=warm
        )


def played(ruleset: str, options: dict[str, Any], seed: int, commands: int) -> Recorded:
    """Bots play a table for at most ``commands`` commands (a whole game when enough)."""
    table = Table(Deal.shuffled(seed), ruleset, options)
    rng = random.Random(seed)
    bots = {
        s: Bot(
            seat=s,
            rng=random.Random(f"{seed}:{s.value}"),
            continue_rate=0.7,
            late_objection_rate=0.2,
            ding_dong_rate=0.7,
            ready_rate=0.2,
        )
        for s in SEATS
    }
    for _ in range(commands):
        seats = list(SEATS)
        rng.shuffle(seats)
        command = next(
            (c for s in seats if (c := bots[s].decide(seat_view(table, s))) is not None), None
        )
        if command is None:
            break
        table.execute(command)
    # the events as a store keeps them: through JSON
    events = tuple(Event.from_dict(json.loads(json.dumps(e.to_dict()))) for e in table.log)
    return Recorded(ruleset, table.options.model_dump(mode="json"), seed, events)


def seen(table: Table, *, views: bool = True) -> str:
    """What a reader of the folded table sees (``views``: also every view), as one text.

    The snapshot is what verify compares with the projection and what a seal digests.
    """
    facts: dict[str, Any] = {
        "snapshot": table.snapshot(),
        "finished": table.finished,
        "log": [e.to_dict() for e in table.log],
    }
    if views:
        facts["views"] = {s.value: seat_view(table, s) for s in SEATS}
        facts["director"] = director_view(table)
    return json.dumps(facts, sort_keys=True)


def assert_warm_equals_cold(
    games: list[Recorded], *, views: bool = True, cold: dict[int, str] | None = None
) -> None:
    """Fold ``games`` warm one after the other; each equals its cold fold.

    ``cold``: cold folds already seen, by ``id(game)`` (filled in as they are made).
    """
    cold = {} if cold is None else cold
    for index, game in enumerate(games):
        if id(game) not in cold:
            cold[id(game)] = seen(game.fold(warm=False), views=views)
        warm = seen(game.fold(warm=True), views=views)
        assert warm == cold[id(game)], (
            f"game {index} ({game.ruleset} {game.options}) folds differently warm, "
            f"after {[(g.ruleset, g.options) for g in games[:index]]}"
        )


STANDARD_OPTIONS = st.fixed_dictionaries(
    {
        "second_charleston_order": st.sampled_from([o.value for o in SecondCharlestonOrder]),
        "blind_pass": st.booleans(),
        "late_objection": st.booleans(),
        "courtesy_mode": st.sampled_from([m.value for m in CourtesyMode]),
        "require_placing": st.booleans(),
    }
)
SCHEDULES = [s.value for s in Schedule]
FOUR_WINDS_OPTIONS = st.fixed_dictionaries(
    {
        "round": st.sampled_from([s.value for s in SEATS]),
        "charleston": st.sampled_from(SCHEDULES),
        "ding_dong": st.sampled_from(SCHEDULES),
        "ding_dong_max": st.integers(1, 9),
        "require_placing": st.booleans(),
    }
)
GAMES = st.one_of(
    st.tuples(st.sampled_from(["nmjl", "house"]), STANDARD_OPTIONS | st.just({})),
    st.tuples(st.just("four_winds"), FOUR_WINDS_OPTIONS | st.just({})),
).flatmap(
    lambda rules: st.builds(
        played,
        st.just(rules[0]),
        st.just(rules[1]),
        st.integers(0, 10_000),
        st.integers(0, 20) | st.just(500),  # a game under way, or played to its end
    )
)


@pytest.mark.rule("SVC-04")
@settings(
    max_examples=examples(12, 200), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(games=st.lists(GAMES, min_size=2, max_size=6))
def test_a_warm_fold_equals_a_cold_fold_in_any_order(games: list[Recorded]) -> None:
    assert_warm_equals_cold(games)
    assert_warm_equals_cold(games[::-1])


#: every combination of the Four Winds schedule options (FourWindsOptions)
SCHEDULE_COMBINATIONS = [
    {
        "round": round_.value,
        "charleston": charleston,
        "ding_dong": ding_dong,
        "ding_dong_max": most,
        "require_placing": placing,
    }
    for round_, charleston, ding_dong, most, placing in itertools.product(
        SEATS, SCHEDULES, SCHEDULES, range(1, 10), (True, False)
    )
]


def test_the_combinations_cover_every_four_winds_option() -> None:
    assert set(SCHEDULE_COMBINATIONS[0]) == set(FourWindsOptions.model_fields)
    assert len(SCHEDULE_COMBINATIONS) == 4 * 3 * 3 * 9 * 2


@pytest.mark.rule("SVC-04", "FW-07")
def test_every_four_winds_schedule_folds_warm_as_cold_after_every_other() -> None:
    """Each combination, dealt fresh and played a little, folded warm after the previous
    one in both orders: every pair of neighbouring starts (DEALT -> exchanges, Ding Dong
    window or the end at once) meets both ways. A fixed third of the combinations, the
    first and last included; all of them with CHARLESTON_LONG_TESTS=1."""
    combinations = sample(SCHEDULE_COMBINATIONS, 72, seed="four-winds-schedules")
    games = [
        played("four_winds", options, index, commands=index % 4)
        for index, options in enumerate(combinations)
    ]
    cold: dict[int, str] = {}
    assert_warm_equals_cold(games, views=False, cold=cold)
    assert_warm_equals_cold(games[::-1], views=False, cold=cold)
    # and each way a deal can start right after each other, played to the end: one walk
    # that folds every ordered pair of starts back to back
    starts = [
        played("four_winds", {"round": r, "charleston": c, "ding_dong": d}, seed, 500)
        for seed, (r, c, d) in enumerate(itertools.product(("east", "north"), SCHEDULES, SCHEDULES))
    ]
    walk = [starts[i] for i in every_ordered_pair_once(len(starts))]
    assert_warm_equals_cold(walk, views=False, cold={})


def every_ordered_pair_once(n: int) -> list[int]:
    """A walk over ``range(n)`` in which each ordered pair ``(a, b)``, ``a != b``, is a
    step exactly once (an Euler circuit of the complete digraph, Hierholzer's way): the
    same pairs as folding each pair on its own, in half the folds."""
    unused = {a: [b for b in range(n) if b != a] for a in range(n)}
    stack, walk = [0], []
    while stack:
        if unused[stack[-1]]:
            stack.append(unused[stack[-1]].pop())
        else:
            walk.append(stack.pop())
    return walk[::-1]


def test_the_walk_steps_through_every_ordered_pair_once() -> None:
    walk = every_ordered_pair_once(18)
    steps = list(itertools.pairwise(walk))
    assert sorted(steps) == sorted(itertools.permutations(range(18), 2))


def test_the_issue_s_games_fold_warm_in_either_order() -> None:
    """Issue 17's steps: a default four_winds game, then one with the Charleston off."""
    default = played("four_winds", {}, 1, 0)
    off = played("four_winds", {"charleston": "off"}, 2, 0)
    north_only = played("four_winds", {"charleston": "last_round", "round": "east"}, 3, 0)
    for order in itertools.permutations([default, off, north_only]):
        assert_warm_equals_cold(list(order))


# -- the store and the service: verify, seal and replay agree whatever ran before ---------------
ISSUE_GAMES: list[tuple[int, dict[str, Any]]] = [
    (1, {}),
    (2, {"charleston": "off"}),
    (3, {"charleston": "last_round", "ding_dong": "last_round"}),
    (4, {"charleston": "off", "ding_dong": "off"}),
]


@pytest.mark.rule("SVC-04")
def test_verify_and_seal_agree_whatever_the_store_folded_before(store: GameStore) -> None:
    """Issue 17's steps on the store: verify a default game, then one with the Charleston
    off (and the other way round); play them to the end so the sealing thread folds them
    one after the other too. Nothing is quarantined."""
    for order in (ISSUE_GAMES, ISSUE_GAMES[::-1]):
        games = [
            store.registry.create_game(NewGame("four_winds", options, seed=seed))
            for seed, options in order
        ]
        for game_id in games:
            verdict = store.tamper.verify(game_id)
            assert verdict.ok, verdict.findings
        for seed, game_id in enumerate(games):
            play_bots(store, game_id, seed)
        store.writes.wait_for_seals()
        for game_id in games:
            store.reads.ensure_open(game_id)  # the seal quarantined nothing
            assert store.tamper.verify(game_id, replay=True).ok
            assert store.reads.view(game_id)["game"]["finished"]


@pytest.mark.rule("SVC-04")
def test_verify_over_http_agrees_whatever_the_service_verified_before(
    db_url: str, tmp_path: Path
) -> None:
    """Issue 17's reproduction on a fresh ``serve``: verify answers ok for both games,
    and the second game stays readable (no 423)."""
    with running(db_url, tmp_path) as server:
        first = Game.create(server, ruleset="four_winds", seed=1)
        second = Game.create(server, ruleset="four_winds", seed=2, options={"charleston": "off"})
        try:
            for game in (first, second, first):
                verdict = ok(game.clients["director"].get(game.path("/verify")))
                assert verdict["ok"] and verdict["findings"] == [], verdict
            assert second.view("east")["game"]["state"] == ["DING_DONG_OPEN"]
        finally:
            first.close()
            second.close()

"""A whole game in each ruleset, played by the package's own bots, replays identically."""

import random

import pytest

from charleston_fsm.bots import bots_for, play
from charleston_fsm.rulesets import RULESETS
from charleston_fsm.table import Table
from charleston_fsm.tiles import Deal
from charleston_fsm.views import seat_view


@pytest.mark.parametrize("ruleset", sorted(RULESETS))
@pytest.mark.parametrize("seed", range(5))
def test_bot_game_finishes_and_replays(ruleset: str, seed: int) -> None:
    table = Table(Deal.shuffled(seed), ruleset)
    play(table.execute, lambda s: seat_view(table, s), bots_for(seed), rng=random.Random(seed))
    assert table.finished
    replayed = Table.fold(table.deal, ruleset, table.options, table.log)
    assert replayed.snapshot() == table.snapshot()

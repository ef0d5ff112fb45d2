"""A whole game in each ruleset, played by the package's own bots, replays identically."""

import pytest

from charleston_fsm.engine.bots import play_table
from charleston_fsm.engine.rulesets import RULESETS
from charleston_fsm.engine.table import Table
from charleston_fsm.engine.tiles import Deal


@pytest.mark.parametrize("ruleset", sorted(RULESETS))
@pytest.mark.parametrize("seed", range(5))
def test_bot_game_finishes_and_replays(ruleset: str, seed: int) -> None:
    table = Table(Deal.shuffled(seed), ruleset)
    play_table(table, seed)
    assert table.finished
    replayed = Table.fold(table.deal, ruleset, table.options, table.log)
    assert replayed.snapshot() == table.snapshot()

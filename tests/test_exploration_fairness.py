"""``terminating`` and ``finishing`` are checked on the explored graph under the clock's
fairness (charleston_fsm.exploration.fairness): the real engine's cycles (changes and
withdrawals) are all left by a clock sweep, and a seeded fairness defect, a seat's clock
that never acts in one step, fails ``check`` with a lasso: the path to the cycle and the
loop, each a command the engine accepts.

The defect is seeded by patching the clock's auto player in the test; what finds it is
the exploration and the ``check`` command, run unchanged (in-process, so the patch holds).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from charleston_fsm.cli import app
from charleston_fsm.engine import clocks
from charleston_fsm.engine.commands import parse_command
from charleston_fsm.engine.seats import Seat
from charleston_fsm.engine.table import Table
from charleston_fsm.exploration import explore
from charleston_fsm.exploration.abstraction import canonical_deal
from charleston_fsm.exploration.fairness import components, escaping
from charleston_fsm.exploration.reduction import reduced_key

DING_DONG_ONLY = {"charleston": "off", "ding_dong": "every_round", "ding_dong_max": 1}


def _east_clock_idle_in_the_ding_dong(monkeypatch: pytest.MonkeyPatch) -> None:
    """The defect: East's clock never acts while the table is in the Ding Dong."""
    real = clocks.auto_player

    class Idle:
        def __init__(self, player: Any) -> None:
            self.player = player

        def decide(self, view: dict[str, Any]) -> Any:
            if "DING_DONG" in view["game"]["state"]:
                return None
            return self.player.decide(view)

    def auto_player(seat: Seat, *args: Any, **kwargs: Any) -> Any:
        player = real(seat, *args, **kwargs)
        return Idle(player) if seat is Seat.EAST else player

    monkeypatch.setattr(clocks, "auto_player", auto_player)


def test_the_real_cycles_are_all_left_by_the_clock() -> None:
    result = explore("four_winds", DING_DONG_ONLY)
    # the graph has cycles (gifts withdrawn and given again), so the check is not vacuous
    assert components(result.edges)
    assert escaping(result) == []
    assert not result.failures and {"terminating", "finishing"} <= set(result.held)


@pytest.mark.rule("SVC-10")
def test_a_clock_that_never_acts_fails_with_a_lasso(monkeypatch: pytest.MonkeyPatch) -> None:
    _east_clock_idle_in_the_ding_dong(monkeypatch)
    result = explore("four_winds", DING_DONG_ONLY)
    found = {f.property: f for f in result.failures}
    assert set(found) == {"terminating", "finishing"}
    lasso = found["terminating"]
    assert lasso.rules == ("SVC-10", "SVC-01") and "escapes the clock" in lasso.message
    # the prefix: East asks for the Ding Dong; the loop comes back to where it started
    assert lasso.commands == [{"seat": "east", "type": "request_ding_dong"}]
    assert lasso.loop and lasso.configuration == ["DING_DONG"]
    monkeypatch.undo()
    # every command of the lasso is accepted by the real engine, and the loop returns to
    # the configuration it left (East never gives: the others give and take back)
    table = Table(canonical_deal(), "four_winds", DING_DONG_ONLY)
    for data in lasso.commands:
        table.execute(parse_command(data))
    start = reduced_key(table)
    for data in lasso.loop:
        table.execute(parse_command(data))
    assert reduced_key(table) == start
    assert Seat.EAST.value not in {c["seat"] for c in lasso.loop}


def test_check_prints_the_lasso_and_the_reductions(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _east_clock_idle_in_the_ding_dong(monkeypatch)
    done = CliRunner().invoke(
        app,
        [
            *("check", "--ruleset", "four_winds", "--options", json.dumps(DING_DONG_ONLY)),
            *("--failures", str(tmp_path), "--jobs", "1"),
        ],
        env={"COLUMNS": "400"},
    )
    assert done.exit_code == 1, done.output
    assert "FAILED finishing, terminating" in done.output
    assert "then round this loop forever" in done.output
    assert "terminating and finishing checked under fairness" in done.output
    assert "reductions applied:" in done.output and "no symmetry reduction" in done.output
    written = json.loads((tmp_path / "check-four_winds-1.json").read_text())
    assert written["commands"] == [{"seat": "east", "type": "request_ding_dong"}]
    assert written["loop"] and written["failure"]["property"] == "terminating"

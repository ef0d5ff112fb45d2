"""``check --coverage`` (charleston_fsm.exploration.coverage): every guard seen true and
false, every rule id exercised by an accepted and by a refused command, with the refusal
codes the engine's own errors carry; the recorders leave the engine as it was."""

from __future__ import annotations

import json

from api_helpers import cli

from charleston_fsm.engine.charts.four_winds import FourWindsTable
from charleston_fsm.engine.table import Table
from charleston_fsm.exploration import explore
from charleston_fsm.exploration.coverage import covered, guard_names, merge, report

DING_DONG_ONLY = {"charleston": "off", "ding_dong": "every_round", "ding_dong_max": 1}


def test_an_exploration_records_guards_and_rule_ids_both_ways() -> None:
    guard, execute = FourWindsTable.all_confirmed, Table.execute
    result, found = covered("four_winds", lambda: explore("four_winds", DING_DONG_ONLY))
    assert not result.failures
    # the recorders are gone: the engine is as it was
    assert FourWindsTable.all_confirmed is guard and Table.execute is execute
    assert found.guards["all_confirmed"] == {"true", "false"}
    # the Ding Dong's options fix these at the deal: seen one way only, and said so
    assert found.guards["charleston_this_round"] == {"false"}
    assert found.guards["ding_dong_this_round"] == {"true"}
    # FW-05: a Ding Dong within the maximum is accepted; a second one is refused with the
    # engine's own code for the rule
    assert found.accepted["FW-05"] > 0 and found.refused["FW-05"] == {"ding_dong_limit"}
    assert "only_east_requests_ding_dong" in found.refused["FW-06"]
    assert "nothing_to_place" in found.refused["PASS-08"]
    lines = report("four_winds", merge([found.to_json()]))
    assert "  guard all_confirmed: false and true" in lines
    assert any(line.startswith("  rule FW-05: accepted ") for line in lines)
    assert "refused (ding_dong_limit)" in next(line for line in lines if "rule FW-05" in line)
    assert set(guard_names("four_winds")) >= {"all_confirmed", "from_east", "in_the_step"}


def test_check_coverage_lists_guards_and_rules() -> None:
    done = cli(
        "check", "--ruleset", "four_winds", "--options", json.dumps(DING_DONG_ONLY), "--coverage"
    )
    out = done.stdout
    assert "guards seen true and false; only one way or never: charleston_this_round" in out
    assert "  guard all_confirmed: false and true" in out
    assert "rule ids exercised by an accepted and a refused command" in out
    assert "refused (ding_dong_limit)" in out

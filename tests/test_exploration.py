"""The exhaustive exploration (charleston_fsm.exploration): it holds on the real charts, it
finds every configuration bot games reach, and it catches a seeded defect of each kind
with the shortest command list to it (which replays through the chart).

The defects are seeded by patching one engine function in the test: that patch is the
defect; what finds it is the exploration, run unchanged.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from api_helpers import cli
from budget import examples

from charleston_fsm.cli.check import _print_uncrossed
from charleston_fsm.diagrams import chart_view, to_dot, to_mermaid
from charleston_fsm.diagrams.crossings import Crossings, with_crossings
from charleston_fsm.engine import table as table_module
from charleston_fsm.engine.bots import bots_for, play
from charleston_fsm.engine.charts.four_winds import FourWindsCharleston, FourWindsTable
from charleston_fsm.engine.ruleset import get_ruleset
from charleston_fsm.engine.table import Table
from charleston_fsm.engine.tiles import Deal
from charleston_fsm.engine.views import seat_view
from charleston_fsm.exploration import explore
from charleston_fsm.exploration.abstraction import abstract_key
from charleston_fsm.exploration.option_sets import four_winds_classes, option_sets
from charleston_fsm.exploration.runs import Checked, counterexample, play_commands

#: Ding Dong only (no exchange), one of them: every seat gives at once
DING_DONG_ONLY = {"charleston": "off", "ding_dong": "every_round", "ding_dong_max": 1}
#: the six exchanges only
EXCHANGES_ONLY = {"charleston": "every_round", "ding_dong": "off"}
#: both, as the program plays them, with one Ding Dong
BOTH = {"charleston": "every_round", "ding_dong": "every_round", "ding_dong_max": 1}


def test_every_property_holds_on_small_four_winds_flows() -> None:
    for options in (DING_DONG_ONLY, EXCHANGES_ONLY):
        result = explore("four_winds", options)
        assert result.complete and not result.failures, result.failures
        assert set(result.held) >= {
            "playable",
            "allowed_commands",
            "terminating",
            "finishing",
            "conservation",
            "jokers",
            "secrecy",
            "rules",
            "clock",
        }
        assert result.final_states > 0 and result.longest_without_change
    # the six exchanges: 2 confirms and 2 placings each, then placing the last
    assert explore("four_winds", EXCHANGES_ONLY).longest_without_change == 6 * 4


def test_the_648_four_winds_option_sets_fall_into_72_flow_classes() -> None:
    classes = four_winds_classes()
    assert len(classes) == 72 and sum(len(m) for m in classes.values()) == 648
    bounded = [o for o in option_sets("four_winds", bounded=True)]
    assert {o.options["ding_dong_max"] for o in bounded} == {1, 2} and len(bounded) == 16


@pytest.mark.rule("PASS-11")
def test_bot_games_reach_only_explored_configurations() -> None:
    """Every configuration of every bot game, on shuffled deals, is one the exploration of
    the canonical deal found: counts stand for tiles (the abstraction's claim)."""
    result = explore("four_winds", BOTH)
    assert result.complete and not result.failures
    for seed in range(examples(20, 1000)):
        table = Table(Deal.shuffled(seed), "four_winds", BOTH)
        assert abstract_key(table) in result.keys

        def execute(command, table=table, seed=seed):  # type: ignore[no-untyped-def]
            events = table.execute(command)
            assert abstract_key(table) in result.keys, (seed, command, table.configuration)
            return events

        play(
            execute,
            lambda s, table=table: seat_view(table, s),
            bots_for(seed),
            rng=random.Random(seed),
        )
        assert table.finished


def _replays_to(checked_failure, ruleset: str, options: dict) -> None:  # type: ignore[no-untyped-def]
    played = play_commands(
        {"ruleset": ruleset, "options": options, "commands": checked_failure.commands}
    )
    assert played.refused_at is None
    assert played.table.configuration == checked_failure.configuration


@pytest.mark.rule("PASS-10")
def test_an_inverted_guard_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """``in_the_step`` inverted: the seats outside the exchange act, those in it cannot."""
    real = FourWindsTable.in_the_step
    monkeypatch.setattr(
        FourWindsTable, "in_the_step", lambda self, seat, source: not real(self, seat, source)
    )
    result = explore("four_winds", EXCHANGES_ONLY)
    found = {f.property: f for f in result.failures}
    assert "playable" in found and "allowed_commands" in found
    assert found["playable"].commands == []  # at the deal already: nobody can act
    assert "dead end" in found["playable"].message


def test_a_removed_transition_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without DING_DONG -> DING_DONG_OPEN, gifts are given and withdrawn forever."""
    transitions = FourWindsCharleston.DING_DONG.transitions
    monkeypatch.setattr(
        transitions, "transitions", [t for t in transitions.transitions if t.event != ""]
    )
    result = explore("four_winds", DING_DONG_ONLY)
    found = {f.property: f for f in result.failures}
    # the rule book's flow sees it too: all twelve tiles given, and no way back (FW-04);
    # so does its transfer rule: every gift is in and none is handed over (PASS-07);
    # and the game cannot end from there however the clock acts (a lasso)
    assert set(found) == {"finishing", "rule_flow", "rule_transfer", "terminating"}
    assert "FW-04" in found["rule_flow"].rules
    failure = found["finishing"]
    assert failure.property == "finishing" and failure.configuration == ["DING_DONG"]
    assert failure.commands == [{"seat": "east", "type": "request_ding_dong"}]
    # and the cycle nobody leaves, as a lasso: once every gift is given, no clock acts
    assert found["terminating"].loop and "escapes the clock" in found["terminating"].message
    monkeypatch.undo()
    _replays_to(failure, "four_winds", DING_DONG_ONLY)


@pytest.mark.rule("PASS-07")
def test_a_tile_dropped_in_resolution_is_found(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    real = table_module.resolve

    def dropping(step, declarations):  # type: ignore[no-untyped-def]
        result = real(step, declarations)
        next(kept for kept in result.kept.values() if kept).pop()
        return result

    monkeypatch.setattr(table_module, "resolve", dropping)
    result = explore("four_winds", EXCHANGES_ONLY)
    [failure] = result.failures
    assert failure.property == "conservation" and "151 tiles in play" in failure.message
    # the shortest way: the first exchange, East then West
    assert [c["type"] for c in failure.commands] == ["confirm_pass", "confirm_pass"]
    assert failure.configuration == ["EXCHANGE_2_SN"]
    monkeypatch.undo()

    # the file check writes: replay --commands plays it (the real chart keeps every tile)
    checked = Checked(option_sets("four_winds", bounded=True)[0], result, ordered=False)
    path = tmp_path / "failure.json"
    path.write_text(json.dumps(counterexample(checked, failure)))
    done = cli("replay", "--commands", str(path))
    assert "state: Exchange 2" in done.stdout and "(EXCHANGE_2_SN)" in done.stdout
    assert "check found here: conservation (PASS-07, TILE-02)" in done.stdout


def test_replay_commands_says_where_a_command_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "commands.json"
    commands = [{"seat": "west", "type": "confirm_pass", "tiles": [23, 24, 25]}]
    path.write_text(json.dumps({"ruleset": "four_winds", "commands": commands}))
    done = cli("replay", "--commands", str(path), check=False)
    assert done.returncode == 1 and "command 1 was refused: East gives first" in done.stdout
    path.write_text("{}")
    done = cli("replay", "--commands", str(path), check=False)
    assert done.returncode == 2 and "the file names no ruleset" in done.stdout
    both = cli("replay", "abc", "--commands", str(path), check=False)
    assert both.returncode == 2 and "not both and not neither" in both.stderr


def test_check_command_prints_figures_per_option_set(tmp_path: Path) -> None:
    figures = tmp_path / "figures.json"
    options = json.dumps(DING_DONG_ONLY)
    done = cli("check", "--ruleset", "four_winds", "--options", options, "--json", str(figures))
    assert "four_winds: 1 option set(s) covering 1, 117 states" in done.stdout
    assert "every property held" in done.stdout
    assert "longest game without change or withdrawal: 10 commands" in done.stdout
    # with the exchanges off, the reviewer is told their transitions were never taken, and
    # as these options rule them out, that is no finding
    assert "chart transitions no explored command took: DEALT -> EXCHANGE_1_EW" in done.stdout
    assert "DEALT -> DING_DONG_OPEN" not in done.stdout.split("took:")[1]
    assert "uncrossed" not in done.stdout
    [row] = json.loads(figures.read_text())
    assert row["states"] == 117 and not row["failed"] and "secrecy" in row["held"]
    bad = cli("check", "--ruleset", "four_winds", "--options", '{"ding_dong_max": 99}', check=False)
    assert bad.returncode == 1 and "ding_dong_max" in bad.stderr + bad.stdout
    assert "Traceback" not in bad.stderr


def test_diagram_crossings_show_counts_and_report_an_uncrossed_transition(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The counts the exploration collected are drawn on the arrows; a transition the
    options let fire but that nothing crossed is reported (here: with the Ding Dong request
    refused to East too, DING_DONG_OPEN -> DING_DONG is never crossed)."""
    found = Crossings("four_winds")
    result = explore("four_winds", DING_DONG_ONLY)
    found.add(result.crossings, result.options)
    assert found.uncrossed() == []  # the transitions these options rule out are not reported
    options = get_ruleset("four_winds").options(DING_DONG_ONLY)
    view = with_crossings(chart_view("four_winds", options), found.counts)
    mermaid = to_mermaid(view)
    closes = result.crossings[("DING_DONG_OPEN", "CHARLESTON_DONE", "close_ding_dong")]
    assert (
        closes > 0
        and f"close_ding_dong [platform or director] / window closed · crossed {closes}" in mermaid
    )
    assert (
        "DING_DONG_OPEN --> DING_DONG : request_ding_dong [East only] / Ding Dong counted"
        " · FW-06 · crossed 1" in mermaid
    )
    assert f"crossed {closes}" in to_dot(view)

    monkeypatch.setattr(FourWindsTable, "from_east", lambda self, seat: False)
    broken = Crossings("four_winds")
    result = explore("four_winds", DING_DONG_ONLY)
    broken.add(result.crossings, result.options)
    missed = [(m.source, m.target, m.event) for m in broken.uncrossed()]
    # the request, and the Ding Dong's end, which nothing enters any more
    assert missed == [
        ("DING_DONG_OPEN", "DING_DONG", "request_ding_dong"),
        ("DING_DONG", "DING_DONG_OPEN", None),
    ]
    # check counts each as a finding (its exit status is 1 when any is found)
    assert _print_uncrossed({"four_winds": broken}) == 2
    assert _print_uncrossed({"four_winds": found}) == 0


def test_diagram_command_draws_crossings(tmp_path: Path) -> None:
    out = tmp_path / "house.mmd"
    done = cli(
        "diagram", "--ruleset", "house", "--crossings", "--format", "mermaid", "--out", str(out)
    )
    text = out.read_text()
    assert (
        "PAIR_1_CHOOSE --> PAIR_1_DONE : [East and West confirmed] / pass resolves · crossed"
        in text
    )
    assert "crossed 0" not in text and "uncrossed" not in done.stdout

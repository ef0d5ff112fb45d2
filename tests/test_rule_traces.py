"""Traces a reviewer reads (issue 38, item 5): a seeded rule defect's failure is printed
as numbered steps in words naming the rules it breaks, and comes with a pytest file that
fails on the defect and passes without it. Also: the rule book data the rule properties
read agrees with the rule book's own statements.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest
from test_rule_teeth import _bounded, _joker_passable, _last_exchange_wrong_way

from charleston_fsm.exploration import rule_book
from charleston_fsm.exploration.option_sets import OptionSet
from charleston_fsm.exploration.runs import Checked, counterexample
from charleston_fsm.exploration.traces import in_words, pytest_file, replay_findings
from charleston_fsm.rulebook import get_rule

NO_DING_DONG = {"ding_dong": "off"}


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_seeded_defect_reads_as_steps_and_writes_a_regression_test(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _last_exchange_wrong_way(monkeypatch)  # South gives first in the sixth exchange
    result = _bounded("four_winds", NO_DING_DONG)
    failure = next(f for f in result.failures if "FW-02" in f.rules)
    data = counterexample(Checked(OptionSet("four_winds", NO_DING_DONG), result, False), failure)
    words = in_words(data)
    lines = words.splitlines()
    # numbered steps: the state's label, the seat, the command, tiles counted, what changed
    assert lines[1].startswith("  1. [Exchange 1: East, then West] East confirms 3 tile(s)")
    assert "East hands 3 tile(s) to West; West hands 3 tile(s) to East" in words
    assert "tiles: East 14 (3 to place), South 13, West 13 (3 to place), North 13" in words
    last = [line for line in lines if line.lstrip()[:1].isdigit()][-1]
    assert f"{len(failure.commands)}. [Exchange 6: West, then South] South confirms" in last
    assert f"breaks FW-02: {get_rule('FW-02').statement}" in words

    test = tmp_path / "test_check_four_winds_1.py"
    test.write_text(pytest_file(data, "check four_winds 1 rule_choice"))
    module = _load(test)
    with pytest.raises(AssertionError, match="FW-02"):
        module.test_check_four_winds_1_rule_choice()  # the defect is still seeded
    monkeypatch.undo()
    module.test_check_four_winds_1_rule_choice()  # the engine as it is: it passes
    assert json.loads(json.dumps(module.FAILURE)) == json.loads(json.dumps(data))


def test_a_malformed_choice_taken_replays_as_refused_once_fixed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _joker_passable(monkeypatch)
    result = _bounded("house", {})
    [failure] = [f for f in result.failures if f.property == "malformed"]
    data = counterexample(Checked(OptionSet("house", {}), result, True), failure)
    assert any(t >= 144 for t in data["commands"][-1]["tiles"])  # ids 144-151: jokers
    assert any("PASS-03" in f for f in replay_findings(data))
    monkeypatch.undo()
    assert replay_findings(data) == []  # refused, with PASS-03, by the engine as it is
    assert "refused (joker_passed, PASS-03)" in in_words(data)


def test_the_check_command_prints_the_trace_and_writes_the_test(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from charleston_fsm.cli import app

    _last_exchange_wrong_way(monkeypatch)
    options = json.dumps(NO_DING_DONG)
    done = CliRunner().invoke(
        app,
        ["check", "--ruleset", "four_winds", "--options", options, "--failures", str(tmp_path)],
        env={"COLUMNS": "200"},
    )
    assert done.exit_code == 1, done.output
    assert "breaks FW-02" in done.output and "1. [Exchange 1: East, then West]" in done.output
    written = sorted(p.name for p in tmp_path.glob("test_check_four_winds_*.py"))
    assert written and "regression test" in done.output


def test_the_rule_book_data_says_what_the_statements_say() -> None:
    """Each schedule entry of exploration/rule_book.py appears, in order, in its rule's
    statement: the data the properties expect is the book's, not the engine's."""

    def in_order(words: list[str], rule: str) -> None:
        text, at = get_rule(rule).statement.lower(), -1
        for word in words:
            found = text.find(word, at + 1)
            assert found > at, f"{rule}: {word!r} not after position {at} in {text!r}"
            at = found

    in_order([d for _, d in rule_book.FIRST_CHARLESTON], "NMJL-01")
    in_order([d for _, d in rule_book.SECOND_CHARLESTON["left-across-right"]], "NMJL-04")
    in_order([d for _, d in rule_book.SECOND_CHARLESTON["across-left-right"]], "HOUSE-01")
    pairs = [w for _, pair in rule_book.EXCHANGES for w in pair]
    in_order(pairs, "FW-01")
    in_order([w for pair in rule_book.COURTESY_PAIRS.values() for w in pair], "NMJL-12")
    in_order(list(rule_book.TURN_ORDER), "SEAT-01")
    assert rule_book.receiver("east", "right") == "south"
    assert rule_book.receiver("east", "left") == "north"
    assert rule_book.receiver("south", "across") == "north"
    assert "3 tiles" in get_rule("PASS-01").statement
    assert "0 to 3" in get_rule("PASS-02").statement
    assert "up to three" in get_rule("FW-05").statement
    assert rule_book.RULE_BOOK_OPTIONS["four_winds"]["ding_dong_max"] == 3

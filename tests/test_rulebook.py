"""The rule book: every implemented rule is enforced and tested, and nothing cites a rule
that does not exist (tests, ``@enforces``, refusals, diagrams, the API's problems).

The matrix is read from the code and from ``tests/`` (AST), so these tests fail as soon
as a rule loses its last test or its enforcement, or a new citation names no rule.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from charleston_fsm import diagrams
from charleston_fsm.api import auth, deps
from charleston_fsm.cli import app
from charleston_fsm.cli.reference import import_every_refusal
from charleston_fsm.engine import errors
from charleston_fsm.engine.rulesets import RULESETS
from charleston_fsm.rulebook import CHAPTERS, DOCUMENTS, RULES, enforces, get_rule, rules_of
from charleston_fsm.traceability.render import to_markdown
from charleston_fsm.traceability.trace import (
    default_tests_dir,
    marked_functions,
    matrix,
    read_test_marks,
    refusal_classes,
    refusal_rule_ids,
)

ROOT = Path(__file__).resolve().parent.parent
import_every_refusal()  # the store's refusals name rules too, whatever was imported before
TESTS = default_tests_dir()
RULE_ID = re.compile(r"\b(?:SEAT|TILE|DEAL|PASS|NMJL|HOUSE|FW|SVC)-\d\d\b")


def test_the_checkout_has_its_tests() -> None:
    assert TESTS == ROOT / "tests"


# -- coverage ------------------------------------------------------------------------------
def test_every_implemented_rule_has_a_test() -> None:
    untested = [row.rule.id for row in matrix(TESTS) if row.rule.implemented and not row.tests]
    assert untested == [], f"rules without a @pytest.mark.rule test: {untested}"


def test_the_coverage_check_notices_a_missing_test(tmp_path: Path) -> None:
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_one.py").write_text(
        'import pytest\n\n@pytest.mark.rule("PASS-03")\ndef test_jokers():\n    pass\n'
    )
    rows = {row.rule.id: row for row in matrix(tests)}
    assert rows["PASS-03"].tests == ("tests/test_one.py::test_jokers",)
    assert rows["PASS-01"].tests == ()


def test_every_implemented_rule_is_enforced_somewhere() -> None:
    nowhere = [row.rule.id for row in matrix(TESTS) if row.rule.implemented and not row.enforced]
    assert nowhere == [], f"rules with no guard, validator, action, refusal or fact: {nowhere}"


def test_every_rule_is_implemented_and_belongs_to_a_played_ruleset() -> None:
    assert [r.id for r in RULES.values() if not r.implemented] == []
    assert {r.id for r in RULES.values() if r.prefix == "FW"} >= {f"FW-0{i}" for i in range(1, 9)}
    for rule in RULES.values():
        if rule.implemented:
            assert set(rule.rulesets) & set(RULESETS), rule.id
        assert set(rule.rulesets) <= {"nmjl", "house", "four_winds"}, rule.id


def test_every_rule_has_a_source_or_a_decision() -> None:
    for rule in RULES.values():
        assert rule.sources or rule.decision, rule.id
        assert all(s.document in DOCUMENTS and s.section for s in rule.sources), rule.id
        assert rule.statement.endswith((".", '."')), rule.id


def test_ids_are_stable_and_every_rule_is_in_a_chapter() -> None:
    prefixes = {p for chapter in CHAPTERS for p in chapter.prefixes}
    for rule_id, rule in RULES.items():
        assert re.fullmatch(r"[A-Z]+-\d\d", rule_id) and rule.id == rule_id
        assert rule.prefix in prefixes, rule_id
    assert sum(len(rules_of(c)) for c in CHAPTERS) == len(RULES)


# -- nothing cites a rule the book lacks ------------------------------------------------------
def test_test_marks_name_existing_rules() -> None:
    marks = read_test_marks(TESTS)
    assert len(marks) > 100
    unknown = [(m.test, m.rule_id) for m in marks if m.rule_id not in RULES]
    assert unknown == []


def test_marks_are_read_from_decorators_params_and_pytestmark(tmp_path: Path) -> None:
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_marks.py").write_text(
        "import pytest\n"
        'pytestmark = pytest.mark.rule("SEAT-01")\n'
        '@pytest.mark.rule("PASS-01", "PASS-02")\n'
        '@pytest.mark.parametrize("x", [pytest.param(1, marks=pytest.mark.rule("NMJL-07"))])\n'
        "def test_a(x):\n    pass\n"
        "def helper():\n    pass\n"
    )
    marks = {(m.test.split("::")[1], m.rule_id) for m in read_test_marks(tests)}
    assert marks == {
        ("test_a", "PASS-01"),
        ("test_a", "PASS-02"),
        ("test_a", "NMJL-07"),
        ("test_a", "SEAT-01"),
    }


def test_enforces_refuses_an_unknown_id() -> None:
    with pytest.raises(KeyError, match="NMJL-99"):
        enforces("NMJL-99")


def test_every_marked_function_names_existing_rules() -> None:
    found = {qualname: rule_ids for qualname, _, _, rule_ids in marked_functions()}
    standard = "charleston_fsm.engine.charts.standard.table.StandardTable"
    assert f"{standard}.check_late_objection" in found
    assert f"{standard}.late_objection_allowed" in found
    assert f"{standard}.record_late_objection" in found
    assert "charleston_fsm.engine.charts.four_winds.FourWindsTable.check_exchange_turn" in found
    assert "charleston_fsm.engine.checks.Checks.check_confirm" in found
    assert "charleston_fsm.engine.seats.Seat.toward" in found
    for qualname, rule_ids in found.items():
        assert rule_ids and all(r in RULES for r in rule_ids), qualname


def test_every_refusal_names_existing_rules() -> None:
    for cls in refusal_classes():
        for rule_id in refusal_rule_ids(cls):
            assert rule_id in RULES, cls.__name__
        if "code" in cls.__dict__ and cls.code != "charleston_error":
            assert cls.rule in RULES, f"{cls.__name__} names no rule"


def test_a_refusal_names_only_rules_its_class_enforces() -> None:
    assert errors.BlindPassNotAllowed("x", rule="HOUSE-02").rule == "HOUSE-02"
    with pytest.raises(ValueError, match="does not enforce"):
        errors.JokerPassed("x", rule="NMJL-05")
    with pytest.raises(KeyError):
        errors.JokerPassed("x", rule="PASS-99")


def test_the_api_names_existing_rules() -> None:
    assert {deps.DIRECTOR_RULE, deps.SEAT_RULE, auth.PLATFORM_RULE} <= set(RULES)
    for path in (ROOT / "charleston_fsm" / "api").glob("*.py"):
        for rule_id in re.findall(r'rule="([^"]*)"', path.read_text(encoding="utf-8")):
            assert rule_id in RULES, (path.name, rule_id)


@pytest.mark.parametrize("fmt", ["dot", "mermaid"])
@pytest.mark.parametrize("name", sorted(RULESETS))
def test_diagrams_name_existing_rules_of_their_ruleset(name: str, fmt: diagrams.Format) -> None:
    text = diagrams.render(name, fmt)
    cited = set(RULE_ID.findall(text))
    expected = {"FW-01", "FW-04", "FW-08"} if name == "four_winds" else {"NMJL-01", "NMJL-02"}
    assert expected <= cited
    for rule_id in cited:
        assert name in get_rule(rule_id).rulesets, rule_id


def test_state_rules_name_states_of_the_chart() -> None:
    for ruleset in RULESETS.values():
        for state_id, rule_ids in ruleset.state_rules.items():
            assert state_id in ruleset.chart.states_map, state_id
            assert all(r in RULES for r in rule_ids), state_id


# -- the document and the command ---------------------------------------------------------------
def test_committed_rule_book_matches_the_registry() -> None:
    committed = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert committed == to_markdown(matrix(TESTS)), (
        "docs/rules.md is stale: run `charleston-fsm rules --markdown > docs/rules.md`"
    )


def test_the_rule_book_reads_like_one() -> None:
    text = to_markdown(matrix(TESTS))
    for chapter in CHAPTERS:
        assert f"## {chapter.title}" in text
    for rule in RULES.values():
        assert f"### {rule.id}\n\n{rule.statement}\n" in text
    late = text[text.index("### NMJL-05") : text.index("### NMJL-06")]
    assert "- Source: `guide`, Second Charleston – Optional:" in late
    assert "- Decision: In the service nobody sees a passed tile" in late
    assert "CHARLESTON_P2_L → COURTESY_PASS on vote [late_objection_allowed" in late
    assert "only_stop_now (OnlyStopNow)" in late
    assert "`tests/test_rules_nmjl.py::test_late_objection_takes_only_a_stop`" in late
    fw = text[text.index("### FW-02") : text.index("### FW-03")]
    assert "EXCHANGE_1_EW" in fw and "exchange_turn (ExchangeTurn)" in fw
    assert "`tests/test_rules_four_winds.py::test_the_second_player_waits_for_the_first`" in fw


def test_cli_prints_rules_in_full() -> None:
    result = CliRunner().invoke(app, ["rules", "--rule", "NMJL-05", "--rule", "HOUSE-04"])
    assert result.exit_code == 0, result.output
    assert "NMJL-05" in result.output and "HOUSE-04" in result.output
    assert "NMJL-06" not in result.output
    assert "- Tests:" in result.output and "tests/test_rules_nmjl.py::" in result.output


def test_cli_lists_rules_by_ruleset_one_line_each() -> None:
    result = CliRunner().invoke(app, ["rules", "--ruleset", "house"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "Ruleset house: the implementation spec's variant" in lines
    assert any(line.startswith("  HOUSE-03 ") for line in lines)
    assert not any(line.lstrip().startswith("NMJL-13 ") for line in lines)
    assert "rules --rule SEAT-01" in result.output


def test_cli_prints_one_ruleset_as_markdown() -> None:
    result = CliRunner().invoke(app, ["rules", "--ruleset", "house", "--markdown"])
    assert result.exit_code == 0, result.output
    assert "### HOUSE-03" in result.output and "### NMJL-13" not in result.output
    assert "### NMJL-12" in result.output  # house keeps the League's parallel courtesy pairs


@pytest.mark.parametrize("args", [["--rule", "NMJL-99"], ["--ruleset", "mahjong-soul"]])
def test_cli_refuses_unknown_rules_and_rulesets(args: list[str]) -> None:
    result = CliRunner().invoke(app, ["rules", *args])
    assert result.exit_code == 2
    assert "There is no" in result.output

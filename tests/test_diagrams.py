"""The state diagrams are generated from the chart classes and never drift from them."""

from __future__ import annotations

import contextlib
import os
import random
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from statemachine.contrib.diagram import GraphvizNotFoundError
from typer.testing import CliRunner

from charleston_fsm import diagrams
from charleston_fsm.cli import app
from charleston_fsm.engine.bots import bots_for, play
from charleston_fsm.engine.rulesets import RULESETS
from charleston_fsm.engine.table import Table
from charleston_fsm.engine.tiles import Deal
from charleston_fsm.engine.views import seat_view
from charleston_fsm.store import NewGame

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = ROOT / "diagrams"
NAMES = sorted(RULESETS)
STANDARD = sorted(n for n, r in RULESETS.items() if r.chart is RULESETS["nmjl"].chart)
#: a state every family's bot games pass through, which only a real game reaches
BUSIEST = {"nmjl": "COURTESY_PASS", "house": "COURTESY_PASS", "four_winds": "DING_DONG"}
TEXT_FORMATS = ("dot", "mermaid")
# Under CI=true a missing Graphviz is a failure, not a skip: CI must test SVG generation.
needs_dot = pytest.mark.skipif(
    shutil.which("dot") is None and os.environ.get("CI") != "true",
    reason="Graphviz's dot is not installed (scripts/ensure-graphviz.sh installs it)",
)


# -- the committed files are what the code draws now ----------------------------------------
@pytest.mark.parametrize("fmt", TEXT_FORMATS)
@pytest.mark.parametrize("name", NAMES)
def test_committed_diagram_matches_the_chart(name: str, fmt: diagrams.Format) -> None:
    path = diagrams.path_for(COMMITTED, name, fmt)
    assert path.is_file(), f"{path} is missing: run `./dev cli diagram` and commit diagrams/"
    assert path.read_bytes() == diagrams.render(name, fmt).encode("utf-8"), (
        f"{path.relative_to(ROOT)} differs from the chart: run `./dev cli diagram` and commit"
    )


@pytest.mark.parametrize("name", NAMES)
def test_every_ruleset_has_a_committed_svg(name: str) -> None:
    svg = diagrams.path_for(COMMITTED, name, "svg").read_text(encoding="utf-8")
    root = ET.fromstring(svg.encode("utf-8"))
    ids = {el.get("id") for el in root.iter()}
    assert {f"state-{sid}" for sid in RULESETS[name].chart.states_map} <= ids


@pytest.mark.parametrize("fmt", TEXT_FORMATS)
def test_generation_is_deterministic(fmt: diagrams.Format) -> None:
    for name in NAMES:
        assert diagrams.render(name, fmt) == diagrams.render(name, fmt)


# -- every state, event and guard shows, readably --------------------------------------------
@pytest.mark.parametrize("fmt", TEXT_FORMATS)
@pytest.mark.parametrize("name", NAMES)
def test_every_state_and_event_appears(name: str, fmt: diagrams.Format) -> None:
    chart = RULESETS[name].chart
    text = diagrams.render(name, fmt)
    for state_id, state in chart.states_map.items():
        assert state_id in text
        assert diagrams._m(str(state.name)) in text or html_escaped(str(state.name)) in text
    for event in diagrams.chart_events(chart):
        shown = diagrams._m(diagrams.event_text(event)).replace(":", " -")
        assert event in text or shown in text, f"event {event} missing from {name} {fmt}"


def html_escaped(text: str) -> str:
    import html

    return html.escape(text, quote=True)


@pytest.mark.parametrize("name", NAMES)
def test_every_guard_has_a_readable_label(name: str) -> None:
    guards = diagrams.chart_guards(RULESETS[name].chart)
    missing = sorted(guards - set(diagrams.GUARD_LABELS))
    assert not missing, f"add readable labels to diagrams.GUARD_LABELS for: {missing}"
    for fmt in TEXT_FORMATS:
        text = diagrams.render(name, fmt)
        for guard in guards:
            assert not re.search(rf"\b{guard}\b", text), f"{guard} shown by its method name"


def test_a_guard_without_a_label_is_an_error() -> None:
    with pytest.raises(KeyError, match="GUARD_LABELS"):
        diagrams.guard_label("some_new_guard")


def test_labels_read_like_the_rule_book() -> None:
    labels = diagrams.GUARD_LABELS
    assert labels["all_confirmed"] == "all confirmed"
    assert labels["second_left_first"] == "order Left, Across, Right"
    assert labels["tiles_from_hand"] == "some tiles from a hand"
    assert labels["from_east"] == "East only"
    assert labels["any_stop"] == "someone votes stop"
    assert labels["all_continue"] == "all four continue"
    assert labels["pair_1_agreed"] == "both offered, smaller > 0"
    dot = diagrams.render("nmjl", "dot")
    # unless= reads as a negation
    assert "[all confirmed and blind passes allowed and no tile from any hand]" in dot
    assert "<B>CHARLESTON_P1_R</B>" in dot and "First Charleston: pass Right" in dot


@pytest.mark.parametrize("name", STANDARD)
def test_the_courtesy_pass_is_one_parallel_state_with_two_regions(name: str) -> None:
    dot = diagrams.render(name, "dot")
    outer = dot.index('subgraph "cluster_COURTESY_PASS" {')
    pair_1 = dot.index('subgraph "cluster_COURTESY_PASS_PAIR_1" {')
    pair_2 = dot.index('subgraph "cluster_COURTESY_PASS_PAIR_2" {')
    assert outer < pair_1 < pair_2
    mermaid = diagrams.render(name, "mermaid")
    block = mermaid[mermaid.index("as COURTESY_PASS {") :]
    assert (
        block.index("as COURTESY_PASS_PAIR_1 {")
        < block.index("--")
        < block.index("as COURTESY_PASS_PAIR_2 {")
    )


def test_commands_are_listed_in_their_states_not_drawn_as_loops() -> None:
    for name in NAMES:
        view = diagrams.chart_view(name)
        dot = diagrams.to_dot(view)
        for move in view.arrows():
            assert move.target is not None
        # no arrow ends where it starts
        assert not re.search(r'^\s*"(\w+)" -> "\1"', dot, re.M)
    mermaid = diagrams.render("nmjl", "mermaid")
    assert (
        "CHARLESTON_P1_R : commands confirm_pass, change_pass, withdraw_pass, place_tiles"
        in mermaid
    )
    assert "CHARLESTON_DONE : commands place_tiles, declare_mah_jongg (East only)" in mermaid


# -- each ruleset's own view: branches its options never take ---------------------------------
def _dot_edges(dot: str) -> list[tuple[str, str, str]]:
    return re.findall(r'^\s*"(\w+)" -> "(\w+)" \[(.*)\];$', dot, re.M)


def test_house_never_takes_the_left_first_branches_nor_offers() -> None:
    view = diagrams.chart_view("house")
    dot = diagrams.to_dot(view)
    for _source, _target, attrs in _dot_edges(dot):
        never = (
            "order Left, Across, Right",
            "both offered",
            "blind passes allowed",
            "late objection allowed",
        )
        if any(phrase in attrs for phrase in never):
            assert 'style="dashed"' in attrs
        elif "label=" in attrs:
            assert "dashed" not in attrs
    assert "«order Left, Across, Right» never holds with second_charleston_order" in dot
    assert "blind_pass = false" in dot and "no blind pass here" in dot
    assert "PAIR_1_OFFER, PAIR_2_OFFER are left at once" in dot
    assert "«blind passes allowed» never holds with blind_pass = false" in dot
    assert "«late objection allowed» never holds with late_objection = false" in dot
    mermaid = diagrams.to_mermaid(view)
    assert "CHARLESTON_P1_L --> CHARLESTON_DONE" not in mermaid  # the First Left never ends it
    assert "CHARLESTON_DECIDE_STOP --> CHARLESTON_P2_A" in mermaid
    assert "CHARLESTON_DECIDE_STOP --> CHARLESTON_P2_L" not in mermaid
    assert "PAIR_1_OFFER --> PAIR_1_DONE" not in mermaid
    assert "Not drawn, as they never fire with these options" in mermaid


def test_nmjl_never_takes_the_across_first_branches_nor_free_counts() -> None:
    view = diagrams.chart_view("nmjl")
    never = {(m.source, m.target) for m in view.moves if m.never}
    assert ("CHARLESTON_DECIDE_STOP", "CHARLESTON_P2_A") in never
    assert ("CHARLESTON_P2_A", "CHARLESTON_P2_L") in never
    assert ("PAIR_1_OFFER", "PAIR_1_CHOOSE") in never  # only the counts_free one
    fires = {(m.source, m.target) for m in view.moves if not m.never}
    assert ("PAIR_1_OFFER", "PAIR_1_CHOOSE") in fires  # [both offered, smaller > 0]
    assert ("CHARLESTON_DECIDE_STOP", "CHARLESTON_P2_L") in fires
    assert not any(n.left_at_once or n.never_entered for n in view.nodes.values())
    mermaid = diagrams.to_mermaid(view)
    assert "CHARLESTON_DECIDE_STOP --> CHARLESTON_P2_A" not in mermaid
    assert "options: second_charleston_order = left-across-right" in mermaid


def test_per_game_options_change_the_view() -> None:
    options = RULESETS["nmjl"].options({"second_charleston_order": "across-left-right"})
    view = diagrams.chart_view("nmjl", options)
    fires = {(m.source, m.target) for m in view.moves if not m.never}
    assert ("CHARLESTON_DECIDE_STOP", "CHARLESTON_P2_A") in fires
    assert ("CHARLESTON_DECIDE_STOP", "CHARLESTON_P2_L") not in fires


def _played(ruleset: str, seed: int, stop=None) -> Table:  # type: ignore[no-untyped-def]
    """A bot game, stopped as soon as ``stop(table)`` holds (if given)."""
    table = Table(Deal.shuffled(seed), ruleset)

    class Reached(Exception):
        pass

    def execute(command):  # type: ignore[no-untyped-def]
        events = table.execute(command)
        if stop is not None and stop(table):
            raise Reached
        return events

    with contextlib.suppress(Reached):
        play(execute, lambda s: seat_view(table, s), bots_for(seed), rng=random.Random(seed))
    return table


@pytest.mark.parametrize("name", NAMES)
def test_what_never_fires_never_happens_in_real_games(name: str) -> None:
    """Soundness of the ruleset view: games only ever rest in states the view can reach."""
    view = diagrams.chart_view(name)
    resting = {sid for sid, n in view.nodes.items() if not (n.left_at_once or n.never_entered)}
    seen: set[str] = set()
    for seed in range(8):
        table = _played(name, seed)
        for event in table.log:
            if event.type == "state_changed":
                seen.update(event.payload["to"])
        guards = diagrams.chart_guards(table.ruleset.chart) & diagrams.OPTION_GUARDS.keys()
        probe_values = {g: bool(getattr(table, g)()) for g in guards}
        fresh = Table(Deal.shuffled(0), name)
        assert probe_values == {g: bool(getattr(fresh, g)()) for g in guards}
    assert seen <= resting, f"rested in {seen - resting}, which the {name} view says never"
    assert BUSIEST[name] in seen


# -- SVG through Graphviz ------------------------------------------------------------------------
@needs_dot
@pytest.mark.parametrize("name", NAMES)
def test_svg_is_generated(name: str) -> None:
    svg = diagrams.render(name, "svg")
    root = ET.fromstring(svg.encode("utf-8"))
    ids = {el.get("id") for el in root.iter()}
    for state_id in RULESETS[name].chart.states_map:
        assert f"state-{state_id}" in ids
    assert RULESETS[name].title in svg


def test_svg_without_graphviz_says_how_to_install(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(GraphvizNotFoundError, match="apt-get install graphviz"):
        diagrams.render("nmjl", "svg")


# -- one live game --------------------------------------------------------------------------------
def _highlighted(text: str, fmt: str) -> set[str]:
    if fmt == "dot":
        return set(re.findall(r'id="state-(\w+)"[,;] class="state active"', text))
    if fmt == "mermaid":
        return set(re.findall(r"^\s*class (\w+) active(?:Group)?$", text, re.M))
    root = ET.fromstring(text.encode("utf-8"))
    return {
        str(el.get("id")).removeprefix("state-")
        for el in root.iter()
        if "active" in (el.get("class") or "").split()
    }


def _in_courtesy(table: Table) -> bool:
    conf = table.configuration
    if "DING_DONG" in conf:
        return bool(table.selections)  # a Ding Dong half given
    return "COURTESY_PASS" in conf and ("PAIR_1_OFFER" not in conf or "PAIR_2_OFFER" not in conf)


def _live_tables() -> list[Table]:
    tables = [Table(Deal.shuffled(1), "nmjl"), _played("house", 2)]
    for name in NAMES:
        for seed in range(30):
            table = _played(name, seed, stop=_in_courtesy)
            if _in_courtesy(table):
                tables.append(table)
                break
        else:  # pragma: no cover - the bots always reach the Courtesy Pass in 30 deals
            pytest.fail(f"no {name} bot game reached {BUSIEST[name]}")
    return tables


@pytest.mark.parametrize("fmt", ["dot", "mermaid", pytest.param("svg", marks=needs_dot)])
def test_live_diagram_highlights_exactly_the_active_states(fmt: diagrams.Format) -> None:
    for table in _live_tables():
        text = diagrams.live(table, fmt)
        assert _highlighted(text, fmt) == set(table.configuration)
    courtesy = [t for t in _live_tables() if "COURTESY_PASS" in t.configuration]
    assert all(len([s for s in t.configuration if s.startswith("PAIR_")]) == 2 for t in courtesy)


def test_ruleset_diagrams_highlight_nothing() -> None:
    for name in NAMES:
        for fmt in TEXT_FORMATS:
            assert _highlighted(diagrams.render(name, fmt), fmt) == set()


# -- the command line -----------------------------------------------------------------------------
def test_cli_writes_every_ruleset(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["diagram", "--out", str(tmp_path), "--format", "dot"])
    assert result.exit_code == 0, result.output
    for name in NAMES:
        written = (tmp_path / f"{name}.dot").read_text(encoding="utf-8")
        assert written == diagrams.render(name, "dot")


def test_cli_one_ruleset_to_one_file(tmp_path: Path) -> None:
    target = tmp_path / "chart.mmd"
    result = CliRunner().invoke(
        app, ["diagram", "--ruleset", "house", "--format", "mermaid", "--out", str(target)]
    )
    assert result.exit_code == 0, result.output
    assert target.read_text(encoding="utf-8") == diagrams.render("house", "mermaid")


def test_cli_without_graphviz_still_writes_dot_and_mermaid(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    result = CliRunner().invoke(app, ["diagram", "--ruleset", "nmjl", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "apt-get install graphviz" in result.output
    assert "brew install graphviz" in result.output
    assert (tmp_path / "nmjl.dot").is_file() and (tmp_path / "nmjl.mmd").is_file()
    assert not (tmp_path / "nmjl.svg").exists()


def test_cli_rejects_unknown_ruleset_and_format(tmp_path: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(app, ["diagram", "--ruleset", "nope"]).exit_code == 2
    assert runner.invoke(app, ["diagram", "--format", "png", "--out", str(tmp_path)]).exit_code == 2


def test_cli_draws_a_stored_game(tmp_path: Path) -> None:
    from charleston_fsm.store import GameStore

    url = f"sqlite:///{tmp_path / 'games.sqlite3'}"
    store = GameStore(url)
    store.core.upgrade()
    game_id = store.registry.create_game(NewGame(ruleset="house", seed=3))
    args = ["--game", game_id, "--database-url", url, "--format", "mermaid", "--out", tmp_path]
    result = CliRunner().invoke(app, ["diagram", *map(str, args)])
    assert result.exit_code == 0, result.output
    text = (tmp_path / f"game-{game_id}.mmd").read_text(encoding="utf-8")
    assert _highlighted(text, "mermaid") == set(store.reads.table(game_id).configuration)
    missing = CliRunner().invoke(app, ["diagram", "--game", "nope", "--database-url", url])
    assert missing.exit_code == 1


def test_the_reviewers_page_shows_the_current_nmjl_chart() -> None:
    readme = (ROOT / "docs" / "diagrams.md").read_text(encoding="utf-8")
    section = readme[readme.index("## State diagrams") :]
    block = section[section.index("```mermaid\n") + len("```mermaid\n") :]
    block = block[: block.index("\n```")] + "\n"
    assert block == diagrams.render("nmjl", "mermaid"), (
        "docs/diagrams.md's mermaid block differs from the chart: run `./dev cli diagram`"
    )
    for name in NAMES:
        assert f"(../diagrams/{name}.svg)" in section


def test_update_chart_page_replaces_only_the_mermaid_block(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# x\n\n## State diagrams\n\n```mermaid\nold\n```\n\nafter\n")
    assert diagrams.update_chart_page(readme)
    text = readme.read_text()
    assert "\nold\n" not in text and text.startswith(
        "# x\n\n## State diagrams\n\n```mermaid\n---\n"
    )
    assert diagrams.render("nmjl", "mermaid") in text and text.endswith("```\n\nafter\n")
    assert not diagrams.update_chart_page(readme)


def test_nmjl_draws_the_late_objection_and_the_empty_second_right() -> None:
    mermaid = diagrams.render("nmjl", "mermaid")
    assert (
        "CHARLESTON_P2_L --> COURTESY_PASS : vote [late objection allowed and order Left, "
        "Across, Right] / choices dropped" in mermaid
    )
    assert "CHARLESTON_P1_L --> CHARLESTON_DECIDE_STOP : [all confirmed] / pass resolves" in (
        mermaid
    )
    assert "CHARLESTON_P1_L --> CHARLESTON_DONE" not in mermaid
    assert "/ pass resolves, no Courtesy Pass" in mermaid

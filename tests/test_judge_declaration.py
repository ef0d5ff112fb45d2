"""The director's verdict on East's declaration (NMJL-21): the chart, the fold, the views."""

from __future__ import annotations

import pytest
from engine_helpers import (
    E,
    S,
    W,
    assert_refused,
    confirm,
    declare,
    first_charleston,
    new_table,
    offer,
    place_all,
    plain_tiles,
    run,
    vote,
)

from charleston_fsm.engine import errors
from charleston_fsm.engine.commands import JudgeDeclaration
from charleston_fsm.engine.seats import SEATS
from charleston_fsm.engine.table import Table
from charleston_fsm.engine.views import redact, seat_view


def judge(verdict: str, text: str = "checked against the card") -> JudgeDeclaration:
    return JudgeDeclaration(verdict=verdict, text=text)


def to_the_end(table: Table) -> None:
    first_charleston(table)
    run(table, vote(E, "stop"))
    place_all(table)
    run(table, offer(E, 0), offer(W, 0), offer(S, 0), offer(SEATS[3], 0))


@pytest.mark.rule("NMJL-21")
def test_invalid_heavenly_hand_plays_the_charleston_from_the_first_right() -> None:
    table = new_table()
    before = {s: list(table.hand(s)) for s in SEATS}
    run(table, declare(E))
    assert table.finished
    events = run(table, judge("invalid", "not a hand of the card"))
    assert [e.type for e in events] == ["declaration_judged", "state_changed"]
    assert events[0].payload == {
        "verdict": "invalid",
        "text": "not a hand of the card",
        "kind": "heavenly",
    }
    assert table.configuration == ["CHARLESTON_P1_R"]
    assert not table.finished and table.ended_reason is None
    assert {s: list(table.hand(s)) for s in SEATS} == before
    for seat in SEATS:
        view = seat_view(table, seat)
        assert "confirm_pass" in view["allowed_commands"]
        assert view["game"]["declaration"]["verdict"] == "invalid"
        assert view["game"]["declaration"]["judged"]
    # the set-aside hand is not declared again, and judged once only
    assert "declare_mah_jongg" not in seat_view(table, E)["allowed_commands"]
    assert_refused(table, declare(E), errors.AlreadyDeclared, "already_declared", "NMJL-21")
    # judged, if set aside: a second verdict (a director who lost the race) hears so
    refused = assert_refused(
        table, judge("valid"), errors.DeclarationAlreadyJudged, "declaration_already_judged"
    )
    assert "already judged invalid" in refused.message and "set aside" in refused.message
    # the Charleston then runs to its end and says why it ended, as if nothing was declared
    to_the_end(table)
    assert table.finished and table.ended_reason == "all passes complete"


@pytest.mark.rule("NMJL-21")
def test_valid_heavenly_hand_ends_the_game_with_that_verdict() -> None:
    table = new_table()
    run(table, declare(E))
    events = run(table, judge("valid"))
    assert [e.type for e in events] == ["declaration_judged"]
    assert table.finished and table.ended_reason == "Heavenly Hand judged valid"
    assert table.declaration["verdict"] == "valid"
    assert_refused(
        table,
        judge("invalid"),
        errors.DeclarationAlreadyJudged,
        "declaration_already_judged",
    )


@pytest.mark.rule("NMJL-21")
def test_invalid_earthly_hand_leaves_the_charleston_complete() -> None:
    table = new_table()
    to_the_end(table)
    run(table, declare(E))
    events = run(table, judge("invalid"))
    assert [e.type for e in events] == ["declaration_judged"]
    assert table.configuration == ["CHARLESTON_DONE"]
    assert table.declaration == {
        "seat": "east",
        "kind": "earthly",
        "verdict": "invalid",
        "judged": True,
    }
    assert_refused(
        table, judge("valid"), errors.DeclarationAlreadyJudged, "declaration_already_judged"
    )


@pytest.mark.rule("NMJL-21")
def test_judging_needs_a_declaration_and_the_director() -> None:
    table = new_table()
    assert_refused(table, judge("valid"), errors.NoDeclarationToJudge, "no_declaration_to_judge")
    run(table, confirm(S, plain_tiles(table, S, 3)))
    assert_refused(table, judge("valid"), errors.NoDeclarationToJudge, "no_declaration_to_judge")
    for seat in SEATS:
        assert "judge_declaration" not in seat_view(table, seat)["allowed_commands"]


@pytest.mark.rule("NMJL-21", "SVC-04")
def test_the_verdict_folds_and_every_seat_sees_it() -> None:
    table = new_table()
    run(table, declare(E), judge("invalid"))
    to_the_end(table)
    again = Table.fold(table.deal, "nmjl", None, table.log)
    assert again.snapshot() == table.snapshot()
    judged = next(e for e in table.log if e.type == "declaration_judged")
    for seat in SEATS:
        assert redact(judged, seat)["payload"]["verdict"] == "invalid"

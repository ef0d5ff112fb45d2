"""Where the table stands, as the view says it: the phase, the pass number and total read
from the chart; the ending in words, with players' names; and the names themselves."""

from __future__ import annotations

from typing import Any

import pytest
from engine_helpers import (
    E,
    N,
    S,
    W,
    declare,
    first_charleston,
    new_table,
    offer,
    pass_step,
    place_all,
    run,
    vote,
    vote_all,
)

from charleston_fsm.engine.commands import JudgeDeclaration
from charleston_fsm.engine.rulesets import RULESETS
from charleston_fsm.engine.seats import joined
from charleston_fsm.engine.table import Table
from charleston_fsm.engine.views import director_view, seat_view

NAMES = {"east": "Ann", "south": "Bea"}


def where(table: Table) -> tuple[str, int | None, int | None]:
    game = seat_view(table, E)["game"]
    return game["phase"], game["pass_number"], game["pass_total"]


def ending(table: Table) -> dict[str, Any]:
    return seat_view(table, S, players=NAMES)["game"]["ending"]


def test_every_state_of_every_chart_has_a_phase() -> None:
    for ruleset in RULESETS.values():
        tops = {s.id for s in ruleset.chart.states_map.values() if s.parent is None}
        assert tops == set(ruleset.phases), ruleset.name


def test_nmjl_played_in_full_is_seven_passes() -> None:
    table = new_table("nmjl")
    seen = [where(table)]
    for _ in range(3):
        pass_step(table)
        seen.append(where(table))
    vote_all(table)
    for _ in range(3):
        pass_step(table)
        seen.append(where(table))
    assert seen == [
        ("pass", 1, 7),
        ("pass", 2, 7),
        ("pass", 3, 7),
        ("vote", None, 7),  # after 3 of up to 7
        ("pass", 5, 7),
        ("pass", 6, 7),
        ("courtesy", 7, 7),
    ]
    place_all(table)
    run(table, offer(E, 1), offer(W, 2))  # one pair agrees and resolves ...
    pass_step(table)
    assert where(table) == ("courtesy", 7, 7)  # ... the Courtesy Pass is still one pass
    run(table, offer(S, 0), offer(N, 3))
    assert where(table) == ("done", None, None)
    assert ending(table) == {
        "how": "all_passes",
        "by": [],
        "text": "All passes were played: both Charlestons and the Courtesy Pass.",
    }


def test_a_stop_makes_the_courtesy_pass_the_fourth_of_four() -> None:
    table = new_table("nmjl")
    first_charleston(table)
    place_all(table)
    run(table, vote(E, "continue"), vote(S, "stop"))
    assert where(table) == ("courtesy", 4, 4)
    run(table, offer(E, 1), offer(W, 1))
    pass_step(table)  # East and West resolve first: still pass 4
    assert where(table) == ("courtesy", 4, 4)
    run(table, offer(S, 0), offer(N, 0))
    words = ending(table)
    assert words["how"] == "stopped" and words["by"] == ["south"]
    assert words["text"].startswith("Stopped by a vote: Bea (South) voted to stop")
    assert "all passes complete" not in words["text"]


def test_a_late_objection_is_a_stop_in_words_too() -> None:
    table = new_table("nmjl")
    first_charleston(table)
    vote_all(table)
    assert where(table) == ("pass", 4, 7)
    run(table, vote(N, "stop"))  # a late objection during the Second Left
    assert where(table) == ("courtesy", 4, 4)
    run(table, offer(E, 0), offer(W, 0), offer(S, 0), offer(N, 0))
    words = seat_view(table, E)["game"]["ending"]
    assert words["how"] == "stopped" and words["text"].startswith(
        "Stopped by a vote: North voted to stop"
    )


def test_house_plays_its_own_order_in_seven() -> None:
    table = new_table("house")
    first_charleston(table)
    vote_all(table)
    assert seat_view(table, E)["game"]["state"] == ["CHARLESTON_P2_A"]
    assert where(table) == ("pass", 4, 7)


def test_four_winds_counts_six_exchanges_and_no_ding_dong() -> None:
    table = new_table("four_winds")
    seen = []
    for _ in range(6):
        seen.append(where(table))
        pass_step(table)
    assert seen == [("pass", n, 6) for n in range(1, 7)]
    assert where(table) == ("ding_dong_window", None, 6)
    off = new_table("four_winds", {"charleston": "off"})
    assert where(off) == ("ding_dong_window", None, 0)


def test_heavenly_then_set_aside_starts_again_at_pass_one() -> None:
    table = new_table("nmjl")
    run(table, declare(E))
    assert where(table) == ("done", None, None)
    words = ending(table)
    assert words["how"] == "heavenly"
    assert words["text"] == (
        "Ann (East) declared a Heavenly Hand before the first pass: no tile was passed. "
        "The director has still to judge the hand."
    )
    run(table, JudgeDeclaration(verdict="invalid", text="not on the card"))
    assert where(table) == ("pass", 1, 7)
    assert seat_view(table, E)["game"]["ending"] is None
    first_charleston(table)
    place_all(table)
    run(table, vote(W, "stop"))
    run(table, offer(E, 0), offer(W, 0), offer(S, 0), offer(N, 0))
    text = ending(table)["text"]
    assert text.startswith("Ann (East)'s Heavenly Hand was judged invalid by the director")
    assert "Stopped by a vote: West voted to stop" in text


def test_a_valid_heavenly_hand_says_the_game_ends_with_it() -> None:
    table = new_table("nmjl")
    run(table, declare(E), JudgeDeclaration(verdict="valid", text="checked"))
    assert ending(table)["text"].endswith(
        "The director judged it valid: the game ends with this hand."
    )


def test_an_earthly_hand_adds_its_verdict_to_the_ending() -> None:
    table = new_table("nmjl")
    first_charleston(table)
    place_all(table)
    run(table, vote(E, "stop"), *(offer(s, 0) for s in (E, W, S, N)))
    place_all(table)
    run(table, declare(E), JudgeDeclaration(verdict="invalid", text="not a hand"))
    text = seat_view(table, N)["game"]["ending"]["text"]
    assert text.endswith(
        "East declared an Earthly Hand once the Charleston was complete; the director "
        "judged it invalid: the Charleston stays complete."
    )


@pytest.mark.parametrize(
    ("options", "how", "text"),
    [
        ({}, "ready", "All six exchanges were played; Bea (South) declared Ready"),
        ({"charleston": "off"}, "ready", "Bea (South) declared Ready, so no more Ding Dong."),
    ],
)
def test_four_winds_endings(options: dict[str, Any], how: str, text: str) -> None:
    from charleston_fsm.engine.commands import DeclareReady

    table = new_table("four_winds", options)
    while seat_view(table, E)["game"]["phase"] == "pass":
        pass_step(table)
    place_all(table)
    run(table, DeclareReady(seat=S))
    words = ending(table)
    assert words["how"] == how and words["by"] == ["south"] and words["text"].startswith(text)


def test_views_carry_the_names_and_never_more() -> None:
    table = new_table("nmjl")
    for view in (seat_view(table, W, players=NAMES), director_view(table, players=NAMES)):
        assert view["game"]["players"] == NAMES
    assert seat_view(table, W)["game"]["players"] == {}  # a seat without a name: its wind


def test_names_are_joined_as_a_sentence_joins_them() -> None:
    """One stop vote ends the vote, so a game only ever joins one name; the wording of
    more is pinned here (the mutation run found nothing else would notice it)."""
    assert joined(["Ann (East)"]) == "Ann (East)"
    assert joined(["East", "South"]) == "East and South"
    assert joined(["East", "South", "West"]) == "East, South and West"

"""Ruleset ``house``: as ``nmjl`` except the HOUSE rules of the rule book, plus what stays.

Each test carries ``@pytest.mark.rule`` with the ids of the rules it checks.
"""

from __future__ import annotations

import pytest
from engine_helpers import (
    ACROSS,
    LEFT,
    RIGHT,
    STANDARD_SIZES,
    E,
    N,
    S,
    W,
    all_tiles,
    assert_refused,
    confirm,
    declare,
    events_of,
    first_charleston,
    hand_sizes,
    new_table,
    offer,
    pass_step,
    place,
    place_all,
    plain_tiles,
    play_steps,
    run,
    vote,
    vote_all,
)

from charleston_fsm.engine import errors
from charleston_fsm.engine.seats import SEATS, Seat
from charleston_fsm.engine.table import Table
from charleston_fsm.engine.views import seat_view


def _to_courtesy(table: Table, second: bool = True) -> None:
    first_charleston(table)
    if second:
        vote_all(table)
        for _ in range(3):
            pass_step(table)
    else:
        run(table, vote(N, "stop"))
    place_all(table)


# == What changes =========================================================================
@pytest.mark.rule("HOUSE-01")
def test_house_second_charleston_order_is_across_left_right() -> None:
    table = new_table("house")
    seen = [table.configuration[0]]
    for _ in range(3):
        pass_step(table)
        seen.append(table.configuration[0])
    vote_all(table)
    for _ in range(3):
        seen.append(table.configuration[0])
        pass_step(table)
    assert seen == [
        "CHARLESTON_P1_R",
        "CHARLESTON_P1_A",
        "CHARLESTON_P1_L",
        "CHARLESTON_DECIDE_STOP",
        "CHARLESTON_P2_A",
        "CHARLESTON_P2_L",
        "CHARLESTON_P2_R",
    ]
    assert "COURTESY_PASS" in table.configuration


@pytest.mark.rule("HOUSE-01", "SEAT-02")
@pytest.mark.parametrize(
    ("steps_before", "targets"),
    [(0, RIGHT), (1, ACROSS), (2, LEFT), (3, ACROSS), (4, LEFT), (5, RIGHT)],
)
def test_house_passes_go_where_the_seats_say(steps_before: int, targets: dict) -> None:
    table = new_table("house")
    play_steps(table, steps_before)
    place_all(table)
    sent = {s: plain_tiles(table, s, 3) for s in SEATS}
    run(table, *(confirm(s, sent[s]) for s in SEATS))
    for seat in SEATS:
        assert sorted(table.received[targets[seat]]) == sorted(sent[seat])
    assert hand_sizes(table) == STANDARD_SIZES


@pytest.mark.rule("HOUSE-02")
@pytest.mark.parametrize("steps_before", range(6))
def test_house_never_allows_a_blind_pass(steps_before: int) -> None:
    table = new_table("house")
    play_steps(table, steps_before)
    place_all(table)
    assert seat_view(table, E)["step"]["blind_allowed"] is False
    for blind in (1, 2, 3):
        error = assert_refused(
            table,
            confirm(E, plain_tiles(table, E, 3 - blind), blind=blind),
            errors.BlindPassNotAllowed,
            "blind_pass_not_allowed",
            "HOUSE-02",
        )
        assert "no blind pass" in error.message


@pytest.mark.rule("HOUSE-02", "PASS-01")
def test_house_cant_find_three_still_gives_three_tiles_just_received_included() -> None:
    table = new_table("house")
    pass_step(table)
    pass_step(table)
    received = {s: list(table.received[s]) for s in SEATS}
    place_all(table)
    assert_refused(
        table, confirm(S, received[S][:2]), errors.WrongCount, "wrong_count"
    )  # fewer than 3 is never enough
    run(table, *(confirm(s, received[s]) for s in SEATS))
    assert table.configuration == ["CHARLESTON_DECIDE_STOP"]
    assert hand_sizes(table) == STANDARD_SIZES


@pytest.mark.rule("HOUSE-03")
@pytest.mark.parametrize(("east", "west"), [(2, 0), (0, 2), (3, 1), (0, 0), (3, 3)])
def test_house_courtesy_counts_may_differ(east: int, west: int) -> None:
    table = new_table("house")
    _to_courtesy(table)
    assert "PAIR_1_CHOOSE" in table.configuration  # no offers to make in house
    assert seat_view(table, E)["step"]["count"] is None
    assert seat_view(table, E)["step"]["count_range"] == [0, 3]
    e_tiles, w_tiles = plain_tiles(table, E, east), plain_tiles(table, W, west)
    run(table, confirm(E, e_tiles))
    assert table.received[W] == []
    events = run(table, confirm(W, w_tiles))
    assert sorted(table.received[W]) == sorted(e_tiles)
    assert sorted(table.received[E]) == sorted(w_tiles)
    assert hand_sizes(table)[E] == 14 - east + west
    assert hand_sizes(table)[W] == 13 - west + east
    assert "PAIR_1_DONE" in table.configuration
    assert events_of(events, "courtesy_agreed") == []
    assert sorted(all_tiles(table)) == list(range(152))


@pytest.mark.rule("HOUSE-03")
def test_house_courtesy_offer_command_is_not_used() -> None:
    table = new_table("house")
    _to_courtesy(table)
    error = assert_refused(table, offer(E, 2), errors.NotAllowedNow, "not_allowed_now")
    assert "confirm_pass" in error.message


@pytest.mark.rule("PASS-02", "HOUSE-03")
def test_house_courtesy_more_than_three_is_refused() -> None:
    table = new_table("house")
    _to_courtesy(table)
    assert_refused(
        table, confirm(E, plain_tiles(table, E, 4)), errors.WrongCount, "wrong_count", "PASS-02"
    )


@pytest.mark.rule("NMJL-12", "HOUSE-03")
def test_house_courtesy_pairs_parallel_and_end() -> None:
    table = new_table("house")
    _to_courtesy(table, second=False)
    run(table, confirm(N, plain_tiles(table, N, 2)), confirm(S, []))
    assert "PAIR_2_DONE" in table.configuration
    assert "PAIR_1_CHOOSE" in table.configuration
    assert hand_sizes(table)[S] == 15 and hand_sizes(table)[N] == 11
    run(table, place(S), confirm(E, []), confirm(W, []))
    assert table.configuration == ["CHARLESTON_DONE"]
    run(table, declare(E))
    assert table.declaration["kind"] == "earthly"


@pytest.mark.rule("NMJL-13", "SVC-03")
def test_house_with_agreed_min_override() -> None:
    # Option override: house with {"courtesy_mode": "agreed_min"}
    table = new_table("house", {"courtesy_mode": "agreed_min"})
    _to_courtesy(table)
    assert "PAIR_1_OFFER" in table.configuration
    run(table, offer(E, 2), offer(W, 3))
    assert table.agreed == {0: 2}
    assert_refused(
        table, confirm(W, plain_tiles(table, W, 3)), errors.WrongCount, "wrong_count", "NMJL-13"
    )
    run(table, confirm(E, plain_tiles(table, E, 2)), confirm(W, plain_tiles(table, W, 2)))
    assert hand_sizes(table) == STANDARD_SIZES
    # the other house differences still hold
    assert table.options.second_charleston_order.value == "across-left-right"
    assert table.options.blind_pass is False


@pytest.mark.rule("NMJL-07", "SVC-03")
def test_house_with_blind_pass_override() -> None:
    table = new_table("house", {"blind_pass": True})
    pass_step(table)
    pass_step(table)
    place_all(table)
    run(table, confirm(E, plain_tiles(table, E, 1), blind=2))
    run(table, *(confirm(s, plain_tiles(table, s, 3)) for s in (S, W, N)))
    assert hand_sizes(table) == STANDARD_SIZES


@pytest.mark.rule("SVC-03")
def test_house_unknown_option_is_refused() -> None:
    with pytest.raises(errors.InvalidOption):
        new_table("house", {"courtesy": "asymmetric"})


# == What stays as nmjl ===================================================================
@pytest.mark.rule("NMJL-02")
@pytest.mark.parametrize("stopper", SEATS)
def test_house_one_stop_skips_to_courtesy(stopper: Seat) -> None:
    table = new_table("house")
    first_charleston(table)
    run(table, vote(stopper, "stop"))
    assert "COURTESY_PASS" in table.configuration


@pytest.mark.rule("NMJL-03")
def test_house_four_continues_start_second_charleston() -> None:
    table = new_table("house")
    first_charleston(table)
    vote_all(table)
    assert table.configuration == ["CHARLESTON_P2_A"]


@pytest.mark.rule("PASS-03", "NMJL-14", "NMJL-17")
def test_house_jokers_heavenly_earthly_dead_hand() -> None:
    table = new_table("house")
    error = assert_refused(table, confirm(S, [13, 14, 145]), errors.JokerPassed, "joker_passed")
    assert error.message == "Jokers cannot be passed during the Charleston."
    assert_refused(table, declare(W), errors.OnlyEastDeclares, "only_east_declares")
    run(table, declare(E))
    assert table.finished
    assert table.declaration["kind"] == "heavenly"


@pytest.mark.rule("PASS-08")
def test_house_placing_before_next_confirm() -> None:
    table = new_table("house")
    pass_step(table)
    assert_refused(
        table, confirm(E, plain_tiles(table, E, 3)), errors.TilesNotPlaced, "tiles_not_placed"
    )


@pytest.mark.rule("PASS-07", "HOUSE-03")
def test_house_whole_game_conserves_tiles() -> None:
    table = new_table("house")
    _to_courtesy(table)
    pass_step(table, counts={E: 2, W: 0, S: 1, N: 3})
    assert table.finished
    assert sorted(all_tiles(table)) == list(range(152))
    # asymmetric courtesy: sizes change by exactly received - given
    assert hand_sizes(table) == {E: 12, W: 15, S: 15, N: 11}


@pytest.mark.rule("HOUSE-04")
def test_house_objections_at_the_vote_only() -> None:
    table = new_table("house")
    play_steps(table, 3)
    assert table.configuration == ["CHARLESTON_P2_A"]
    error = assert_refused(
        table,
        vote(S, "stop"),
        errors.SecondCharlestonMandatory,
        "second_charleston_mandatory",
        "HOUSE-04",
    )
    assert "at the vote only" in error.message


@pytest.mark.rule("NMJL-15", "HOUSE-03")
def test_house_earthly_hand_refused_when_courtesy_left_east_without_14() -> None:
    table = new_table("house")
    _to_courtesy(table)
    pass_step(table, counts={E: 0, W: 3, S: 1, N: 1})
    assert table.finished and len(table.hand(E)) == 17
    assert_refused(table, declare(E), errors.EarthlyHandTileCount, "earthly_hand_tile_count")

"""Every refusal: the exact error class and ``code``, and a table left exactly as it was.

``assert_refused`` compares the snapshot, the event log and every seat's allowed
commands before and after the refused command.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from engine_helpers import (
    E,
    N,
    S,
    W,
    assert_refused,
    challenge,
    change,
    confirm,
    declare,
    first_charleston,
    new_table,
    offer,
    pass_step,
    place,
    place_all,
    plain_tiles,
    run,
    vote,
    vote_all,
    withdraw,
)

from charleston_fsm.engine import errors
from charleston_fsm.engine.commands import parse_command
from charleston_fsm.engine.seats import SEATS
from charleston_fsm.engine.table import Table
from charleston_fsm.rulebook import get_rule


# -- table positions used by several tests -----------------------------------------------
def at_p1_r(ruleset: str = "nmjl") -> Table:
    return new_table(ruleset)


def at_p1_l(ruleset: str = "nmjl") -> Table:
    table = new_table(ruleset)
    pass_step(table)
    pass_step(table)
    place_all(table)
    return table


def at_vote(ruleset: str = "nmjl") -> Table:
    table = new_table(ruleset)
    first_charleston(table)
    return table


def at_p2_r(ruleset: str = "nmjl") -> Table:
    table = at_vote(ruleset)
    vote_all(table)
    pass_step(table)
    pass_step(table)
    place_all(table)
    return table


def at_courtesy(ruleset: str = "nmjl") -> Table:
    table = at_vote(ruleset)
    run(table, vote(E, "stop"))
    place_all(table)
    return table


def at_done(ruleset: str = "nmjl") -> Table:
    table = at_courtesy(ruleset)
    if ruleset == "nmjl":
        run(table, offer(E, 1), offer(W, 1), offer(S, 0), offer(N, 0))
        pass_step(table)
    else:
        pass_step(table, counts={E: 1, W: 0, S: 0, N: 2})
    assert table.finished
    return table


POSITIONS: dict[str, Callable[[], Table]] = {
    "p1_r": at_p1_r,
    "p1_l": at_p1_l,
    "p2_r": at_p2_r,
}


# == Wrong count ==========================================================================
@pytest.mark.rule("PASS-01")
@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("count", [0, 1, 2, 4, 5])
def test_wrong_count_standard_pass(position: str, count: int) -> None:
    table = POSITIONS[position]()
    error = assert_refused(
        table, confirm(S, plain_tiles(table, S, count)), errors.WrongCount, "wrong_count"
    )
    assert error.kind == "rule"
    # what was chosen, and where the step has a blind pass, how to make up the count
    hint = "" if position == "p1_r" else " Pick tiles from your hand, or declare the rest blind."
    assert error.message.endswith(f"South chose {count} from the hand.{hint}"), error.message


@pytest.mark.rule("PASS-01", "NMJL-07")
@pytest.mark.parametrize(("own", "blind"), [(2, 2), (0, 2), (3, 1), (1, 1), (0, 4), (1, 4)])
def test_wrong_count_blind_pass(own: int, blind: int) -> None:
    table = at_p1_l()
    error = assert_refused(
        table,
        confirm(S, plain_tiles(table, S, own), blind=blind),
        errors.WrongCount,
        "wrong_count",
        "NMJL-07" if blind > 3 else "PASS-01",  # a blind count beyond 3, or a wrong total
    )
    if blind <= 3:  # the choice in words: both parts
        assert f"South chose {own} from the hand and {blind} blind." in error.message


@pytest.mark.rule("NMJL-07")
def test_negative_blind_is_refused() -> None:
    table = at_p1_l()
    assert_refused(
        table,
        confirm(S, plain_tiles(table, S, 3), blind=-1),
        errors.WrongCount,
        "wrong_count",
        "NMJL-07",
    )


@pytest.mark.rule("PASS-01")
def test_wrong_count_in_change() -> None:
    table = at_p1_r()
    run(table, confirm(S, plain_tiles(table, S, 3)))
    assert_refused(table, change(S, plain_tiles(table, S, 2)), errors.WrongCount, "wrong_count")


@pytest.mark.rule("NMJL-13")
def test_wrong_count_agreed_courtesy() -> None:
    table = at_courtesy()
    run(table, offer(S, 2), offer(N, 3))
    for count in (0, 1, 3):
        assert_refused(
            table,
            confirm(N, plain_tiles(table, N, count)),
            errors.WrongCount,
            "wrong_count",
            "NMJL-13",
        )


@pytest.mark.rule("PASS-02")
def test_wrong_count_asymmetric_courtesy() -> None:
    table = at_courtesy("house")
    assert_refused(
        table, confirm(N, plain_tiles(table, N, 4)), errors.WrongCount, "wrong_count", "PASS-02"
    )


# == Jokers ===============================================================================
@pytest.mark.rule("PASS-03")
@pytest.mark.parametrize("ruleset", ["nmjl", "house"])
@pytest.mark.parametrize("where", ["p1_r", "p1_l_blind", "courtesy"])
def test_joker_refused_with_exact_message(ruleset: str, where: str) -> None:
    if where == "p1_r":
        table, seat = at_p1_r(ruleset), S
        command = confirm(S, [13, 14, 145])
    elif where == "p1_l_blind":
        table, seat = at_p1_l(ruleset), W
        command = confirm(W, [146], blind=2 if ruleset == "nmjl" else 0)
        if ruleset == "house":
            command = confirm(W, [*plain_tiles(table, W, 2), 146])
    else:
        table, seat = at_courtesy(ruleset), W
        if ruleset == "nmjl":
            run(table, offer(E, 1), offer(W, 1))
        command = confirm(W, [146])
    assert 146 in table.hand(W) and 145 in table.hand(S)
    error = assert_refused(table, command, errors.JokerPassed, "joker_passed")
    assert error.message == "Jokers cannot be passed during the Charleston."
    assert seat in SEATS


@pytest.mark.rule("PASS-03")
def test_joker_refused_in_change() -> None:
    table = at_p1_r()
    run(table, confirm(E, [0, 1, 2]))
    error = assert_refused(table, change(E, [0, 1, 144]), errors.JokerPassed, "joker_passed")
    assert error.message == "Jokers cannot be passed during the Charleston."


# == Tiles not in the hand, named twice ===================================================
@pytest.mark.rule("PASS-04")
@pytest.mark.parametrize(
    "tiles",
    [
        [0, 1, 13],  # South's tile
        [0, 1, 100],  # a wall tile
        [0, 1, 151],  # a joker of the wall: not in hand comes first
    ],
)
def test_tile_not_in_hand(tiles: list[int]) -> None:
    table = at_p1_r()
    assert_refused(table, confirm(E, tiles), errors.TileNotInHand, "tile_not_in_hand")


@pytest.mark.rule("PASS-04")
def test_tile_not_in_hand_after_it_was_passed() -> None:
    table = at_p1_r()
    sent = plain_tiles(table, E, 3)
    run(table, confirm(E, sent))
    run(table, *(confirm(s, plain_tiles(table, s, 3)) for s in (S, W, N)))
    place_all(table)
    assert_refused(
        table,
        confirm(E, [sent[0], *plain_tiles(table, E, 2)]),
        errors.TileNotInHand,
        "tile_not_in_hand",
    )


@pytest.mark.rule("PASS-04")
def test_tile_named_twice() -> None:
    table = at_p1_r()
    assert_refused(table, confirm(E, [0, 1, 0]), errors.TileNamedTwice, "tile_named_twice")
    assert_refused(table, confirm(E, [2, 2, 2]), errors.TileNamedTwice, "tile_named_twice")


@pytest.mark.rule("PASS-04")
def test_tile_named_twice_in_blind_pass() -> None:
    table = at_p1_l()
    tile = plain_tiles(table, E, 1)[0]
    assert_refused(
        table, confirm(E, [tile, tile], blind=1), errors.TileNamedTwice, "tile_named_twice"
    )


# == Seat not in the step =================================================================
@pytest.mark.rule("PASS-10")
@pytest.mark.parametrize("seat", [S, N])
def test_seat_of_a_finished_courtesy_pair(seat) -> None:
    table = at_courtesy()
    run(table, offer(S, 0), offer(N, 2))  # pair 2 done, no exchange
    run(table, offer(E, 2), offer(W, 2))  # pair 1 choosing
    assert "PAIR_2_DONE" in table.configuration
    error = assert_refused(
        table, confirm(seat, plain_tiles(table, seat, 2)), errors.SeatNotInStep, "seat_not_in_step"
    )
    assert error.kind == "not_now"
    # the refusal names whom the table waits for (pair 1, neither confirmed yet)
    assert error.message.endswith("; waiting for: East, West."), error.message
    assert_refused(table, withdraw(seat), errors.SeatNotInStep, "seat_not_in_step")
    assert_refused(
        table, change(seat, plain_tiles(table, seat, 2)), errors.SeatNotInStep, "seat_not_in_step"
    )


@pytest.mark.rule("NMJL-13")
def test_seat_of_a_finished_pair_cannot_offer_again() -> None:
    table = at_courtesy()
    run(table, offer(S, 1), offer(N, 0))
    assert "PAIR_2_DONE" in table.configuration
    # South did offer: the refusal says so (rather than "not in the step")
    assert_refused(table, offer(S, 2), errors.AlreadyOffered, "already_offered")
    assert_refused(table, offer(N, 0), errors.AlreadyOffered, "already_offered")


@pytest.mark.rule("PASS-10")
def test_seat_of_one_pair_cannot_act_for_the_other() -> None:
    table = at_courtesy("house")
    run(table, confirm(S, []), confirm(N, []))  # pair 2 done
    assert_refused(
        table, confirm(N, plain_tiles(table, N, 1)), errors.SeatNotInStep, "seat_not_in_step"
    )


# == Not valid in the current state =======================================================
@pytest.mark.rule("SVC-01", "NMJL-02", "NMJL-16")
@pytest.mark.parametrize(
    ("position", "make", "rule"),
    [
        (at_p1_r, lambda t: vote(S, "continue"), "NMJL-02"),
        (at_p1_r, lambda t: offer(S, 1), "SVC-01"),
        (at_p1_l, lambda t: vote(S, "stop"), "NMJL-02"),
        (at_p1_l, lambda t: declare(E), "NMJL-16"),
        (at_vote, lambda t: confirm(S, plain_tiles(t, S, 3)), "SVC-01"),
        (at_vote, lambda t: change(S, plain_tiles(t, S, 3)), "SVC-01"),
        (at_vote, lambda t: withdraw(S), "SVC-01"),
        (at_vote, lambda t: offer(S, 1), "SVC-01"),
        (at_vote, lambda t: declare(E), "NMJL-16"),
        (at_courtesy, lambda t: vote(S, "continue"), "NMJL-02"),
        (at_courtesy, lambda t: confirm(S, plain_tiles(t, S, 1)), "SVC-01"),  # offers first
        (at_courtesy, lambda t: declare(E), "NMJL-16"),
    ],
)
def test_not_allowed_now(position: Callable[[], Table], make, rule: str) -> None:
    table = position()
    error = assert_refused(table, make(table), errors.NotAllowedNow, "not_allowed_now", rule)
    assert error.kind == "not_now"
    assert "not valid now" in error.message


def test_not_allowed_now_names_what_the_seat_can_give() -> None:
    """The refusal of a command out of its time says where the table is (its innermost
    states, by name and id) and lists the seat's commands now."""
    table = at_vote()
    error = assert_refused(
        table, confirm(S, plain_tiles(table, S, 3)), errors.NotAllowedNow, "not_allowed_now"
    )
    assert error.message.startswith(
        "confirm_pass is not valid now: the table is at Vote: continue or stop the "
        "Charleston (CHARLESTON_DECIDE_STOP)."
    ), error.message
    assert error.message.endswith("Commands South can give now: place_tiles, vote."), error.message


# == Confirming twice, nothing confirmed ==================================================
@pytest.mark.rule("PASS-05")
@pytest.mark.parametrize("position", POSITIONS)
def test_confirming_twice(position: str) -> None:
    table = POSITIONS[position]()
    run(table, confirm(W, plain_tiles(table, W, 3)))
    assert_refused(
        table, confirm(W, plain_tiles(table, W, 3)), errors.AlreadyConfirmed, "already_confirmed"
    )


@pytest.mark.rule("PASS-05")
def test_confirming_twice_in_courtesy() -> None:
    table = at_courtesy()
    run(table, offer(E, 2), offer(W, 2), confirm(E, plain_tiles(table, E, 2)))
    assert_refused(
        table, confirm(E, plain_tiles(table, E, 2)), errors.AlreadyConfirmed, "already_confirmed"
    )


@pytest.mark.rule("PASS-05")
def test_withdraw_or_change_with_nothing_confirmed() -> None:
    table = at_p1_r()
    assert_refused(table, withdraw(S), errors.NothingConfirmed, "nothing_confirmed")
    assert_refused(
        table, change(S, plain_tiles(table, S, 3)), errors.NothingConfirmed, "nothing_confirmed"
    )
    run(table, confirm(S, plain_tiles(table, S, 3)), withdraw(S))
    assert_refused(table, withdraw(S), errors.NothingConfirmed, "nothing_confirmed")


@pytest.mark.rule("PASS-08")
def test_nothing_to_place() -> None:
    table = at_p1_r()
    assert_refused(table, place(S), errors.NothingToPlace, "nothing_to_place")
    pass_step(table)
    run(table, place(S))
    assert_refused(table, place(S), errors.NothingToPlace, "nothing_to_place")


# == Acting after the end =================================================================
@pytest.mark.rule("NMJL-20")
@pytest.mark.parametrize("ruleset", ["nmjl", "house"])
def test_acting_after_the_end(ruleset: str) -> None:
    table = at_done(ruleset)
    place_all(table)
    for seat in SEATS:
        for command in (
            confirm(seat, plain_tiles(table, seat, 3)),
            change(seat, plain_tiles(table, seat, 3)),
            withdraw(seat),
            vote(seat, "continue"),
            offer(seat, 1),
        ):
            error = assert_refused(table, command, errors.CharlestonOver, "charleston_over")
            assert error.kind == "not_now"
        assert_refused(table, place(seat), errors.NothingToPlace, "nothing_to_place")


@pytest.mark.rule("NMJL-14", "NMJL-20")
def test_acting_after_a_heavenly_hand() -> None:
    table = at_p1_r()
    run(table, declare(E))
    assert_refused(
        table, confirm(S, plain_tiles(table, S, 3)), errors.CharlestonOver, "charleston_over"
    )
    assert_refused(table, declare(E), errors.AlreadyDeclared, "already_declared")


@pytest.mark.rule("NMJL-10", "NMJL-20")
def test_acting_after_an_all_blind_end() -> None:
    table = at_p2_r()
    place_all(table)
    run(table, *(confirm(s, [], blind=3) for s in SEATS))
    assert table.finished
    assert_refused(table, vote(S, "continue"), errors.CharlestonOver, "charleston_over")
    assert_refused(table, offer(S, 1), errors.CharlestonOver, "charleston_over")


@pytest.mark.rule("NMJL-20")
def test_received_tiles_may_still_be_placed_after_the_end() -> None:
    table = at_done()
    assert any(table.received[s] for s in SEATS)
    place_all(table)
    assert not any(table.received[s] for s in SEATS)


# == Placing before confirming ============================================================
@pytest.mark.rule("PASS-08")
@pytest.mark.parametrize("ruleset", ["nmjl", "house"])
def test_confirming_before_placing(ruleset: str) -> None:
    table = at_p1_r(ruleset)
    pass_step(table)
    for seat in SEATS:
        error = assert_refused(
            table,
            confirm(seat, plain_tiles(table, seat, 3)),
            errors.TilesNotPlaced,
            "tiles_not_placed",
        )
        assert error.kind == "rule"


@pytest.mark.rule("PASS-08")
def test_confirming_courtesy_before_placing() -> None:
    table = at_vote()
    run(table, vote(E, "stop"), offer(E, 1), offer(W, 1))
    assert table.received[E]
    assert_refused(
        table, confirm(E, plain_tiles(table, E, 1)), errors.TilesNotPlaced, "tiles_not_placed"
    )


@pytest.mark.rule("PASS-08")
def test_blind_confirm_before_placing() -> None:
    table = new_table()
    pass_step(table)
    pass_step(table)
    assert_refused(table, confirm(E, [], blind=3), errors.TilesNotPlaced, "tiles_not_placed")


# == Blind pass where not allowed =========================================================
@pytest.mark.rule("NMJL-07", "HOUSE-02")
@pytest.mark.parametrize(
    ("ruleset", "options", "position", "rule"),
    [
        ("nmjl", None, at_p1_r, "NMJL-07"),  # the wrong step
        ("house", None, at_p1_l, "HOUSE-02"),  # no blind pass at all
        ("house", None, at_p2_r, "HOUSE-02"),
        ("nmjl", {"blind_pass": False}, at_p1_l, "HOUSE-02"),
    ],
)
def test_blind_pass_not_allowed(ruleset, options, position, rule: str) -> None:
    if options:
        table = new_table(ruleset, options)
        pass_step(table)
        pass_step(table)
        place_all(table)
    else:
        table = position(ruleset)
    assert_refused(
        table,
        confirm(N, plain_tiles(table, N, 1), blind=2),
        errors.BlindPassNotAllowed,
        "blind_pass_not_allowed",
        rule,
    )
    assert_refused(
        table, confirm(N, [], blind=3), errors.BlindPassNotAllowed, "blind_pass_not_allowed", rule
    )


@pytest.mark.rule("NMJL-07")
def test_blind_change_not_allowed() -> None:
    table = at_p1_r()
    run(table, confirm(N, plain_tiles(table, N, 3)))
    assert_refused(
        table,
        change(N, plain_tiles(table, N, 2), blind=1),
        errors.BlindPassNotAllowed,
        "blind_pass_not_allowed",
    )


# == Declarations =========================================================================
@pytest.mark.rule("NMJL-17")
@pytest.mark.parametrize("seat", [S, W, N])
def test_non_east_declaring(seat) -> None:
    assert_refused(at_p1_r(), declare(seat), errors.OnlyEastDeclares, "only_east_declares")
    assert_refused(at_done(), declare(seat), errors.OnlyEastDeclares, "only_east_declares")


@pytest.mark.rule("NMJL-14")
def test_heavenly_hand_too_late() -> None:
    table = at_p1_r()
    run(table, confirm(E, [0, 1, 2]))
    assert_refused(table, declare(E), errors.HeavenlyHandTooLate, "heavenly_hand_too_late")


@pytest.mark.rule("NMJL-15")
def test_earthly_hand_twice() -> None:
    table = at_done()
    run(table, declare(E))
    assert_refused(table, declare(E), errors.AlreadyDeclared, "already_declared")


@pytest.mark.rule("NMJL-18")
@pytest.mark.parametrize("position", [at_p1_r, at_p1_l, at_vote, at_p2_r, at_courtesy, at_done])
def test_dead_hand_challenge(position) -> None:
    table = position()
    error = assert_refused(
        table, challenge(N, E), errors.DeadHandChallengeRefused, "dead_hand_challenge_refused"
    )
    assert error.kind == "rule"


# == Votes and offers =====================================================================
@pytest.mark.rule("NMJL-02")
def test_already_voted() -> None:
    table = at_vote()
    run(table, vote(S, "continue"))
    assert_refused(table, vote(S, "continue"), errors.AlreadyVoted, "already_voted")
    assert_refused(table, vote(S, "stop"), errors.AlreadyVoted, "already_voted")


@pytest.mark.rule("NMJL-13")
def test_already_offered() -> None:
    table = at_courtesy()
    run(table, offer(W, 2))
    assert_refused(table, offer(W, 1), errors.AlreadyOffered, "already_offered")
    assert_refused(table, offer(W, 2), errors.AlreadyOffered, "already_offered")


@pytest.mark.rule("NMJL-13")
@pytest.mark.parametrize("count", [-1, 4, 99])
def test_offer_out_of_range(count: int) -> None:
    table = at_courtesy()
    error = assert_refused(table, offer(N, count), errors.WrongCount, "wrong_count", "NMJL-13")
    assert str(count) in error.message


# == Malformed commands never reach the table =============================================
@pytest.mark.rule("SEAT-03", "SVC-02")
@pytest.mark.parametrize(
    "data",
    [
        {"type": "pass_left", "seat": "east"},
        {"type": "confirm_pass", "seat": "middle", "tiles": []},
        {"type": "confirm_pass", "seat": "east", "tiles": [1, 2, 3], "to": "west"},
        {"type": "vote", "seat": "east", "choice": "maybe"},
    ],
)
def test_malformed_commands_are_rejected_by_parsing(data) -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        parse_command(data)


@pytest.mark.rule("PASS-03")
def test_refusal_payload_shape() -> None:
    table = at_p1_r()
    with pytest.raises(errors.CharlestonError) as info:
        table.execute(confirm(E, [0, 1, 144]))
    assert info.value.to_dict() == {
        "code": "joker_passed",
        "kind": "rule",
        "rule": "PASS-03",
        "rule_text": get_rule("PASS-03").statement,
        "message": "Jokers cannot be passed during the Charleston.",
    }
    assert "Jokers are never passed" in info.value.rule_text


@pytest.mark.rule("SVC-01")
def test_many_refusals_in_a_row_leave_the_table_playable() -> None:
    table = at_p1_r()
    for command in (
        vote(E, "stop"),
        confirm(E, [0]),
        confirm(E, [0, 1, 144]),
        offer(S, 9),
        challenge(S, E),
        declare(W),
        withdraw(N),
    ):
        with pytest.raises(errors.CharlestonError):
            table.execute(command)
    pass_step(table)
    assert table.configuration == ["CHARLESTON_P1_A"]

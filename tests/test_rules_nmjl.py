"""Ruleset ``nmjl`` and the rules every ruleset shares: one test (or a small group) per rule.

Each test carries ``@pytest.mark.rule`` with the ids of the rules it checks (docs/rules.md).
Tables are built from explicit hands (``engine_helpers.PLAIN_HANDS``) so every expected
tile can be read off directly.
"""

from __future__ import annotations

from collections import Counter

import pytest
from engine_helpers import (
    ACROSS,
    LEFT,
    PLAIN_HANDS,
    RIGHT,
    STANDARD_SIZES,
    E,
    N,
    S,
    W,
    all_tiles,
    assert_refused,
    challenge,
    change,
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
    second_charleston,
    vote,
    vote_all,
    withdraw,
)

from charleston_fsm.engine import errors
from charleston_fsm.engine.rulesets import RULESETS, get_ruleset
from charleston_fsm.engine.seats import SEATS, Direction, Seat
from charleston_fsm.engine.table import Table, tiles_held
from charleston_fsm.engine.tiles import FACES, HAND_SIZE, TILE_COUNT, Deal, face, is_joker
from charleston_fsm.engine.views import seat_view


# == Seats, directions, tiles ============================================================
@pytest.mark.rule("SEAT-01", "SEAT-02")
def test_seat_turn_order_and_directions() -> None:
    assert SEATS == (E, S, W, N)
    # Right is the next seat, Left the previous one, Across two away
    for seat in SEATS:
        assert seat.toward(Direction.RIGHT) is RIGHT[seat]
        assert seat.toward(Direction.ACROSS) is ACROSS[seat]
        assert seat.toward(Direction.LEFT) is LEFT[seat]
    # in a pass to the Right everyone receives from the Left
    for seat in SEATS:
        assert seat.source(Direction.RIGHT) is seat.toward(Direction.LEFT)
        assert seat.source(Direction.LEFT) is seat.toward(Direction.RIGHT)
        assert seat.source(Direction.ACROSS) is seat.opposite


@pytest.mark.rule("TILE-01", "TILE-02")
def test_the_american_set_has_152_distinct_tiles() -> None:
    assert TILE_COUNT == 152 == len(FACES)
    counts = Counter(FACES)
    for suit in "BCD":
        for rank in range(1, 10):
            assert counts[f"{rank}{suit}"] == 4
    assert sum(counts[f"{r}{s}"] for s in "BCD" for r in range(1, 10)) == 108
    assert sum(counts[w] for w in ("EW", "SW", "WW", "NW")) == 16
    assert all(counts[w] == 4 for w in ("EW", "SW", "WW", "NW"))
    assert sum(counts[d] for d in ("RD", "GD", "WD")) == 12
    assert counts["F"] == 8
    assert counts["J"] == 8
    assert len(counts) == 27 + 4 + 3 + 2
    assert sum(is_joker(t) for t in range(TILE_COUNT)) == 8


@pytest.mark.rule("DEAL-01")
@pytest.mark.parametrize("seed", [0, 1, 2, 12345])
def test_deal_gives_east_14_and_others_13(seed: int) -> None:
    deal = Deal.shuffled(seed)
    assert {s: len(deal.hands[s]) for s in SEATS} == STANDARD_SIZES == HAND_SIZE
    dealt = [t for s in SEATS for t in deal.hands[s]] + list(deal.wall)
    assert sorted(dealt) == list(range(152))
    assert len(deal.wall) == 152 - 53
    assert Deal.shuffled(seed) == deal  # reproducible


@pytest.mark.rule("DEAL-01")
def test_explicit_deal_is_checked() -> None:
    with pytest.raises(errors.InvalidDeal):
        Deal.explicit({**PLAIN_HANDS, E: PLAIN_HANDS[E][:13]})
    with pytest.raises(errors.InvalidDeal):
        Deal.explicit({**PLAIN_HANDS, S: (0, *PLAIN_HANDS[S][1:])})  # tile 0 dealt twice
    with pytest.raises(errors.InvalidDeal):
        Deal.explicit({**PLAIN_HANDS, S: (152, *PLAIN_HANDS[S][1:])})
    deal = Deal.explicit(PLAIN_HANDS)
    assert sorted([t for s in SEATS for t in deal.hands[s]] + list(deal.wall)) == list(range(152))


# == The step table ======================================================================
@pytest.mark.rule("NMJL-01", "NMJL-03", "NMJL-04", "NMJL-12")
def test_nmjl_full_step_order() -> None:
    # Table rows 1-9: P1_R, P1_A, P1_L, vote, P2_L, P2_A, P2_R, Courtesy pairs, done.
    table = new_table()
    seen = [table.configuration]
    for _ in range(3):
        pass_step(table)
        seen.append(table.configuration)
    vote_all(table)
    seen.append(table.configuration)
    for _ in range(3):
        pass_step(table)
        seen.append(table.configuration)
    assert seen == [
        ["CHARLESTON_P1_R"],
        ["CHARLESTON_P1_A"],
        ["CHARLESTON_P1_L"],
        ["CHARLESTON_DECIDE_STOP"],
        ["CHARLESTON_P2_L"],
        ["CHARLESTON_P2_A"],
        ["CHARLESTON_P2_R"],
        [
            "COURTESY_PASS",
            "COURTESY_PASS_PAIR_1",
            "PAIR_1_OFFER",
            "COURTESY_PASS_PAIR_2",
            "PAIR_2_OFFER",
        ],
    ]
    run(table, offer(E, 0), offer(W, 0), offer(S, 0), offer(N, 0))
    assert table.configuration == ["CHARLESTON_DONE"]
    assert table.finished
    assert table.ended_reason == "all passes complete"
    assert events_of(table.log, "charleston_ended")[-1].payload == {"reason": "all passes complete"}


@pytest.mark.rule("SEAT-02", "SEAT-03", "PASS-01", "PASS-06", "PASS-07")
@pytest.mark.parametrize(
    ("steps_before", "state", "targets"),
    [
        (0, "CHARLESTON_P1_R", RIGHT),
        (1, "CHARLESTON_P1_A", ACROSS),
        (2, "CHARLESTON_P1_L", LEFT),
        (3, "CHARLESTON_P2_L", LEFT),
        (4, "CHARLESTON_P2_A", ACROSS),
        (5, "CHARLESTON_P2_R", RIGHT),
    ],
)
def test_each_standard_pass_goes_where_the_seats_say(
    steps_before: int, state: str, targets: dict[Seat, Seat]
) -> None:
    table = new_table()
    play_steps(table, steps_before)
    assert table.configuration == [state]
    place_all(table)
    sent = {s: plain_tiles(table, s, 3) for s in SEATS}
    events = run(table, *(confirm(s, sent[s]) for s in SEATS))
    for seat in SEATS:
        assert sorted(table.received[targets[seat]]) == sorted(sent[seat])
        assert not set(sent[seat]) & set(table.hand(seat))
    transfers = {Seat(e.seat): e.payload for e in events_of(events, "tiles_transferred")}
    for seat in SEATS:
        assert transfers[seat]["step"] == state
        assert transfers[seat]["receiver"] == targets[seat].value
        assert sorted(transfers[seat]["from_hand"]) == sorted(sent[seat])
        assert transfers[seat]["forwarded"] == []
    resolved = events_of(events, "pass_resolved")
    assert len(resolved) == 1
    assert resolved[0].payload["moved"] is True
    assert resolved[0].payload["blind"] is False
    assert resolved[0].payload["routes"] == {
        str(t): [s.value, targets[s].value] for s in SEATS for t in sent[s]
    }
    # PASS-07: sizes are back to 14/13/13/13
    assert hand_sizes(table) == STANDARD_SIZES


@pytest.mark.rule("NMJL-04")
def test_second_charleston_order_is_left_across_right() -> None:
    table = new_table()
    first_charleston(table)
    vote_all(table)
    order = []
    for _ in range(3):
        order.append(table.configuration[0])
        pass_step(table)
    assert order == ["CHARLESTON_P2_L", "CHARLESTON_P2_A", "CHARLESTON_P2_R"]
    assert table.options.second_charleston_order.value == "left-across-right"


@pytest.mark.rule("PASS-09")
def test_pass_direction_and_count_always_visible() -> None:
    table = new_table()
    for _ in range(3):
        for seat in SEATS:
            step = seat_view(table, seat)["step"]
            assert step["count"] == 3
            assert step["to"] == table.requirement(seat).target(seat).value
            assert step["from"] == table.requirement(seat).source(seat).value
            assert step["direction"] in ("right", "across", "left")
        pass_step(table)
    assert seat_view(table, E)["step"] is None  # the vote is not a pass


# == The vote ============================================================================
@pytest.mark.rule("NMJL-02")
@pytest.mark.parametrize("stopper", SEATS)
def test_one_stop_skips_to_courtesy(stopper: Seat) -> None:
    table = new_table()
    first_charleston(table)
    assert table.configuration == ["CHARLESTON_DECIDE_STOP"]
    run(table, *(vote(s, "continue") for s in SEATS if s.place < stopper.place))
    run(table, vote(stopper, "stop"))
    assert "COURTESY_PASS" in table.configuration
    assert not any(c.startswith("CHARLESTON_P2") for c in table.configuration)
    # the remaining voters have nothing to vote on any more
    for seat in SEATS:
        if seat not in table.votes:
            assert_refused(
                table, vote(seat, "continue"), errors.NotAllowedNow, "not_allowed_now", "NMJL-02"
            )


@pytest.mark.rule("NMJL-03")
def test_four_continues_start_the_second_charleston() -> None:
    table = new_table()
    first_charleston(table)
    for seat in (E, S, W):
        run(table, vote(seat, "continue"))
        assert table.configuration == ["CHARLESTON_DECIDE_STOP"]
    run(table, vote(N, "continue"))
    assert table.configuration == ["CHARLESTON_P2_L"]


@pytest.mark.rule("NMJL-02")
def test_votes_are_public() -> None:
    table = new_table()
    first_charleston(table)
    events = run(table, vote(S, "continue"))
    assert seat_view(table, N)["game"]["votes"] == {"south": "continue"}
    assert events[0].type == "vote_cast"


# == The late objection ====================================================================
COURTESY_START = [
    "COURTESY_PASS",
    "COURTESY_PASS_PAIR_1",
    "PAIR_1_OFFER",
    "COURTESY_PASS_PAIR_2",
    "PAIR_2_OFFER",
]


@pytest.mark.rule("NMJL-05")
def test_late_objection_before_the_second_charleston_first_pass_resolves() -> None:
    table = new_table()
    first_charleston(table)
    vote_all(table)
    assert table.configuration == ["CHARLESTON_P2_L"]
    place_all(table)
    run(table, confirm(S, plain_tiles(table, S, 3)), confirm(W, plain_tiles(table, W, 3)))
    assert "vote" in seat_view(table, N)["allowed_commands"]
    before = {s: list(table.hand(s)) for s in SEATS}
    events = run(table, vote(N, "stop"))
    assert [e.type for e in events] == ["vote_cast", "state_changed"]
    assert events[0].seat is N
    assert events[0].payload == {
        "choice": "stop",
        "late": True,
        "step": "CHARLESTON_P2_L",
        "dropped": ["south", "west"],
    }
    assert table.configuration == COURTESY_START
    assert {s: list(table.hand(s)) for s in SEATS} == before  # nothing moved
    assert table.selections == {}
    assert table.votes[N] == "stop"
    assert seat_view(table, E)["game"]["votes"]["north"] == "stop"
    # the Courtesy Pass follows as after a stop at the vote
    run(table, offer(E, 1), offer(W, 1), offer(S, 0), offer(N, 0))
    pass_step(table)
    assert table.finished
    assert sorted(all_tiles(table)) == list(range(152))


@pytest.mark.rule("NMJL-06")
def test_late_objection_refused_once_the_first_pass_has_resolved() -> None:
    table = new_table()
    first_charleston(table)
    vote_all(table)
    pass_step(table)
    assert table.configuration == ["CHARLESTON_P2_A"]
    for seat in SEATS:
        assert "vote" not in seat_view(table, seat)["allowed_commands"]
        error = assert_refused(
            table,
            vote(seat, "stop"),
            errors.SecondCharlestonMandatory,
            "second_charleston_mandatory",
        )
        assert "mandatory" in error.message and error.kind == "not_now"


@pytest.mark.rule("NMJL-05")
def test_late_objection_takes_only_a_stop() -> None:
    table = new_table()
    first_charleston(table)
    vote_all(table)
    error = assert_refused(table, vote(E, "continue"), errors.OnlyStopNow, "only_stop_now")
    assert "object" in error.message


@pytest.mark.rule("NMJL-05")
def test_late_objection_follows_the_second_charleston_order() -> None:
    # with the order Across, Left, Right the first pass of the Second Charleston is Across
    table = new_table("nmjl", {"second_charleston_order": "across-left-right"})
    first_charleston(table)
    vote_all(table)
    assert table.configuration == ["CHARLESTON_P2_A"]
    run(table, vote(W, "stop"))
    assert table.configuration == COURTESY_START


@pytest.mark.rule("HOUSE-04")
def test_late_objection_can_be_turned_off() -> None:
    table = new_table("nmjl", {"late_objection": False})
    first_charleston(table)
    vote_all(table)
    assert "vote" not in seat_view(table, E)["allowed_commands"]
    error = assert_refused(
        table,
        vote(E, "stop"),
        errors.SecondCharlestonMandatory,
        "second_charleston_mandatory",
        "HOUSE-04",
    )
    assert "at the vote only" in error.message


@pytest.mark.rule("NMJL-05", "SVC-04")
def test_late_objection_replays_through_the_fold() -> None:
    table = new_table()
    first_charleston(table)
    vote_all(table)
    place_all(table)
    run(table, confirm(E, plain_tiles(table, E, 3)), vote(S, "stop"))
    refolded = Table.fold(table.deal, "nmjl", None, table.log)
    assert refolded.configuration == table.configuration
    assert refolded.votes == table.votes


# == Courtesy Pass (agreed_min) ==========================================================
def _to_courtesy(table: Table, second: bool = False) -> None:
    first_charleston(table)
    if second:
        second_charleston(table)
    else:
        run(table, vote(E, "stop"))
    place_all(table)


@pytest.mark.rule("NMJL-13")
def test_courtesy_pairs_exchange_the_smaller_offer() -> None:
    table = new_table()
    _to_courtesy(table)
    events = run(table, offer(E, 3), offer(W, 1))
    agreed = events_of(events, "courtesy_agreed")
    assert [e.payload for e in agreed] == [{"pair": ["east", "west"], "count": 1}]
    assert "PAIR_1_CHOOSE" in table.configuration
    assert seat_view(table, E)["step"]["count"] == 1
    assert seat_view(table, W)["step"]["count"] == 1
    # each seat of the pair is told its pair, in the rule book's order (East with West)
    assert seat_view(table, E)["step"]["label"] == "Courtesy Pass East and West"
    assert seat_view(table, W)["step"]["label"] == "Courtesy Pass East and West"
    # both choose exactly that many tiles and the pair swaps them at once
    assert_refused(
        table, confirm(E, plain_tiles(table, E, 3)), errors.WrongCount, "wrong_count", "NMJL-13"
    )
    e_tile, w_tile = plain_tiles(table, E, 1), plain_tiles(table, W, 1)
    run(table, confirm(E, e_tile))
    assert table.received[W] == []  # nothing moves until both confirm
    run(table, confirm(W, w_tile))
    assert table.received[W] == e_tile
    assert table.received[E] == w_tile
    assert "PAIR_1_DONE" in table.configuration
    assert hand_sizes(table) == STANDARD_SIZES


@pytest.mark.rule("NMJL-13")
@pytest.mark.parametrize(("a", "b"), [(0, 3), (3, 0), (0, 0)])
def test_courtesy_zero_means_no_exchange(a: int, b: int) -> None:
    table = new_table()
    _to_courtesy(table)
    before = {s: list(table.hand(s)) for s in SEATS}
    events = run(table, offer(S, a), offer(N, b))
    assert events_of(events, "courtesy_agreed")[0].payload["count"] == 0
    assert "PAIR_2_DONE" in table.configuration
    assert events_of(events, "tiles_transferred") == []
    assert {s: list(table.hand(s)) for s in SEATS} == before


@pytest.mark.rule("NMJL-12")
def test_courtesy_pairs_are_independent_and_parallel() -> None:
    table = new_table()
    _to_courtesy(table, second=True)
    run(table, offer(S, 2), offer(N, 2))
    assert "PAIR_2_CHOOSE" in table.configuration
    assert "PAIR_1_OFFER" in table.configuration
    assert seat_view(table, S)["step"]["label"] == "Courtesy Pass South and North"
    assert seat_view(table, N)["step"]["label"] == "Courtesy Pass South and North"
    run(table, confirm(S, plain_tiles(table, S, 2)), confirm(N, plain_tiles(table, N, 2)))
    assert "PAIR_2_DONE" in table.configuration
    assert "PAIR_1_OFFER" in table.configuration  # pair 1 has not even offered yet
    assert not table.finished
    # pair 1 can act in any interleaving with pair 2's placing
    run(table, offer(W, 1), place(S), offer(E, 2), place(N))
    assert "PAIR_1_CHOOSE" in table.configuration
    run(table, confirm(W, plain_tiles(table, W, 1)))
    assert not table.finished
    run(table, confirm(E, plain_tiles(table, E, 1)))
    assert table.configuration == ["CHARLESTON_DONE"]
    assert hand_sizes(table) == {**STANDARD_SIZES}


@pytest.mark.rule("NMJL-12")
def test_courtesy_happens_after_second_charleston_too() -> None:
    table = new_table()
    _to_courtesy(table, second=True)
    assert "COURTESY_PASS" in table.configuration
    run(table, offer(E, 0), offer(W, 0), offer(S, 0), offer(N, 0))
    assert table.finished


@pytest.mark.rule("NMJL-13")
def test_courtesy_offers_are_public_to_the_pair() -> None:
    table = new_table()
    _to_courtesy(table)
    run(table, offer(E, 2))
    assert seat_view(table, W)["courtesy"]["offers"] == {"east": 2}
    assert seat_view(table, W)["courtesy"]["agreed"] is None


# == Blind pass ===========================================================================
@pytest.mark.rule("NMJL-07", "NMJL-08")
@pytest.mark.parametrize("steps_before", [2, 5])
def test_blind_pass_allowed_on_steps_3_and_7(steps_before: int) -> None:
    table = new_table()
    play_steps(table, steps_before)
    place_all(table)
    assert seat_view(table, E)["step"]["blind_allowed"] is True
    own = plain_tiles(table, E, 1)
    run(table, confirm(E, own, blind=2))
    others = {s: plain_tiles(table, s, 3) for s in (S, W, N)}
    run(table, *(confirm(s, others[s]) for s in (S, W, N)))
    # NMJL-08: everyone still gives exactly 3 and ends with as many tiles as before
    assert hand_sizes(table) == STANDARD_SIZES


@pytest.mark.rule("NMJL-07")
@pytest.mark.parametrize("steps_before", [0, 1, 3, 4])
def test_blind_pass_refused_on_other_standard_steps(steps_before: int) -> None:
    table = new_table()
    play_steps(table, steps_before)
    place_all(table)
    assert seat_view(table, E)["step"]["blind_allowed"] is False
    assert_refused(
        table,
        confirm(E, plain_tiles(table, E, 2), blind=1),
        errors.BlindPassNotAllowed,
        "blind_pass_not_allowed",
    )


@pytest.mark.rule("NMJL-07")
def test_blind_pass_refused_in_courtesy() -> None:
    table = new_table()
    _to_courtesy(table)
    run(table, offer(E, 3), offer(W, 3))
    assert_refused(
        table,
        confirm(E, plain_tiles(table, E, 2), blind=1),
        errors.BlindPassNotAllowed,
        "blind_pass_not_allowed",
    )


@pytest.mark.rule("NMJL-10")
def test_second_right_with_no_tile_from_any_hand_ends_the_charleston() -> None:
    table = new_table()
    play_steps(table, 5)
    place_all(table)
    before = {s: list(table.hand(s)) for s in SEATS}
    events = run(table, *(confirm(s, [], blind=3) for s in SEATS))
    assert table.configuration == ["CHARLESTON_DONE"]
    assert {s: list(table.hand(s)) for s in SEATS} == before
    assert events_of(events, "tiles_transferred") == []
    resolved = events_of(events, "pass_resolved")[0].payload
    assert resolved["moved"] is False
    assert resolved["routes"] == {}
    assert table.ended_reason == (
        "no tile passed from any hand on the Second Right: no Courtesy Pass"
    )
    assert events_of(events, "charleston_ended")[0].payload == {"reason": table.ended_reason}
    assert not any(
        "COURTESY" in c for e in events_of(events, "state_changed") for c in e.payload["to"]
    )
    # no Courtesy Pass afterwards
    assert_refused(table, offer(E, 1), errors.CharlestonOver, "charleston_over")


@pytest.mark.rule("NMJL-11")
def test_first_left_with_no_tile_from_any_hand_moves_nothing_and_the_vote_follows() -> None:
    table = new_table()
    play_steps(table, 2)
    place_all(table)
    before = {s: list(table.hand(s)) for s in SEATS}
    events = run(table, *(confirm(s, [], blind=3) for s in SEATS))
    assert table.configuration == ["CHARLESTON_DECIDE_STOP"]
    assert {s: list(table.hand(s)) for s in SEATS} == before
    assert events_of(events, "tiles_transferred") == []
    assert events_of(events, "pass_resolved")[0].payload["moved"] is False
    assert events_of(events, "charleston_ended") == []
    assert table.ended_reason is None
    # a stop still leads to the Courtesy Pass
    run(table, vote(S, "stop"))
    assert table.configuration == [
        "COURTESY_PASS",
        "COURTESY_PASS_PAIR_1",
        "PAIR_1_OFFER",
        "COURTESY_PASS_PAIR_2",
        "PAIR_2_OFFER",
    ]


@pytest.mark.rule("HOUSE-02")
def test_blind_pass_can_be_disabled_by_option() -> None:
    # Option override: nmjl with {"blind_pass": False}
    table = new_table("nmjl", {"blind_pass": False})
    pass_step(table)
    pass_step(table)
    place_all(table)
    assert seat_view(table, E)["step"]["blind_allowed"] is False
    error = assert_refused(
        table,
        confirm(E, plain_tiles(table, E, 1), blind=2),
        errors.BlindPassNotAllowed,
        "blind_pass_not_allowed",
        "HOUSE-02",
    )
    assert "no blind pass" in error.message


# == Heavenly and Earthly Hands ===========================================================
@pytest.mark.rule("NMJL-14")
def test_heavenly_hand_ends_the_charleston_at_once() -> None:
    table = new_table()
    before = {s: list(table.hand(s)) for s in SEATS}
    events = run(table, declare(E))
    assert table.configuration == ["CHARLESTON_DONE"]
    assert table.declaration == {"seat": "east", "kind": "heavenly", "verdict": "pending"}
    assert table.ended_reason == "Heavenly Hand declared"
    assert [e.type for e in events] == ["mah_jongg_declared", "charleston_ended", "state_changed"]
    assert events[0].payload == {"kind": "heavenly", "verdict": "pending"}
    assert {s: list(table.hand(s)) for s in SEATS} == before
    assert_refused(
        table, confirm(S, plain_tiles(table, S, 3)), errors.CharlestonOver, "charleston_over"
    )


@pytest.mark.rule("NMJL-14")
def test_heavenly_hand_only_before_any_pass_is_confirmed() -> None:
    table = new_table()
    run(table, confirm(S, plain_tiles(table, S, 3)))
    assert_refused(table, declare(E), errors.HeavenlyHandTooLate, "heavenly_hand_too_late")
    table = new_table()
    pass_step(table)
    assert_refused(table, declare(E), errors.NotAllowedNow, "not_allowed_now", "NMJL-16")


@pytest.mark.rule("NMJL-17")
@pytest.mark.parametrize("seat", [S, W, N])
def test_heavenly_hand_is_east_only(seat: Seat) -> None:
    table = new_table()
    assert "declare_mah_jongg" not in seat_view(table, seat)["allowed_commands"]
    assert "declare_mah_jongg" in seat_view(table, E)["allowed_commands"]
    assert_refused(table, declare(seat), errors.OnlyEastDeclares, "only_east_declares")


@pytest.mark.rule("NMJL-19")
def test_hand_checker_is_pluggable() -> None:
    seen = []

    def checker(tiles):
        seen.append(sorted(tiles))
        return "valid"

    table = Table(Deal.explicit(PLAIN_HANDS), "nmjl", hand_checker=checker)
    run(table, declare(E))
    assert seen == [sorted(PLAIN_HANDS[E])]
    assert table.declaration["verdict"] == "valid"


@pytest.mark.rule("NMJL-15", "NMJL-17")
def test_earthly_hand_after_the_end() -> None:
    table = new_table()
    _to_courtesy(table)
    run(table, offer(E, 0), offer(W, 0), offer(S, 0), offer(N, 0))
    assert table.finished
    for seat in (S, W, N):
        assert_refused(table, declare(seat), errors.OnlyEastDeclares, "only_east_declares")
    events = run(table, declare(E))
    assert events[0].payload == {"kind": "earthly", "verdict": "pending"}
    assert table.declaration == {"seat": "east", "kind": "earthly", "verdict": "pending"}
    assert table.configuration == ["CHARLESTON_DONE"]
    assert_refused(table, declare(E), errors.AlreadyDeclared, "already_declared")


@pytest.mark.rule("NMJL-15")
def test_earthly_hand_needs_exactly_14_tiles() -> None:
    table = new_table("nmjl", {"courtesy_mode": "asymmetric"})
    _to_courtesy(table)
    pass_step(table, counts={E: 2, W: 0, S: 0, N: 0})
    assert table.finished and len(table.hand(E)) == 12
    assert "declare_mah_jongg" not in seat_view(table, E)["allowed_commands"]
    error = assert_refused(
        table, declare(E), errors.EarthlyHandTileCount, "earthly_hand_tile_count"
    )
    assert "12" in error.message and "14" in error.message


@pytest.mark.rule("NMJL-16")
def test_winning_during_the_charleston_does_not_end_it() -> None:
    table = new_table()
    pass_step(table)
    assert_refused(table, declare(E), errors.NotAllowedNow, "not_allowed_now", "NMJL-16")
    pass_step(table)
    assert_refused(table, declare(E), errors.NotAllowedNow, "not_allowed_now", "NMJL-16")
    pass_step(table)
    assert_refused(table, declare(E), errors.NotAllowedNow, "not_allowed_now", "NMJL-16")
    vote_all(table)
    for _ in range(3):
        assert_refused(table, declare(E), errors.NotAllowedNow, "not_allowed_now", "NMJL-16")
        pass_step(table)
    assert_refused(table, declare(E), errors.NotAllowedNow, "not_allowed_now", "NMJL-16")
    run(table, offer(E, 1))
    assert_refused(table, declare(E), errors.NotAllowedNow, "not_allowed_now", "NMJL-16")


# == Dead hand ============================================================================
@pytest.mark.rule("NMJL-18")
def test_dead_hand_challenge_is_always_refused() -> None:
    table = new_table()
    checkpoints = [
        lambda t: None,
        pass_step,
        pass_step,
        pass_step,
        lambda t: run(t, vote(E, "stop")),
        lambda t: run(t, offer(E, 0), offer(W, 0), offer(S, 0), offer(N, 0)),
    ]
    for advance in checkpoints:
        advance(table)
        for seat in SEATS:
            for target in SEATS:
                if target is not seat:
                    assert_refused(
                        table,
                        challenge(seat, target),
                        errors.DeadHandChallengeRefused,
                        "dead_hand_challenge_refused",
                    )
    assert table.finished


# == Every pass ===========================================================================
@pytest.mark.rule("PASS-03")
def test_jokers_are_never_passed() -> None:
    table = new_table()
    error = assert_refused(table, confirm(E, [0, 1, 144]), errors.JokerPassed, "joker_passed")
    assert error.message == "Jokers cannot be passed during the Charleston."


@pytest.mark.rule("PASS-05")
def test_confirmed_choice_may_be_withdrawn_or_changed_until_the_pass_resolves() -> None:
    table = new_table()
    run(table, confirm(E, [0, 1, 2]))
    assert seat_view(table, E)["selection"]["locked"] is True
    run(table, change(E, [3, 4, 5]))
    assert table.selections[E].tiles == (3, 4, 5)
    run(table, withdraw(E))
    assert E not in table.selections
    run(table, confirm(E, [6, 7, 8]))
    run(table, confirm(S, [13, 14, 15]), confirm(W, [25, 26, 27]))
    run(table, change(S, [16, 17, 18]))
    run(table, confirm(N, [37, 38, 39]))
    assert sorted(table.received[S]) == [6, 7, 8]
    assert sorted(table.received[W]) == [16, 17, 18]
    # after the pass resolves there is nothing left to withdraw
    assert_refused(table, withdraw(E), errors.NothingConfirmed, "nothing_confirmed")


@pytest.mark.rule("PASS-06")
def test_nothing_moves_until_everyone_confirms() -> None:
    table = new_table()
    before = {s: list(table.hand(s)) for s in SEATS}
    for seat in (E, S, W):
        events = run(table, confirm(seat, plain_tiles(table, seat, 3)))
        assert [e.type for e in events] == ["pass_confirmed"]
        assert {s: list(table.hand(s)) for s in SEATS} == before
    events = run(table, confirm(N, plain_tiles(table, N, 3)))
    assert [e.type for e in events] == [
        "pass_confirmed",
        *["tiles_transferred"] * 4,
        "pass_resolved",
        "state_changed",
    ]


@pytest.mark.rule("PASS-08")
def test_received_tiles_are_kept_apart_until_placed() -> None:
    table = new_table()
    pass_step(table)
    assert len(table.received[S]) == 3
    assert len(table.racks[S]) == 10
    view = seat_view(table, S)
    assert [t["id"] for t in view["received"]] == table.received[S]
    assert view["must_place_first"] is True
    assert_refused(
        table, confirm(S, plain_tiles(table, S, 3)), errors.TilesNotPlaced, "tiles_not_placed"
    )
    received = list(table.received[S])
    events = run(table, place(S))
    assert events[0].payload == {"tiles": received}
    assert table.received[S] == []
    assert table.racks[S][-3:] == received
    run(table, confirm(S, received))  # the tiles just received may be passed on


@pytest.mark.rule("PASS-08")
def test_placing_can_be_optional_by_option() -> None:
    table = new_table("nmjl", {"require_placing": False})
    pass_step(table)
    received = list(table.received[S])
    assert seat_view(table, S)["must_place_first"] is False
    run(table, confirm(S, received))  # straight from beside the rack
    for seat in (E, W, N):
        run(table, confirm(seat, plain_tiles(table, seat, 3)))
    assert hand_sizes(table) == STANDARD_SIZES
    assert not set(received) & set(table.hand(S))


@pytest.mark.rule("PASS-03", "PASS-07")
def test_tiles_are_conserved_through_a_whole_game() -> None:
    table = new_table()
    _to_courtesy(table, second=True)
    run(table, offer(E, 2), offer(W, 3), offer(S, 1), offer(N, 1))
    pass_step(table)
    assert table.finished
    assert sorted(all_tiles(table)) == list(range(152))
    assert sorted(tiles_held(table)) == list(range(152))
    assert hand_sizes(table) == STANDARD_SIZES
    for seat in SEATS:
        assert sum(is_joker(t) for t in table.hand(seat)) == 1  # jokers never moved
        assert all(face(t) != "J" or t in PLAIN_HANDS[seat] for t in table.hand(seat))


# == Rulesets and options =================================================================
@pytest.mark.rule("SVC-03")
def test_nmjl_is_the_default_ruleset() -> None:
    table = Table(Deal.explicit(PLAIN_HANDS))
    assert table.ruleset.name == "nmjl"
    assert table.options == RULESETS["nmjl"].defaults
    assert table.options.blind_pass is True
    assert table.options.courtesy_mode.value == "agreed_min"
    assert table.options.require_placing is True


@pytest.mark.rule("SVC-03")
def test_unknown_option_is_refused() -> None:
    with pytest.raises(errors.InvalidOption) as info:
        new_table("nmjl", {"ding_dong": True})
    assert info.value.code == "invalid_option"
    assert info.value.kind == "setup"
    with pytest.raises(errors.InvalidOption):
        new_table("nmjl", {"courtesy_mode": "whatever"})
    with pytest.raises(errors.InvalidOption):
        get_ruleset("nmjl").options({"second_charleston_order": "right-left"})


@pytest.mark.rule("SVC-03")
def test_unknown_ruleset_is_refused() -> None:
    with pytest.raises(errors.UnknownRuleset) as info:
        new_table("mahjong-soul")
    assert info.value.code == "unknown_ruleset"


@pytest.mark.rule("HOUSE-01", "SVC-03")
def test_nmjl_with_house_order_override() -> None:
    table = new_table("nmjl", {"second_charleston_order": "across-left-right"})
    first_charleston(table)
    vote_all(table)
    assert table.configuration == ["CHARLESTON_P2_A"]

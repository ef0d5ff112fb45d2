"""Ruleset ``four_winds``: six exchanges in pairs, then Ding Dong until a Ready.

Tables are built from explicit hands (``engine_helpers.PLAIN_HANDS``) so every expected
tile can be read off directly.
"""

from __future__ import annotations

import json

import pytest
from engine_helpers import (
    PLAIN_HANDS,
    STANDARD_SIZES,
    E,
    N,
    S,
    W,
    all_tiles,
    assert_refused,
    change,
    confirm,
    events_of,
    hand_sizes,
    place,
    place_all,
    plain_tiles,
    run,
    vote,
    withdraw,
)

from charleston_fsm.engine import errors
from charleston_fsm.engine.commands import (
    CloseDingDong,
    DeclareReady,
    GiveDingDong,
    RequestDingDong,
)
from charleston_fsm.engine.events import Event
from charleston_fsm.engine.seats import SEATS, Seat
from charleston_fsm.engine.table import Table
from charleston_fsm.engine.tiles import Deal, is_joker
from charleston_fsm.engine.views import redact, seat_view

EXCHANGES = [
    ("EXCHANGE_1_EW", E, W),
    ("EXCHANGE_2_SN", S, N),
    ("EXCHANGE_3_ES", E, S),
    ("EXCHANGE_4_WN", W, N),
    ("EXCHANGE_5_EN", E, N),
    ("EXCHANGE_6_WS", W, S),
]


def fw_table(**options: object) -> Table:
    return Table(Deal.explicit(PLAIN_HANDS), "four_winds", options or None)


def exchange(table: Table) -> list[Event]:
    """The active exchange: the first player gives 3 plain tiles, then the second."""
    (_state, step), *_ = table.active_steps()
    first, second = step.participants
    events = run(table, *(place(s) for s in (first, second) if table.received[s]))
    events += run(table, confirm(first, plain_tiles(table, first, 3)))
    return events + run(table, confirm(second, plain_tiles(table, second, 3)))


def all_exchanges(table: Table) -> None:
    for _ in EXCHANGES:
        exchange(table)


def request(seat: Seat = E) -> RequestDingDong:
    return RequestDingDong(seat=seat)


def ready(seat: Seat) -> DeclareReady:
    return DeclareReady(seat=seat)


def gifts(table: Table, seat: Seat, pairs: list[tuple[int, Seat | None]] | None = None):
    if pairs is None:
        others = [s for s in SEATS if s is not seat]
        pairs = list(zip(plain_tiles(table, seat, 3), others, strict=True))
    return GiveDingDong.model_validate(
        {"seat": seat, "gifts": [{"tile": t, "to": to} for t, to in pairs]}
    )


def ding_dong(table: Table) -> list[Event]:
    run(table, request())
    place_all(table)
    return run(table, *(gifts(table, s) for s in SEATS))


# == The six exchanges ====================================================================
@pytest.mark.rule("FW-01", "PASS-06", "PASS-07")
def test_six_exchanges_in_the_programs_order() -> None:
    # East-West, South-North, East-South, West-North, East-North, West-South; 3 each way
    table = fw_table()
    seen = []
    for state, first, second in EXCHANGES:
        assert table.configuration == [state]
        run(table, *(place(s) for s in (first, second) if table.received[s]))
        assert table.allowed_commands(first) == ["confirm_pass"]
        assert table.allowed_commands(second) == []  # the first-named gives first
        run(table, confirm(first, plain_tiles(table, first, 3)))
        given = {first: list(table.selections[first].tiles)}
        assert table.configuration == [state]  # nothing moves yet
        given[second] = plain_tiles(table, second, 3)
        events = run(table, confirm(second, given[second]))
        # both receive at once, exactly what the other gave
        assert sorted(table.received[first]) == sorted(given[second])
        assert sorted(table.received[second]) == sorted(given[first])
        assert len(events_of(events, "tiles_transferred")) == 2
        assert hand_sizes(table) == STANDARD_SIZES
        seen.append(state)
    assert seen == [s for s, _, _ in EXCHANGES]
    assert table.configuration == ["DING_DONG_OPEN"]
    assert sorted(all_tiles(table)) == list(range(152))


@pytest.mark.rule("PASS-10")
@pytest.mark.parametrize(("state", "first", "second"), EXCHANGES)
def test_players_outside_the_exchange_are_refused(state: str, first: Seat, second: Seat) -> None:
    table = fw_table()
    while table.configuration != [state]:
        exchange(table)
    place_all(table)
    for outsider in (s for s in SEATS if s not in (first, second)):
        error = assert_refused(
            table,
            confirm(outsider, plain_tiles(table, outsider, 3)),
            errors.SeatNotInStep,
            "seat_not_in_step",
        )
        assert first.label in error.message and second.label in error.message


@pytest.mark.rule("FW-02")
def test_the_second_player_waits_for_the_first() -> None:
    table = fw_table()
    error = assert_refused(
        table, confirm(W, plain_tiles(table, W, 3)), errors.ExchangeTurn, "exchange_turn"
    )
    assert "East gives first" in error.message


@pytest.mark.rule("FW-02", "PASS-11")
def test_the_second_player_never_names_the_tiles_it_is_receiving() -> None:
    table = fw_table()
    east_tiles = plain_tiles(table, E, 3)
    run(table, confirm(E, east_tiles))
    incoming = assert_refused(
        table,
        confirm(W, [east_tiles[0], *plain_tiles(table, W, 2)]),
        errors.ResponderOwnTilesOnly,
        "responder_own_tiles_only",
    )
    # another seat's tile, not on its way, gets the very same answer: no hint of what comes
    south_tile = plain_tiles(table, S, 1)[0]
    other = assert_refused(
        table,
        confirm(W, [south_tile, *plain_tiles(table, W, 2)]),
        errors.ResponderOwnTilesOnly,
        "responder_own_tiles_only",
    )
    assert incoming.message.replace(str(east_tiles[0]), "#") == other.message.replace(
        str(south_tile), "#"
    )


@pytest.mark.rule("FW-02", "FW-03", "PASS-01", "PASS-03")
def test_no_blind_pass_no_joker_exact_count() -> None:
    table = fw_table()
    assert_refused(
        table,
        confirm(E, plain_tiles(table, E, 2), blind=1),
        errors.BlindPassNotAllowed,
        "blind_pass_not_allowed",
        rule="FW-02",
    )
    joker = next(t for t in table.hand(E) if is_joker(t))
    error = assert_refused(
        table, confirm(E, [joker, *plain_tiles(table, E, 2)]), errors.JokerPassed, "joker_passed"
    )
    assert error.message == "Jokers cannot be passed during the Charleston."
    assert_refused(table, confirm(E, plain_tiles(table, E, 2)), errors.WrongCount, "wrong_count")


@pytest.mark.rule("PASS-05")
def test_change_and_withdraw_until_the_exchange_resolves() -> None:
    table = fw_table()
    run(table, confirm(E, plain_tiles(table, E, 3)))
    assert table.allowed_commands(E) == ["change_pass", "withdraw_pass"]
    other = plain_tiles(table, E, 4)[1:]
    run(table, change(E, other))
    assert list(table.selections[E].tiles) == other
    run(table, withdraw(E))
    assert_refused(
        table, confirm(W, plain_tiles(table, W, 3)), errors.ExchangeTurn, "exchange_turn"
    )


@pytest.mark.rule("PASS-08")
def test_received_tiles_are_placed_before_giving_again() -> None:
    table = fw_table()
    exchange(table)  # East and West
    exchange(table)  # South and North
    assert table.received[E]
    assert table.allowed_commands(E) == ["place_tiles"]
    assert_refused(
        table, confirm(E, plain_tiles(table, E, 3)), errors.TilesNotPlaced, "tiles_not_placed"
    )


@pytest.mark.rule("SVC-01")
def test_commands_of_other_rulesets_are_refused() -> None:
    table = fw_table()
    error = assert_refused(table, vote(E, "stop"), errors.NotInRuleset, "not_in_ruleset")
    assert "four_winds" in error.message


# == Ding Dong ===========================================================================
@pytest.mark.rule("FW-04", "PASS-06", "PASS-07")
def test_ding_dong_twelve_tiles_at_once() -> None:
    table = fw_table()
    all_exchanges(table)
    assert table.allowed_commands(E) == ["declare_ready", "place_tiles", "request_ding_dong"]
    assert "request_ding_dong" not in table.allowed_commands(S)
    events = run(table, request())
    assert events[0].type == "ding_dong_requested" and events[0].payload == {"number": 1}
    assert table.configuration == ["DING_DONG"]
    place_all(table)
    given = {s: gifts(table, s) for s in SEATS}
    for seat in SEATS[:3]:
        run(table, given[seat])
        assert not any(table.received.values())  # nothing moves before all four gave
    events = run(table, given[N])
    transfers = events_of(events, "tiles_transferred")
    assert len(transfers) == 12
    for command in given.values():
        for gift in command.gifts:
            assert gift.tile in table.received[gift.to]
    assert hand_sizes(table) == STANDARD_SIZES
    assert table.configuration == ["DING_DONG_OPEN"]
    assert sorted(all_tiles(table)) == list(range(152))


@pytest.mark.rule("FW-06")
def test_only_east_requests_a_ding_dong() -> None:
    table = fw_table()
    all_exchanges(table)
    for seat in (S, W, N):
        assert_refused(
            table, request(seat), errors.OnlyEastRequestsDingDong, "only_east_requests_ding_dong"
        )


@pytest.mark.rule("FW-03", "FW-04", "PASS-04")
@pytest.mark.parametrize(
    ("pairs", "error", "code"),
    [
        (lambda t: [(t[0], S), (t[0], W), (t[1], N)], errors.TileNamedTwice, "tile_named_twice"),
        (lambda t: [(t[0], E), (t[1], W), (t[2], N)], errors.DingDongToSelf, "ding_dong_to_self"),
        (
            lambda t: [(t[0], S), (t[1], None), (t[2], N)],
            errors.DingDongToNobody,
            "ding_dong_to_nobody",
        ),
        (
            lambda t: [(t[0], S), (t[1], S), (t[2], N)],
            errors.DingDongSameReceiver,
            "ding_dong_same_receiver",
        ),
        (lambda t: [(t[0], S), (t[1], W)], errors.WrongCount, "wrong_count"),
        (lambda t: [(t[0], S), (t[1], W), ("joker", N)], errors.JokerPassed, "joker_passed"),
        (lambda t: [(t[0], S), (t[1], W), ("south", N)], errors.TileNotInHand, "tile_not_in_hand"),
    ],
)
def test_ding_dong_gift_refusals(pairs, error, code) -> None:
    table = fw_table()
    all_exchanges(table)
    run(table, request())
    place_all(table)
    tiles = plain_tiles(table, E, 3)
    chosen = []
    for tile, to in pairs(tiles):
        if tile == "joker":
            tile = next(t for t in table.hand(E) if is_joker(t))
        elif tile == "south":
            tile = plain_tiles(table, S, 1)[0]
        chosen.append((tile, to))
    # a Ding Dong's count is its own rule; the other refusals are those of every pass
    rule = "FW-04" if error is errors.WrongCount else None
    assert_refused(table, gifts(table, E, chosen), error, code, rule=rule)


@pytest.mark.rule("FW-05", "FW-06")
def test_at_most_three_ding_dongs_then_ready() -> None:
    table = fw_table()
    all_exchanges(table)
    for number in (1, 2, 3):
        ding_dong(table)
        assert table.ding_dongs == number
    assert "request_ding_dong" not in table.allowed_commands(E)
    assert_refused(table, request(), errors.DingDongLimit, "ding_dong_limit")
    events = run(table, ready(S))
    assert events[0].type == "ready_declared" and events[0].seat is S
    assert table.finished and table.ended_reason == "South declared Ready"


@pytest.mark.rule("FW-05")
def test_the_maximum_is_an_option() -> None:
    table = fw_table(ding_dong_max=1)
    all_exchanges(table)
    ding_dong(table)
    assert_refused(table, request(), errors.DingDongLimit, "ding_dong_limit")


@pytest.mark.rule("FW-06")
def test_no_request_after_a_ready() -> None:
    table = fw_table()
    all_exchanges(table)
    run(table, ready(W))
    error = assert_refused(table, request(), errors.DingDongAfterReady, "ding_dong_after_ready")
    assert "West" in error.message


@pytest.mark.rule("FW-08")
def test_the_director_closes_the_window() -> None:
    table = fw_table()
    all_exchanges(table)
    assert_refused(table, CloseDingDong(seat=E), errors.NotADirectorCommand, "director_command")
    events = run(table, CloseDingDong())
    assert events[0].type == "ding_dong_closed" and events[0].seat is None
    assert table.finished and table.ended_reason == "the Ding Dong window was closed"
    assert_refused(table, request(), errors.DingDongClosed, "ding_dong_closed")


@pytest.mark.rule("FW-08")
def test_no_ding_dong_during_the_exchanges() -> None:
    table = fw_table()
    error = assert_refused(table, request(), errors.NotAllowedNow, "not_allowed_now")
    assert "six exchanges" in error.message


# == Options: which round plays what =======================================================
@pytest.mark.rule("FW-07")
@pytest.mark.parametrize(
    ("options", "start"),
    [
        ({}, "EXCHANGE_1_EW"),
        ({"charleston": "off"}, "DING_DONG_OPEN"),
        ({"charleston": "last_round"}, "DING_DONG_OPEN"),
        ({"charleston": "last_round", "round": "north"}, "EXCHANGE_1_EW"),
        ({"charleston": "off", "ding_dong": "off"}, "CHARLESTON_DONE"),
        (
            {"charleston": "last_round", "ding_dong": "last_round", "round": "west"},
            "CHARLESTON_DONE",
        ),
    ],
)
def test_the_round_decides_where_the_deal_starts(options: dict, start: str) -> None:
    table = fw_table(**options)
    assert table.configuration == [start]
    if start == "CHARLESTON_DONE":
        assert "plays neither" in table.ended_reason
        assert table.allowed_commands(E) == []


@pytest.mark.rule("FW-07")
def test_charleston_without_ding_dong_ends_after_the_sixth_exchange() -> None:
    table = fw_table(ding_dong="off")
    all_exchanges(table)
    assert table.finished and table.ended_reason == "all exchanges complete"
    error = assert_refused(table, request(), errors.DingDongDisabled, "ding_dong_disabled")
    assert "off" in error.message


# == Record, replay, secrecy ==============================================================
@pytest.mark.rule("SVC-04")
def test_fold_and_snapshot_rebuild_a_game_with_ding_dongs() -> None:
    table = fw_table()
    all_exchanges(table)
    ding_dong(table)
    run(table, request())
    place_all(table)
    run(table, gifts(table, E))  # mid-Ding Dong: a gift is pending
    stored = [Event.from_dict(json.loads(json.dumps(e.to_dict()))) for e in table.log]
    assert Table.fold(table.deal, "four_winds", None, stored).snapshot() == table.snapshot()
    restored = Table.restore(json.loads(json.dumps(table.snapshot())))
    assert restored.snapshot() == table.snapshot()
    for seat in SEATS:
        assert restored.allowed_commands(seat) == table.allowed_commands(seat)


@pytest.mark.rule("FW-02", "PASS-11")
def test_the_second_player_never_sees_the_first_players_tiles_before_completion() -> None:
    table = fw_table()
    east_tiles = plain_tiles(table, E, 3)
    events = run(table, confirm(E, east_tiles))
    view = seat_view(table, W)
    assert not set(east_tiles) & {t["id"] for t in view["rack"] + view["received"]}
    assert redact(events[0], W)["payload"] == {"count": 3, "blind": 0}


@pytest.mark.rule("FW-04", "PASS-11")
def test_a_ding_dong_gift_is_secret_until_it_moves() -> None:
    table = fw_table()
    all_exchanges(table)
    run(table, request())
    place_all(table)
    command = gifts(table, E)
    events = run(table, command)
    for seat in (S, W, N):
        assert redact(events[0], seat)["payload"] == {"count": 3}
        view = seat_view(table, seat)
        assert not {g.tile for g in command.gifts} & {t["id"] for t in view["rack"]}

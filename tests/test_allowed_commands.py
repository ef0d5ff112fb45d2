"""``allowed_commands`` is exact: what it lists can be given now, what it omits cannot.

A client greys its buttons from this list, so a listed command must have some valid
argument and an unlisted one must have none. The test does not trust the table's own
witness: for every seat, at every position of random games, it tries a family of
arguments of its own (every count of tiles from the hand with every blind count, both
vote choices, every offer, every dead-hand target) on a scratch copy of the table.
"""

from __future__ import annotations

import random

import pytest
from budget import examples
from engine_helpers import (
    challenge,
    change,
    confirm,
    declare,
    offer,
    place,
    vote,
    withdraw,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from charleston_fsm.engine import errors
from charleston_fsm.engine.bots import Bot
from charleston_fsm.engine.commands import (
    COMMAND_MODELS,
    CloseDingDong,
    Command,
    DeclareReady,
    Gift,
    GiveDingDong,
    JudgeDeclaration,
    RequestDingDong,
)
from charleston_fsm.engine.seats import SEATS, Seat
from charleston_fsm.engine.table import Table
from charleston_fsm.engine.tiles import Deal, is_joker
from charleston_fsm.engine.views import seat_view

PROFILES: list[tuple[str, dict | None]] = [
    ("nmjl", None),
    ("house", None),
    ("nmjl", {"courtesy_mode": "asymmetric", "require_placing": False}),
    ("nmjl", {"second_charleston_order": "across-left-right"}),
    ("house", {"courtesy_mode": "agreed_min", "late_objection": True}),
    ("four_winds", None),
    ("four_winds", {"charleston": "off", "ding_dong_max": 1, "require_placing": False}),
]


def candidates(table: Table, seat: Seat, rng: random.Random) -> dict[str, list[Command]]:
    """Arguments to try for each command: if any is valid, this family has one."""
    hand = table.hand(seat)
    plain = [t for t in hand if not is_joker(t)]
    jokers = [t for t in hand if is_joker(t)]
    picks: list[tuple[list[int], int]] = []
    for count in range(4):
        for blind in range(4 - count):
            picks.append((plain[:count], blind))
            picks.append((sorted(rng.sample(plain, min(count, len(plain)))), blind))
    if jokers:
        picks.append(([jokers[0], *plain[:2]], 0))
    return {
        "confirm_pass": [confirm(seat, tiles, blind) for tiles, blind in picks],
        "change_pass": [change(seat, tiles, blind) for tiles, blind in picks],
        "withdraw_pass": [withdraw(seat)],
        "place_tiles": [place(seat)],
        "vote": [vote(seat, "continue"), vote(seat, "stop")],
        "offer_courtesy": [offer(seat, n) for n in range(4)],
        "declare_mah_jongg": [declare(seat)],
        "challenge_dead_hand": [challenge(seat, other) for other in SEATS if other is not seat],
        "request_ding_dong": [RequestDingDong(seat=seat)],
        "give_ding_dong": [
            GiveDingDong(
                seat=seat,
                gifts=[Gift(tile=t, to=to) for t, to in zip(plain[:3], receivers, strict=False)],
            )
            for receivers in ([s for s in SEATS if s is not seat], [*SEATS[:3]])
        ],
        "declare_ready": [DeclareReady(seat=seat)],
        "close_ding_dong": [CloseDingDong(seat=seat)],
        "judge_declaration": [
            JudgeDeclaration(seat=seat, verdict=v, text="t") for v in ("valid", "invalid")
        ],
    }


def accepted(scratch: Table, snapshot: dict, command: Command) -> bool:
    scratch.load(snapshot)
    try:
        scratch.execute(command)
    except errors.CharlestonError:
        return False
    return True


def check_exact(table: Table, scratch: Table, rng: random.Random) -> None:
    snapshot = table.snapshot()
    for seat in SEATS:
        listed = table.allowed_commands(seat)
        assert listed == seat_view(table, seat)["allowed_commands"]
        tries = candidates(table, seat, rng)
        assert set(tries) == set(COMMAND_MODELS)  # every command is probed
        for name, commands in tries.items():
            valid = [c for c in commands if accepted(scratch, snapshot, c)]
            if name in listed:
                assert valid, f"{seat.value}: {name} is listed but no argument is accepted"
            else:
                assert not valid, f"{seat.value}: {name} is not listed but {valid[0]!r} works"


@pytest.mark.rule("SVC-01")
@settings(max_examples=examples(5, 60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    profile=st.integers(0, len(PROFILES) - 1),
    seed=st.integers(0, 100_000),
    late=st.sampled_from([0.0, 0.3]),
)
def test_allowed_commands_are_exact_over_random_games(profile: int, seed: int, late: float) -> None:
    ruleset, options = PROFILES[profile]
    table = Table(Deal.shuffled(seed), ruleset, options)
    scratch = Table(Deal.shuffled(seed), ruleset, options)
    rng = random.Random(seed)
    bots = {
        s: Bot(
            seat=s,
            rng=random.Random(f"{seed}:{s.value}"),
            blind_rate=0.5,
            continue_rate=0.8,
            earthly_rate=0.5,
            late_objection_rate=late,
        )
        for s in SEATS
    }
    check_exact(table, scratch, rng)
    for _ in range(400):
        seats = list(SEATS)
        rng.shuffle(seats)
        command = next(
            (c for s in seats if (c := bots[s].decide(seat_view(table, s))) is not None), None
        )
        if command is None:
            break
        table.execute(command)
        check_exact(table, scratch, rng)
    assert table.finished


@pytest.mark.rule("SVC-01", "PASS-05", "PASS-08")
def test_allowed_commands_at_known_positions() -> None:
    """Spot checks a reader can follow: what a client greys out, step by step."""
    table = Table(Deal.shuffled(7), "nmjl")
    east, south = Seat.EAST, Seat.SOUTH
    assert table.allowed_commands(east) == ["confirm_pass", "declare_mah_jongg"]
    assert table.allowed_commands(south) == ["confirm_pass"]
    table.execute(confirm(south, [t for t in table.hand(south) if not is_joker(t)][:3]))
    # once confirmed: change or withdraw, never a second confirm; the Heavenly window closed
    assert table.allowed_commands(south) == ["change_pass", "withdraw_pass"]
    assert table.allowed_commands(east) == ["confirm_pass"]
    for seat in (east, Seat.WEST, Seat.NORTH):
        table.execute(confirm(seat, [t for t in table.hand(seat) if not is_joker(t)][:3]))
    # tiles arrived: they must be placed before the next pass can be confirmed
    assert table.allowed_commands(south) == ["place_tiles"]
    table.execute(place(south))
    assert table.allowed_commands(south) == ["confirm_pass"]

"""The choices the rule book leaves a seat, taken: the converse of :mod:`.malformed`.

``allowed_commands`` is compared with what the chart took (:mod:`.graph`), but both come
from the engine: a validator that refuses a choice the rules allow also leaves it out of
the list, and the check would agree with it. Here, in each configuration, what the book
says a seat may still do is asked of what the explorer's moves found taken:

======================================================  ===========
a seat holding a confirmed choice may withdraw it       PASS-05
a blind split of a count taken from the hand is taken   NMJL-07
a free courtesy count, 0 to 3 tiles, is taken           PASS-02
a courtesy offer of 0 to 3 tiles is taken               NMJL-13
======================================================  ===========

The withdrawal is tried of every seat holding a choice (in either order of exploration,
:func:`.abstraction.moves`); the splits of a count between the hand and the blind are
tried where the step has a blind pass, and every count of a free courtesy pass
(:func:`.abstraction.selection_counts`), and every offer of 0 to 3 where a pair agrees
its count. A split, a count or an offer is judged only where another
choice of the same seat was taken in the same configuration: the seat, its step and the
placing requirement are then the rule book's own, and only what the rule leaves free
differs (0 to 3 blind where the book allows a blind pass, NMJL-07; 0 to 3 tiles where
the courtesy count is free, PASS-02).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..engine.commands import Command
from ..engine.seats import SEATS, Seat
from ..engine.table import Table
from .properties import Finding
from .rule_book import COURTESY_MOST, Book
from .transfer_rules import seat_state

#: the property these findings belong to (the rule book's who-may-choose-what)
PROPERTY = "rule_choice"


def check(
    table: Table,
    tried: Sequence[tuple[Command, bool]],
    accepted: Mapping[Seat | None, set[str]],
    configuration: Sequence[str],
    book: Book,
) -> list[Finding]:
    """The findings of one configuration: ``tried``, each explored move with whether it
    was taken; ``accepted``, the command names taken of each seat; ``table`` loaded with
    the configuration."""
    return [
        *withdrawable(table, accepted),
        *blind_splits(tried, configuration, book),
        *courtesy_counts(tried, configuration, book),
        *courtesy_offers(tried),
    ]


def withdrawable(table: Table, accepted: Mapping[Seat | None, set[str]]) -> list[Finding]:
    """A confirmed choice may be withdrawn until its pass resolves (PASS-05)."""
    return [
        (
            PROPERTY,
            ("PASS-05",),
            f"{seat.label} confirmed a choice its pass has not resolved, and withdrawing it "
            "was refused",
        )
        for seat in SEATS
        if seat in table.selections and "withdraw_pass" not in accepted[seat]
    ]


def blind_splits(
    tried: Iterable[tuple[Command, bool]], configuration: Sequence[str], book: Book
) -> list[Finding]:
    """Where the book allows a blind pass, any of the count may go blind (NMJL-07): of a
    seat one of whose confirmations was taken here, every explored split of that count."""
    taken: set[tuple[Seat | None, int]] = set()
    refused: list[Any] = []
    for command, was_taken in tried:
        if command.type != "confirm_pass":
            continue
        total = len(command.tiles) + command.blind
        if was_taken:
            taken.add((command.seat, total))
        elif command.blind:
            refused.append(command)
    findings: list[Finding] = []
    for command in refused:
        seat = command.seat
        if (seat, len(command.tiles) + command.blind) not in taken:
            continue
        state = seat_state(configuration, seat.value, book)
        if book.blind_rule(state) is None and 0 < command.blind <= 3:
            findings.append(
                (
                    PROPERTY,
                    ("NMJL-07",),
                    f"{seat.label}: {len(command.tiles)} from the hand and {command.blind} "
                    f"blind was refused at {state}, where the rule book allows a blind pass "
                    "and the same count was taken",
                )
            )
    return findings


def courtesy_counts(
    tried: Iterable[tuple[Command, bool]], configuration: Sequence[str], book: Book
) -> list[Finding]:
    """Where the courtesy count is free (no agreed count: PASS-02), any of 0 to 3 tiles:
    of a seat one of whose confirmations was taken here, every explored count."""
    if book.options.get("courtesy_mode", "agreed_min") == "agreed_min":
        return []  # an agreed count (NMJL-13), or no courtesy pass (Four Winds)
    confirmations = [(c, t) for c, t in tried if c.type == "confirm_pass"]
    seats = {command.seat for command, was_taken in confirmations if was_taken}
    findings: list[Finding] = []
    for command, was_taken in confirmations:
        if was_taken or command.seat not in seats:
            continue
        state = seat_state(configuration, command.seat.value, book)
        if not (state or "").startswith("PAIR_"):
            continue
        if not command.blind and 0 <= len(command.tiles) <= COURTESY_MOST:
            findings.append(
                (
                    PROPERTY,
                    ("PASS-02",),
                    f"{command.seat.label}: a courtesy pass of {len(command.tiles)} tile(s) "
                    f"was refused at {state}, where the rule book lets the count be 0 to "
                    f"{COURTESY_MOST} and another was taken",
                )
            )
    return findings


def courtesy_offers(tried: Iterable[tuple[Command, bool]]) -> list[Finding]:
    """Where a pair agrees its count, each of its players may offer 0 to 3 tiles (NMJL-13):
    of a seat one of whose offers was taken here, every explored offer."""
    offers = [(c, t) for c, t in tried if c.type == "offer_courtesy"]
    seats = {command.seat for command, was_taken in offers if was_taken}
    return [
        (
            PROPERTY,
            ("NMJL-13",),
            f"{command.seat.label}: an offer of {command.count} courtesy tile(s) was refused, "
            f"where the rule book lets an offer be 0 to {COURTESY_MOST} and another was taken",
        )
        for command, was_taken in offers
        if not was_taken and command.seat in seats and 0 <= command.count <= COURTESY_MOST
    ]

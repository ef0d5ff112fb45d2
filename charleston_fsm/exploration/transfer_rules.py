"""``rule_transfer``: who gives what to whom, and what a resolved step records of itself.

Part of the rule book's properties (:mod:`.rule_properties`, whose docstring lists them
all): every handover's giver, receiver and count (SEAT-02, PASS-01, PASS-07, NMJL-07,
NMJL-12, NMJL-13, HOUSE-03, FW-01, FW-04), and what the resolution records (PASS-07,
NMJL-09): whether anything moved or went blind, and every tile's route, the one the
book's IOU chain (:mod:`.blind_chain`) gives it. Kept apart because it is the largest
property; the facts every property reads of a command (whose choice, which step) live
here too, so the two modules depend one way.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from functools import partial
from typing import Any

from ..engine.events import Event
from ..engine.seats import SEATS
from ..engine.table import Table
from . import blind_chain
from .properties import Finding
from .rule_book import COURTESY_MOST, STANDARD_COUNT, Book

PASSING = frozenset({"confirm_pass", "change_pass", "give_ding_dong"})


def value(seat: Any) -> str | None:
    value: str | None = getattr(seat, "value", seat)
    return value


def chosen_after(before: Mapping[str, Any], command: Mapping[str, Any]) -> dict[str, Any]:
    """The choices of the step once ``command`` is taken (confirm, change, withdraw)."""
    chosen = dict(before["selections"])
    seat, name = command.get("seat"), command["type"]
    if name in ("confirm_pass", "change_pass"):
        chosen[seat] = {"tiles": command["tiles"], "blind": command.get("blind", 0)}
    elif name == "give_ding_dong":
        chosen[seat] = {"tiles": [g["tile"] for g in command["gifts"]], "blind": 0}
    elif name == "withdraw_pass":
        chosen.pop(seat, None)
    return chosen


def seat_state(config: Sequence[str], seat: str | None, book: Book) -> str | None:
    """The passing state in which ``seat`` chooses now, by the rule book (PASS-10)."""
    for state in config:
        if seat in book.participants(state) and (
            book.direction(state) or not book.standard or state.startswith("PAIR_")
        ):
            return state
    return None


# -- who gives what to whom ------------------------------------------------------------------


def told(after: Table, book: Book) -> Iterator[Finding]:
    """Whom each seat is told it gives to and receives from, by the rule book (SEAT-02).

    A seat's view names its step's receiver (``to``) and giver (``from``), read from the
    step's ``target`` and ``source``; a transfer only ever checks the first, so a giver
    named wrong on every screen would keep every tile where it belongs. The book's giver
    to a seat is the player of the seat's passing state whose receiver it is.
    """
    for seat in SEATS:
        step = after.requirement(seat)
        state = seat_state(after.configuration, seat.value, book)
        if step is None or state is None:
            continue
        giver = next(
            (g for g in book.participants(state) if book.target(state, g) == seat.value), None
        )
        to, source = value(step.target(seat)), value(step.source(seat))
        if (to, source) != (book.target(state, seat.value), giver):
            yield (
                "rule_transfer",
                _direction_rules(state, book),
                f"in {state} {seat.value} is told it gives to {to} and receives from "
                f"{source}; the rule book says to {book.target(state, seat.value)}, "
                f"from {giver}",
            )


def transfers(
    before: Mapping[str, Any],
    command: Mapping[str, Any],
    events: Sequence[Event],
    book: Book,
) -> Iterator[Finding]:
    handovers: dict[str, list[Event]] = {}
    for event in events:
        if event.type == "tiles_transferred":
            handovers.setdefault(event.payload["step"], []).append(event)
    chosen = chosen_after(before, command)
    if not handovers:
        yield from _nothing_handed_over(before, command, chosen, book)
        return
    for state, moved in handovers.items():
        if state == "DING_DONG":
            yield from _ding_dong(moved)
            continue
        for event in moved:
            yield from _handover(state, event, chosen, before, book)
        givers = {value(e.seat) for e in moved}
        missing = [s for s in book.participants(state) if s not in givers]
        if missing:
            yield (
                "rule_transfer",
                ("PASS-06", "PASS-07"),
                f"{state} resolved but {', '.join(missing)} handed over nothing",
            )


def resolutions(
    before: Mapping[str, Any],
    command: Mapping[str, Any],
    events: Sequence[Event],
    book: Book,
) -> Iterator[Finding]:
    """What a resolved step records of itself (``pass_resolved``): that tiles moved, and
    that some went blind, exactly when its handovers say so (PASS-07: every transfer is
    recorded; players and spectators read "nothing moved" from it), and every tile's
    route, the one the rule book's chain gives it from the players' choices (NMJL-09:
    who starts, the way round, which waiting tiles each forwards)."""
    for event in events:
        if event.type != "pass_resolved":
            continue
        state, p = event.payload["step"], event.payload
        handed = [
            e.payload
            for e in events
            if e.type == "tiles_transferred" and e.payload["step"] == state
        ]
        moved = any(h["from_hand"] or h["forwarded"] for h in handed)
        blind = any(h["forwarded"] for h in handed)
        if p["moved"] != moved or p["blind"] != blind:
            yield (
                "rule_transfer",
                ("PASS-07",),
                f"{state} resolved recording moved={p['moved']} and blind={p['blind']}; its "
                f"handovers moved {'tiles' if moved else 'nothing'}, "
                f"{'some' if blind else 'none'} blind",
            )
        players = book.participants(state)
        chosen = chosen_after(before, command)
        if not players or book.target(state, players[0]) is None:
            continue  # a Ding Dong: each tile names its receiver (_ding_dong)
        if not all(s in chosen for s in players):
            continue  # not resolved from choices: rule_flow and rule_transfer say so
        expected = blind_chain.routes(players, partial(book.target, state), chosen)
        recorded = {int(t): list(r) for t, r in p["routes"].items()}
        wrong = sorted(
            t for t in set(expected) | set(recorded) if expected.get(t) != recorded.get(t)
        )
        if wrong:
            tile = wrong[0]
            yield (
                "rule_transfer",
                ("PASS-07", "NMJL-09") if book.standard else ("PASS-07", "FW-01"),
                f"in {state} tile {tile} went {recorded.get(tile)}; the rule book's chain "
                f"sends it {expected.get(tile)} ({len(wrong)} tile(s) routed otherwise)",
            )


def _nothing_handed_over(
    before: Mapping[str, Any], command: Mapping[str, Any], chosen: Mapping[str, Any], book: Book
) -> Iterator[Finding]:
    """A command that completed a step's choices, some with tiles from a hand, must hand
    them over (PASS-07; FW-01, FW-04): a resolution that moves nothing is not one."""
    if command["type"] not in PASSING:
        return
    state = seat_state(before["configuration"], command.get("seat"), book)
    if state is None or state.startswith("PAIR_"):
        return  # the courtesy pairs: rule_courtesy and the pairs' own transfers
    players = book.participants(state)
    if all(s in chosen for s in players) and any(chosen[s]["tiles"] for s in players):
        rules = ("PASS-07",) if book.standard else ("FW-01", "FW-04")
        yield ("rule_transfer", rules, f"{state} resolved but no tile was handed over")


def _handover(
    state: str,
    event: Event,
    chosen: Mapping[str, Any],
    before: Mapping[str, Any],
    book: Book,
) -> Iterator[Finding]:
    giver, p = value(event.seat), event.payload
    got, count = p["receiver"], len(p["from_hand"]) + len(p["forwarded"])
    expected_to = book.target(state, giver)  # type: ignore[arg-type]
    if giver not in book.participants(state):
        yield ("rule_transfer", ("PASS-10",), f"{giver} gave in {state}, not one of its players")
        return
    if got != expected_to:
        yield (
            "rule_transfer",
            _direction_rules(state, book),
            f"in {state} {giver} gave to {got}; the rule book says to {expected_to}",
        )
    if state.startswith("PAIR_") and count > COURTESY_MOST:
        yield ("rule_transfer", ("PASS-02",), f"in {state} {giver} gave {count} tiles, over 3")
    due = _due(state, giver, chosen, before, book)
    if due is not None and count != due[0]:
        yield (
            "rule_transfer",
            due[1],
            f"in {state} {giver} gave {count} tile(s); the rule book says {due[0]}",
        )
    mine = chosen.get(giver)
    if mine is not None and (
        sorted(p["from_hand"]) != sorted(mine["tiles"]) or len(p["forwarded"]) != mine["blind"]
    ):
        yield (
            "rule_transfer",
            ("PASS-07", "NMJL-07"),
            f"in {state} {giver} handed over {len(p['from_hand'])} from the hand and "
            f"{len(p['forwarded'])} blind, not the {len(mine['tiles'])} and {mine['blind']} "
            "it chose",
        )


def _direction_rules(state: str, book: Book) -> tuple[str, ...]:
    if not book.standard:
        return ("FW-01",)
    if state.startswith("PAIR_"):
        return ("NMJL-12",)
    if state.startswith("CHARLESTON_P1"):
        return ("SEAT-02", "NMJL-01")
    return ("SEAT-02", "NMJL-04" if book.second_first == "CHARLESTON_P2_L" else "HOUSE-01")


def _due(
    state: str,
    giver: str,
    chosen: Mapping[str, Any],
    before: Mapping[str, Any],
    book: Book,
) -> tuple[int, tuple[str, ...]] | None:
    """How many tiles ``giver`` must hand over in ``state``, by the rule book."""
    if not state.startswith("PAIR_"):
        return STANDARD_COUNT, ("PASS-01", "FW-01") if not book.standard else ("PASS-01",)
    if book.options["courtesy_mode"] == "agreed_min":
        pair = book.participants(state)
        offers = [before["offers"].get(s) for s in pair]
        if None in offers:
            return None
        return min(offers), ("NMJL-13",)
    mine = chosen.get(giver)
    return (len(mine["tiles"]) if mine else None) or 0, ("HOUSE-03", "PASS-02")


def _ding_dong(moved: Sequence[Event]) -> Iterator[Finding]:
    """FW-04: every player gives one tile to each of the three others."""
    by_giver: dict[str, list[tuple[str, int]]] = {}
    for event in moved:
        p = event.payload
        by_giver.setdefault(value(event.seat), []).append(  # type: ignore[arg-type]
            (p["receiver"], len(p["from_hand"]) + len(p["forwarded"]))
        )
    for giver in (s.value for s in SEATS):
        gifts = sorted(by_giver.get(giver, []))
        others = sorted((s.value, 1) for s in SEATS if s.value != giver)
        if gifts != others:
            yield (
                "rule_transfer",
                ("FW-04",),
                f"in the Ding Dong {giver} gave {gifts}; the rule book says one tile to each "
                "of the three others",
            )

"""The rule book as properties of every explored transition, each tagged with its rule id.

:mod:`.properties` checks invariants (tiles conserved, jokers in place, no tile id seen
where it may not be). An engine can keep every invariant and still play the wrong game:
a First Right that goes Left conserves every tile. Here each accepted command is judged
against what the rule book says *that* command must do, from the table as it stood
before it (its snapshot), the command, the events it caused and the table after:

- ``rule_flow``: where the table goes next (NMJL-01 to NMJL-05, NMJL-10, HOUSE-01,
  FW-01, FW-07): the next pass of the schedule once everyone has chosen, the Courtesy
  Pass at the first stop vote, the Second Charleston's first pass after four continues,
  a late objection only in that first pass and only where the ruleset takes one;
- ``rule_transfer``: every handover's giver, receiver and count (SEAT-02, PASS-01,
  PASS-07, NMJL-07, NMJL-12, NMJL-13, HOUSE-03, FW-01, FW-04): the receiver the pass's
  direction or pair names, 3 tiles a standard pass or exchange, the agreed smaller
  count of a courtesy pair, exactly the tiles the giver chose; and what the resolution
  records (PASS-07, NMJL-09): whether anything moved or went blind, and every tile's
  route, the one the book's IOU chain (:mod:`.blind_chain`) gives it; and whom each
  seat is told it gives to and receives from (SEAT-02);
- ``rule_choice``: who may choose what (PASS-03, PASS-04, PASS-05, PASS-08, PASS-10,
  NMJL-07, HOUSE-02, FW-02, FW-04): no joker and no tile outside the chooser's hand is
  ever taken, no blind pass but on the last pass of a Charleston that allows one,
  received tiles are placed first where placing is required, only the step's players
  act, the first-named player of an exchange gives first, and a choice is kept exactly
  as it was made until its step resolves;
- ``rule_declare``: who may declare or ask, and when (NMJL-14 to NMJL-17, FW-05 to
  FW-08); ``rule_courtesy``: offers and the agreed count (NMJL-13, HOUSE-03);
- ``rule_ending``: how a finished game tells its players it ended (NMJL-02, NMJL-10,
  NMJL-14, NMJL-21): the recorded reason and the summary's code, seats and words agree
  with the votes and the declaration the commands recorded, and it says who judged the
  declaration and how (NMJL-19);
- ``rule_secrecy``: no *face* of a tile a seat never held in what it is sent, none at
  all to a spectator (PASS-11, SVC-16): checked by :func:`.properties.secrecy_of_events`
  beside the ids, on the same redacted events.

Every expectation comes from :mod:`.rule_book` (the book's schedule and option values,
restated from its statements) and from the facts the commands recorded (votes, offers,
choices), never from the engine's step table, seat arithmetic or guards: an engine wrong
in those places disagrees with the book and is caught.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..engine.commands import ACCEPTED_AS
from ..engine.events import Event
from ..engine.seats import SEATS, Seat
from ..engine.table import Table
from ..engine.tiles import is_joker
from . import ending_rules, transfer_rules
from .properties import Finding
from .rule_book import EAST_HAND, Book
from .transfer_rules import PASSING, chosen_after, seat_state, value

#: the properties this module checks on every accepted command
NAMES = (
    "rule_flow",
    "rule_transfer",
    "rule_choice",
    "rule_declare",
    "rule_courtesy",
    "rule_ending",
    "rule_secrecy",
)


def stage(configuration: Sequence[str]) -> str:
    """The top-level state of a configuration (document order puts it first)."""
    return configuration[0]


def at_deal(table: Table, book: Book) -> list[Finding]:
    """Where a new deal stands (NMJL-01; FW-01, FW-07: the round decides what is played)."""
    expected, found = book.first_stage(), stage(table.configuration)
    if found == expected:
        return []
    rules = ("FW-07",) if not book.standard else ("NMJL-01",)
    return [("rule_flow", rules, f"the deal starts at {found}; the rule book says {expected}")]


def transition(
    before: Mapping[str, Any],
    command: Mapping[str, Any],
    events: Sequence[Event],
    after: Table,
    book: Book,
) -> list[Finding]:
    """Every rule property of one accepted command (the module's docstring)."""
    return [
        *_flow(before, command, after, book),
        *transfer_rules.transfers(before, command, events, book),
        *transfer_rules.told(after, book),
        *transfer_rules.resolutions(before, command, events, book),
        *_choice(before, command, book),
        *_kept_choice(command, after),
        *_declare(before, command, after, book),
        *_vote_recorded(before, command, events),
        *_courtesy(before, command, events, book),
        *ending_rules.ending(events, after, book),
    ]


# -- where the table goes -------------------------------------------------------------------


def _flow(
    before: Mapping[str, Any], command: Mapping[str, Any], after: Table, book: Book
) -> Iterator[Finding]:
    was, now = stage(before["configuration"]), stage(after.configuration)
    expected = _expected_stage(was, before, command, book)
    if expected is None or now == expected[0]:
        return
    target, rules, why = expected
    yield (
        "rule_flow",
        rules,
        f"{command['type']} by {command.get('seat', 'the director')} at {was} led to {now}; "
        f"the rule book says {target} ({why})",
    )


def _expected_stage(
    was: str, before: Mapping[str, Any], command: Mapping[str, Any], book: Book
) -> tuple[str, tuple[str, ...], str] | None:
    """Where the rule book says the table is after ``command`` (``None``: not judged)."""
    name = command["type"]
    if book.standard:
        return _standard_stage(was, before, command, book)
    if name in ("confirm_pass", "change_pass", "give_ding_dong", "withdraw_pass"):
        chosen = chosen_after(before, command)
        if not all(s in chosen for s in book.participants(was)):
            return was, ("PASS-06",), "not every player of the step has chosen"
        if was == "DING_DONG":
            return "DING_DONG_OPEN", ("FW-04", "FW-08"), "the Ding Dong resolved"
        following = book.next_pass(was)
        if following is not None:
            return following, ("FW-01",), "the next exchange of the program's order"
        return book.after_last_pass(True), ("FW-07",), "the last exchange, then this round's"
    if name == "request_ding_dong":
        return "DING_DONG", ("FW-04",), "East's request starts a Ding Dong"
    if name in ("declare_ready", "close_ding_dong"):
        return "CHARLESTON_DONE", ("FW-06", "FW-08"), "Ready or a close ends the window"
    return was, ("SVC-01",), f"{name} moves no step"


def _standard_stage(
    was: str, before: Mapping[str, Any], command: Mapping[str, Any], book: Book
) -> tuple[str, tuple[str, ...], str] | None:
    name, order = command["type"], book.options["second_charleston_order"]
    second_rule = "NMJL-04" if order == "left-across-right" else "HOUSE-01"
    if book.direction(was) is not None:
        if name == "vote":
            return "COURTESY_PASS", ("NMJL-05",), "a late objection stops it"  # judged below
        if name == "declare_mah_jongg":
            return "CHARLESTON_DONE", ("NMJL-14",), "a Heavenly Hand ends it at once"
        if name not in ("confirm_pass", "change_pass", "withdraw_pass"):
            return was, ("SVC-01",), f"{name} moves no step"
        chosen = chosen_after(before, command)
        if not all(s in chosen for s in book.participants(was)):
            return was, ("PASS-06",), "not every player has chosen"
        if was == "CHARLESTON_P1_L":
            return "CHARLESTON_DECIDE_STOP", ("NMJL-01", "NMJL-02"), "the vote follows"
        following = book.next_pass(was)
        if following is not None:
            rules = ("NMJL-01",) if following.startswith("CHARLESTON_P1") else (second_rule,)
            return following, rules, "the next pass of the schedule"
        from_hand = any(c["tiles"] for c in chosen.values())
        return (
            book.after_last_pass(from_hand),
            ("NMJL-10", "NMJL-12"),
            "the Second Right leads to the Courtesy Pass, or ends it with no tile from a hand",
        )
    if was == "CHARLESTON_DECIDE_STOP" and name == "vote":
        votes = {**before["votes"], command["seat"]: command["choice"]}
        if "stop" in votes.values():
            return "COURTESY_PASS", ("NMJL-02",), "a single stop skips the Second Charleston"
        if len(votes) == len(SEATS):
            return book.second_first, ("NMJL-03", second_rule), "four continues"
        return was, ("NMJL-02", "NMJL-03"), "votes are still awaited"
    if was == "COURTESY_PASS":
        return None  # the pairs' own flow: rule_courtesy and rule_transfer
    if was == "CHARLESTON_DONE" and name == "judge_declaration":
        declared = before["declaration"] or {}
        reopen = declared.get("kind") == "heavenly" and command.get("verdict") == "invalid"
        return ("CHARLESTON_P1_R" if reopen else was), ("NMJL-21",), "the director's verdict"
    return was, ("SVC-01",), f"{name} moves no step"


# -- who may choose what ---------------------------------------------------------------------


def _choice(before: Mapping[str, Any], command: Mapping[str, Any], book: Book) -> Iterator[Finding]:
    name, seat = command["type"], command.get("seat")
    if name not in PASSING and name != "withdraw_pass":
        return
    config = before["configuration"]
    state = seat_state(config, seat, book)
    if state is None:
        yield ("rule_choice", ("PASS-10",), f"{name} by {seat} taken at {stage(config)}")
        return
    if name == "withdraw_pass":
        return
    tiles = command["tiles"] if name != "give_ding_dong" else [g["tile"] for g in command["gifts"]]
    held = set(before["racks"][seat]) | set(before["received"][seat])
    jokers = [t for t in tiles if is_joker(t)]
    if jokers:
        yield ("rule_choice", ("PASS-03",), f"{seat}'s {name} naming jokers {jokers} was taken")
    foreign = [t for t in tiles if t not in held]
    if foreign:
        yield (
            "rule_choice",
            ("PASS-04",),
            f"{seat}'s {name} naming tiles {foreign} it does not hold was taken",
        )
    blind = command.get("blind", 0) if name != "give_ding_dong" else 0
    refused_by = book.blind_rule(state)
    if blind and refused_by is not None:
        yield (
            "rule_choice",
            refused_by,
            f"{seat}'s {name} forwarding {blind} tile(s) blind was taken at {state}",
        )
    if book.options["require_placing"] and before["received"][seat]:
        yield (
            "rule_choice",
            ("PASS-08",),
            f"{seat}'s {name} was taken with {len(before['received'][seat])} received tile(s) "
            "not placed",
        )
    if not book.standard and state != "DING_DONG":
        first, second = book.participants(state)
        if seat == second and first not in before["selections"]:
            yield (
                "rule_choice",
                ("FW-02",),
                f"in {state} {second} gave before {first}, who gives first",
            )


def _kept_choice(command: Mapping[str, Any], after: Table) -> Iterator[Finding]:
    """A confirmed choice is locked as it was made (PASS-05): until its step resolves the
    table keeps, and shows the seat, exactly the tiles, blind count and receivers the
    command named; a Ding Dong's gifts have no blind count (FW-04: one tile to each)."""
    name, seat = command["type"], command.get("seat")
    if name not in PASSING or seat is None:
        return
    kept = after.selections.get(Seat(seat))
    if kept is None:
        return  # the step resolved: rule_transfer judges what moved
    if name == "give_ding_dong":
        gifts = command["gifts"]
        made = ([g["tile"] for g in gifts], 0, [value(g["to"]) for g in gifts])
    else:
        made = (list(command["tiles"]), command.get("blind", 0), [])
    held = (list(kept.tiles), kept.blind, [t.value for t in kept.targets])
    if held != made:
        yield (
            "rule_choice",
            ("PASS-05", "FW-04") if name == "give_ding_dong" else ("PASS-05",),
            f"{seat}'s {name} of {made[0]} ({made[1]} blind) is kept as {held[0]} "
            f"({held[1]} blind)" + (f", to {held[2]} not {made[2]}" if held[2] != made[2] else ""),
        )


# -- declarations and requests ---------------------------------------------------------------


def _declare(
    before: Mapping[str, Any], command: Mapping[str, Any], after: Table, book: Book
) -> Iterator[Finding]:
    name, seat, was = command["type"], command.get("seat"), stage(before["configuration"])
    if name == "declare_mah_jongg":
        if seat != "east":
            yield ("rule_declare", ("NMJL-17",), f"{seat} declared Mah Jongg; only East may")
        if was == "CHARLESTON_P1_R":
            if before["selections"] or before["passes_resolved"] or before["declaration"]:
                yield (
                    "rule_declare",
                    ("NMJL-14", "NMJL-21"),
                    "a Heavenly Hand was taken after a choice was confirmed or a hand declared",
                )
        elif was == "CHARLESTON_DONE":
            held = len(before["racks"]["east"]) + len(before["received"]["east"])
            if held != EAST_HAND:
                yield ("rule_declare", ("NMJL-15",), f"an Earthly Hand holding {held} tiles")
        else:
            yield ("rule_declare", ("NMJL-16",), f"Mah Jongg was declared at {was}")
    elif name == "vote" and was != "CHARLESTON_DECIDE_STOP":
        if not book.options.get("late_objection"):
            yield ("rule_declare", ("HOUSE-04",), f"a vote was taken at {was}: none is late")
        elif was != book.second_first:
            yield (
                "rule_declare",
                ("NMJL-06",),
                f"a late objection was taken at {was}, after its window ({book.second_first} only)",
            )
        elif command["choice"] != "stop":
            yield ("rule_declare", ("NMJL-05",), "a late vote other than stop was taken")
    elif name == "vote" and command["seat"] in before["votes"]:
        yield ("rule_declare", ("NMJL-02",), f"{command['seat']} voted twice")
    elif name == "request_ding_dong":
        yield from _ding_dong_request(before, seat, book)


def _vote_recorded(
    before: Mapping[str, Any], command: Mapping[str, Any], events: Sequence[Event]
) -> Iterator[Finding]:
    """A vote's row says whether it was a late objection (NMJL-05): what the record, the
    players' history and the audit tell of it, and the choices it dropped."""
    if command["type"] != "vote":
        return
    late = stage(before["configuration"]) != "CHARLESTON_DECIDE_STOP"
    for event in events:
        if event.type == ACCEPTED_AS["vote"] and bool(event.payload.get("late")) != late:
            yield (
                "rule_declare",
                ("NMJL-05",),
                f"{command['seat']}'s vote at {stage(before['configuration'])} was "
                f"recorded {'not ' if late else ''}late",
            )


def _ding_dong_request(
    before: Mapping[str, Any], seat: str | None, book: Book
) -> Iterator[Finding]:
    if seat != "east":
        yield ("rule_declare", ("FW-06",), f"{seat} asked for a Ding Dong; only East may")
    if not book.ding_dong_this_round:
        yield ("rule_declare", ("FW-07",), "a Ding Dong was asked on a round without one")
    if before["ding_dongs"] >= book.options["ding_dong_max"]:
        yield (
            "rule_declare",
            ("FW-05",),
            f"Ding Dong {before['ding_dongs'] + 1} was taken; the most is "
            f"{book.options['ding_dong_max']}",
        )
    if before["ready"] or before["closed"]:
        yield ("rule_declare", ("FW-06", "FW-08"), "a Ding Dong was asked after Ready or a close")


# -- the courtesy pairs ----------------------------------------------------------------------


def _courtesy(
    before: Mapping[str, Any],
    command: Mapping[str, Any],
    events: Sequence[Event],
    book: Book,
) -> Iterator[Finding]:
    if not book.standard:
        return
    if command["type"] == "offer_courtesy" and book.options["courtesy_mode"] != "agreed_min":
        yield ("rule_courtesy", ("HOUSE-03",), "an offer was taken where counts are free")
    offers = dict(before["offers"])
    if command["type"] == "offer_courtesy":
        offers[command["seat"]] = command["count"]
    for event in events:
        if event.type != "courtesy_agreed":
            continue
        pair = event.payload["pair"]
        made = [offers.get(s) for s in pair]
        if None not in made and event.payload["count"] != min(made):  # type: ignore[type-var]
            yield (
                "rule_courtesy",
                ("NMJL-13",),
                f"the pair {'-'.join(pair)} offered {made} and agreed "
                f"{event.payload['count']}; the rule book says the smaller",
            )

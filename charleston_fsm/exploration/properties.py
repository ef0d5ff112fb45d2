"""The properties an exploration checks in every configuration and on every transition.

Each check returns its findings as ``(property, rules, message)`` triples; an empty list
means the property held there. A property is named by what it protects (``playable``,
``allowed_commands``, ``conservation``, ``jokers``, ``secrecy``) and, where the rule book
states it, by the rule ids it proves, so a finding reads as the rule it breaks.

They read the table only through what the service itself shows or keeps: its racks and
wall, the events a command returned, each seat's view (:func:`views.seat_view`) and the
redacted events a seat or a spectator is sent (:func:`views.redact`,
:func:`spectators.redact`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from ..engine import spectators, views
from ..engine.charts.four_winds import FourWindsTable
from ..engine.charts.standard import CourtesyMode
from ..engine.events import Event
from ..engine.seats import SEATS, Seat
from ..engine.steps import COURTESY_PAIRS
from ..engine.table import Table, tiles_held
from ..engine.tiles import FACES, TILE_COUNT, Deal, is_joker

Finding = tuple[str, tuple[str, ...], str]

#: payload keys whose value is a list of tile ids (events and views)
_TILE_LISTS = frozenset(
    {"tiles", "from_hand", "forwarded", "kept", "kept_blind", "passable", "rack", "received"}
)


def tile_ids(data: Any) -> set[int]:
    """Every tile id in JSON-ready ``data``: a ``{"id", "face"}`` tile, an int in a list of
    tiles (``tiles``, ``from_hand``, ``kept`` ...), a gift's ``tile``, a route's key."""
    found: set[int] = set()
    _collect(data, found, in_tile_list=False)
    return found


def _collect(data: Any, found: set[int], *, in_tile_list: bool) -> None:
    # called for every view and every redacted event of every command tried: scalars are
    # not descended into, and exact type tests come before isinstance
    if type(data) is dict or isinstance(data, dict):
        if "id" in data and "face" in data:
            found.add(data["id"])
        if "tile" in data and isinstance(data["tile"], int):
            found.add(data["tile"])
        for key, value in data.items():
            if key == "routes" and isinstance(value, dict):
                found.update(int(k) for k in value)
            if isinstance(value, dict | list):
                _collect(value, found, in_tile_list=key in _TILE_LISTS)
    elif type(data) is list or isinstance(data, list):
        for item in data:
            if type(item) is int or (isinstance(item, int) and not isinstance(item, bool)):
                if in_tile_list:
                    found.add(item)
            elif isinstance(item, dict | list):
                _collect(item, found, in_tile_list=False)


# -- in every configuration ------------------------------------------------------------------


def conservation(table: Table, deal: Deal) -> list[Finding]:
    """152 tiles, each once; the wall untouched; each hand the size the rules allow."""
    findings: list[Finding] = []
    held = sorted(tiles_held(table))
    if held != list(range(TILE_COUNT)):
        lost = sorted(set(range(TILE_COUNT)) - set(held))
        doubled = sorted({t for t in held if held.count(t) > 1})
        findings.append(
            (
                "conservation",
                ("PASS-07", "TILE-02"),
                f"{len(held)} tiles in play, not 152 each once (lost {lost}, twice {doubled})",
            )
        )
    if list(table.wall) != list(deal.wall):
        findings.append(("conservation", ("DEAL-01",), "the wall changed during the Charleston"))
    findings.extend(_hand_sizes(table, deal))
    return findings


def _hand_sizes(table: Table, deal: Deal) -> Iterator[Finding]:
    """Every pass gives and takes the same count, except an asymmetric courtesy pass
    (HOUSE-03): there a pair keeps its total and each moves by at most 3."""
    size = {s: len(table.hand(s)) for s in SEATS}
    dealt = {s: len(deal.hands[s]) for s in SEATS}
    asymmetric = getattr(table.options, "courtesy_mode", None) is CourtesyMode.ASYMMETRIC
    if not asymmetric:
        for s in SEATS:
            if size[s] != dealt[s]:
                yield (
                    "conservation",
                    ("NMJL-08", "PASS-07"),
                    f"{s.label} holds {size[s]} tiles, dealt {dealt[s]}, and no pass of "
                    "this ruleset changes a hand's size",
                )
        return
    for pair in COURTESY_PAIRS:
        if sum(size[s] for s in pair) != sum(dealt[s] for s in pair) or any(
            abs(size[s] - dealt[s]) > 3 for s in pair
        ):
            yield (
                "conservation",
                ("HOUSE-03", "PASS-07"),
                f"the pair {'-'.join(s.value for s in pair)} holds "
                f"{[size[s] for s in pair]} tiles, dealt {[dealt[s] for s in pair]}",
            )


def jokers_in_place(table: Table, deal: Deal) -> list[Finding]:
    """Every joker is where it was dealt: on its seat's rack, or in the wall."""
    findings: list[Finding] = []
    for seat in SEATS:
        for tile in deal.hands[seat]:
            if is_joker(tile) and tile not in table.racks[seat]:
                findings.append(
                    ("jokers", ("PASS-03", "FW-03"), f"{seat.label}'s joker {tile} moved")
                )
    return findings


def secrecy_of_views(table: Table, seat_views: Mapping[Seat, dict[str, Any]]) -> list[Finding]:
    """A seat's view shows only tiles the seat holds (its rack, its received tiles, and its
    selection, which is part of its hand)."""
    findings: list[Finding] = []
    for seat, view in seat_views.items():
        shown = tile_ids(view) - set(table.hand(seat))
        if shown:
            findings.append(
                (
                    "secrecy",
                    ("PASS-11",),
                    f"{seat.label}'s view shows tiles it does not hold: {sorted(shown)}",
                )
            )
    return findings


# -- on every transition ---------------------------------------------------------------------


def secrecy_of_events(
    events: Sequence[Event],
    before: Mapping[Seat, set[int]],
    after: Table,
) -> list[Finding]:
    """What a seat is sent of a command's events names only tiles it held before or holds
    after, by id and by face (a face only of a tile it holds or held: ``rule_secrecy``);
    a spectator is sent no tile and no face at all."""
    findings: list[Finding] = []
    for seat in SEATS:
        allowed = before[seat] | set(after.hand(seat))
        faces = {FACES[t] for t in allowed}
        for event in events:
            payload = views.redact(event, seat)["payload"]
            shown = tile_ids(payload) - allowed
            if shown:
                findings.append(
                    (
                        "secrecy",
                        ("PASS-11", "NMJL-08"),
                        f"{seat.label} is sent {event.type} naming tiles it never held: "
                        f"{sorted(shown)}",
                    )
                )
            named = faces_in(payload) - faces
            if named:
                findings.append(
                    (
                        "rule_secrecy",
                        ("PASS-11",),
                        f"{seat.label} is sent {event.type} naming faces {sorted(named)} of "
                        "tiles it never held",
                    )
                )
    for event in events:
        payload = spectators.redact(event)["payload"]
        shown = tile_ids(payload)
        if shown:
            findings.append(
                (
                    "secrecy",
                    ("SVC-16",),
                    f"a spectator is sent {event.type} naming tiles {sorted(shown)}",
                )
            )
        named = faces_in(payload)
        if named:
            findings.append(
                (
                    "rule_secrecy",
                    ("SVC-16",),
                    f"a spectator is sent {event.type} naming faces {sorted(named)}",
                )
            )
    return findings


def moved_tiles(events: Iterable[Event]) -> list[int]:
    """Every tile a command's events hand from one seat to another."""
    moved: list[int] = []
    for event in events:
        if event.type == "tiles_transferred":
            moved += event.payload["from_hand"] + event.payload["forwarded"]
    return moved


def transition_rules(
    table_before: Mapping[str, Any],
    events: Sequence[Event],
    after: Table,
) -> list[Finding]:
    """The rule book's invariants a single command must keep.

    - PASS-03, FW-03: no joker is ever handed over.
    - PASS-06: tiles move only when every participant of the step had confirmed: the
      transfers of a step all come from seats with a selection before the command, or
      from the commanding seat itself.
    - NMJL-10: a Second Right with no tile from any hand ends the Charleston with no
      Courtesy Pass (the chart enters ``CHARLESTON_DONE`` straight from it).
    - NMJL-17, FW-06: only East declares Mah Jongg or requests a Ding Dong.
    - FW-05: no more Ding Dongs than the option allows.
    """
    findings: list[Finding] = []
    jokers = [t for t in moved_tiles(events) if is_joker(t)]
    if jokers:
        findings.append(("rules", ("PASS-03", "FW-03"), f"jokers {jokers} were passed"))
    confirmed = set(table_before["confirmed"])
    actor = table_before["actor"]
    givers = {Seat(e.seat) for e in events if e.type == "tiles_transferred" and e.seat}
    if givers - confirmed - {actor}:
        findings.append(
            (
                "rules",
                ("PASS-06",),
                f"tiles moved from {sorted(s.value for s in givers - confirmed - {actor})}, "
                "who had not confirmed",
            )
        )
    for event in events:
        if event.type in ("mah_jongg_declared", "ding_dong_requested") and event.seat not in (
            Seat.EAST,
            Seat.EAST.value,
        ):
            findings.append(
                ("rules", ("NMJL-17", "FW-06"), f"{event.type} by {event.seat}, not East")
            )
        moved = any(e.type == "tiles_transferred" for e in events)
        if event.type == "state_changed" and moved:
            was, now = event.payload["from"], event.payload["to"]
            if "CHARLESTON_P2_R" in was and "CHARLESTON_DONE" in now:
                findings.append(
                    ("rules", ("NMJL-10",), "the Second Right ended the Charleston, tiles moved")
                )
    if isinstance(after, FourWindsTable) and after.ding_dongs > after.options.ding_dong_max:
        findings.append(
            (
                "rules",
                ("FW-05",),
                f"{after.ding_dongs} Ding Dongs, more than {after.options.ding_dong_max}",
            )
        )
    return findings


# -- faces (the secrecy of events reads them) -----------------------------------------------

_FACES = frozenset(FACES)
_WRITTEN = re.compile(r"\b(" + "|".join(sorted(map(re.escape, _FACES), key=len)[::-1]) + r")#")


def faces_in(data: Any, found: set[str] | None = None) -> set[str]:
    """Every tile face named in JSON-ready ``data``: a ``face`` field, a string that is a
    face, or a face written with its id (``5B#17``) inside a text."""
    found = set() if found is None else found
    if isinstance(data, dict):
        face = data.get("face")
        if isinstance(face, str):
            found.add(face)
        for value in data.values():
            faces_in(value, found)
    elif isinstance(data, list):
        for item in data:
            faces_in(item, found)
    elif isinstance(data, str):
        if data in _FACES:
            found.add(data)
        elif "#" in data:
            found.update(_WRITTEN.findall(data))
    return found

"""Who plays each seat: a person, or the service's bot, as the director decides.

The bot seats are the clock's ``bots`` (:class:`~.clock_state.Clock`):
the clock plays them through deadlines of kind ``bot``, so a seat handed to the bot is
played in whichever process polls first and after a restart, one bot per seat. Handing a
seat over (:func:`with_bot`) or back (:func:`with_person`) drops its deadline, and the
annotation writer arms the one its new player gets (``Annotation.rearm``).

A seat the bot plays gives no command of its own (:func:`refuse_bot`, asked by
``clocks.refusal``; ``clocks.withheld`` leaves its commands out of its view) until the
director hands it back: two players of one seat would race. ``seated`` keeps the name the
director gave whoever sits a seat now (``"substitute: R. Chen"``), for the desk;
``player_ids`` the platform's ids of whoever sits each seat (given at creation, replaced
by a substitute's own), which the feed's entries carry beside the seat they name.

Every change is a ``seat_taken`` row (:func:`seat_taken`): the seat, ``by`` (``human``
or ``bot``), the director's ``label`` and whether the seat's token was replaced, so the
record says who sat each seat when. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any, Literal

from ..rulebook import enforces
from . import errors
from .clock_state import Clock
from .events import Event
from .seats import Seat

Player = Literal["human", "bot"]


def bot_seats(clock: Clock | None) -> frozenset[str]:
    return frozenset(clock.bots) if clock is not None else frozenset()


@enforces("SVC-14")
def refuse_bot(clock: Clock | None, seat: Seat | None) -> None:
    """Refuse a seat's own command while the service's bot plays it."""
    if seat is not None and clock is not None and seat.value in clock.bots:
        raise errors.SeatPlayedByBot(
            f"The service's bot plays {seat.label} now: the director handed the seat to it. "
            "Ask the director to hand it back to you."
        )


@enforces("SVC-14")
def with_bot(clock: Clock, seat: Seat) -> Clock:
    """The clock once the bot plays ``seat`` (its deadline dropped: it is re-armed)."""
    if seat.value in clock.bots:
        raise errors.SeatAlreadyWithBot(f"The service's bot already plays {seat.label}.")
    return _seated(clock, seat, sorted({*clock.bots, seat.value}), None)


@enforces("SVC-14")
def with_person(clock: Clock, seat: Seat, label: str | None) -> Clock:
    """The clock once a person plays ``seat`` again."""
    if seat.value not in clock.bots:
        raise errors.SeatNotWithBot(
            f"{seat.label} is played by a person, not the bot: there is nothing to hand back."
        )
    return _seated(clock, seat, sorted(bot_seats(clock) - {seat.value}), label)


#: what a substitute's deadline is: the step's whole time from the act, or what was left
Deadline = Literal["fresh", "kept"]


def substituted(
    clock: Clock,
    seat: Seat,
    label: str | None,
    *,
    player_id: str | None = None,
    deadline: Deadline = "fresh",
) -> Clock:
    """The clock once a person with a new token sits ``seat`` (the bot, if it played
    the seat, hands it over to that person). ``deadline``: ``fresh`` drops the seat's
    deadline, so the writer arms the step's whole time from now (someone who just sat
    down is not left the seconds the player before them had); ``kept`` keeps what was
    left. ``player_id``: the substitute's own id on the platform (none: the seat has none
    from now on; the replaced player's is never theirs)."""
    after = _seated(clock, seat, sorted(bot_seats(clock) - {seat.value}), label)
    old = clock.deadlines.get(seat.value)
    if deadline == "kept" and old is not None and old.kind != "bot":
        after = replace(after, deadlines={**after.deadlines, seat.value: old})
    return with_player_id(after, seat, player_id)


def with_player_id(clock: Clock, seat: Seat, player_id: str | None) -> Clock:
    """The clock with ``seat``'s player id (the platform's) set, or removed."""
    ids = {s: i for s, i in clock.player_ids.items() if s != seat.value}
    if player_id:
        ids[seat.value] = player_id
    return replace(clock, player_ids=ids, absent=clock.written("player_ids"))


def player_ids(clock: Clock | None) -> dict[str, str]:
    """The platform's ids of whoever sits each seat now (only the seats given one)."""
    return dict(clock.player_ids) if clock is not None else {}


def _seated(clock: Clock, seat: Seat, bots: list[str], label: str | None) -> Clock:
    deadlines = {s: d for s, d in clock.deadlines.items() if s != seat.value}
    seated = {s: n for s, n in clock.seated.items() if s != seat.value}
    if label:
        seated[seat.value] = label
    return replace(
        clock,
        bots=tuple(bots),
        deadlines=deadlines,
        seated=seated,
        absent=clock.written("bots", "seated"),
    )


def names_after(players: Mapping[str, Any] | None, events: Iterable[Event]) -> dict[str, Any]:
    """The seats' names after ``events`` (a game's rows, from its first): the names it
    was created with, each replaced by a substitute's (or dropped when they gave none)."""
    names = dict(players or {})
    for e in events:
        if e.type == "seat_taken" and e.payload.get("token_replaced") and e.seat is not None:
            names[e.seat.value] = e.payload.get("name")
    return {s: names[s] for s in ("east", "south", "west", "north") if names.get(s)}


def seat_taken(
    seat: Seat,
    by: Player,
    label: str | None,
    *,
    token_replaced: bool,
    substitute: Mapping[str, Any] | None = None,
) -> Event:
    """The row saying who sits ``seat`` from now on; a substitute's also carries their
    ``name`` (the seat's name from then on), ``player_id`` and ``deadline``."""
    payload = {"by": by, "label": label, "token_replaced": token_replaced}
    return Event("seat_taken", seat, {**payload, **(substitute or {})})

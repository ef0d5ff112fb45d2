"""Who plays each seat: a person, or the service's bot, as the director decides.

The bot seats are the clock document's ``bots`` (:mod:`charleston_fsm.engine.clocks`):
the clock plays them through deadlines of kind ``bot``, so a seat handed to the bot is
played in whichever process polls first and after a restart, one bot per seat. Handing a
seat over (:func:`with_bot`) or back (:func:`with_person`) drops its deadline, and the
annotation writer arms the one its new player gets (``Annotation.rearm``).

A seat the bot plays gives no command of its own (:func:`refuse_bot`, asked by
``clocks.refusal``; ``clocks.withheld`` leaves its commands out of its view) until the
director hands it back: two players of one seat would race. ``seated`` keeps the name the
director gave whoever sits a seat now (``"substitute: R. Chen"``), for the desk.

Every change is a ``seat_taken`` row (:func:`seat_taken`): the seat, ``by`` (``human``
or ``bot``), the director's ``label`` and whether the seat's token was replaced, so the
record says who sat each seat when. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from ..rulebook import enforces
from . import errors
from .events import Event
from .seats import Seat

Player = Literal["human", "bot"]


def bot_seats(doc: Mapping[str, Any] | None) -> frozenset[str]:
    return frozenset((doc or {}).get("bots") or ())


@enforces("SVC-14")
def refuse_bot(doc: Mapping[str, Any] | None, seat: Seat | None) -> None:
    """Refuse a seat's own command while the service's bot plays it."""
    if seat is not None and seat.value in bot_seats(doc):
        raise errors.SeatPlayedByBot(
            f"The service's bot plays {seat.label} now: the director handed the seat to it. "
            "Ask the director to hand it back to you."
        )


@enforces("SVC-14")
def with_bot(doc: Mapping[str, Any], seat: Seat) -> dict[str, Any]:
    """The document once the bot plays ``seat`` (its deadline dropped: it is re-armed)."""
    if seat.value in bot_seats(doc):
        raise errors.SeatAlreadyWithBot(f"The service's bot already plays {seat.label}.")
    return _seated(doc, seat, sorted({*bot_seats(doc), seat.value}), None)


@enforces("SVC-14")
def with_person(doc: Mapping[str, Any], seat: Seat, label: str | None) -> dict[str, Any]:
    """The document once a person plays ``seat`` again."""
    if seat.value not in bot_seats(doc):
        raise errors.SeatNotWithBot(
            f"{seat.label} is played by a person, not the bot: there is nothing to hand back."
        )
    return _seated(doc, seat, sorted(bot_seats(doc) - {seat.value}), label)


def substituted(doc: Mapping[str, Any], seat: Seat, label: str | None) -> dict[str, Any]:
    """The document once a person with a new token sits ``seat`` (the bot, if it played
    the seat, hands it over to that person)."""
    return _seated(doc, seat, sorted(bot_seats(doc) - {seat.value}), label)


def _seated(
    doc: Mapping[str, Any], seat: Seat, bots: list[str], label: str | None
) -> dict[str, Any]:
    deadlines = {s: d for s, d in (doc.get("deadlines") or {}).items() if s != seat.value}
    seated = {s: n for s, n in (doc.get("seated") or {}).items() if s != seat.value}
    if label:
        seated[seat.value] = label
    return {**doc, "bots": bots, "deadlines": deadlines, "seated": seated}


def seat_taken(seat: Seat, by: Player, label: str | None, *, token_replaced: bool) -> Event:
    """The row saying who sits ``seat`` from now on."""
    return Event("seat_taken", seat, {"by": by, "label": label, "token_replaced": token_replaced})

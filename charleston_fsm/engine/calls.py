"""Calling the director: a seat raises a flag, the director answers it.

A seat's call is kept in the clock (``calls``: seat -> a :class:`~.clock_state.Call`,
when and the reason it gave) until the director answers it, so the round's room sees
every flagged table, and how long it has waited, in the one read that lists the round.
Both ends are rows of the chain: ``director_called`` (the caller's seat; its ``reason``
is for the director only: :mod:`charleston_fsm.engine.views` and :mod:`.spectators`
leave it out) and ``call_answered`` (``answer``: ``ruling`` or ``cleared``, when the
call was made and how long it waited), after the ``ruling_recorded`` row when the answer
is a ruling.

One open call per seat: a second is refused until the first is answered. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from ..rulebook import enforces
from . import errors
from .clock_state import Call, Clock, calls_document
from .moments import iso, parse_time
from .seats import Seat


def open_calls(clock: Clock | None) -> dict[str, Call]:
    """Every open call by seat."""
    return dict(clock.calls) if clock is not None else {}


def shown_calls(clock: Clock | None) -> dict[str, dict[str, Any]]:
    """Every open call by seat as a view shows it: ``{"at", "reason"}``."""
    return calls_document(clock.calls) if clock is not None else {}


@enforces("SVC-15")
def called(clock: Clock, seat: Seat, reason: str | None, now: datetime) -> Clock:
    """The clock once ``seat`` called the director at ``now``."""
    calls = open_calls(clock)
    if seat.value in calls:
        raise errors.AlreadyCalled(
            f"You called the director at {calls[seat.value].at}; the call is open until "
            "the director answers it."
        )
    calls[seat.value] = Call(iso(now), reason)
    return replace(clock, calls=calls, absent=clock.written("calls"))


@enforces("SVC-15")
def answered(clock: Clock | None, seat: Seat, now: datetime) -> tuple[Clock, dict[str, Any]]:
    """The clock once the director answered ``seat``'s call, and the call's facts
    (``called_at``, ``waited_seconds``) for the row."""
    calls = open_calls(clock)
    call = calls.pop(seat.value, None)
    if clock is None or call is None:
        raise errors.NoOpenCall(f"{seat.label} has no open call to answer.")
    waited = max((now - parse_time(call.at)).total_seconds(), 0.0)
    return replace(clock, calls=calls), {"called_at": call.at, "waited_seconds": waited}

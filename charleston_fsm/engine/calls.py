"""Calling the director: a seat raises a flag, the director answers it.

A seat's call is kept in the clock document (``calls``: seat -> when, and the reason it
gave) until the director answers it, so the round's room sees every flagged table, and
how long it has waited, in the one read that lists the round. Both ends are rows of the
chain: ``director_called`` (the caller's seat; its ``reason`` is for the director only:
:mod:`charleston_fsm.engine.views` and :mod:`.spectators` leave it out) and
``call_answered`` (``answer``: ``ruling`` or ``cleared``, when the call was made and how
long it waited), after the ``ruling_recorded`` row when the answer is a ruling.

One open call per seat: a second is refused until the first is answered. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..rulebook import enforces
from . import errors
from .moments import iso, parse_time
from .seats import Seat


def open_calls(doc: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
    """Every open call by seat: ``{"at", "reason"}``."""
    return dict((doc or {}).get("calls") or {})


@enforces("SVC-15")
def called(doc: Mapping[str, Any], seat: Seat, reason: str | None, now: datetime) -> dict[str, Any]:
    """The document once ``seat`` called the director at ``now``."""
    calls = open_calls(doc)
    if seat.value in calls:
        raise errors.AlreadyCalled(
            f"You called the director at {calls[seat.value]['at']}; the call is open until "
            "the director answers it."
        )
    calls[seat.value] = {"at": iso(now), "reason": reason}
    return {**doc, "calls": calls}


@enforces("SVC-15")
def answered(
    doc: Mapping[str, Any] | None, seat: Seat, now: datetime
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The document once the director answered ``seat``'s call, and the call's facts
    (``called_at``, ``waited_seconds``) for the row."""
    calls = open_calls(doc)
    call = calls.pop(seat.value, None)
    if doc is None or call is None:
        raise errors.NoOpenCall(f"{seat.label} has no open call to answer.")
    waited = max((now - parse_time(call["at"])).total_seconds(), 0.0)
    return {**doc, "calls": calls}, {"called_at": call["at"], "waited_seconds": waited}

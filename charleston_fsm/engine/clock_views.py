"""The clock as it is shown: a seat's own deadline, or the director's whole clock.

Apart from :mod:`charleston_fsm.engine.clocks` (which re-exports :func:`seat_clock` and
:func:`director_clock`): what a view shows of the clock, never how it moves. A seat
sees only its own deadline (with the time the director added and why), whether the table
is held, paused, played by the bot, and its own open call; the director sees every
deadline, the open calls with their reasons and who sits each seat; a round's listing
shows each table's clock at a glance (:func:`glance`). Pure: no I/O.
"""

from __future__ import annotations

from typing import Any

from . import calls, time_control
from .clock_state import Clock, Deadline, extension_document, options_document
from .seats import Seat

_NO_DEADLINE = {
    "kind": None,
    "seconds": None,
    "due_at": None,
    "flagged": False,
    "extended": None,
}


def seat_clock(clock: Clock | None, seat: Seat) -> dict[str, Any] | None:
    """The seat's own deadline (no other seat's), or ``None`` when clocks are off."""
    if clock is None:
        return None
    deadline = clock.deadlines.get(seat.value)
    call = clock.calls.get(seat.value)
    return {
        **(_shown(deadline) if deadline else _NO_DEADLINE),
        "paused": bool(clock.paused_at),
        "late": seat.value in clock.late,
        **_gate(clock),
        "bot": seat.value in clock.bots,
        "called_at": call.at if call else None,
    }


def director_clock(clock: Clock | None) -> dict[str, Any] | None:
    if clock is None:
        return None
    options = clock.options
    return {
        "paused": bool(clock.paused_at),
        "options": None if options is None else options_document(options),
        "bots": list(clock.bots),
        "pace": clock.pace,
        "deadlines": {s: _shown(d) for s, d in clock.deadlines.items()},
        "late": list(clock.late),
        **_gate(clock),
        "calls": calls.shown_calls(clock),
        "seated": dict(clock.seated),
    }


def glance(clock: Clock | None) -> dict[str, Any] | None:
    """A table's clock at a glance, for its round's listing: held, paused or running,
    and each awaited seat's deadline (no options, no tiles; ``None``: no clock)."""
    if clock is None:
        return None
    gate = _gate(clock)
    return {
        "paused": bool(clock.paused_at),
        "held": gate["held"],
        "start_at": gate["start_at"],
        "started_at": gate["started_at"],
        "bots": list(clock.bots),
        "deadlines": {s: d.due_at for s, d in clock.deadlines.items()},
    }


def _gate(clock: Clock) -> dict[str, Any]:
    """Held or started, and when (every view of the clock shows it)."""
    held = clock.held
    return {
        "held": held is not None,
        "start_at": held.at if held is not None else None,
        "started_at": clock.started_at,
        "awaiting": time_control.awaiting(clock),
    }


def _shown(deadline: Deadline) -> dict[str, Any]:
    return {
        "kind": deadline.kind,
        "seconds": deadline.seconds,
        "due_at": deadline.due_at,
        "flagged": deadline.is_flagged,
        "extended": extension_document(deadline.extended),
    }

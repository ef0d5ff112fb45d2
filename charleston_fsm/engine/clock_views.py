"""The clock document as it is shown: a seat's own deadline, or the director's whole clock.

Apart from :mod:`charleston_fsm.engine.clocks` (which re-exports :func:`seat_clock` and
:func:`director_clock`): what a view shows of the document, never how it moves. A seat
sees only its own deadline (with the time the director added and why), whether the table
is held, paused, played by the bot, and its own open call; the director sees every
deadline, the open calls with their reasons and who sits each seat. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import calls, seating
from .seats import Seat

_NO_DEADLINE = {
    "kind": None,
    "seconds": None,
    "due_at": None,
    "flagged": False,
    "extended": None,
}


def seat_clock(doc: Mapping[str, Any] | None, seat: Seat) -> dict[str, Any] | None:
    """The seat's own deadline (no other seat's), or ``None`` when clocks are off."""
    if not doc:
        return None
    deadline = doc["deadlines"].get(seat.value)
    call = calls.open_calls(doc).get(seat.value)
    return {
        **(_shown(deadline) if deadline else _NO_DEADLINE),
        "paused": bool(doc.get("paused_at")),
        "late": seat.value in doc.get("late", ()),
        **_gate(doc),
        "bot": seat.value in seating.bot_seats(doc),
        "called_at": call["at"] if call else None,
    }


def director_clock(doc: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if not doc:
        return None
    return {
        "paused": bool(doc.get("paused_at")),
        "options": doc.get("options"),
        "bots": doc.get("bots") or [],
        "pace": doc.get("pace") or 0.0,
        "deadlines": {s: _shown(d) for s, d in doc["deadlines"].items()},
        "late": list(doc.get("late", ())),
        **_gate(doc),
        "calls": calls.open_calls(doc),
        "seated": dict(doc.get("seated") or {}),
    }


def _gate(doc: Mapping[str, Any]) -> dict[str, Any]:
    """Held or started, and when (every view of the clock shows it)."""
    held = doc.get("held") or {}
    return {
        "held": bool(held),
        "start_at": held.get("at"),
        "started_at": doc.get("started_at"),
    }


def _shown(deadline: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "kind": deadline["kind"],
        "seconds": deadline["seconds"],
        "due_at": deadline["due_at"],
        "flagged": bool(deadline.get("flagged")),
        "extended": deadline.get("extended"),
    }

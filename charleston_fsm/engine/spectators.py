"""What a spectator sees: the secrecy boundary of a spectator's link.

A spectator stands behind the table: it sees the four seats, how many tiles each holds,
who has confirmed each step, the votes, each pass as counts and directions, the clock,
the rulings and the end. It never sees a tile: not a rack, not a pass's tiles, not the
deal (nor its seed, which rebuilds the deal), not a route of a blind pass. So a spectator
gets less than any seat: the public facts every seat shares
(:func:`~charleston_fsm.engine.views.game_facts`) and events redacted by
:func:`redact`, where every row that carries tiles is cut to its counts, and a row this
module does not know is cut to its name.

Behind a delay the service shows the table as it stood at the last row older than the
delay (the store replays it); the clock is then told from the rows alone
(:func:`clock_from_rows`: held, paused, late), without deadlines, since a deadline armed
later would tell what happened since. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..rulebook import enforces
from . import seating
from .clock_state import Clock, Extension
from .events import DIRECTOR_ONLY_FIELDS, Event
from .seats import Direction, Seat
from .table import Table
from .view_models import AsOf, SpectatorView
from .views import PUBLIC_EVENTS, game_facts

#: payload fields a seat may read but a spectator never does: the director's reason
#: for added time is told to the seat (its clock), not to the room
SEATS_ONLY_FIELDS = {"time_extended": frozenset({"reason"})}
#: fields a spectator never gets, by row type: the director's alone, and the seats'
HIDDEN_FIELDS = {**DIRECTOR_ONLY_FIELDS, **SEATS_ONLY_FIELDS}
#: rows whose payload a spectator gets as every seat does: no tile is in them
SHOWN_WHOLE = PUBLIC_EVENTS - HIDDEN_FIELDS.keys()


@enforces("SVC-16")
def redact(event: Event) -> dict[str, Any]:
    """The event as a spectator may see it: counts and directions, never a tile."""
    data = event.to_dict()
    p, kind = event.payload, event.type
    if kind in SHOWN_WHOLE:
        return data
    if kind in HIDDEN_FIELDS:
        shown = {k: v for k, v in p.items() if k not in HIDDEN_FIELDS[kind]}
    elif kind in ("pass_confirmed", "pass_changed"):
        shown = {"count": len(p["tiles"]) + p["blind"], "blind": p["blind"]}
    elif kind == "ding_dong_given":
        shown = {"count": len(p["gifts"])}
    elif kind == "tiles_placed":
        shown = {"count": len(p["tiles"])}
    elif kind == "tiles_transferred":
        receiver = Seat(p["receiver"])
        shown = {
            "step": p["step"],
            "receiver": receiver.value,
            "count": len(p["from_hand"]) + len(p["forwarded"]),
            "blind_count": len(p["forwarded"]),
            "direction": _direction(event.seat, receiver),
        }
    elif kind == "pass_resolved":
        shown = {k: v for k, v in p.items() if k in ("step", "label", "moved", "blind")}
    else:  # the deal (game_created), and any row this module does not know
        shown = {}
    data["payload"] = shown
    return data


def _direction(giver: Seat | None, receiver: Seat) -> str | None:
    if giver is None:
        return None
    return next((d.value for d in Direction if giver.toward(d) is receiver), None)


#: what a spectator is shown of the clock: (the clock or ``None``, the bot seats)
ShownClock = tuple[dict[str, Any] | None, list[str]]


@enforces("SVC-16")
def spectator_view(
    table: Table, clock: ShownClock, as_of: AsOf, players: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The table as a spectator sees it; ``clock``: :func:`live_clock` of the game's
    document (no delay) or :func:`clock_from_rows` (behind a delay); ``players``: the
    players' names."""
    shown, bots = clock
    return SpectatorView(
        game=game_facts(table, players),
        bots=bots,
        clock=shown,
        as_of=as_of,
    ).model_dump(mode="json")


def live_clock(clock: Clock | None) -> ShownClock:
    """The game's clock as a spectator sees it: no options, no caller's reason, no
    reason for added time."""
    if clock is None:
        return None, []
    held = clock.held
    shown = {
        "held": held is not None,
        "start_at": held.at if held is not None else None,
        "started_at": clock.started_at,
        "paused": bool(clock.paused_at),
        "deadlines": {
            s: {
                "kind": d.kind,
                "seconds": d.seconds,
                "due_at": d.due_at,
                "flagged": d.is_flagged,
                "extended": _added(d.extended),
            }
            for s, d in clock.deadlines.items()
        },
        "late": list(clock.late),
        "called": sorted(clock.calls),
    }
    return shown, sorted(seating.bot_seats(clock))


def _added(extended: Extension | None) -> dict[str, Any] | None:
    """Time the director added, without the director's reason."""
    return {"seconds": extended.seconds} if extended else None


def clock_from_rows(events: Iterable[Event]) -> ShownClock:
    """The clock as the rows up to a delay's cut tell it (no deadlines): nothing for a
    game with no clock, bots or gate (its first row says)."""
    rows = list(events)
    setup = rows[0].payload if rows and rows[0].type == "game_created" else {}
    start = setup.get("start") or {}
    bots = set(setup.get("bots") or ())
    shown: dict[str, Any] = {
        "held": bool(start.get("held")),
        "start_at": start.get("at") if start.get("held") else None,
        "started_at": None,
        "paused": False,
        "deadlines": None,
        "late": [],
        "called": [],
    }
    any_clock = "clock" in setup or bool(start.get("held"))
    for row in rows[1:]:
        seat = row.seat.value if row.seat else None
        if row.type == "game_started":
            shown.update(held=False, start_at=None, started_at=row.payload["at"])
        elif row.type in ("clock_paused", "clock_resumed"):
            shown["paused"] = row.type == "clock_paused"
        elif row.type in ("seat_late", "clock_expired") and seat not in shown["late"]:
            shown["late"].append(seat)
        elif row.type == "director_called":
            shown["called"].append(seat)
        elif row.type == "call_answered" and seat in shown["called"]:
            shown["called"].remove(seat)
        elif row.type == "seat_taken":
            (bots.add if row.payload["by"] == "bot" else bots.discard)(seat)
        any_clock = any_clock or row.type in _DOCUMENT_ROWS
    shown["called"] = sorted(shown["called"])
    return (shown if any_clock or bots else None), sorted(bots)


#: rows that give a game a clock document (a table with none shows no clock till then)
_DOCUMENT_ROWS = frozenset({"director_called", "seat_taken"})

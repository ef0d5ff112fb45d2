"""What each seat may see, and what a director sees.

This is the secrecy boundary of the whole service: every payload that leaves for a seat
(view, event listing, stream) is built here. A seat sees its own rack, its received
tiles, its own choices, and public table talk (votes, offers, who has confirmed, how many
tiles everyone holds). It never sees another seat's concealed tiles, and a blind
forwarder never sees the tiles it forwarded.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .events import Event
from .seats import SEATS, Seat
from .steps import COURTESY_PAIRS
from .table import Table
from .tiles import face

PUBLIC_EVENTS = frozenset(
    {
        "pass_withdrawn",
        "vote_cast",
        "courtesy_offered",
        "courtesy_agreed",
        "state_changed",
        "charleston_ended",
        "mah_jongg_declared",
    }
)


def tiles_out(tiles: Iterable[int]) -> list[dict[str, Any]]:
    return [{"id": t, "face": face(t)} for t in tiles]


def _game(table: Table) -> dict[str, Any]:
    leaves = [s for s in table.active_states if not s.states]
    return {
        "ruleset": table.ruleset.name,
        "options": table.options.model_dump(mode="json"),
        "state": table.configuration,
        "state_labels": [s.name for s in leaves],
        "finished": table.finished,
        "ended_reason": table.ended_reason,
        "passes_resolved": table.passes_resolved,
        "declaration": table.declaration,
        "hand_sizes": {s.value: len(table.hand(s)) for s in SEATS},
        "votes": {s.value: v for s, v in table.votes.items()},
        "steps": [
            {
                "state": state_id,
                "label": step.label,
                "participants": [s.value for s in step.participants],
                "confirmed": [s.value for s in step.participants if s in table.selections],
                "awaiting": [s.value for s in step.participants if s not in table.selections],
            }
            for state_id, step in table.active_steps()
        ],
    }


def seat_view(table: Table, seat: Seat) -> dict[str, Any]:
    """One seat's screen: its own tiles, its step, and the table's public facts."""
    step = table.requirement(seat)
    selection = table.selections.get(seat)
    pair = next(p for p in COURTESY_PAIRS if seat in p)
    view: dict[str, Any] = {
        "seat": seat.value,
        "game": _game(table),
        "rack": tiles_out(table.racks[seat]),
        "received": tiles_out(table.received[seat]),
        "must_place_first": bool(table.received[seat]) and table.options.require_placing,
        "selection": (
            {"tiles": tiles_out(selection.tiles), "blind": selection.blind, "locked": True}
            if selection
            else None
        ),
        "step": None,
        "courtesy": {
            "pair": [s.value for s in pair],
            "offers": {s.value: table.offers[s] for s in pair if s in table.offers},
            "agreed": table.agreed.get(COURTESY_PAIRS.index(pair)),
        },
        "allowed_commands": table.allowed_commands(seat),
    }
    if step is not None:
        count = table.required_count(seat, step)
        view["step"] = {
            "label": step.label,
            "direction": step.direction.value if step.direction else "across",
            "to": step.target(seat).value,
            "from": step.source(seat).value,
            "count": count,
            "count_range": [0, 3] if count is None else None,
            "blind_allowed": step.blind and table.options.blind_pass,
            "confirmed": selection is not None,
        }
    return view


def director_view(table: Table) -> dict[str, Any]:
    """Everything at the table, for a tournament director."""
    return {
        "game": _game(table),
        "seats": {
            s.value: {
                "rack": tiles_out(table.racks[s]),
                "received": tiles_out(table.received[s]),
                "selection": (
                    {
                        "tiles": tiles_out(table.selections[s].tiles),
                        "blind": table.selections[s].blind,
                    }
                    if s in table.selections
                    else None
                ),
                "offer": table.offers.get(s),
            }
            for s in SEATS
        },
        "courtesy_agreed": {
            "-".join(p.value for p in COURTESY_PAIRS[i]): c for i, c in table.agreed.items()
        },
        "wall": {"count": len(table.wall)},
    }


def redact(event: Event, seat: Seat | None) -> dict[str, Any]:
    """The event as ``seat`` may see it; ``None`` is the director, who sees it whole."""
    data = event.to_dict()
    if seat is None or event.type in PUBLIC_EVENTS:
        return data
    p = event.payload
    own = event.seat is seat
    if event.type in ("pass_confirmed", "pass_changed"):
        if not own:
            data["payload"] = {"count": len(p["tiles"]) + p["blind"], "blind": p["blind"]}
    elif event.type == "tiles_placed":
        if not own:
            data["payload"] = {"count": len(p["tiles"])}
    elif event.type == "tiles_transferred":
        total = len(p["from_hand"]) + len(p["forwarded"])
        shown: dict[str, Any] = {"step": p["step"], "receiver": p["receiver"], "count": total}
        if own:
            shown["from_hand"] = p["from_hand"]
            shown["forwarded_count"] = len(p["forwarded"])
        elif p["receiver"] == seat.value:
            shown["kept"] = p["kept"]
            shown["forwarded_on_count"] = total - len(p["kept"])
        data["payload"] = shown
    elif event.type == "pass_resolved":
        data["payload"] = {k: v for k, v in p.items() if k != "routes"}
    else:  # an event type this module does not know: show nothing but its name
        data["payload"] = {}
    return data

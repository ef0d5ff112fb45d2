"""Domain events: what the table records for every accepted command and every transfer.

Command events (``pass_confirmed``, ``vote_cast`` …) carry the command, so folding them
through the chart again rebuilds the table; derived events (``tiles_transferred``,
``pass_resolved``, ``state_changed`` …) are what that fold must reproduce exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .commands import COMMAND_MODELS, COMMAND_OF, Command, command_of
from .seats import Seat

DERIVED_TYPES = frozenset(
    {"tiles_transferred", "pass_resolved", "courtesy_agreed", "state_changed", "charleston_ended"}
)

#: the events of a seat's pass command: their row names the step the seat answered
PASS_COMMAND_EVENTS = frozenset(
    {"pass_confirmed", "pass_changed", "pass_withdrawn", "ding_dong_given"}
)
#: the derived events whose row names the step they resolved (from their payload)
STEP_EVENTS = frozenset({"tiles_transferred", "pass_resolved"})

#: Rows a clock, a director or a seat's call adds to the chain: they move no tile and the
#: chart never sees them (``Table.fold`` skips them); see ``charleston_fsm.engine.clocks``
#: and ``charleston_fsm.engine.annotations``.
ANNOTATION_TYPES = frozenset(
    {
        "clock_expired",
        "seat_late",
        "clock_paused",
        "clock_resumed",
        "ruling_recorded",
        "game_started",
        "seat_arrived",
        "time_extended",
        "seat_taken",
        "director_called",
        "call_answered",
        "spectator_link",
    }
)
#: Annotation payload fields no seat nor spectator reads: a caller's reason is the
#: director's alone, a substitute's player id the platform's and the director's
#: (``views.redact`` and ``spectators.redact`` leave them out)
DIRECTOR_ONLY_FIELDS = {
    "director_called": frozenset({"reason"}),
    "seat_taken": frozenset({"player_id"}),
}


@dataclass(frozen=True)
class Event:
    type: str
    seat: Seat | None = None
    payload: dict[str, Any] = field(default_factory=dict)

    @property
    def is_command(self) -> bool:
        return self.type in COMMAND_OF

    def command(self) -> Command:
        """The command that this event records (command events only)."""
        name = COMMAND_OF[self.type]
        fields = {k: v for k, v in self.payload.items() if k in COMMAND_MODELS[name].model_fields}
        return command_of(name, {"seat": self.seat, **fields})

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "seat": self.seat.value if self.seat else None,
            "payload": self.payload,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Event:
        seat = data.get("seat")
        return cls(type=data["type"], seat=Seat(seat) if seat else None, payload=data["payload"])

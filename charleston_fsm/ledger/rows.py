"""One stored event row as the store hands it out (the engine event plus its place)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..engine.events import Event
from ..engine.seats import Seat
from .hashing import canonical_time, utc


@dataclass(frozen=True)
class StoredEvent:
    """One event row: the engine event plus where and when the store put it."""

    game_id: str
    seq: int
    type: str
    seat: str | None
    payload: dict[str, Any]
    command_id: str | None
    created_at: datetime
    prev_hash: str
    hash: str
    step: str | None = None

    @property
    def event(self) -> Event:
        return Event(self.type, Seat(self.seat) if self.seat else None, self.payload)

    def hashed(self) -> dict[str, Any]:
        """The fields the row's hash covers (``hashing.row_hash``'s arguments)."""
        return {
            "prev_hash": self.prev_hash,
            "game_id": self.game_id,
            "seq": self.seq,
            "type": self.type,
            "seat": self.seat,
            "step": self.step,
            "payload": self.payload,
            "command_id": self.command_id,
            "created_at": self.created_at,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.hashed(),
            "created_at": canonical_time(self.created_at),
            "hash": self.hash,
        }

    @classmethod
    def from_row(cls, row: Any) -> StoredEvent:
        return cls(
            game_id=row.game_id,
            seq=row.seq,
            type=row.type,
            seat=row.seat,
            payload=row.payload,
            command_id=row.command_id,
            created_at=utc(row.created_at),
            prev_hash=row.prev_hash,
            hash=row.hash,
            step=row.step,
        )

"""What the store answers with, shared by its parts: a command's result and a game's
summary (their own module, so every part can import them and none imports the front)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ...engine.clock_state import Clock
from ...ledger.hashing import canonical_time
from ...ledger.rows import StoredEvent


@dataclass(frozen=True)
class ExecuteResult:
    """What one command's transaction produced, so an answer needs no second read.

    ``snapshot`` is the table the transaction left (the projection it wrote; for a
    duplicate, the projection it read under the game's lock): answers are built from it
    with :meth:`GameStore.view_of`, never from a read after the commit, which could fail
    and turn a stored command into an error.
    """

    events: list[StoredEvent]
    duplicate: bool = False
    snapshot: dict[str, Any] = field(default_factory=dict, repr=False)
    command_id: str | None = None
    clock: Clock | None = field(default=None, repr=False)

    @property
    def last_seq(self) -> int:
        return self.events[-1].seq if self.events else 0


@dataclass(frozen=True)
class GameSummary:
    id: str
    ruleset: str
    options: dict[str, Any]
    players: dict[str, Any]
    created_at: datetime
    last_seq: int
    status: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "ruleset": self.ruleset,
            "options": self.options,
            "players": self.players,
            "created_at": canonical_time(self.created_at),
            "last_seq": self.last_seq,
            "status": self.status,
        }

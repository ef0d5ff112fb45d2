"""Chain rows: a game's event rows as the hash chain links them (no database here).

Each row's hash seals the row before it (:func:`~.hashing.row_hash`); the writers make
every row of a write here, before anything is sent, and verify re-hashes them the same
way. The events whose rows name the pass they belong to (the engine's
``PASS_COMMAND_EVENTS``) are named here too.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ..engine.events import PASS_COMMAND_EVENTS, Event
from .hashing import row_hash

__all__ = ["PASS_COMMAND_EVENTS", "chained_rows", "event_row"]


def event_row(
    game_id: str,
    seq: int,
    type_: str,
    seat: str | None,
    step: str | None,
    payload: dict[str, Any],
    command_id: str | None,
    created_at: datetime,
    prev_hash: str,
) -> dict[str, Any]:
    """One events row, its hash sealing ``prev_hash``."""
    fields: dict[str, Any] = {
        "game_id": game_id,
        "seq": seq,
        "type": type_,
        "seat": seat,
        "step": step,
        "payload": payload,
        "command_id": command_id,
        "created_at": created_at,
        "prev_hash": prev_hash,
    }
    return {**fields, "hash": row_hash(**fields)}


def chained_rows(
    last_seq: int,
    head_hash: str,
    game_id: str,
    command_id: str,
    items: Sequence[tuple[Event, str | None]],
    now: datetime,
) -> list[dict[str, Any]]:
    """The rows of ``items`` (each event with its step) after row ``last_seq`` whose hash
    is ``head_hash``, chained by hash."""
    prev = head_hash
    rows: list[dict[str, Any]] = []
    for offset, (ev, step) in enumerate(items, start=1):
        seat = ev.seat.value if ev.seat else None
        row = event_row(
            game_id, last_seq + offset, ev.type, seat, step, ev.payload, command_id, now, prev
        )
        prev = row["hash"]
        rows.append(row)
    return rows

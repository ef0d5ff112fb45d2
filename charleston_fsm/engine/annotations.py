"""Annotations: rows of a game's chain that move no tile and that the chart never sees.

A clock pausing, a director's ruling, a seat flagged late: each is a row (or a few)
recorded with its time in the hash chain, like any command's rows, but decided by the
clock document alone, not by the chart (``Table.fold`` skips them, see
:data:`~charleston_fsm.engine.events.ANNOTATION_TYPES`). An :class:`Annotation` says
what is remembered under its command id and how it changes the clock document; the
store's annotation writer (``charleston_fsm.store.writes``) appends it on the game's
head in the same statement as any other write.

A new kind is one more function returning an :class:`Annotation` (and its event type in
``ANNOTATION_TYPES``); nothing else in the write path changes. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from . import clocks, errors
from .commands import DIRECTOR_ANNOTATION_ADAPTER, RecordRuling
from .events import Event

#: (the clock document before, now) -> (the document after, the rows to append); raises
#: a ``CharlestonError`` to refuse (nothing is written then)
Change = Callable[[Mapping[str, Any] | None, datetime], tuple[Any, list[Event]]]


@dataclass(frozen=True)
class Annotation:
    """Rows that move no tile: what is remembered under the command id, and the change."""

    command: Mapping[str, Any]
    change: Change


def from_director(command: Mapping[str, Any]) -> Annotation:
    """A director's ``pause_clock``, ``resume_clock`` or ``record_ruling`` (a request's
    body); ``InvalidCommand`` when it is none of them or malformed."""
    try:
        parsed = DIRECTOR_ANNOTATION_ADAPTER.validate_python(dict(command))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'command'}: {e['msg']}" for e in exc.errors()
        )
        raise errors.InvalidCommand(f"The command is not valid ({problems}).") from None
    doc = parsed.model_dump(mode="json")
    if isinstance(parsed, RecordRuling):
        return ruling(doc, parsed)
    if parsed.type == "pause_clock":
        return Annotation(doc, _pause)
    return Annotation(doc, _resume)


def ruling(doc: Mapping[str, Any], parsed: RecordRuling) -> Annotation:
    """A ruling joins the chain; the clock stays as it is."""
    seat, payload = parsed.seat, {"kind": parsed.kind, "text": parsed.text}

    def change(clock: Mapping[str, Any] | None, _now: datetime) -> tuple[Any, list[Event]]:
        return clock, [Event("ruling_recorded", seat, payload)]

    return Annotation(doc, change)


def _pause(clock: Mapping[str, Any] | None, now: datetime) -> tuple[Any, list[Event]]:
    return clocks.paused(clock, now), [Event("clock_paused", None, {})]


def _resume(clock: Mapping[str, Any] | None, now: datetime) -> tuple[Any, list[Event]]:
    moved, seconds = clocks.resumed(clock, now)
    return moved, [Event("clock_resumed", None, {"paused_seconds": seconds})]


def seat_late(firing: clocks.ClockFiring) -> Annotation:
    """A timed seat's deadline passed on a clock that flags instead of acting: the
    deadline is flagged (shown, never fired again) and a ``seat_late`` row recorded."""
    facts = firing.facts
    seat = firing.seat

    def change(clock: Mapping[str, Any] | None, _now: datetime) -> tuple[Any, list[Event]]:
        return clocks.flagged(clock or {}, seat), [Event("seat_late", seat, facts)]

    return Annotation({"type": "seat_late", "seat": seat.value, **facts}, change)

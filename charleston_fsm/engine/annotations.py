"""Annotations: rows of a game's chain that move no tile and that the chart never sees.

A clock pausing, a director's ruling, a seat flagged late, a held table starting, time
added to a deadline, a seat handed to the bot or to a substitute, a seat calling the
director and the answer, a spectator's link issued or revoked: each is a row (or a few)
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
from typing import Any, Literal

from pydantic import ValidationError

from . import calls, clocks, errors, seating, time_control
from .commands import (
    DIRECTOR_ANNOTATION_ADAPTER,
    AnswerCall,
    CallDirector,
    ExtendTime,
    HandBack,
    HandToBot,
    RecordRuling,
)
from .events import Event
from .field_errors import field_errors
from .moments import iso
from .seats import Seat

#: (the clock document before, now) -> (the document after, the rows to append); raises
#: a ``CharlestonError`` to refuse (nothing is written then)
Change = Callable[[Mapping[str, Any] | None, datetime], tuple[Any, list[Event]]]


@dataclass(frozen=True)
class Annotation:
    """Rows that move no tile: what is remembered under the command id, and the change.

    ``rearm``: the change altered who plays a seat, so the writer arms the deadlines of
    the document after it on the game's table (``clocks.advance``), as after a command.
    """

    command: Mapping[str, Any]
    change: Change
    rearm: bool = False


def from_director(command: Mapping[str, Any]) -> Annotation:
    """A director's annotation command (a request's body: ``pause_clock``,
    ``resume_clock``, ``record_ruling``, ``start_game``, ``extend_time``, ``hand_to_bot``,
    ``hand_back``, ``answer_call``); ``InvalidCommand`` when it is none of them or
    malformed."""
    try:
        parsed = DIRECTOR_ANNOTATION_ADAPTER.validate_python(dict(command))
    except ValidationError as exc:
        raise errors.InvalidCommand(f"The command is not valid ({_problems(exc)}).") from None
    doc = parsed.model_dump(mode="json")
    if isinstance(parsed, RecordRuling):
        return ruling(doc, parsed)
    if isinstance(parsed, ExtendTime):
        return extension(doc, parsed)
    if isinstance(parsed, HandToBot | HandBack):
        return hand_over(doc, parsed)
    if isinstance(parsed, AnswerCall):
        return answer(doc, parsed)
    if parsed.type == "start_game":
        return start(doc)
    if parsed.type == "pause_clock":
        return pause(doc)
    return resume(doc)


def _problems(exc: ValidationError) -> str:
    return field_errors(exc.errors())


def _round_fact(doc: Mapping[str, Any]) -> dict[str, Any]:
    """A round-wide act's rows name the round (each table has its own row)."""
    return {"round": doc["round"]} if doc.get("round") else {}


def ruling(doc: Mapping[str, Any], parsed: RecordRuling) -> Annotation:
    """A ruling joins the chain; the clock stays as it is."""
    seat, payload = parsed.seat, {"kind": parsed.kind, "text": parsed.text}

    def change(clock: Mapping[str, Any] | None, _now: datetime) -> tuple[Any, list[Event]]:
        return clock, [Event("ruling_recorded", seat, payload)]

    return Annotation(doc, change)


def pause(doc: Mapping[str, Any]) -> Annotation:
    """The clock stops (``doc`` may name the round that paused every table)."""

    def change(clock: Mapping[str, Any] | None, now: datetime) -> tuple[Any, list[Event]]:
        if time_control.is_held(clock):
            raise errors.ClockNotRunning("This table has not started: its clock is not running.")
        return clocks.paused(clock, now), [Event("clock_paused", None, _round_fact(doc))]

    return Annotation(doc, change)


def resume(doc: Mapping[str, Any]) -> Annotation:
    """The clock runs again; every deadline moves by the time paused."""

    def change(clock: Mapping[str, Any] | None, now: datetime) -> tuple[Any, list[Event]]:
        moved, seconds = clocks.resumed(clock, now)
        payload = {"paused_seconds": seconds, **_round_fact(doc)}
        return moved, [Event("clock_resumed", None, payload)]

    return Annotation(doc, change)


def start(
    doc: Mapping[str, Any], at: datetime | None = None, *, scheduled: bool = False
) -> Annotation:
    """A held table starts at ``at`` (default: the moment of the write): a
    ``game_started`` row, every deadline moved by the time held. A round's tables are
    given the same ``at``; a start time's own start is ``scheduled``."""

    def change(clock: Mapping[str, Any] | None, now: datetime) -> tuple[Any, list[Event]]:
        moment = at or now
        opened, held = time_control.started(clock, moment)
        payload = {
            "at": iso(moment),
            "held_seconds": held,
            "scheduled": scheduled,
            **_round_fact(doc),
        }
        return opened, [Event("game_started", None, payload)]

    return Annotation(doc, change)


def scheduled_start(due: time_control.StartDue) -> Annotation:
    """The clock worker's start of a held table whose start time came."""
    return start({"type": "start_game", "at": due.at}, due.moment, scheduled=True)


def extension(doc: Mapping[str, Any], parsed: ExtendTime) -> Annotation:
    """Seconds added to a seat's deadline (or every awaited seat's): a ``time_extended``
    row with each new deadline and the reason."""
    seats = None if parsed.seat is None else [parsed.seat]

    def change(clock: Mapping[str, Any] | None, now: datetime) -> tuple[Any, list[Event]]:
        moved, due = time_control.extended(clock, seats, parsed.seconds, parsed.reason, now)
        payload = {"seconds": parsed.seconds, "reason": parsed.reason, "due_at": due}
        return moved, [Event("time_extended", parsed.seat, payload)]

    return Annotation(doc, change)


def hand_over(doc: Mapping[str, Any], parsed: HandToBot | HandBack) -> Annotation:
    """A seat handed to the service's bot, or back to a person: a ``seat_taken`` row; the
    seat's deadline is armed again for its new player."""
    seat = parsed.seat
    label = parsed.label if isinstance(parsed, HandBack) else None

    def change(clock: Mapping[str, Any] | None, _now: datetime) -> tuple[Any, list[Event]]:
        before = clock or clocks.new_doc(None, ())  # the bot thinks at the game's pace
        if isinstance(parsed, HandToBot):
            after, by = seating.with_bot(before, seat), "bot"
        else:
            after, by = seating.with_person(before, seat, label), "human"
        return after, [seating.seat_taken(seat, by, label, token_replaced=False)]  # type: ignore[arg-type]

    return Annotation(doc, change, rearm=True)


def substitute(seat: Seat, label: str | None) -> Annotation:
    """A new person sits ``seat`` with a new token (the store replaces the credential in
    the same transaction): a ``seat_taken`` row; the old token opens nothing."""
    doc = {"type": "replace_token", "seat": seat.value, "label": label}

    def change(clock: Mapping[str, Any] | None, _now: datetime) -> tuple[Any, list[Event]]:
        after = seating.substituted(clock, seat, label) if clock is not None else None
        return after, [seating.seat_taken(seat, "human", label, token_replaced=True)]

    return Annotation(doc, change, rearm=True)  # a substitute may take over a bot's seat


def call(parsed: CallDirector) -> Annotation:
    """A seat calls the director: a ``director_called`` row (its reason is the
    director's only), the call kept open in the document."""
    doc = parsed.model_dump(mode="json")
    reason = {"reason": parsed.reason}

    def change(clock: Mapping[str, Any] | None, now: datetime) -> tuple[Any, list[Event]]:
        after = calls.called(clock or clocks.new_doc(None, ()), parsed.seat, parsed.reason, now)
        return after, [Event("director_called", parsed.seat, reason)]

    return Annotation(doc, change)


def answer(doc: Mapping[str, Any], parsed: AnswerCall) -> Annotation:
    """The director answers a seat's call: a ruling (its own row first) or cleared."""

    def change(clock: Mapping[str, Any] | None, now: datetime) -> tuple[Any, list[Event]]:
        after, facts = calls.answered(clock, parsed.seat, now)
        rows = []
        if parsed.answer == "ruling":
            payload = {"kind": parsed.kind, "text": parsed.text}
            rows.append(Event("ruling_recorded", parsed.seat, payload))
        rows.append(Event("call_answered", parsed.seat, {"answer": parsed.answer, **facts}))
        return after, rows

    return Annotation(doc, change)


def spectator_link(action: Literal["issued", "revoked"], delay: int | None) -> Annotation:
    """The table's spectator link issued (with its delay) or revoked: a ``spectator_link``
    row; the store changes the link in the same transaction."""
    doc = {"type": "spectator_link", "action": action, "delay": delay}

    def change(clock: Mapping[str, Any] | None, _now: datetime) -> tuple[Any, list[Event]]:
        return clock, [Event("spectator_link", None, {"action": action, "delay": delay})]

    return Annotation(doc, change)


def seat_late(firing: clocks.ClockFiring) -> Annotation:
    """A timed seat's deadline passed on a clock that flags instead of acting: the
    deadline is flagged (shown, never fired again) and a ``seat_late`` row recorded."""
    facts = firing.facts
    seat = firing.seat

    def change(clock: Mapping[str, Any] | None, _now: datetime) -> tuple[Any, list[Event]]:
        return clocks.flagged(clock or {}, seat), [Event("seat_late", seat, facts)]

    return Annotation({"type": "seat_late", "seat": seat.value, **facts}, change)

"""Annotations: rows of a game's chain that move no tile and that the chart never sees.

A clock pausing, a director's ruling, a seat flagged late, a seat arriving at a table
that waits for its players, a held table starting, time
added to a deadline, a seat handed to the bot or to a substitute, a seat calling the
director and the answer, a spectator's link issued or revoked: each is a row (or a few)
recorded with its time in the hash chain, like any command's rows, but decided by the
clock alone, not by the chart (``Table.fold`` skips them, see
:data:`~charleston_fsm.engine.events.ANNOTATION_TYPES`). An :class:`Annotation` says
what is remembered under its command id and how it changes the clock; the
store's annotation writer (``charleston_fsm.store.games.writes``) appends it on the game's
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
from .clock_state import Clock
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

#: (the clock before, now) -> (the clock after, the rows to append); raises a
#: ``CharlestonError`` to refuse (nothing is written then)
Change = Callable[[Clock | None, datetime], tuple[Clock | None, list[Event]]]


@dataclass(frozen=True)
class Annotation:
    """Rows that move no tile: what is remembered under the command id, and the change.

    ``rearm``: the change altered who plays a seat, so the writer arms the deadlines of
    the clock after it on the game's table (``clocks.advance``), as after a command.
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

    def change(clock: Clock | None, _now: datetime) -> tuple[Clock | None, list[Event]]:
        return clock, [Event("ruling_recorded", seat, payload)]

    return Annotation(doc, change)


def pause(doc: Mapping[str, Any]) -> Annotation:
    """The clock stops (``doc`` may name the round that paused every table)."""

    def change(clock: Clock | None, now: datetime) -> tuple[Clock | None, list[Event]]:
        if time_control.is_held(clock):
            raise errors.ClockNotRunning("This table has not started: its clock is not running.")
        return clocks.paused(clock, now), [Event("clock_paused", None, _round_fact(doc))]

    return Annotation(doc, change)


def resume(doc: Mapping[str, Any]) -> Annotation:
    """The clock runs again; every deadline moves by the time paused."""

    def change(clock: Clock | None, now: datetime) -> tuple[Clock | None, list[Event]]:
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

    def change(clock: Clock | None, now: datetime) -> tuple[Clock | None, list[Event]]:
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


def arrival(seat: Seat) -> Annotation:
    """A seat opened its page at a table that waits for every player: a ``seat_arrived``
    row (with the seats still awaited); the last one's arrival starts the table in the
    same write (a ``game_started`` row, ``seated: true``), so every clock and the bots'
    first look count from that moment."""
    doc = {"type": "arrive", "seat": seat.value}

    def change(clock: Clock | None, now: datetime) -> tuple[Clock | None, list[Event]]:
        after, left, held = time_control.arrived(clock, seat, now)
        rows = [Event("seat_arrived", seat, {"waiting": left})]
        if held is not None:
            payload = {"at": iso(now), "held_seconds": held, "scheduled": False, "seated": True}
            rows.append(Event("game_started", None, payload))
        return after, rows

    return Annotation(doc, change)


def extension(doc: Mapping[str, Any], parsed: ExtendTime) -> Annotation:
    """Seconds added to a seat's deadline (or every awaited seat's): a ``time_extended``
    row with each new deadline and the reason."""
    seats = None if parsed.seat is None else [parsed.seat]

    def change(clock: Clock | None, now: datetime) -> tuple[Clock | None, list[Event]]:
        moved, due = time_control.extended(clock, seats, parsed.seconds, parsed.reason, now)
        payload = {"seconds": parsed.seconds, "reason": parsed.reason, "due_at": due}
        return moved, [Event("time_extended", parsed.seat, payload)]

    return Annotation(doc, change)


def hand_over(doc: Mapping[str, Any], parsed: HandToBot | HandBack) -> Annotation:
    """A seat handed to the service's bot, or back to a person: a ``seat_taken`` row; the
    seat's deadline is armed again for its new player."""
    seat = parsed.seat
    label = parsed.label if isinstance(parsed, HandBack) else None

    def change(clock: Clock | None, _now: datetime) -> tuple[Clock | None, list[Event]]:
        before = clock or clocks.new_clock(None, ())  # the bot thinks at the game's pace
        by: seating.Player = "bot" if isinstance(parsed, HandToBot) else "human"
        if by == "bot":
            after = seating.with_bot(before, seat)
        else:
            after = seating.with_person(before, seat, label)
        return after, [seating.seat_taken(seat, by, label, token_replaced=False)]

    return Annotation(doc, change, rearm=True)


def substitute(
    seat: Seat,
    label: str | None,
    *,
    name: str | None = None,
    player_id: str | None = None,
    deadline: seating.Deadline = "fresh",
) -> Annotation:
    """A new person sits ``seat`` with a new token (the store replaces the credential in
    the same transaction): a ``seat_taken`` row with the substitute's ``name`` (the
    seat's name from then on; none: the seat is named by its wind), ``player_id`` and
    ``deadline`` (``fresh``: the step's whole time from now; ``kept``: what was left);
    the old token opens nothing."""
    facts = {"name": name, "player_id": player_id, "deadline": deadline}
    doc = {"type": "replace_token", "seat": seat.value, "label": label, **facts}

    def change(clock: Clock | None, _now: datetime) -> tuple[Clock | None, list[Event]]:
        after = None
        if clock is not None or player_id is not None:  # the feed reads ids from the clock
            before = clock or clocks.new_clock(None, ())
            after = seating.substituted(before, seat, label, player_id=player_id, deadline=deadline)
        row = seating.seat_taken(seat, "human", label, token_replaced=True, substitute=facts)
        return after, [row]

    return Annotation(doc, change, rearm=True)  # a substitute may take over a bot's seat


def call(parsed: CallDirector) -> Annotation:
    """A seat calls the director: a ``director_called`` row (its reason is the
    director's only), the call kept open in the clock."""
    doc = parsed.model_dump(mode="json")
    reason = {"reason": parsed.reason}

    def change(clock: Clock | None, now: datetime) -> tuple[Clock | None, list[Event]]:
        after = calls.called(clock or clocks.new_clock(None, ()), parsed.seat, parsed.reason, now)
        return after, [Event("director_called", parsed.seat, reason)]

    return Annotation(doc, change)


def answer(doc: Mapping[str, Any], parsed: AnswerCall) -> Annotation:
    """The director answers a seat's call: a ruling (its own row first) or cleared."""

    def change(clock: Clock | None, now: datetime) -> tuple[Clock | None, list[Event]]:
        after, facts = calls.answered(clock, parsed.seat, now)
        rows = []
        if parsed.answer == "ruling":
            payload = {"kind": parsed.kind, "text": parsed.text}
            rows.append(Event("ruling_recorded", parsed.seat, payload))
        rows.append(Event("call_answered", parsed.seat, {"answer": parsed.answer, **facts}))
        return after, rows

    return Annotation(doc, change)


def spectator_link(
    action: Literal["issued", "revoked"], delay: int | None, *, live: bool = False
) -> Annotation:
    """The table's spectator link issued (with the delay it is shown at) or revoked: a
    ``spectator_link`` row; the store changes the link in the same transaction. ``live``:
    a featured table's live link, its round's delay set aside by the director's choice."""
    payload: dict[str, Any] = {"action": action, "delay": delay}
    if live:
        payload["live"] = True
    doc = {"type": "spectator_link", **payload}

    def change(clock: Clock | None, _now: datetime) -> tuple[Clock | None, list[Event]]:
        return clock, [Event("spectator_link", None, dict(payload))]

    return Annotation(doc, change)


def seat_late(firing: clocks.ClockFiring) -> Annotation:
    """A timed seat's deadline passed on a clock that flags instead of acting: the
    deadline is flagged (shown, never fired again) and a ``seat_late`` row recorded."""
    facts = firing.facts
    seat = firing.seat

    def change(clock: Clock | None, _now: datetime) -> tuple[Clock | None, list[Event]]:
        if clock is None:  # a firing is found in a clock: never without one
            raise errors.ClockNotRunning("This game has no clock: it was created without one.")
        return clocks.flagged(clock, seat), [Event("seat_late", seat, facts)]

    return Annotation({"type": "seat_late", "seat": seat.value, **facts}, change)

"""A whole turn of a game, decided: the rows to store, the table after, the clock after.

The store reads a game's head (its table's snapshot, its clock, its last seq), asks this
module once what a writer's act makes of it, and appends the answer with the seq it
expects; every decision about the game is taken here, none in the store. The exhaustive
checker (:mod:`charleston_fsm.exploration`) explores through the same functions, so the
rows' steps and the clock's moves it checks are the ones the service stores.

There are three kinds of turn:

- **A command** of a seat or of the director (:func:`command_turn`). The clock may refuse
  it first (a held table, a seat the bot plays, a seat's late command for the decision the
  clock already made in its name: ``clocks.refusal``). Otherwise the chart runs it on the
  head's table. Each row is named with the pass step it belongs to: a seat's pass command
  (confirm, change, withdraw, a Ding Dong gift) the step that seat was answering, read
  *before* the command moves the table on; a transfer or a resolution the step in its
  payload; any other row none. Then the clock is advanced to the seq the rows reach: a
  deadline per awaited seat, a deadline of the same decision kept as it was.
- **The clock's firing** for a seat whose deadline passed (:func:`firing_turn`). Nothing,
  when the deadline no longer stands (the seat acted, the clock moved, the game paused).
  A clock that flags instead of acting flags the seat late (a ``seat_late`` row, the
  deadline kept in sight but never fired again). Otherwise the seat's player (the auto
  player, or the bot at a bot seat) decides from that seat's view alone: when nothing is
  left for it to do, the deadline is dropped and no row is written; else its command is
  a command turn in the seat's name, without the seat's own refusals, after a
  ``clock_expired`` row (a bot is never late), and the clock remembers what it did there
  (to refuse the seat's late command for that decision) and that the seat was late.
- **An annotation** (:func:`annotation_turn`): a pause, a resume, a ruling, a seat handed
  over ... rows that move no tile and name no step, and the annotation's change of the
  clock; when it changed who plays a seat, the deadlines are armed again on the table.

Pure: no I/O; the table given is moved on in place (the store hands a table it may
discard, the checker reloads its snapshot).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from . import clocks
from .annotations import Annotation, seat_late
from .clock_state import Clock
from .commands import Command
from .events import PASS_COMMAND_EVENTS, STEP_EVENTS, Event
from .table import Table
from .views import seat_view

#: a row to store: the event and the pass step it belongs to (``None``: none)
Row = tuple[Event, str | None]
#: the head's table, loaded when a turn needs it (a loaded table costs)
Load = Callable[[], Table]


@dataclass(frozen=True)
class Turn:
    """What a turn decided on a game's head.

    ``rows``: what to append, each with its step (none: only the clock changes);
    ``table``: the table after them (``None``: the chart did not run, the snapshot
    stays); ``clock``: the clock after; ``command``: what the clock's writer remembers
    under the firing's id (``None``: the writer's own command).
    """

    rows: tuple[Row, ...]
    table: Table | None
    clock: Clock | None
    command: Mapping[str, Any] | None = None


def command_turn(
    table: Table, clock: Clock | None, command: Command, now: datetime, last_seq: int
) -> Turn:
    """A seat's or the director's ``command`` on the head's ``table`` and ``clock`` at
    ``now`` (the head at ``last_seq``); raises the engine's error to refuse it."""
    return _through_chart(table, clock, command, now, last_seq, None)


def firing_turn(
    table: Load, clock: Clock | None, firing: clocks.ClockFiring, now: datetime, last_seq: int
) -> Turn | None:
    """The clock acting for ``firing.seat`` (or flagging it late) on the head at
    ``last_seq``; ``None`` when there is nothing to do any more."""
    if clock is None or not firing.stands(clock, now):
        return None  # the seat acted, or the clock moved, meanwhile
    if firing.flags_late(clock):
        late = seat_late(firing)
        after, events = late.change(clock, now)
        return Turn(tuple((e, None) for e in events), None, after, late.command)
    loaded = table()
    command = firing.player().decide(seat_view(loaded, firing.seat))
    if command is None:  # nothing left for it to do: drop the deadline
        armed = clocks.advance(clock, loaded, now, last_seq)
        return Turn((), None, clocks.without_deadline(armed, firing.seat))
    turn = _through_chart(loaded, clock, command, now, last_seq, firing)
    return Turn(turn.rows, turn.table, turn.clock, command.model_dump(mode="json"))


def annotation_turn(
    table: Load, clock: Clock | None, annotation: Annotation, now: datetime, last_seq: int
) -> Turn:
    """``annotation`` on the head at ``last_seq``: its rows (no step) and the clock after
    (its deadlines armed again when who plays a seat changed); raises to refuse it."""
    after, events = annotation.change(clock, now)
    if annotation.rearm and after is not None:
        after = clocks.advance(after, table(), now, last_seq + len(events))
    return Turn(tuple((e, None) for e in events), None, after)


def _through_chart(
    table: Table,
    clock: Clock | None,
    command: Command,
    now: datetime,
    last_seq: int,
    firing: clocks.ClockFiring | None,
) -> Turn:
    """The command through the chart (the seat's own, or the clock's for a seat:
    ``firing``), its rows with their steps, and the clock after it."""
    clocks.refusal(None if firing else clock, table, command)
    answering = {seat: state for state, step in table.active_steps() for seat in step.participants}
    kind = clocks.kind_of(table, command)
    decided_in = clocks.scope(table)  # the step of the decision, before it moves
    produced = table.execute(command)
    rows: list[Row] = []
    expired = firing.expired(command) if firing is not None else None
    if expired is not None:
        rows.append((expired, None))
    rows.extend((event, _step(event, answering)) for event in produced)
    if clock is not None:
        acted = firing.acted(kind, command, decided_in) if firing is not None and kind else None
        clock = clocks.advance(clock, table, now, last_seq + len(rows), acted)
        if firing is not None and expired is not None:
            clock = clocks.expired_late(clock, firing.seat)
    return Turn(tuple(rows), table, clock)


def _step(event: Event, answering: Mapping[Any, str]) -> str | None:
    """The pass step a row belongs to (``answering``: each seat's step before the command)."""
    if event.type in PASS_COMMAND_EVENTS and event.seat is not None:
        return answering.get(event.seat)
    if event.type in STEP_EVENTS:
        return str(event.payload["step"])
    return None

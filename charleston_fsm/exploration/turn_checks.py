"""What the explorer checks of a turn beyond the chart: the rows' steps and the clock.

The explorer runs every command, and the clock's firing for a seat, through the same turn
functions the store calls (:mod:`charleston_fsm.engine.turns`), so the rows it checks
are the rows the service would store and the clock's moves those it would make:

- ``steps`` (every accepted command): every row of a seat's pass command, and every
  transfer and resolution, names the step it belongs to, and that step is one the table
  was in before the command; any other row (a vote, an offer, a declaration) names none
  (the record's steps are what a replay and an audit group the rows of a pass by);
- ``clock`` (each firing): a deadline the clock lends a seat is armed on a clock with
  every decision timed (:data:`EXPLORING_CLOCK`); when it fires, the clock's command
  for a seat is written after a ``clock_expired`` row naming that seat, and the clock
  after it is the one SVC-10 needs and the service stores:

  - it no longer holds the deadline it fired (else it would fire again on the same
    decision, for ever);
  - it lists the seat late (the round's results and the record say who ran out of time);
  - while the table stays in the step the clock decided in, it remembers what it did
    there in the seat's name (what refuses the seat's late command for that decision);
  - each seat's deadline is the one it had when its decision is the same (a seat's time
    does not restart when another seat acts), else a new one armed at the seq the turn's
    rows reach (the seq names the deadline: its firing's command id, the auto player's
    seed) and due its seconds after the turn.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from ..engine import clocks, turns
from ..engine.clock_options import ClockOptions
from ..engine.clock_state import Clock
from ..engine.commands import Command, parse_command
from ..engine.errors import CharlestonError, ClockActed
from ..engine.events import PASS_COMMAND_EVENTS, STEP_EVENTS
from ..engine.seats import Seat
from ..engine.table import Table
from .properties import Finding

#: the moment every explored turn happens at (the engine's decisions do not depend on it
#: beyond the deadlines it arms), and one past every deadline armed then
MOMENT = datetime(2026, 1, 1, tzinfo=UTC)
#: a clock with every decision timed, acting (never only flagging) when time runs out
EXPLORING_CLOCK: Clock = clocks.new_clock(
    ClockOptions(confirm_pass=60, vote=60, courtesy=60, place_tiles=60), ()
)
LATER = MOMENT + timedelta(hours=1)


def firings(table: Table, seats: set[Seat]) -> tuple[Clock, list[clocks.ClockFiring]]:
    """The exploring clock armed on ``table`` (the deal's seq: the auto player's choices
    are those it makes for a deadline armed there), and the firing of each of ``seats``'s
    deadlines, once passed."""
    armed = clocks.advance(EXPLORING_CLOCK, table, MOMENT, 0)
    return armed, [f for f in clocks.deadline_firings(armed, LATER) if f.seat in seats]


def steps(before: set[str], turn: turns.Turn) -> list[Finding]:
    """``steps``: each pass row and transfer names a step the table was in before, any
    other row none."""
    findings: list[Finding] = []
    for event, step in turn.rows:
        if event.type not in PASS_COMMAND_EVENTS and event.type not in STEP_EVENTS:
            if step is not None:  # a vote, an offer ...: the audit would count it in a pass
                message = f"the {event.type} row of {event.seat} names step {step!r}, no pass's"
                findings.append(("steps", (), message))
            continue
        if step is None or step not in before:
            message = (
                f"the {event.type} row of {event.seat} names step {step!r}, not one of "
                f"the steps the table was in ({sorted(before)})"
            )
            findings.append(("steps", (), message))
    return findings


def fired(
    firing: clocks.ClockFiring, before: Clock, turn: turns.Turn, table: Table, decided_in: str
) -> list[Finding]:
    """``clock``: the firing's rows start with its ``clock_expired`` row, and the clock
    after it is as the module docstring says (``before``: the clock it fired on;
    ``table``: the table after the turn, which the two tries below may move on;
    ``decided_in``: the table's :func:`~.clocks.scope` before it). Then SVC-10's "once"
    and its refusal, tried: the same firing on the clock after does nothing, and the
    seat's own late command for what the clock did, while the table stays in that step,
    is refused with ``clock_acted``."""
    seat = firing.seat
    first: Any = turn.rows[0][0] if turn.rows else None
    messages: list[str] = []
    if first is None or first.type != "clock_expired" or first.seat != seat:
        messages.append(f"the clock's turn for {seat} does not start with its clock_expired row")
    after = turn.clock
    if after is None or turn.command is None:
        messages.append(f"the clock's turn for {seat} leaves no clock, or no command")
        return [("clock", ("SVC-10",), message) for message in messages]
    stays = clocks.scope(table) == decided_in
    if firing.stands(after, LATER):
        messages.append(f"the clock's deadline for {seat} still stands after it fired")
    if seat.value not in after.late:
        messages.append(f"the clock acted for {seat} and does not list it late")
    acted = after.acted.get(seat.value)
    if stays and (acted is None or acted.scope != decided_in):
        messages.append(
            f"the clock acted for {seat} and does not remember it while the table stays "
            f"in that step ({decided_in})"
        )
    seq = len(turn.rows)
    messages.extend(_deadlines(before, after, seq))
    if turns.firing_turn(lambda: table, after, firing, LATER, seq) is not None:
        messages.append(f"the clock's deadline for {seat} fired a second time")
    elif stays:
        messages.extend(_late_command(table, after, parse_command(dict(turn.command)), seq))
    return [("clock", ("SVC-10",), message) for message in messages]


def _late_command(table: Table, clock: Clock, command: Command, seq: int) -> list[str]:
    """The seat's own ``command`` after the clock sent it in the seat's name, in the same
    step: refused with ``clock_acted`` (SVC-10), whatever the chart would say of it."""
    try:
        turns.command_turn(table, clock, command, LATER, seq)
    except ClockActed:
        return []
    except CharlestonError as exc:
        return [
            f"{command.seat}'s own {command.type} after the clock sent it for the seat, in "
            f"the same step, is refused with {exc.code}, not clock_acted"
        ]
    return [
        f"{command.seat}'s own {command.type} after the clock sent it for the seat, in the "
        "same step, is taken: the clock acted for it there"
    ]


def _deadlines(before: Clock, after: Clock, seq: int) -> list[str]:
    """Each deadline of ``after``: kept as it was for the same decision, else armed at
    ``seq`` (the turn's rows reach it from seq 0) and due its seconds after :data:`LATER`."""
    messages = []
    for name, deadline in after.deadlines.items():
        old = before.deadlines.get(name)
        if old is not None and old.key == deadline.key:
            if old != deadline:
                messages.append(f"{name}'s deadline for {deadline.key} restarted when it had not")
            continue
        due = LATER + timedelta(seconds=deadline.seconds)
        if deadline.armed_seq != seq or deadline.due != due:
            messages.append(
                f"{name}'s new deadline is armed at seq {deadline.armed_seq}, due "
                f"{deadline.due_at}; the turn's rows reach seq {seq}, so it is due "
                f"{deadline.seconds} s after the turn, at {due.isoformat()}"
            )
    return messages

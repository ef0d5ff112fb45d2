"""What the explorer checks of a turn beyond the chart: the rows' steps and the clock.

The explorer runs every command, and the clock's firing for a seat, through the same turn
functions the store calls (:mod:`charleston_fsm.engine.turns`), so the rows it checks
are the rows the service would store and the clock's moves those it would make:

- ``steps`` (every accepted command): every row of a seat's pass command, and every
  transfer and resolution, names the step it belongs to, and that step is one the table
  was in before the command (the record's steps are what a replay and an audit group the
  rows of a pass by);
- ``clock`` (each firing): a deadline the clock lends a seat is armed on a clock with
  every decision timed (:data:`EXPLORING_CLOCK`); when it fires, the clock's command
  for a seat is written after a ``clock_expired`` row naming that seat, and the clock
  after it no longer holds the deadline it fired (else it would fire again on the same
  decision, for ever).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from ..engine import clocks, turns
from ..engine.clock_options import ClockOptions
from ..engine.clock_state import Clock
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
    """``steps``: each pass row and transfer names a step the table was in before."""
    findings: list[Finding] = []
    for event, step in turn.rows:
        if event.type not in PASS_COMMAND_EVENTS and event.type not in STEP_EVENTS:
            continue
        if step is None or step not in before:
            message = (
                f"the {event.type} row of {event.seat} names step {step!r}, not one of "
                f"the steps the table was in ({sorted(before)})"
            )
            findings.append(("steps", (), message))
    return findings


def fired(firing: clocks.ClockFiring, turn: turns.Turn) -> list[Finding]:
    """``clock``: the firing's rows start with its ``clock_expired`` row, and the clock
    after it no longer holds the deadline it fired."""
    findings: list[Finding] = []
    seat = firing.seat
    first: Any = turn.rows[0][0] if turn.rows else None
    if first is None or first.type != "clock_expired" or first.seat != seat:
        message = f"the clock's turn for {seat} does not start with its clock_expired row"
        findings.append(("clock", ("SVC-10",), message))
    if firing.stands(turn.clock, LATER):
        message = f"the clock's deadline for {seat} still stands after it fired"
        findings.append(("clock", ("SVC-10",), message))
    return findings

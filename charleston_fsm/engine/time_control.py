"""Time the director controls: the start gate, and time added to a seat's deadline.

Both live in the game's clock (:class:`~.clock_state.Clock`), beside its deadlines,
and change only through annotations (:mod:`.annotations`): rows of the chain that move
no tile.

**The start gate.** A game created held has a :class:`~.clock_state.Hold` in its clock
(``since``; ``at``: the start time, or ``None`` until the director starts it). While it is held:

- no command is taken (:func:`refuse_held`, asked by ``clocks.refusal`` for every
  command of a seat or the director) and a seat's view lists none (``clocks.withheld``):
  seats see their racks and may lift tiles on their page, but nothing is confirmed, so no
  pass can resolve;
- no clock runs: no deadline is due, and the game's ``next_due`` is its start time (the
  clock worker starts it then: :class:`StartDue`) or nothing;
- a deadline armed meanwhile counts from ``since`` (``clocks.advance``), so the start
  moves every deadline by the time held, as a resume moves them by the time paused.

:func:`started` opens the gate at a moment the caller chooses: the director's request
(one moment for every table of a round, written in one transaction), or the start time
itself when the worker starts the game (every table of a round scheduled together
starts at that same instant, in whichever process, once: its command id
``start:<at>`` is the same everywhere).

**Extensions.** :func:`extended` adds seconds to the current deadline of one seat, or
of every awaited seat of the table (bot seats excepted); the deadline remembers the
seconds added and why, which the seat's view shows beside its new ``due_at``. A
deadline already flagged late gets the seconds from now, and runs again. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from ..rulebook import enforces
from . import errors
from .clock_state import Clock, Deadline, Extension, Hold
from .moments import iso, parse_time
from .seats import Seat

BOT = "bot"  # a bot seat's deadline kind (``clocks.BOT``): no time to extend


def hold(
    clock: Clock,
    since: datetime,
    at: datetime | None,
    awaiting: Iterable[str] | None = None,
) -> Clock:
    """The clock of a game created held at ``since`` (to start at ``at``, if given;
    or, with ``awaiting``, once each of those seats has opened its page)."""
    gate = Hold(
        since=iso(since),
        at=iso(at) if at else None,
        awaiting=tuple(awaiting) if awaiting is not None else None,
    )
    return replace(clock, held=gate, absent=clock.written("held"))


def is_held(clock: Clock | None) -> bool:
    return clock is not None and clock.held is not None


def held_since(clock: Clock | None) -> datetime | None:
    """Where deadlines armed while the game is held count from (``None``: not held)."""
    held = clock.held if clock is not None else None
    return parse_time(held.since) if held is not None else None


def start_time(clock: Clock | None) -> datetime | None:
    """When a held game starts by itself (``None``: not held, or when the director says)."""
    held = clock.held if clock is not None else None
    return parse_time(held.at) if held is not None and held.at else None


def awaiting(clock: Clock | None) -> list[str] | None:
    """The seats a held game still waits for, in seat order (``None``: it waits for no
    seat, only its director or its start time). A seat the bot plays now is not waited
    for: the bot needs no page."""
    held = clock.held if clock is not None else None
    if clock is None or held is None or held.awaiting is None:
        return None
    return [s for s in held.awaiting if s not in clock.bots]


@enforces("SVC-12")
def arrived(
    clock: Clock | None, seat: Seat, now: datetime
) -> tuple[Clock, list[str], float | None]:
    """The clock once ``seat`` has opened its page in a game that waits for its
    seats: the seats still awaited, and when none is left the gate open at ``now`` with
    the seconds it was held (else ``None``)."""
    waiting = awaiting(clock)
    if clock is None or clock.held is None or waiting is None or seat.value not in waiting:
        raise errors.NotAwaited(
            f"This table is not waiting for {seat.label} to arrive: it has started, or it "
            "starts when the director (or its start time) says."
        )
    left = [s for s in waiting if s != seat.value]
    after = replace(clock, held=replace(clock.held, awaiting=tuple(left)))
    if left:
        return after, left, None
    opened, held_seconds = started(after, now)
    return opened, left, held_seconds


@enforces("SVC-12")
def refuse_held(clock: Clock | None) -> None:
    """Refuse any command while the game is held."""
    held = clock.held if clock is not None else None
    if held is None:
        return
    at = held.at
    waiting = awaiting(clock)
    if waiting is not None:
        names = ", ".join(Seat(s).label for s in waiting)
        when = f"when every player has opened their page (waiting for: {names})"
    else:
        when = f"at {at}" if at else "when the director starts it"
    raise errors.TableNotStarted(
        f"This table has not started yet: it starts {when}. Until then you may look at "
        "your rack and lift tiles, but nothing is passed."
    )


@enforces("SVC-12")
def started(clock: Clock | None, at: datetime) -> tuple[Clock, float]:
    """The clock once the gate opens at ``at``: every deadline moved by the time held
    (as a resume moves them), and that time in seconds."""
    since = held_since(clock)
    if clock is None or since is None:
        raise errors.AlreadyStarted("This table has already started: there is no gate to open.")
    shift = max(at - since, timedelta(0))
    deadlines = {s: replace(d, due_at=iso(d.due + shift)) for s, d in clock.deadlines.items()}
    opened = replace(
        clock,
        held=None,
        started_at=iso(at),
        deadlines=deadlines,
        absent=clock.written("held", "started_at"),
    )
    return opened, shift.total_seconds()


@dataclass(frozen=True)
class StartDue:
    """A held game whose start time came: the clock worker starts it at that very time."""

    at: str

    @property
    def moment(self) -> datetime:
        return parse_time(self.at)

    @property
    def command_id(self) -> str:
        """The same in every process: a second start of the same gate is a duplicate."""
        return f"start:{self.at}"

    def stands(self, clock: Clock | None, now: datetime) -> bool:
        """Whether, in ``clock``, the gate is still held for this start time, now passed."""
        return start_time(clock) == self.moment and self.moment <= now


def due_start(clock: Clock | None, now: datetime) -> StartDue | None:
    """The start of a held game whose start time passed by ``now``."""
    at = start_time(clock)
    if clock is None or clock.held is None or clock.held.at is None or at is None or at > now:
        return None
    return StartDue(clock.held.at)


@enforces("SVC-13")
def extended(
    clock: Clock | None,
    seats: Iterable[Seat] | None,
    seconds: float,
    reason: str | None,
    now: datetime,
) -> tuple[Clock, dict[str, str]]:
    """The clock with ``seconds`` added to each seat's deadline (``None``: every
    awaited seat but the bots'), and each new ``due_at`` by seat."""
    deadlines: dict[str, Deadline] = dict(clock.deadlines) if clock is not None else {}
    if seats is None:
        chosen = [Seat(s) for s, d in deadlines.items() if d.kind != BOT]
        if not chosen:
            raise errors.NothingToExtend(
                "No seat of this table has a deadline now: there is no time to add."
            )
    else:
        chosen = list(seats)
        for seat in chosen:
            deadline = deadlines.get(seat.value)
            if deadline is None or deadline.kind == BOT:
                raise errors.NothingToExtend(
                    f"{seat.label} has no deadline now (it is not awaited, the game has no "
                    "clock for this decision, or the bot plays it): there is no time to add."
                )
    assert clock is not None  # a seat with a deadline has a clock
    moved: dict[str, str] = {}
    for seat in chosen:
        deadline = deadlines[seat.value]
        flagged = deadline.is_flagged
        base = now if flagged else deadline.due
        before = deadline.extended.seconds if deadline.extended is not None else 0
        deadline = replace(
            deadline,
            due_at=iso(base + timedelta(seconds=seconds)),
            flagged=False,
            extended=Extension(before + seconds, reason),
        )
        if flagged:  # it fires again: under an id of its own (``ClockFiring.command_id``)
            deadline = replace(deadline, rearmed=(deadline.rearmed or 0) + 1)
        deadlines[seat.value] = deadline
        moved[seat.value] = deadline.due_at
    return replace(clock, deadlines=deadlines), moved

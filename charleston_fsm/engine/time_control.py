"""Time the director controls: the start gate, and time added to a seat's deadline.

Both live in the game's clock document (:mod:`charleston_fsm.engine.clocks`), beside its
deadlines, and change only through annotations (:mod:`.annotations`): rows of the chain
that move no tile.

**The start gate.** A game created held has ``held = {"since", "at"}`` in its document
(``at``: the start time, or ``None`` until the director starts it). While it is held:

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

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from ..rulebook import enforces
from . import errors
from .moments import iso, parse_time
from .seats import Seat

BOT = "bot"  # a bot seat's deadline kind (``clocks.BOT``): no time to extend


def hold(doc: Mapping[str, Any], since: datetime, at: datetime | None) -> dict[str, Any]:
    """The document of a game created held at ``since`` (to start at ``at``, if given)."""
    return {**doc, "held": {"since": iso(since), "at": iso(at) if at else None}}


def is_held(doc: Mapping[str, Any] | None) -> bool:
    return bool(doc and doc.get("held"))


def held_since(doc: Mapping[str, Any] | None) -> datetime | None:
    """Where deadlines armed while the game is held count from (``None``: not held)."""
    return parse_time(doc["held"]["since"]) if is_held(doc) else None  # type: ignore[index]


def start_time(doc: Mapping[str, Any] | None) -> datetime | None:
    """When a held game starts by itself (``None``: not held, or when the director says)."""
    if not is_held(doc):
        return None
    at = doc["held"].get("at")  # type: ignore[index]
    return parse_time(at) if at else None


@enforces("SVC-12")
def refuse_held(doc: Mapping[str, Any] | None) -> None:
    """Refuse any command while the game is held."""
    if not is_held(doc):
        return
    at = doc["held"].get("at")  # type: ignore[index]
    when = f"at {at}" if at else "when the director starts it"
    raise errors.TableNotStarted(
        f"This table has not started yet: it starts {when}. Until then you may look at "
        "your rack and lift tiles, but nothing is passed."
    )


@enforces("SVC-12")
def started(doc: Mapping[str, Any] | None, at: datetime) -> tuple[dict[str, Any], float]:
    """The document once the gate opens at ``at``: every deadline moved by the time held
    (as a resume moves them), and that time in seconds."""
    since = held_since(doc)
    if doc is None or since is None:
        raise errors.AlreadyStarted("This table has already started: there is no gate to open.")
    shift = max(at - since, timedelta(0))
    deadlines = {
        s: {**d, "due_at": iso(parse_time(d["due_at"]) + shift)}
        for s, d in doc.get("deadlines", {}).items()
    }
    return {**doc, "held": None, "started_at": iso(at), "deadlines": deadlines}, (
        shift.total_seconds()
    )


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

    def stands(self, doc: Mapping[str, Any] | None, now: datetime) -> bool:
        """Whether, in ``doc``, the gate is still held for this start time, now passed."""
        return start_time(doc) == self.moment and self.moment <= now


def due_start(doc: Mapping[str, Any] | None, now: datetime) -> StartDue | None:
    """The start of a held game whose start time passed by ``now``."""
    at = start_time(doc)
    if at is None or at > now:
        return None
    return StartDue(doc["held"]["at"])  # type: ignore[index]


@enforces("SVC-13")
def extended(
    doc: Mapping[str, Any] | None,
    seats: Iterable[Seat] | None,
    seconds: float,
    reason: str | None,
    now: datetime,
) -> tuple[dict[str, Any], dict[str, str]]:
    """The document with ``seconds`` added to each seat's deadline (``None``: every
    awaited seat but the bots'), and each new ``due_at`` by seat."""
    deadlines = dict((doc or {}).get("deadlines") or {})
    if seats is None:
        chosen = [Seat(s) for s, d in deadlines.items() if d["kind"] != BOT]
        if not chosen:
            raise errors.NothingToExtend(
                "No seat of this table has a deadline now: there is no time to add."
            )
    else:
        chosen = list(seats)
        for seat in chosen:
            deadline = deadlines.get(seat.value)
            if deadline is None or deadline["kind"] == BOT:
                raise errors.NothingToExtend(
                    f"{seat.label} has no deadline now (it is not awaited, the game has no "
                    "clock for this decision, or the bot plays it): there is no time to add."
                )
    moved: dict[str, str] = {}
    for seat in chosen:
        deadline = deadlines[seat.value]
        flagged = bool(deadline.get("flagged"))
        base = now if flagged else parse_time(deadline["due_at"])
        before = (deadline.get("extended") or {}).get("seconds", 0)
        deadline = {
            **deadline,
            "due_at": iso(base + timedelta(seconds=seconds)),
            "flagged": False,
            "extended": {"seconds": before + seconds, "reason": reason},
        }
        if flagged:  # it fires again: under an id of its own (``ClockFiring.command_id``)
            deadline["rearmed"] = deadline.get("rearmed", 0) + 1
        deadlines[seat.value] = deadline
        moved[seat.value] = deadline["due_at"]
    return {**(doc or {}), "deadlines": deadlines}, moved

"""Per-game clocks: which seat is awaited for what, its deadline, and what the clock does.

Pure functions over a game's :class:`~.clock_state.Clock` (stored by the store beside
the game as a JSON document, never in the table; :mod:`.clock_state` converts): the
engine decides who is awaited (the seat's ``allowed_commands`` as the auto player reads
them from that seat's view), this module turns that into deadlines.
The store calls :func:`advance` after every command with the table it left, and fires a
deadline with :func:`auto_command`. Nothing here knows of storage or HTTP.

Kinds: ``confirm_pass`` (a pass, a Four Winds exchange, a Ding Dong gift, East's
decision in the Ding Dong window: request one or declare Ready), ``vote``, ``courtesy``
(offering and choosing courtesy tiles) and ``place_tiles`` (without a limit of its own,
a seat that must place first gets the limit of the decision it reaches next).

A bot seat is a deadline of kind ``bot``: the same machinery plays it, so bot seats
survive restarts. Its deadline is its *thinking time*: the table's ``pace`` (seconds,
fixed at creation; :func:`pace_for`) times a factor between 0.5 and 1.5, three times
that for its first look at a new rack (the First Right), so that East has a moment to
declare a Heavenly Hand and a person sees the vote come in seat by seat. A game of bots
only, or a benchmark's, has a pace of 0: its bots act at once.

Every choice a bot or the auto player makes, and every thinking time, is drawn from a
random generator seeded by the game (its deal seed and id: the clock's ``game``),
the seat and the seq that armed the deadline: games differ from each other, and every
process that fires a deadline makes the same choice (and the same command id stores it
once).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from ..rulebook import enforces
from . import errors, seating, time_control
from .bots import Bot
from .clock_options import ClockKind, ClockOptions
from .clock_state import NEW_ABSENT, Acted, Clock, Deadline
from .clock_views import director_clock, seat_clock
from .commands import COMMAND_MODELS, Command
from .events import Event
from .moments import iso, parse_time
from .seats import SEATS, Seat
from .table import Table
from .views import seat_view

__all__ = [
    "BOT",
    "ClockFiring",
    "ClockKind",
    "ClockOptions",
    "advance",
    "auto_player",
    "director_clock",
    "due_firing",
    "iso",
    "parse_time",
    "refusal",
    "seat_clock",
]

BOT = "bot"
#: seconds a bot thinks over a decision, on average, at a table where people play
DEFAULT_PACE = 3.0
MAX_PACE = 30.0
#: the thinking time's spread around the pace, and the first look at a new rack
THINKING = (0.5, 1.5)
FIRST_LOOK = 3.0


def pace_for(pace: float | None, bots: Iterable[Seat]) -> float:
    """A new game's pace: as given; else :data:`DEFAULT_PACE` when bots share the table
    with people, 0 when bots play every seat (or none)."""
    if pace is not None:
        return float(pace)
    return DEFAULT_PACE if 0 < len(set(bots)) < len(SEATS) else 0.0


def auto_player(seat: Seat, armed_seq: int, *, bot: bool = False, game: str = "") -> Bot:
    """The player the clock lends a seat: legal, never a joker, continue, offer 0; or, at
    a bot seat, the package's bot (its habits: :mod:`.bots`).

    Seeded by the game (``game``: its deal seed and id), the seat and the seq that armed
    the deadline, so that games differ and every process that fires it chooses the same
    command (and the same command id stores it once). A document made before games were
    named in it (``game`` empty) keeps its seat-and-seq seed.
    """
    rng = random.Random(f"{game}:{seat.value}:{armed_seq}" if game else f"{seat.value}:{armed_seq}")
    if bot:
        return Bot(seat=seat, rng=rng, earthly_rate=0.0)
    return Bot(
        seat=seat,
        rng=rng,
        blind_rate=0.0,
        continue_rate=1.0,
        earthly_rate=0.0,
        ding_dong_rate=0.0,
        ready_rate=0.0,
        courtesy_offer=0,
    )


def kind_of(table: Table, command: Command) -> ClockKind | None:
    """The clock kind a command answers (``None``: a command no clock waits for)."""
    return _kind(table, command.seat, command.type)


def _kind(table: Table, seat: Seat | None, name: str) -> ClockKind | None:
    if name in ("confirm_pass", "change_pass", "withdraw_pass", "give_ding_dong"):
        step = table.requirement(seat) if seat else None
        return "courtesy" if step is not None and step.courtesy else "confirm_pass"
    if name in ("request_ding_dong", "declare_ready"):
        # East's decision in the Ding Dong window (ask for one, or declare Ready) is
        # timed as a pass: the table waits for it, so it has a deadline like any other
        return "confirm_pass"
    if name == "offer_courtesy":
        return "courtesy"
    if name in ("vote", "place_tiles"):
        return name  # type: ignore[return-value]
    return None


def scope(table: Table) -> str:
    """Where the table is: a deadline armed here stays while the table stays here."""
    return f"{table.passes_resolved}:{'/'.join(table.configuration)}"


def awaited(
    table: Table, seat: Seat, seq: int, *, bot: bool = False, game: str = ""
) -> Command | None:
    """What the auto player would do for ``seat`` now, from that seat's view only."""
    return auto_player(seat, seq, bot=bot, game=game).decide(seat_view(table, seat))


def thinking(clock: Clock, table: Table, seat: Seat, seq: int) -> float:
    """How long the bot at ``seat`` thinks over the decision armed at ``seq`` (seconds):
    the module docstring's pace, spread and first look, drawn like its choice."""
    pace = clock.pace
    if not pace:
        return 0.0
    rng = random.Random(f"{clock.game}:{seat.value}:{seq}:thinking")
    seconds = pace * rng.uniform(*THINKING)
    if table.passes_resolved == 0 and table.requirement(seat) is not None:
        seconds *= FIRST_LOOK
    return round(seconds, 2)


def new_clock(
    options: ClockOptions | None,
    bots: Iterable[Seat],
    *,
    game: str = "",
    pace: float = 0.0,
    player_ids: Mapping[str, str] | None = None,
) -> Clock:
    """A new game's clock; ``game`` names the game for the bots' random choices (its
    deal seed and id), ``pace`` is how long its bots think (:func:`pace_for`),
    ``player_ids`` the platform's id of each seat's player (stored only when given)."""
    return Clock(
        # every option is stored, given or not (the document has always held them all)
        options=ClockOptions.model_validate(options.model_dump()) if options else None,
        bots=tuple(sorted(s.value for s in bots)),
        game=game,
        pace=pace,
        paused_at=None,
        deadlines={},
        late=(),
        acted={},
        player_ids=dict(player_ids or {}),
        absent=NEW_ABSENT - {"player_ids"} if player_ids else NEW_ABSENT,
    )


def advance(
    clock: Clock, table: Table, now: datetime, seq: int, acted: Acted | None = None
) -> Clock:
    """The clock after the table reached ``seq``: a deadline per awaited seat.

    A deadline already armed for the same command in the same :func:`scope` is kept
    (a seat's time does not restart when another seat acts); ``acted`` is the clock's own
    action with the scope of the decision it made (the table *before* it acted),
    remembered while the table stays in that scope (see :func:`refusal`). A clock action
    that moved the table on (its pass resolved the step, its vote was the last) is over:
    from the next step on the seat plays as usual.
    """
    options = clock.options
    bots = clock.bots
    where = scope(table)
    # a deadline armed while paused, or held, counts from then: the resume (the start)
    # moves it by the time stopped, as every other deadline
    start = parse_time(clock.paused_at) if clock.paused_at else now
    start = time_control.held_since(clock) or start
    deadlines: dict[str, Deadline] = {}
    for seat in SEATS:
        is_bot = seat.value in bots
        command = awaited(table, seat, seq, bot=is_bot, game=clock.game)
        if command is None:
            continue
        kind: str | None = BOT if is_bot else kind_of(table, command)
        if is_bot:
            seconds: float | None = thinking(clock, table, seat, seq)
        else:
            seconds = _limit(options, kind)
        if seconds is None and command.type == "place_tiles":
            kind, seconds = _after_placing(table, seat, options)
        if seconds is None or kind is None:
            continue
        key = f"{command.type}@{where}"
        old = clock.deadlines.get(seat.value)
        if old is not None and old.key == key:
            deadlines[seat.value] = old
            continue
        deadlines[seat.value] = Deadline(
            kind=kind,
            seconds=seconds,
            key=key,
            armed_seq=seq,
            due_at=iso(start + timedelta(seconds=seconds)),
        )
    kept = {s: a for s, a in clock.acted.items() if a.scope == where}
    if acted is not None and acted.scope == where:
        kept[acted.seat] = acted
    return replace(clock, deadlines=deadlines, acted=kept, absent=clock.written("acted"))


def _limit(options: ClockOptions | None, kind: str | None) -> float | None:
    """The seconds ``options`` give a decision of ``kind`` (``None``: no limit)."""
    if options is None or kind is None or kind == BOT:
        return None
    seconds: float | None = getattr(options, kind)
    return seconds


def _after_placing(
    table: Table, seat: Seat, options: ClockOptions | None
) -> tuple[ClockKind | None, float | None]:
    """The timed decision a seat that must place first reaches next (its pass, its vote
    ...): with no limit on placing, that decision's limit runs from now, so a seat that
    never places is still acted for (the clock places, then decides)."""
    names = ["confirm_pass"] if table.requirement(seat) is not None else []
    names += [n for n in table.allowed_commands(seat) if n != "place_tiles"]
    for name in names:
        kind = _kind(table, seat, name)
        seconds = _limit(options, kind)
        if seconds is not None:
            return kind, seconds
    return None, None


def next_due(clock: Clock | None) -> datetime | None:
    """The earliest deadline the worker must fire (``None`` when paused or none); a held
    game's start time (``None``: the director starts it)."""
    if clock is None:
        return None
    if clock.held is not None:
        return time_control.start_time(clock)
    if clock.paused_at:
        return None
    dues = [d.due for d in clock.deadlines.values() if not d.flagged]
    return min(dues, default=None)


def due_seat(clock: Clock, now: datetime) -> tuple[Seat, Deadline] | None:
    """The seat whose deadline passed first, with its deadline."""
    if clock.paused_at or clock.held is not None:
        return None
    due = [(d.due_at, s, d) for s, d in clock.deadlines.items() if not d.flagged and d.due <= now]
    if not due:
        return None
    _, seat, deadline = min(due, key=lambda found: (found[0], found[1]))
    return Seat(seat), deadline


@dataclass(frozen=True)
class ClockFiring:
    """The clock acting for ``seat`` on ``deadline``, which passed by ``now``.

    Found in the clock the game was read with (:func:`due_firing`); the store acts on it
    in the same transaction, holding the game's lock.
    """

    seat: Seat
    deadline: Deadline
    now: datetime
    game: str = ""  # the game the players' choices are seeded by (the clock's ``game``)

    @property
    def is_bot(self) -> bool:
        return self.deadline.kind == BOT

    @property
    def command_id(self) -> str:
        """One id per deadline, the same in every process: a second firing is a duplicate
        (a flagged deadline the director extended fires again under ``.<n>``)."""
        rearmed = self.deadline.rearmed
        suffix = f".{rearmed}" if rearmed else ""
        return f"clock:{self.seat.value}:{self.deadline.armed_seq}{suffix}"

    @property
    def facts(self) -> dict[str, Any]:
        """What the deadline was (the payload of its ``clock_expired`` or ``seat_late`` row)."""
        return {
            "kind": self.deadline.kind,
            "seconds": self.deadline.seconds,
            "due_at": self.deadline.due_at,
        }

    def flags_late(self, clock: Clock) -> bool:
        """Whether the game's clock flags this seat late instead of acting for it."""
        options = clock.options
        return not self.is_bot and options is not None and options.on_expiry == "flag_late"

    def player(self) -> Bot:
        """Who acts on this deadline: the bot of a bot seat, else the auto player (the same
        choice in every process: seeded by the game, the seat and the armed seq)."""
        return auto_player(self.seat, self.deadline.armed_seq, bot=self.is_bot, game=self.game)

    def expired(self, command: Command) -> Event | None:
        """The ``clock_expired`` row before the command the clock sends (a bot is never late)."""
        if self.is_bot:
            return None
        done = {"done": done_text(command), "command": command.type}
        return Event("clock_expired", self.seat, {**self.facts, **done})

    def stands(self, clock: Clock | None, now: datetime) -> bool:
        """Whether, in ``clock``, the deadline is still the one to fire."""
        if clock is None or clock.paused_at:
            return False
        current = clock.deadlines.get(self.seat.value)
        return (
            current is not None
            and not current.flagged
            and current.armed_seq == self.deadline.armed_seq
            and current.key == self.deadline.key
            and current.rearmed == self.deadline.rearmed
            and current.due <= max(now, self.now)
        )

    def acted(self, kind: str, command: Command, scope: str) -> Acted | None:
        """What the clock did in the seat's name, remembered to refuse its late command
        for that decision; ``scope``: the step it decided in (:func:`scope`)."""
        if self.is_bot:
            return None
        return Acted(
            seat=self.seat.value,
            scope=scope,
            kind=kind,
            due_at=self.deadline.due_at,
            done=done_text(command),
        )


def deadline_firings(clock: Clock | None, now: datetime) -> list[ClockFiring]:
    """The firing of every deadline passed by ``now``, in seat order (the checker fires
    each in turn; the worker fires the first: :func:`due_firing`)."""
    if clock is None or clock.paused_at or clock.held is not None:
        return []
    return [
        ClockFiring(seat, deadline, now, clock.game)
        for seat in SEATS
        if (deadline := clock.deadlines.get(seat.value)) is not None
        and not deadline.flagged
        and deadline.due <= now
    ]


def due_firing(clock: Clock | None, now: datetime) -> ClockFiring | None:
    """The firing of the deadline that passed first by ``now`` (``None``: none is due)."""
    found = due_seat(clock, now) if clock is not None else None
    if clock is None or found is None:
        return None
    return ClockFiring(found[0], found[1], now, clock.game)


def flagged(clock: Clock, seat: Seat) -> Clock:
    """The clock once ``seat``'s deadline is flagged late (it stays shown, unfired)."""
    deadlines = dict(clock.deadlines)
    deadlines[seat.value] = replace(deadlines[seat.value], flagged=True)
    return replace(clock, deadlines=deadlines, late=_late(clock, seat))


def without_deadline(clock: Clock, seat: Seat) -> Clock:
    """The clock with ``seat``'s deadline dropped (its player has nothing left to do)."""
    deadlines = {s: d for s, d in clock.deadlines.items() if s != seat.value}
    return replace(clock, deadlines=deadlines)


def expired_late(clock: Clock, seat: Seat) -> Clock:
    return replace(clock, late=_late(clock, seat))


def _late(clock: Clock, seat: Seat) -> tuple[str, ...]:
    late = clock.late
    return late if seat.value in late else (*late, seat.value)


def paused(clock: Clock | None, now: datetime) -> Clock:
    if clock is None or clock.options is None:
        raise errors.ClockNotRunning("This game has no clock: it was created without one.")
    if clock.paused_at:
        raise errors.ClockNotRunning(
            f"The clock is already paused (since {clock.paused_at}); resume it first."
        )
    return replace(clock, paused_at=iso(now), absent=clock.written("paused_at"))


def resumed(clock: Clock | None, now: datetime) -> tuple[Clock, float]:
    """The clock with every deadline moved by the paused time, and that time."""
    if clock is None or not clock.paused_at:
        raise errors.ClockNotRunning("The clock is not paused: there is nothing to resume.")
    shift = now - parse_time(clock.paused_at)
    deadlines = {s: replace(d, due_at=iso(d.due + shift)) for s, d in clock.deadlines.items()}
    return replace(clock, paused_at=None, deadlines=deadlines), shift.total_seconds()


def _acted(clock: Clock | None, table: Table, seat: Seat | None) -> Acted | None:
    """What the clock did for ``seat`` in the table's present step, if anything."""
    if clock is None or seat is None:
        return None
    acted = clock.acted.get(seat.value)
    return acted if acted is not None and acted.scope == scope(table) else None


@enforces("SVC-10")
def refusal(clock: Clock | None, table: Table, command: Command) -> None:
    """Refuse a command the game's clock refuses now: any while the table is held
    (``time_control``), a seat's own while the bot plays it (``seating``), and a seat's
    late command for the very decision the clock made in its name (the same kind, in the
    same step); anything else the seat may do, it does."""
    if clock is None:
        return
    time_control.refuse_held(clock)
    seating.refuse_bot(clock, command.seat)
    if not clock.acted:
        return
    acted = _acted(clock, table, command.seat)
    if acted is None or kind_of(table, command) != acted.kind:
        return
    raise errors.ClockActed(
        f"Your time to {_DOING[acted.kind]} ran out at {acted.due_at}; the clock "
        f"{acted.done} for you. Wait for the next step."
    )


@enforces("SVC-01", "SVC-10")
def withheld(clock: Clock | None, table: Table, seat: Seat) -> frozenset[str]:
    """The commands :func:`refusal` refuses ``seat`` now, whatever their argument.

    A view leaves them out of ``allowed_commands``, which stays exact under clocks.
    """
    if clock is None:
        return frozenset()
    if clock.held is not None or seat.value in clock.bots:
        return frozenset(COMMAND_MODELS)
    acted = _acted(clock, table, seat)
    if acted is None:
        return frozenset()
    return frozenset(n for n in COMMAND_MODELS if _kind(table, seat, n) == acted.kind)


_DOING = {
    "confirm_pass": "confirm the pass",
    "vote": "vote",
    "courtesy": "settle the courtesy pass",
    "place_tiles": "place your received tiles",
}


def done_text(command: Command) -> str:
    """What the clock did, in words that name no tile (the seat may be told it)."""
    fields = command.model_dump(mode="json")
    name = fields["type"]
    if name == "confirm_pass":
        n = len(fields["tiles"]) + fields["blind"]
        return f"passed {n} tile{'s' if n != 1 else ''}"
    if name == "give_ding_dong":
        return "gave one tile to each other player"
    if name == "vote":
        return f"voted {fields['choice']}"
    if name == "offer_courtesy":
        return f"offered {fields['count']} courtesy tiles"
    if name == "place_tiles":
        return "placed your received tiles"
    if name == "declare_ready":
        return "declared Ready"
    return name.replace("_", " ")

"""Per-game clocks: which seat is awaited for what, its deadline, and what the clock does.

Pure functions over a JSON *clock document* (stored by the store beside the game, never
in the table): the engine decides who is awaited (the seat's ``allowed_commands`` as the
auto player reads them from that seat's view), this module turns that into deadlines.
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
random generator seeded by the game (its deal seed and id: ``game`` in the document),
the seat and the seq that armed the deadline: games differ from each other, and every
process that fires a deadline makes the same choice (and the same command id stores it
once).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from ..rulebook import enforces
from . import errors, seating, time_control
from .bots import Bot
from .clock_options import ClockKind, ClockOptions
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


def thinking(doc: Mapping[str, Any], table: Table, seat: Seat, seq: int) -> float:
    """How long the bot at ``seat`` thinks over the decision armed at ``seq`` (seconds):
    the module docstring's pace, spread and first look, drawn like its choice."""
    pace = doc.get("pace") or 0.0
    if not pace:
        return 0.0
    rng = random.Random(f"{doc.get('game', '')}:{seat.value}:{seq}:thinking")
    seconds = pace * rng.uniform(*THINKING)
    if table.passes_resolved == 0 and table.requirement(seat) is not None:
        seconds *= FIRST_LOOK
    return round(seconds, 2)


def new_doc(
    options: ClockOptions | None, bots: Iterable[Seat], *, game: str = "", pace: float = 0.0
) -> dict[str, Any]:
    """A new game's clock document; ``game`` names the game for the bots' random choices
    (its deal seed and id), ``pace`` is how long its bots think (:func:`pace_for`)."""
    return {
        "options": options.model_dump(mode="json") if options else None,
        "bots": sorted(s.value for s in bots),
        "game": game,
        "pace": pace,
        "paused_at": None,
        "deadlines": {},
        "late": [],
        "acted": {},
    }


def advance(
    doc: Mapping[str, Any], table: Table, now: datetime, seq: int, acted: dict | None = None
) -> dict[str, Any]:
    """The clock document after the table reached ``seq``: a deadline per awaited seat.

    A deadline already armed for the same command in the same :func:`scope` is kept
    (a seat's time does not restart when another seat acts); ``acted`` is the clock's own
    action with the scope of the decision it made (the table *before* it acted),
    remembered while the table stays in that scope (see :func:`refusal`). A clock action
    that moved the table on (its pass resolved the step, its vote was the last) is over:
    from the next step on the seat plays as usual.
    """
    options = doc.get("options") or {}
    bots = set(doc.get("bots") or ())
    where = scope(table)
    # a deadline armed while paused, or held, counts from then: the resume (the start)
    # moves it by the time stopped, as every other deadline
    start = parse_time(doc["paused_at"]) if doc.get("paused_at") else now
    start = time_control.held_since(doc) or start
    deadlines: dict[str, Any] = {}
    for seat in SEATS:
        is_bot = seat.value in bots
        command = awaited(table, seat, seq, bot=is_bot, game=doc.get("game", ""))
        if command is None:
            continue
        kind = BOT if is_bot else kind_of(table, command)
        if is_bot:
            seconds: float | None = thinking(doc, table, seat, seq)
        else:
            seconds = options.get(kind) if kind else None
        if seconds is None and command.type == "place_tiles":
            kind, seconds = _after_placing(table, seat, options)
        if seconds is None:
            continue
        key = f"{command.type}@{where}"
        old = doc["deadlines"].get(seat.value)
        if old is not None and old["key"] == key:
            deadlines[seat.value] = old
            continue
        deadlines[seat.value] = {
            "kind": kind,
            "seconds": seconds,
            "key": key,
            "armed_seq": seq,
            "due_at": iso(start + timedelta(seconds=seconds)),
        }
    kept = {s: a for s, a in doc.get("acted", {}).items() if a["scope"] == where}
    if acted is not None and acted["scope"] == where:
        kept[acted["seat"]] = acted
    return {**doc, "deadlines": deadlines, "acted": kept}


def _after_placing(
    table: Table, seat: Seat, options: Mapping[str, Any]
) -> tuple[ClockKind | None, float | None]:
    """The timed decision a seat that must place first reaches next (its pass, its vote
    ...): with no limit on placing, that decision's limit runs from now, so a seat that
    never places is still acted for (the clock places, then decides)."""
    names = ["confirm_pass"] if table.requirement(seat) is not None else []
    names += [n for n in table.allowed_commands(seat) if n != "place_tiles"]
    for name in names:
        kind = _kind(table, seat, name)
        if kind is not None and options.get(kind) is not None:
            return kind, options[kind]
    return None, None


def next_due(doc: Mapping[str, Any] | None) -> datetime | None:
    """The earliest deadline the worker must fire (``None`` when paused or none); a held
    game's start time (``None``: the director starts it)."""
    if time_control.is_held(doc):
        return time_control.start_time(doc)
    if not doc or doc.get("paused_at"):
        return None
    dues = [parse_time(d["due_at"]) for d in doc["deadlines"].values() if not d.get("flagged")]
    return min(dues, default=None)


def due_seat(doc: Mapping[str, Any], now: datetime) -> tuple[Seat, dict[str, Any]] | None:
    """The seat whose deadline passed first, with its deadline."""
    if doc.get("paused_at") or time_control.is_held(doc):
        return None
    due = [
        (d["due_at"], s, d)
        for s, d in doc["deadlines"].items()
        if not d.get("flagged") and parse_time(d["due_at"]) <= now
    ]
    if not due:
        return None
    _, seat, deadline = min(due)
    return Seat(seat), deadline


@dataclass(frozen=True)
class ClockFiring:
    """The clock acting for ``seat`` on ``deadline``, which passed by ``now``.

    Found in the clock document the game was read with (:func:`due_firing`); the store
    acts on it in the same transaction, holding the game's lock.
    """

    seat: Seat
    deadline: Mapping[str, Any]
    now: datetime
    game: str = ""  # the game the players' choices are seeded by (the document's ``game``)

    @property
    def is_bot(self) -> bool:
        return self.deadline["kind"] == BOT

    @property
    def command_id(self) -> str:
        """One id per deadline, the same in every process: a second firing is a duplicate
        (a flagged deadline the director extended fires again under ``.<n>``)."""
        rearmed = self.deadline.get("rearmed")
        suffix = f".{rearmed}" if rearmed else ""
        return f"clock:{self.seat.value}:{self.deadline['armed_seq']}{suffix}"

    @property
    def facts(self) -> dict[str, Any]:
        """What the deadline was (the payload of its ``clock_expired`` or ``seat_late`` row)."""
        return {
            "kind": self.deadline["kind"],
            "seconds": self.deadline["seconds"],
            "due_at": self.deadline["due_at"],
        }

    def flags_late(self, doc: Mapping[str, Any]) -> bool:
        """Whether the game's clock flags this seat late instead of acting for it."""
        return not self.is_bot and (doc.get("options") or {}).get("on_expiry") == "flag_late"

    def player(self) -> Bot:
        """Who acts on this deadline: the bot of a bot seat, else the auto player (the same
        choice in every process: seeded by the game, the seat and the armed seq)."""
        return auto_player(self.seat, self.deadline["armed_seq"], bot=self.is_bot, game=self.game)

    def expired(self, command: Command) -> Event | None:
        """The ``clock_expired`` row before the command the clock sends (a bot is never late)."""
        if self.is_bot:
            return None
        done = {"done": done_text(command), "command": command.type}
        return Event("clock_expired", self.seat, {**self.facts, **done})

    def stands(self, doc: Mapping[str, Any] | None, now: datetime) -> bool:
        """Whether, in ``doc``, the deadline is still the one to fire."""
        current = (doc or {}).get("deadlines", {}).get(self.seat.value)
        return (
            current is not None
            and not doc.get("paused_at")  # type: ignore[union-attr]
            and not current.get("flagged")
            and current["armed_seq"] == self.deadline["armed_seq"]
            and current["key"] == self.deadline["key"]
            and current.get("rearmed") == self.deadline.get("rearmed")
            and parse_time(current["due_at"]) <= max(now, self.now)
        )

    def acted(self, kind: str, command: Command, scope: str) -> dict[str, Any] | None:
        """What the clock did in the seat's name, remembered to refuse its late command
        for that decision; ``scope``: the step it decided in (:func:`scope`)."""
        if self.is_bot:
            return None
        return {
            "seat": self.seat.value,
            "scope": scope,
            "kind": kind,
            "due_at": self.deadline["due_at"],
            "done": done_text(command),
        }


def due_firing(doc: Mapping[str, Any] | None, now: datetime) -> ClockFiring | None:
    """The firing of the deadline that passed first by ``now`` (``None``: none is due)."""
    found = due_seat(doc, now) if doc else None
    if found is None:
        return None
    return ClockFiring(found[0], found[1], now, (doc or {}).get("game", ""))


def flagged(doc: Mapping[str, Any], seat: Seat) -> dict[str, Any]:
    """The document once ``seat``'s deadline is flagged late (it stays shown, unfired)."""
    deadlines = {**doc["deadlines"]}
    deadlines[seat.value] = {**deadlines[seat.value], "flagged": True}
    return {**doc, "deadlines": deadlines, "late": _late(doc, seat)}


def expired_late(doc: Mapping[str, Any], seat: Seat) -> dict[str, Any]:
    return {**doc, "late": _late(doc, seat)}


def _late(doc: Mapping[str, Any], seat: Seat) -> list[str]:
    late = list(doc.get("late", ()))
    return late if seat.value in late else [*late, seat.value]


def paused(doc: Mapping[str, Any] | None, now: datetime) -> dict[str, Any]:
    if doc is None or doc.get("options") is None:
        raise errors.ClockNotRunning("This game has no clock: it was created without one.")
    if doc.get("paused_at"):
        raise errors.ClockNotRunning(
            f"The clock is already paused (since {doc['paused_at']}); resume it first."
        )
    return {**doc, "paused_at": iso(now)}


def resumed(doc: Mapping[str, Any] | None, now: datetime) -> tuple[dict[str, Any], float]:
    """The document with every deadline moved by the paused time, and that time."""
    if doc is None or not doc.get("paused_at"):
        raise errors.ClockNotRunning("The clock is not paused: there is nothing to resume.")
    shift = now - parse_time(doc["paused_at"])
    deadlines = {
        s: {**d, "due_at": iso(parse_time(d["due_at"]) + shift)}
        for s, d in doc["deadlines"].items()
    }
    return {**doc, "paused_at": None, "deadlines": deadlines}, shift.total_seconds()


def _acted(doc: Mapping[str, Any] | None, table: Table, seat: Seat | None) -> Any:
    """What the clock did for ``seat`` in the table's present step, if anything."""
    if not doc or seat is None:
        return None
    acted = doc.get("acted", {}).get(seat.value)
    return acted if acted is not None and acted["scope"] == scope(table) else None


@enforces("SVC-10")
def refusal(doc: Mapping[str, Any] | None, table: Table, command: Command) -> None:
    """Refuse a command the game's document refuses now: any while the table is held
    (``time_control``), a seat's own while the bot plays it (``seating``), and a seat's
    late command for the very decision the clock made in its name (the same kind, in the
    same step); anything else the seat may do, it does."""
    time_control.refuse_held(doc)
    seating.refuse_bot(doc, command.seat)
    acted = _acted(doc, table, command.seat)
    if acted is None or kind_of(table, command) != acted["kind"]:
        return
    raise errors.ClockActed(
        f"Your time to {_DOING[acted['kind']]} ran out at {acted['due_at']}; the clock "
        f"{acted['done']} for you. Wait for the next step."
    )


@enforces("SVC-01", "SVC-10")
def withheld(doc: Mapping[str, Any] | None, table: Table, seat: Seat) -> frozenset[str]:
    """The commands :func:`refusal` refuses ``seat`` now, whatever their argument.

    A view leaves them out of ``allowed_commands``, which stays exact under clocks.
    """
    if time_control.is_held(doc) or seat.value in seating.bot_seats(doc):
        return frozenset(COMMAND_MODELS)
    acted = _acted(doc, table, seat)
    if acted is None:
        return frozenset()
    return frozenset(n for n in COMMAND_MODELS if _kind(table, seat, n) == acted["kind"])


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

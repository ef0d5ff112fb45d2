"""The clock a turn reads and leaves: a typed value, and its stored document.

A game's clock is a :class:`Clock`: frozen, typed, changed only by making a new one
(``dataclasses.replace``) in the engine's clock modules (:mod:`.clocks`,
:mod:`.time_control`, :mod:`.seating`, :mod:`.calls`). The store keeps it as a JSON
document in ``games.clock`` and converts at its edge, once each way:
:func:`from_document` where it reads the column, :func:`to_document` where it writes it.
Nothing else reads or writes the document by key, so its keys are specified here:

- ``options``: the game's :class:`~.clock_options.ClockOptions` (``None``: no limits,
  only bots, a gate or player ids), with the keys the document had;
- ``bots``: the seats the service's bot plays (seat values, sorted); ``game``: the deal
  seed and game id the bots' and the auto player's choices are seeded by; ``pace``: how
  long a bot thinks (seconds; 0: at once);
- ``paused_at``: when the director paused the clock (``None``: it runs);
- ``deadlines``: seat -> :class:`Deadline` (``kind``, ``seconds``, ``key``: the command
  and the step it was armed for, ``armed_seq``, ``due_at``; ``flagged``, ``rearmed`` and
  ``extended``, an :class:`Extension`, only once the deadline was flagged or extended);
- ``late``: the seats the clock found late, in that order; ``acted``: seat ->
  :class:`Acted`, what the clock did in a seat's name in the present step;
- ``held``: the start gate, a :class:`Hold` (``since``, ``at``, and ``awaiting``, the
  seats it waits for, only when it waits for them); ``null`` once started;
  ``started_at``: when the gate opened;
- ``player_ids``: the platform's id of whoever sits each seat; ``seated``: the
  director's name for whoever sits a seat now; ``calls``: seat -> open :class:`Call`.

The document stays exactly as the service has always stored it, so records, audits and
existing databases read as before: :func:`to_document` of :func:`from_document` is the
document itself. A key a document lacks (``held``, ``started_at``, ``player_ids``,
``seated`` and ``calls`` until first set; ``game``, ``pace`` in documents older than
them) is named in :attr:`Clock.absent` and stays absent while its value is empty; a
change that sets it writes it (:meth:`Clock.written`). Keys this module does not know
are kept as they were (:attr:`Clock.extra`). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .clock_options import ClockOptions
from .moments import parse_time

#: a seat by its value (``"east"``), as the document names seats
SeatName = str


@dataclass(frozen=True, slots=True)
class Extension:
    """Time the director added to a deadline, in all, and why (the last reason given)."""

    seconds: float
    reason: str | None


@dataclass(frozen=True, slots=True)
class Deadline:
    """A seat's deadline: what it is for and when it passes.

    ``kind``: a :data:`~.clock_options.ClockKind` or ``"bot"`` (a bot's thinking
    time); ``key``: the command and the step it was armed for (kept while both stay);
    ``flagged``: ``None`` until the deadline is flagged late (``True``) or extended
    (``False``); ``rearmed``: how often a flagged deadline was extended (``None``: never).
    """

    kind: str
    seconds: float
    key: str
    armed_seq: int
    due_at: str
    flagged: bool | None = None
    rearmed: int | None = None
    extended: Extension | None = None

    @property
    def due(self) -> datetime:
        return parse_time(self.due_at)

    @property
    def is_flagged(self) -> bool:
        return bool(self.flagged)


@dataclass(frozen=True, slots=True)
class Acted:
    """What the clock did in ``seat``'s name, in the step ``scope`` (``clocks.scope``)."""

    seat: SeatName
    scope: str
    kind: str
    due_at: str
    done: str


@dataclass(frozen=True, slots=True)
class Hold:
    """A held game's gate: held since ``since``, to start at ``at`` (``None``: when the
    director says) or once every seat of ``awaiting`` opened its page (``None``: it
    waits for no seat)."""

    since: str
    at: str | None
    awaiting: tuple[SeatName, ...] | None = None


@dataclass(frozen=True, slots=True)
class Call:
    """A seat's open call to the director: when, and the reason it gave."""

    at: str
    reason: str | None


#: keys a new game's document lacks until a change sets them
NEW_ABSENT = frozenset({"held", "started_at", "player_ids", "seated", "calls"})


@dataclass(frozen=True, slots=True)
class Clock:
    """A game's clock (the module docstring says what each part is)."""

    options: ClockOptions | None
    bots: tuple[SeatName, ...]
    game: str
    pace: float
    paused_at: str | None
    deadlines: Mapping[SeatName, Deadline]
    late: tuple[SeatName, ...]
    acted: Mapping[SeatName, Acted]
    held: Hold | None = None
    started_at: str | None = None
    player_ids: Mapping[SeatName, str] = field(default_factory=dict)
    seated: Mapping[SeatName, str] = field(default_factory=dict)
    calls: Mapping[SeatName, Call] = field(default_factory=dict)
    #: the document's keys it lacks: each stays out of it while its value is empty
    absent: frozenset[str] = NEW_ABSENT
    #: keys of the document this module does not know, kept as they were
    extra: Mapping[str, Any] = field(default_factory=dict)

    def written(self, *names: str) -> frozenset[str]:
        """:attr:`absent` once ``names`` are set: a change that sets a key writes it,
        even empty (``replace(clock, seated={}, absent=clock.written("seated"))``)."""
        return self.absent.difference(names) if self.absent else self.absent


_KNOWN = frozenset(
    {
        "options",
        "bots",
        "game",
        "pace",
        "paused_at",
        "deadlines",
        "late",
        "acted",
        "held",
        "started_at",
        "player_ids",
        "seated",
        "calls",
    }
)


def from_document(doc: Mapping[str, Any]) -> Clock:
    """The clock a stored document holds (the store's read of ``games.clock``)."""
    options = doc.get("options")
    held = doc.get("held")
    calls = doc.get("calls")
    absent = _KNOWN.difference(doc)
    return Clock(
        options=_options(options) if options is not None else None,
        bots=tuple(doc.get("bots") or ()),
        game=doc.get("game") or "",
        pace=doc.get("pace") or 0.0,
        paused_at=doc.get("paused_at"),
        deadlines={s: _deadline(d) for s, d in doc["deadlines"].items()},
        late=tuple(doc.get("late") or ()),
        acted={s: Acted(**a) for s, a in (doc.get("acted") or {}).items()},
        held=_hold(held) if held else None,
        started_at=doc.get("started_at"),
        player_ids=dict(doc.get("player_ids") or {}),
        seated=dict(doc.get("seated") or {}),
        calls={s: Call(c["at"], c["reason"]) for s, c in calls.items()} if calls else {},
        absent=absent,
        extra=_extra(doc) if len(doc) + len(absent) > len(_KNOWN) else {},
    )


def to_document(clock: Clock) -> dict[str, Any]:
    """The document the store writes for ``clock`` (see the module docstring)."""
    options = clock.options
    doc: dict[str, Any] = {
        "options": None if options is None else options_document(options),
        "bots": list(clock.bots),
        "game": clock.game,
        "pace": clock.pace,
        "paused_at": clock.paused_at,
        "deadlines": {s: deadline_document(d) for s, d in clock.deadlines.items()},
        "late": list(clock.late),
        "acted": {s: _acted_document(a) for s, a in clock.acted.items()},
        "held": hold_document(clock.held),
        "started_at": clock.started_at,
        "player_ids": dict(clock.player_ids),
        "seated": dict(clock.seated),
        "calls": calls_document(clock.calls),
    }
    for name in clock.absent:
        if not doc[name]:
            del doc[name]
    if clock.extra:
        doc.update(clock.extra)
    return doc


def stored(doc: Mapping[str, Any] | None) -> Clock | None:
    """:func:`from_document` of a column that may be ``NULL`` (a game with no clock)."""
    return from_document(doc) if doc is not None else None


def storing(clock: Clock | None) -> dict[str, Any] | None:
    """:func:`to_document` of a clock that may be ``None`` (the column's ``NULL``)."""
    return to_document(clock) if clock is not None else None


def options_document(options: ClockOptions) -> dict[str, Any]:
    """The options as the document holds them: the keys it was read with (a new game's:
    every option), in the model's order. Their values are JSON already (seconds, a word)."""
    given = options.model_fields_set
    return {name: getattr(options, name) for name in _OPTION_NAMES if name in given}


def _options(doc: Mapping[str, Any]) -> ClockOptions:
    """The options a stored document holds (validating is cheaper than pydantic's
    ``model_construct``); the keys it had are the model's fields set."""
    return ClockOptions.model_validate(doc)


_OPTION_NAMES = tuple(ClockOptions.model_fields)


def deadline_document(deadline: Deadline) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "kind": deadline.kind,
        "seconds": deadline.seconds,
        "key": deadline.key,
        "armed_seq": deadline.armed_seq,
        "due_at": deadline.due_at,
    }
    if deadline.flagged is not None:
        doc["flagged"] = deadline.flagged
    if deadline.extended is not None:
        doc["extended"] = extension_document(deadline.extended)
    if deadline.rearmed is not None:
        doc["rearmed"] = deadline.rearmed
    return doc


def extension_document(extension: Extension | None) -> dict[str, Any] | None:
    if extension is None:
        return None
    return {"seconds": extension.seconds, "reason": extension.reason}


def hold_document(hold: Hold | None) -> dict[str, Any] | None:
    if hold is None:
        return None
    doc: dict[str, Any] = {"since": hold.since, "at": hold.at}
    if hold.awaiting is not None:
        doc["awaiting"] = list(hold.awaiting)
    return doc


def calls_document(calls: Mapping[SeatName, Call]) -> dict[str, dict[str, Any]]:
    return {s: {"at": c.at, "reason": c.reason} for s, c in calls.items()}


def _acted_document(acted: Acted) -> dict[str, Any]:
    return {
        "seat": acted.seat,
        "scope": acted.scope,
        "kind": acted.kind,
        "due_at": acted.due_at,
        "done": acted.done,
    }


def _extra(doc: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if k not in _KNOWN}


def _deadline(doc: Mapping[str, Any]) -> Deadline:
    extended = doc.get("extended")
    return Deadline(
        kind=doc["kind"],
        seconds=doc["seconds"],
        key=doc["key"],
        armed_seq=doc["armed_seq"],
        due_at=doc["due_at"],
        flagged=doc.get("flagged"),
        rearmed=doc.get("rearmed"),
        extended=Extension(extended["seconds"], extended["reason"]) if extended else None,
    )


def _hold(doc: Mapping[str, Any]) -> Hold:
    awaiting = doc.get("awaiting")
    return Hold(
        since=doc["since"],
        at=doc.get("at"),
        awaiting=tuple(awaiting) if awaiting is not None else None,
    )

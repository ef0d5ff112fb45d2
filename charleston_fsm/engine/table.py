"""One table's Charleston: the tiles, the players' choices, and the chart that rules them.

The table is the chart's domain model. The chart decides *whether* a command may
happen now and *which* transition follows; the table's validators say *why* a command
breaks a rule (:mod:`charleston_fsm.engine.checks`), its guards report facts (everyone
confirmed: :mod:`charleston_fsm.engine.guards`), and its actions, here, move tiles and record
events. Nothing here decides the order of the steps.

This module holds what every chart family shares (racks, passes, placing, resolution,
folding, snapshots). Each family's own guards, validators and actions live beside its
chart, in a subclass: ``charts/standard/`` (``nmjl``, ``house``) and
``charts/four_winds.py``. ``Table(deal, ruleset)`` builds the ruleset's own subclass.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache
from typing import Any, ClassVar

from pydantic import BaseModel
from statemachine import State, StateChart
from statemachine.exceptions import TransitionNotAllowed
from statemachine.orderedset import OrderedSet

from ..rulebook import enforces
from . import compiled_steps, errors
from .charts.probe import could_take, would_accept
from .checks import Checks
from .commands import ACCEPTED_AS, COMMAND_MODELS, Command, command_of
from .events import ANNOTATION_TYPES, Event
from .guards import Guards
from .hands import HandChecker, pending_confirmation
from .resolution import Declaration, resolve
from .ruleset import DEFAULT_RULESET, Ruleset, get_ruleset
from .seats import SEATS, Seat
from .steps import Step
from .tiles import Deal, is_joker

DONE = "CHARLESTON_DONE"
_COMMAND_NAMES = tuple(sorted(COMMAND_MODELS))


def _ruleset(ruleset: Ruleset | str) -> Ruleset:
    return get_ruleset(ruleset) if isinstance(ruleset, str) else ruleset


class _WarmTables(threading.local):
    """One table per chart class and thread, for warm folds (:meth:`Table.fold`)."""

    def __init__(self) -> None:
        self.tables: dict[type, Table] = {}


_WARM = _WarmTables()


@cache
def _document_order(chart: type[StateChart]) -> dict[str, int]:
    """Each state id of a chart class by its place in the document (``states_map`` order)."""
    return {state.id: index for index, state in enumerate(chart.states_map.values())}


class Table(Checks, Guards):
    """The state of one table and the chart instance that drives it."""

    #: the chart class a family's table drives (each family's class names its own) and
    #: each family's table class by it, entered as the family is defined
    CHART: ClassVar[type[StateChart]]
    FAMILIES: ClassVar[dict[type[StateChart], type[Table]]] = {}
    #: every step through python-statemachine, none compiled (``compiled_steps.py``)
    library_only: bool = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "CHART" in vars(cls):
            Table.FAMILIES[cls.CHART] = cls

    def __new__(
        cls, deal: Deal, ruleset: Ruleset | str = DEFAULT_RULESET, *_: Any, **__: Any
    ) -> Table:
        """``Table(deal, "nmjl")`` is the ruleset's own table class (its chart family's)."""
        if cls is Table:
            cls = Table.FAMILIES[_ruleset(ruleset).chart]
        return super().__new__(cls)

    def __init__(
        self,
        deal: Deal,
        ruleset: Ruleset | str = DEFAULT_RULESET,
        options: BaseModel | Mapping[str, Any] | None = None,
        *,
        hand_checker: HandChecker = pending_confirmation,
    ) -> None:
        self._deal(deal, ruleset, options, hand_checker)
        self.chart = self.ruleset.chart(model=self)

    def _deal(
        self,
        deal: Deal,
        ruleset: Ruleset | str,
        options: BaseModel | Mapping[str, Any] | None,
        hand_checker: HandChecker,
    ) -> None:
        """Every field of a new table of ``deal`` (the chart aside)."""
        self.ruleset = _ruleset(ruleset)
        self.options: Any = (
            options if isinstance(options, BaseModel) else self.ruleset.options(options)
        )
        self.deal = deal
        self.hand_checker = hand_checker
        self.racks: dict[Seat, list[int]] = {s: list(deal.hands[s]) for s in SEATS}
        self.received: dict[Seat, list[int]] = {s: [] for s in SEATS}
        self.wall: list[int] = list(deal.wall)
        self.selections: dict[Seat, Declaration] = {}
        self.declaration: dict[str, Any] | None = None
        self.ended_reason: str | None = None
        self.passes_resolved = 0
        self.log: list[Event] = []
        self._pending: list[Event] = []
        self.reset_family()

    def redeal(
        self,
        deal: Deal,
        ruleset: Ruleset | str,
        options: BaseModel | Mapping[str, Any] | None = None,
        *,
        hand_checker: HandChecker = pending_confirmation,
    ) -> None:
        """Become a new table of ``deal``, re-using this chart instance (see :meth:`load`):
        a replay keeps one table per chart class instead of building a chart per game
        (about 2 ms). The chart starts again as on construction, since where it starts
        depends on the options (a Four Winds round with no Charleston starts at the Ding
        Dong window, or is over at once): its initial state entered, its eventless
        transitions taken under the new deal's guards, its entry actions run."""
        if _ruleset(ruleset).chart is not self.ruleset.chart:
            raise ValueError(f"a {self.ruleset.chart.__name__} table cannot deal {ruleset}")
        self._deal(deal, ruleset, options, hand_checker)
        self.chart.configuration = OrderedSet()  # no state: the chart has not started
        self.chart.history_values.clear()
        self.chart.activate_initial_state()

    # -- what a family adds -------------------------------------------------------------------
    def reset_family(self) -> None:
        """Set the family's own state (votes, offers, Ding Dongs ...) to a new deal's."""

    def family_snapshot(self) -> dict[str, Any]:
        """The family's own state, JSON-ready (merged into :meth:`snapshot`)."""
        return {}

    def load_family(self, data: Mapping[str, Any]) -> None:
        """Take the family's own state back from a :meth:`snapshot`."""

    def family_witness(self, seat: Seat, name: str) -> dict[str, Any] | None:
        """The fields of a likely-valid ``name`` command of the family's own, else ``None``."""
        return None

    def family_refusal(self, command: Command) -> errors.CharlestonError | None:
        """A more specific refusal than "not now" for a command the chart did not take."""
        return None

    def public_facts(self) -> dict[str, Any]:
        """The family's public table talk, shown to every seat (votes, Ding Dongs ...)."""
        return {}

    def seat_facts(self, seat: Seat) -> dict[str, Any]:
        """What the family shows one seat about its own part (its courtesy pair ...)."""
        return {}

    def director_facts(self) -> dict[str, Any]:
        """What the family adds to the director's view."""
        return {}

    def director_seat_facts(self, seat: Seat) -> dict[str, Any]:
        """What the family adds to one seat's part of the director's view."""
        return {}

    def blind_pass_option(self) -> bool:
        """Whether the ruleset lets a player forward arriving tiles unseen at all."""
        return False

    def default_end_reason(self) -> str:
        return "all passes complete"

    def ending(self, name: Callable[[Seat], str]) -> dict[str, Any] | None:
        """How the Charleston ended, for people; ``None`` while it runs.

        ``how`` is a code a client may style by, ``by`` the seats the words name, ``text``
        the words (``name`` names a seat: ``Ann (East)``). The recorded ``ended_reason``
        stays as the record wrote it; these words are read from the table's facts.
        """
        if not self.finished:
            return None
        return {"how": "all_passes", "by": [], "text": "All passes were played."}

    # -- the public face ------------------------------------------------------------------
    @property
    def active_states(self) -> list[State]:
        """The active states in the chart's document order (several during the Courtesy Pass).

        The chart keeps its configuration in the order states were entered, which a
        restored table cannot know; everything the table shows or says uses this order.
        """
        order = _document_order(type(self.chart))
        return sorted(self.chart.configuration, key=lambda state: order[state.id])

    @property
    def configuration(self) -> list[str]:
        """The ids of :attr:`active_states`."""
        return self._ids(self.chart.configuration)

    def _ids(self, states: Iterable[State]) -> list[str]:
        """The ids of ``states`` in the chart's document order."""
        order = _document_order(type(self.chart))
        return sorted((state.id for state in states), key=order.__getitem__)

    @property
    def finished(self) -> bool:
        return DONE in self.configuration

    def execute(self, command: Command) -> list[Event]:
        """Apply one command; return the events it caused, or raise and change nothing."""
        before = self.chart.configuration  # the library replaces it, never changes it
        self._pending = []
        try:
            if self.library_only or not compiled_steps.take(self, command):
                self.chart.send(command.event, seat=command.seat, command=command)
        except TransitionNotAllowed:
            raise self._refusal(command) from None
        after = self.chart.configuration
        if after is not before and (now := self._ids(after)) != (was := self._ids(before)):
            self._emit("state_changed", None, {"from": was, "to": now})
        events, self._pending = self._pending, []
        self.log.extend(events)
        return events

    def requirement(self, seat: Seat) -> Step | None:
        """The step the seat must act in now, if any (from the active states)."""
        for state in self.active_states:
            step = self.ruleset.steps.get(state.id)
            if step is not None and seat in step.participants:
                return step
        return None

    def active_steps(self) -> list[tuple[str, Step]]:
        return [
            (s.id, self.ruleset.steps[s.id])
            for s in self.active_states
            if s.id in self.ruleset.steps
        ]

    def required_count(self, seat: Seat, step: Step) -> int | None:
        """Exact number of tiles the seat gives in ``step``; ``None`` means any of 0-3."""
        return step.count

    def hand(self, seat: Seat) -> list[int]:
        """Every tile the seat holds: the rack plus received tiles not yet placed."""
        return self.racks[seat] + self.received[seat]

    def passable(self, seat: Seat) -> list[int]:
        """The tiles of the seat's hand that a pass may name (never a joker)."""
        return [t for t in self.hand(seat) if not is_joker(t)]

    def blind_max(self, step: Step) -> int:
        """How many of the arriving tiles a seat may forward unseen in ``step``."""
        return 3 if step.blind and self.blind_pass_option() else 0

    def allowed_commands(self, seat: Seat) -> list[str]:
        """Exactly the commands this seat could give now with some valid argument.

        For each command the table builds the argument most likely to be valid (a
        witness) and asks the chart, guards and validators alike, whether it would take
        it: a listed command always has a valid argument, an unlisted one never has.
        """
        return [
            name
            for name in could_take(self.chart, _COMMAND_NAMES)
            if (witness := self._witness(seat, name)) is not None
            and would_accept(self.chart, name, seat=seat, command=witness)
        ]

    def _witness(self, seat: Seat, name: str) -> Command | None:
        """A valid argument for command ``name`` from ``seat``, if one exists."""
        fields: dict[str, Any] = {}
        if name in ("confirm_pass", "change_pass"):
            step = self.requirement(seat)
            if step is None:
                return None
            selection = self.selections.get(seat)
            if name == "change_pass" and selection is not None:
                fields = {"tiles": list(selection.tiles), "blind": selection.blind}
            else:
                count = self.required_count(seat, step) or 0
                tiles = self.passable(seat)[:count]
                fields = {"tiles": tiles, "blind": count - len(tiles)}
        elif name == "challenge_dead_hand":
            return None  # never valid during the Charleston
        elif name not in ("withdraw_pass", "place_tiles", "declare_mah_jongg"):
            found = self.family_witness(seat, name)
            if found is None:
                return None
            fields = found
        return command_of(name, {"seat": seat, **fields})

    # -- folding and snapshots -------------------------------------------------------------
    @classmethod
    def fold(
        cls,
        deal: Deal,
        ruleset: Ruleset | str,
        options: BaseModel | Mapping[str, Any] | None,
        events: Iterable[Event],
        *,
        warm: bool = False,
        **kwargs: Any,
    ) -> Table:
        """Rebuild a table by replaying the recorded commands through the same chart.

        Every event the replay produces must equal the recorded one, in order. ``warm``:
        fold into this thread's one table of the ruleset's chart class (:meth:`redeal`)
        instead of building a chart; the result is then valid only until the next warm
        fold on this thread, so read what you need from it first. Annotation rows (a
        clock's, a director's: ``ANNOTATION_TYPES``) move nothing and are skipped.
        """
        if not warm:
            table = cls(deal, ruleset, options, **kwargs)
            table._replay(events)
            return table
        chart = _ruleset(ruleset).chart
        kept = _WARM.tables.pop(chart, None)
        if kept is None:
            table = cls(deal, ruleset, options, **kwargs)
        else:
            table = kept
            table.redeal(deal, ruleset, options, **kwargs)
        table._replay(events)  # a table that raised is dropped: its chart may be mid-step
        _WARM.tables[chart] = table
        return table

    def _replay(self, events: Iterable[Event]) -> None:
        """Replay ``events`` as they come (a record file's verify streams them: nothing
        here holds more than the chart's own log)."""
        recorded = (e for e in events if e.type not in ANNOTATION_TYPES)
        log = self.log
        count = 0
        for index, event in enumerate(recorded):
            count = index + 1
            if event.is_command:
                self.execute(event.command())
            produced = log[index] if index < len(log) else None
            if produced != event:
                raise errors.ReplayMismatch(
                    f"Event {index + 1} was recorded as {event.type} but the replay "
                    f"produced {produced.type if produced else 'nothing'}."
                )
        if len(log) != count:
            raise errors.ReplayMismatch(
                f"The replay produced {len(log) - count} events more than recorded."
            )

    def snapshot(self) -> dict[str, Any]:
        """Everything needed to continue this table, as JSON-ready data."""
        return {
            "ruleset": self.ruleset.name,
            "options": self.options.model_dump(mode="json"),
            "deal": self.deal.to_dict(),
            "configuration": self.configuration,
            "racks": {s.value: list(self.racks[s]) for s in SEATS},
            "received": {s.value: list(self.received[s]) for s in SEATS},
            "selections": {
                s.value: {"tiles": list(d.tiles), "blind": d.blind}
                | ({"targets": [t.value for t in d.targets]} if d.targets else {})
                for s, d in self.selections.items()
            },
            "declaration": self.declaration,
            "ended_reason": self.ended_reason,
            "passes_resolved": self.passes_resolved,
            **self.family_snapshot(),
        }

    @classmethod
    def restore(cls, data: Mapping[str, Any], **kwargs: Any) -> Table:
        """A table continued from :meth:`snapshot` (its event log starts empty)."""
        table = Table(Deal.from_dict(data["deal"]), data["ruleset"], data["options"], **kwargs)
        table.load(data)
        return table

    def load(self, data: Mapping[str, Any]) -> None:
        """Become the table of ``data`` (a :meth:`snapshot`), re-using this chart instance.

        Building a chart binds every callback afresh (about 2 ms); a store that handles
        many commands keeps one table per chart class and loads each game into it.
        """
        ruleset = _ruleset(data["ruleset"])
        if ruleset.chart is not self.ruleset.chart:
            raise ValueError(f"a {self.ruleset.chart.__name__} table cannot load {ruleset.name}")
        self.ruleset = ruleset
        self.options = ruleset.options(data["options"])
        self.deal = Deal.from_dict(data["deal"])
        self.wall = list(self.deal.wall)
        self.racks = {Seat(s): list(t) for s, t in data["racks"].items()}
        self.received = {Seat(s): list(t) for s, t in data["received"].items()}
        self.selections = {
            Seat(s): Declaration(
                tuple(d["tiles"]), d["blind"], tuple(Seat(t) for t in d.get("targets", ()))
            )
            for s, d in data["selections"].items()
        }
        self.reset_family()
        self.load_family(data)
        self.declaration = data["declaration"]
        self.ended_reason = data["ended_reason"]
        self.passes_resolved = data["passes_resolved"]
        self.log = []
        self._pending = []
        states = self.chart.states_map
        self.chart.configuration = OrderedSet(states[v] for v in data["configuration"])

    # -- actions: record and move -------------------------------------------------------------
    def _emit(self, type_: str, seat: Seat | None, payload: dict[str, Any]) -> None:
        self._pending.append(Event(type_, seat, payload))

    def _accepted(self, command: Command, **extra: Any) -> None:
        fields = command.model_dump(mode="json", exclude={"type", "seat"})
        self._emit(ACCEPTED_AS[command.event], command.seat, {**fields, **extra})

    @enforces("PASS-05")
    def record_confirm(self, seat: Seat, command: Any) -> None:
        self.selections[seat] = Declaration(tuple(command.tiles), command.blind)
        self._accepted(command)

    @enforces("PASS-05")
    def record_change(self, seat: Seat, command: Any) -> None:
        self.selections[seat] = Declaration(tuple(command.tiles), command.blind)
        self._accepted(command)

    @enforces("PASS-05")
    def record_withdraw(self, seat: Seat, command: Command) -> None:
        del self.selections[seat]
        self._accepted(command)

    @enforces("PASS-08")
    def record_place(self, seat: Seat, command: Command) -> None:
        placed, self.received[seat] = self.received[seat], []
        self.racks[seat].extend(placed)
        self._accepted(command, tiles=placed)

    @enforces("PASS-06", "PASS-07", "NMJL-09")
    def resolve_pass(self, source: State) -> None:
        """Every transfer of the step at once: nobody sees a passed tile before this."""
        step = self.ruleset.steps[source.id]
        declarations = {s: self.selections.pop(s) for s in step.participants}
        result = resolve(step, declarations)
        for handover in result.handovers:
            for tile in handover.from_hand:
                (self.racks if tile in self.racks[handover.giver] else self.received)[
                    handover.giver
                ].remove(tile)
            # a tile can reach the same seat more than once in a blind chain: it is kept
            # only from the handover that brought it last
            kept = [
                t for t in result.kept[handover.receiver] if result.routes[t][-2] is handover.giver
            ]
            self._emit(
                "tiles_transferred",
                handover.giver,
                {
                    "step": source.id,
                    "receiver": handover.receiver.value,
                    "from_hand": handover.from_hand,
                    "forwarded": handover.forwarded,
                    "kept": kept,
                },
            )
        for seat, tiles in result.kept.items():
            self.received[seat].extend(tiles)
        self.passes_resolved += 1
        self._emit(
            "pass_resolved",
            None,
            {
                "step": source.id,
                "label": step.label,
                "moved": result.moved,
                "blind": result.blind_moves,
                "routes": {str(t): [s.value for s in r] for t, r in result.routes.items()},
            },
        )

    def on_enter_CHARLESTON_DONE(self) -> None:
        if self.ended_reason is None:
            self.ended_reason = self.default_end_reason()
        self._emit("charleston_ended", None, {"reason": self.ended_reason})


def tiles_held(table: Table) -> Sequence[int]:
    """Every tile in play: hands, received tiles and the wall (for conservation checks)."""
    return [t for s in SEATS for t in table.hand(s)] + table.wall

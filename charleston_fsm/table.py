"""One table's Charleston: the tiles, the players' choices, and the chart that rules them.

The table is the chart's domain model. The chart decides *whether* a command may
happen now and *which* transition follows; the table's validators say *why* a command
breaks a rule, its guards report facts (everyone confirmed, someone voted stop), and its
actions move tiles and record events. Nothing here decides the order of the steps.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from statemachine import State
from statemachine.exceptions import TransitionNotAllowed
from statemachine.orderedset import OrderedSet

from . import errors
from .commands import ACCEPTED_AS, Command
from .events import Event
from .hands import HandChecker, pending_confirmation
from .resolution import Declaration, resolve
from .rulesets import DEFAULT_RULESET, CourtesyMode, Options, Ruleset, SecondCharlestonOrder
from .rulesets import get_ruleset as _get_ruleset
from .seats import SEATS, Seat
from .steps import COURTESY_PAIRS, Step
from .tiles import Deal, describe, is_joker

DONE = "CHARLESTON_DONE"

#: Why a command is refused when the chart accepts it nowhere in the current state.
NOT_NOW_HINTS: dict[str, str] = {
    "declare_mah_jongg": (
        "East may declare Mah Jongg only before the first pass is confirmed (Heavenly "
        "Hand) or once the Charleston is complete (Earthly Hand); winning during the "
        "Charleston does not end it, all passes still happen."
    ),
    "vote": "Votes are cast once the First Charleston is complete, before the Second.",
    "offer_courtesy": (
        "Courtesy offers are made at the Courtesy Pass, in rulesets where the pair must "
        "agree a count; where counts may differ, choose 0-3 tiles with confirm_pass."
    ),
}


class Table:
    """The state of one table and the chart instance that drives it."""

    def __init__(
        self,
        deal: Deal,
        ruleset: Ruleset | str = DEFAULT_RULESET,
        options: Options | Mapping[str, Any] | None = None,
        *,
        hand_checker: HandChecker = pending_confirmation,
    ) -> None:
        self.ruleset = _get_ruleset(ruleset) if isinstance(ruleset, str) else ruleset
        self.options = options if isinstance(options, Options) else self.ruleset.options(options)
        self.deal = deal
        self.hand_checker = hand_checker
        self.racks: dict[Seat, list[int]] = {s: list(deal.hands[s]) for s in SEATS}
        self.received: dict[Seat, list[int]] = {s: [] for s in SEATS}
        self.wall: list[int] = list(deal.wall)
        self.selections: dict[Seat, Declaration] = {}
        self.votes: dict[Seat, str] = {}
        self.offers: dict[Seat, int] = {}
        self.agreed: dict[int, int] = {}
        self.declaration: dict[str, Any] | None = None
        self.ended_reason: str | None = None
        self.passes_resolved = 0
        self.log: list[Event] = []
        self._pending: list[Event] = []
        self.chart = self.ruleset.chart(model=self)

    # -- the public face ------------------------------------------------------------------
    @property
    def active_states(self) -> list[State]:
        """The active states in the chart's document order (several during the Courtesy Pass).

        The chart keeps its configuration in the order states were entered, which a
        restored table cannot know; everything the table shows or says uses this order.
        """
        active = set(self.chart.configuration)
        return [state for state in self.chart.states_map.values() if state in active]

    @property
    def configuration(self) -> list[str]:
        """The ids of :attr:`active_states`."""
        return [state.id for state in self.active_states]

    @property
    def finished(self) -> bool:
        return DONE in self.configuration

    def execute(self, command: Command) -> list[Event]:
        """Apply one command; return the events it caused, or raise and change nothing."""
        before = self.configuration
        self._pending = []
        try:
            self.chart.send(command.event, seat=command.seat, command=command)
        except TransitionNotAllowed:
            raise self._refusal(command) from None
        after = self.configuration
        if after != before:
            self._emit("state_changed", None, {"from": before, "to": after})
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
        if step.count is not None:
            return step.count
        if self.options.courtesy_mode is CourtesyMode.AGREED_MIN:
            return self.agreed[self._pair_index(seat)]
        return None

    def hand(self, seat: Seat) -> list[int]:
        """Every tile the seat holds: the rack plus received tiles not yet placed."""
        return self.racks[seat] + self.received[seat]

    def allowed_commands(self, seat: Seat) -> list[str]:
        """Commands the chart would take from this seat now (guards only, not validators)."""
        return sorted({e.id for e in self.chart.enabled_events(seat=seat)} - _AUTOMATIC)

    # -- folding and snapshots -------------------------------------------------------------
    @classmethod
    def fold(
        cls,
        deal: Deal,
        ruleset: Ruleset | str,
        options: Options | Mapping[str, Any] | None,
        events: Iterable[Event],
        **kwargs: Any,
    ) -> Table:
        """Rebuild a table by replaying the recorded commands through the same chart.

        Every event the replay produces must equal the recorded one, in order.
        """
        table = cls(deal, ruleset, options, **kwargs)
        recorded = list(events)
        for index, event in enumerate(recorded):
            if event.is_command:
                table.execute(event.command())
            produced = table.log[index] if index < len(table.log) else None
            if produced != event:
                raise errors.ReplayMismatch(
                    f"Event {index + 1} was recorded as {event.type} but the replay "
                    f"produced {produced.type if produced else 'nothing'}."
                )
        if len(table.log) != len(recorded):
            raise errors.ReplayMismatch(
                f"The replay produced {len(table.log) - len(recorded)} events more than recorded."
            )
        return table

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
                for s, d in self.selections.items()
            },
            "votes": {s.value: v for s, v in self.votes.items()},
            "offers": {s.value: c for s, c in self.offers.items()},
            "agreed": {str(k): v for k, v in self.agreed.items()},
            "declaration": self.declaration,
            "ended_reason": self.ended_reason,
            "passes_resolved": self.passes_resolved,
        }

    @classmethod
    def restore(cls, data: Mapping[str, Any], **kwargs: Any) -> Table:
        """A table continued from :meth:`snapshot` (its event log starts empty)."""
        table = cls(Deal.from_dict(data["deal"]), data["ruleset"], data["options"], **kwargs)
        table.load(data)
        return table

    def load(self, data: Mapping[str, Any]) -> None:
        """Become the table of ``data`` (a :meth:`snapshot`), re-using this chart instance.

        Building a chart binds every callback afresh (about 2 ms); a store that handles
        many commands keeps one table per chart class and loads each game into it.
        """
        ruleset = _get_ruleset(data["ruleset"])
        if ruleset.chart is not self.ruleset.chart:
            raise ValueError(f"a {self.ruleset.chart.__name__} table cannot load {ruleset.name}")
        self.ruleset = ruleset
        self.options = ruleset.options(data["options"])
        self.deal = Deal.from_dict(data["deal"])
        self.wall = list(self.deal.wall)
        self.racks = {Seat(s): list(t) for s, t in data["racks"].items()}
        self.received = {Seat(s): list(t) for s, t in data["received"].items()}
        self.selections = {
            Seat(s): Declaration(tuple(d["tiles"]), d["blind"])
            for s, d in data["selections"].items()
        }
        self.votes = {Seat(s): v for s, v in data["votes"].items()}
        self.offers = {Seat(s): c for s, c in data["offers"].items()}
        self.agreed = {int(k): v for k, v in data["agreed"].items()}
        self.declaration = data["declaration"]
        self.ended_reason = data["ended_reason"]
        self.passes_resolved = data["passes_resolved"]
        self.log = []
        self._pending = []
        states = self.chart.states_map
        self.chart.configuration = OrderedSet(states[v] for v in data["configuration"])

    # -- refusals -------------------------------------------------------------------------
    def _refusal(self, command: Command) -> errors.CharlestonError:
        event = command.event
        if event == "challenge_dead_hand":
            return errors.DeadHandChallengeRefused(
                f"{command.seat.label} cannot call {command.target.label}'s hand dead: "  # type: ignore[union-attr]
                "the game has not begun during the Charleston."
            )
        state = self._state_label()
        if self.finished:
            return errors.CharlestonOver(
                f"The Charleston is complete ({self.ended_reason}); {event} is no longer "
                "possible. Only East's Earthly Hand declaration and placing received tiles remain."
            )
        if event in {e.id for e in self.chart.allowed_events}:
            step = self.requirement(command.seat)
            waiting = self._awaited()
            return errors.SeatNotInStep(
                f"{command.seat.label} does not take part in {event} now "
                f"({state}); waiting for: {', '.join(s.label for s in waiting) or 'nobody'}."
                + (f" Your own step is {step.label}." if step else "")
            )
        allowed = ", ".join(self.allowed_commands(command.seat)) or "none"
        hint = NOT_NOW_HINTS.get(event, "")
        return errors.NotAllowedNow(
            f"{event} is not valid now: the table is at {state}. {hint} "
            f"Commands {command.seat.label} can give now: {allowed}.".replace("  ", " ")
        )

    def _state_label(self) -> str:
        leaves = [s for s in self.active_states if not s.states]
        return "; ".join(f"{s.name} ({s.id})" for s in leaves)

    def _awaited(self) -> list[Seat]:
        return [
            s
            for _, step in self.active_steps()
            for s in step.participants
            if s not in self.selections
        ]

    # -- validators: raise a specific refusal, change nothing -----------------------------
    def check_confirm(self, seat: Seat, command: Command) -> None:
        step = self.requirement(seat)
        if step is None:
            return  # not this seat's step: the chart's guards refuse it
        if seat in self.selections:
            raise errors.AlreadyConfirmed(
                f"{seat.label} has already confirmed this pass; withdraw it or change it "
                "(change_pass) before it resolves."
            )
        self._check_selection(seat, step, command)

    def check_change(self, seat: Seat, command: Command) -> None:
        step = self.requirement(seat)
        if step is None:
            return
        self.check_withdraw(seat)
        self._check_selection(seat, step, command)

    def check_withdraw(self, seat: Seat) -> None:
        if self.requirement(seat) is not None and seat not in self.selections:
            raise errors.NothingConfirmed(
                f"{seat.label} has no confirmed choice in this pass to withdraw or change."
            )

    def _check_selection(self, seat: Seat, step: Step, command: Any) -> None:
        tiles: list[int] = command.tiles
        blind: int = command.blind
        if self.options.require_placing and self.received[seat]:
            raise errors.TilesNotPlaced(
                f"{seat.label} has {len(self.received[seat])} received tile(s) beside the "
                "rack: place them (place_tiles) before confirming the next pass."
            )
        if blind:
            if not (step.blind and self.options.blind_pass):
                where = (
                    "this ruleset has no blind pass"
                    if not self.options.blind_pass
                    else "only the last pass of each Charleston may be blind"
                )
                raise errors.BlindPassNotAllowed(
                    f"{step.label} cannot be a blind pass: {where}. Give 3 tiles from the hand."
                )
            if not 0 <= blind <= 3:
                raise errors.WrongCount(
                    f"A blind pass forwards 0 to 3 of the arriving tiles, not {blind}."
                )
        expected = self.required_count(seat, step)
        if expected is None:
            if not 0 <= len(tiles) <= 3:
                raise errors.WrongCount(
                    f"A courtesy pass is 0 to 3 tiles; {seat.label} chose {len(tiles)}."
                )
        elif len(tiles) + blind != expected:
            what = f"{len(tiles)} from the hand" + (f" and {blind} blind" if blind else "")
            raise errors.WrongCount(
                f"{step.label} is exactly {expected} tile(s); {seat.label} chose {what}."
                + (
                    " Pick tiles from your hand, or declare the rest blind."
                    if step.blind and self.options.blind_pass
                    else ""
                )
            )
        seen: set[int] = set()
        hand = set(self.hand(seat))
        for tile in tiles:
            if tile in seen:
                raise errors.TileNamedTwice(
                    f"Tile {describe([tile])} is named twice; choose {len(tiles)} different tiles."
                )
            seen.add(tile)
            if tile not in hand:
                raise errors.TileNotInHand(
                    f"Tile id {tile} is not in {seat.label}'s hand; "
                    "pass only tiles from your own rack."
                )
            if is_joker(tile):
                raise errors.JokerPassed(errors.JokerPassed.MESSAGE)

    def check_vote(self, seat: Seat) -> None:
        if seat in self.votes:
            raise errors.AlreadyVoted(f"{seat.label} has already voted {self.votes[seat]}.")

    def check_offer(self, seat: Seat, command: Any) -> None:
        if seat in self.offers:
            raise errors.AlreadyOffered(
                f"{seat.label} has already offered {self.offers[seat]} courtesy tile(s)."
            )
        if not 0 <= command.count <= 3:
            raise errors.WrongCount(
                f"A courtesy offer is 0 to 3 tiles; {seat.label} offered {command.count}."
            )

    def check_place(self, seat: Seat) -> None:
        if not self.received[seat]:
            raise errors.NothingToPlace(f"{seat.label} has no received tiles to place.")

    def check_heavenly_hand(self, seat: Seat) -> None:
        self._check_declarer(seat)
        if self.selections:
            raise errors.HeavenlyHandTooLate(
                "The first pass has begun (a choice is confirmed): a Heavenly Hand can no "
                "longer be declared. East may declare an Earthly Hand once the Charleston "
                "is complete."
            )

    def check_earthly_hand(self, seat: Seat) -> None:
        self._check_declarer(seat)
        if self.declaration is not None:
            raise errors.AlreadyDeclared(
                f"East already declared a {self.declaration['kind']} hand in this game."
            )

    def _check_declarer(self, seat: Seat) -> None:
        if seat is not Seat.EAST:
            raise errors.OnlyEastDeclares(
                f"{seat.label} cannot declare Mah Jongg now: only East holds 14 tiles before "
                "play begins."
            )

    # -- guards: facts about the table --------------------------------------------------------
    def all_confirmed(self, source: State) -> bool:
        step = self.ruleset.steps[source.id]
        return all(s in self.selections for s in step.participants)

    def tiles_from_hand(self) -> bool:
        return any(d.tiles for d in self.selections.values())

    def blind_passes_allowed(self) -> bool:
        return self.options.blind_pass

    def any_stop(self) -> bool:
        return "stop" in self.votes.values()

    def all_continue(self) -> bool:
        return len(self.votes) == len(SEATS) and set(self.votes.values()) == {"continue"}

    def second_left_first(self) -> bool:
        return self.options.second_charleston_order is SecondCharlestonOrder.LEFT_ACROSS_RIGHT

    def second_across_first(self) -> bool:
        return self.options.second_charleston_order is SecondCharlestonOrder.ACROSS_LEFT_RIGHT

    def courtesy_counts_free(self) -> bool:
        return self.options.courtesy_mode is CourtesyMode.ASYMMETRIC

    def from_east(self, seat: Seat) -> bool:
        return seat is Seat.EAST

    def from_pair_1(self, seat: Seat) -> bool:
        return seat in COURTESY_PAIRS[0]

    def from_pair_2(self, seat: Seat) -> bool:
        return seat in COURTESY_PAIRS[1]

    def pair_1_declined(self) -> bool:
        return self._pair_offer(0) == 0

    def pair_2_declined(self) -> bool:
        return self._pair_offer(1) == 0

    def pair_1_agreed(self) -> bool:
        return (self._pair_offer(0) or 0) > 0

    def pair_2_agreed(self) -> bool:
        return (self._pair_offer(1) or 0) > 0

    def pair_1_confirmed(self) -> bool:
        return all(s in self.selections for s in COURTESY_PAIRS[0])

    def pair_2_confirmed(self) -> bool:
        return all(s in self.selections for s in COURTESY_PAIRS[1])

    def _pair_offer(self, pair: int) -> int | None:
        """The smaller offer of a pair once both have offered (``agreed_min``)."""
        if self.options.courtesy_mode is not CourtesyMode.AGREED_MIN:
            return None
        offers = [self.offers.get(s) for s in COURTESY_PAIRS[pair]]
        return None if None in offers else min(offers)  # type: ignore[type-var]

    @staticmethod
    def _pair_index(seat: Seat) -> int:
        return 0 if seat in COURTESY_PAIRS[0] else 1

    # -- actions: record and move -------------------------------------------------------------
    def _emit(self, type_: str, seat: Seat | None, payload: dict[str, Any]) -> None:
        self._pending.append(Event(type_, seat, payload))

    def _accepted(self, command: Command, **extra: Any) -> None:
        fields = command.model_dump(mode="json", exclude={"type", "seat"})
        self._emit(ACCEPTED_AS[command.event], command.seat, {**fields, **extra})

    def record_confirm(self, seat: Seat, command: Any) -> None:
        self.selections[seat] = Declaration(tuple(command.tiles), command.blind)
        self._accepted(command)

    def record_change(self, seat: Seat, command: Any) -> None:
        self.selections[seat] = Declaration(tuple(command.tiles), command.blind)
        self._accepted(command)

    def record_withdraw(self, seat: Seat, command: Command) -> None:
        del self.selections[seat]
        self._accepted(command)

    def record_vote(self, seat: Seat, command: Any) -> None:
        self.votes[seat] = command.choice
        self._accepted(command)

    def record_offer(self, seat: Seat, command: Any) -> None:
        self.offers[seat] = command.count
        self._accepted(command)

    def record_place(self, seat: Seat, command: Command) -> None:
        placed, self.received[seat] = self.received[seat], []
        self.racks[seat].extend(placed)
        self._accepted(command, tiles=placed)

    def record_declaration(self, seat: Seat, command: Command, source: State) -> None:
        kind = "heavenly" if source.id == "CHARLESTON_P1_R" else "earthly"
        verdict = self.hand_checker(self.hand(seat))
        self.declaration = {"seat": seat.value, "kind": kind, "verdict": verdict}
        self._accepted(command, kind=kind, verdict=verdict)

    def record_agreement(self, source: State) -> None:
        pair_index = 0 if source.id.startswith("PAIR_1") else 1
        count = self._pair_offer(pair_index) or 0
        self.agreed[pair_index] = count
        pair = COURTESY_PAIRS[pair_index]
        self._emit("courtesy_agreed", None, {"pair": [s.value for s in pair], "count": count})

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
        if not result.moved and step.blind:
            self.ended_reason = "no tiles passed from any hand on a blind pass"
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
            heavenly = self.declaration and self.declaration["kind"] == "heavenly"
            self.ended_reason = "Heavenly Hand declared" if heavenly else "all passes complete"
        self._emit("charleston_ended", None, {"reason": self.ended_reason})


_AUTOMATIC = {"done_state_COURTESY_PASS", "done.state.COURTESY_PASS"}


def tiles_held(table: Table) -> Sequence[int]:
    """Every tile in play: hands, received tiles and the wall (for conservation checks)."""
    return [t for s in SEATS for t in table.hand(s)] + table.wall

"""The table's validators and refusals: *why* a command breaks a rule, said precisely.

A validator raises a specific refusal naming its rule id and changes nothing; when the
chart takes a command nowhere, :meth:`Checks._refusal` says why. These are the checks
every chart family shares (a pass's selection, placing); a family adds its own beside
its chart. Mixed into :class:`charleston_fsm.engine.table.Table`, whose state they read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from statemachine import State, StateChart

from ..rulebook import enforces
from . import errors
from .commands import DIRECTOR_COMMANDS, ChallengeDeadHand, ChangePass, Command, ConfirmPass
from .resolution import Declaration
from .ruleset import Ruleset
from .seats import Seat
from .steps import Step
from .tiles import describe, is_joker

#: What a chosen selection must satisfy: count, jokers, own tiles, locking, placing, blind.
SELECTION_RULES = (
    *("PASS-01", "PASS-02", "PASS-03", "PASS-04", "PASS-05", "PASS-08"),
    *("NMJL-07", "NMJL-13", "HOUSE-02", "HOUSE-03", "FW-02"),
)


class Checks:
    """Validators of the chart's transitions, and the refusal of a command taken nowhere."""

    options: Any
    ruleset: Ruleset
    chart: StateChart
    received: dict[Seat, list[int]]
    selections: dict[Seat, Declaration]
    ended_reason: str | None

    #: Why a command is refused when the chart accepts it nowhere in the current state,
    #: and the rule it breaks then (default SVC-01); each family fills in its own.
    NOT_NOW_HINTS: ClassVar[dict[str, str]] = {}
    NOT_NOW_RULES: ClassVar[dict[str, str]] = {}
    #: What may still happen once the Charleston is complete.
    AFTER_THE_END: ClassVar[str] = "Only placing received tiles remains."
    #: The rule that refuses a blind pass where the ruleset has none.
    NO_BLIND_PASS_RULE: ClassVar[str]

    if TYPE_CHECKING:  # provided by Table

        @property
        def active_states(self) -> list[State]: ...
        @property
        def finished(self) -> bool: ...
        def requirement(self, seat: Seat) -> Step | None: ...
        def active_steps(self) -> list[tuple[str, Step]]: ...
        def required_count(self, seat: Seat, step: Step) -> int | None: ...
        def hand(self, seat: Seat) -> list[int]: ...
        def allowed_commands(self, seat: Seat) -> list[str]: ...
        def blind_max(self, step: Step) -> int: ...
        def blind_pass_option(self) -> bool: ...
        def family_refusal(self, command: Command) -> errors.CharlestonError | None: ...

    # -- refusals -------------------------------------------------------------------------
    @enforces("NMJL-16", "NMJL-18", "NMJL-20", "SVC-01", "FW-08")
    def _refusal(self, command: Command) -> errors.CharlestonError:
        event, seat = command.event, command.seat
        if isinstance(command, ChallengeDeadHand):
            return errors.DeadHandChallengeRefused(
                f"{command.seat.label} cannot call {command.target.label}'s hand dead: "
                "the game has not begun during the Charleston."
            )
        if event not in {e.id for e in self.chart.events}:
            ruleset = self.ruleset
            return errors.NotInRuleset(
                f"{event} is not part of the {ruleset.name} ruleset ({ruleset.title})."
            )
        if event in DIRECTOR_COMMANDS and seat is not None:
            return errors.NotADirectorCommand(
                f"{event} is given by the platform or the director, not by a seat."
            )
        specific = self.family_refusal(command)
        if specific is not None:
            return specific
        state = self._state_label()
        if self.finished:
            return errors.CharlestonOver(
                f"The Charleston is complete ({self.ended_reason}); {event} is no longer "
                f"possible. {self.AFTER_THE_END}"
            )
        if seat is None:
            return errors.NotAllowedNow(f"{event} is not valid now: the table is at {state}.")
        if event in {e.id for e in self.chart.allowed_events}:
            step = self.requirement(seat)
            waiting = self._awaited()
            return errors.SeatNotInStep(
                f"{seat.label} does not take part in {event} now "
                f"({state}); waiting for: {', '.join(s.label for s in waiting) or 'nobody'}."
                + (f" Your own step is {step.label}." if step else "")
            )
        allowed = ", ".join(self.allowed_commands(seat)) or "none"
        hint = self.NOT_NOW_HINTS.get(event, "")
        return errors.NotAllowedNow(
            f"{event} is not valid now: the table is at {state}. {hint} "
            f"Commands {seat.label} can give now: {allowed}.".replace("  ", " "),
            rule=self.NOT_NOW_RULES.get(event, errors.NotAllowedNow.rule),
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
    @enforces(*SELECTION_RULES)
    def check_confirm(self, seat: Seat, command: ConfirmPass) -> None:
        step = self.requirement(seat)
        if step is None:
            return  # not this seat's step: the chart's guards refuse it
        if seat in self.selections:
            raise errors.AlreadyConfirmed(
                f"{seat.label} has already confirmed this pass; withdraw it or change it "
                "(change_pass) before it resolves."
            )
        self._check_selection(seat, step, command.tiles, command.blind)

    @enforces(*SELECTION_RULES)
    def check_change(self, seat: Seat, command: ChangePass) -> None:
        step = self.requirement(seat)
        if step is None:
            return
        self.check_withdraw(seat)
        self._check_selection(seat, step, command.tiles, command.blind)

    @enforces("PASS-05")
    def check_withdraw(self, seat: Seat) -> None:
        if self.requirement(seat) is not None and seat not in self.selections:
            raise errors.NothingConfirmed(
                f"{seat.label} has no confirmed choice in this pass to withdraw or change."
            )

    def _check_selection(self, seat: Seat, step: Step, tiles: list[int], blind: int = 0) -> None:
        """The tiles a seat gives in ``step`` (plus ``blind`` unseen): placing first, the
        count, each tile once, from its own hand, never a joker."""
        if self.options.require_placing and self.received[seat]:
            raise errors.TilesNotPlaced(
                f"{seat.label} has {len(self.received[seat])} received tile(s) beside the "
                "rack: place them (place_tiles) before confirming the next pass."
            )
        if blind:
            if not self.blind_max(step):
                where = (
                    "this ruleset has no blind pass"
                    if not self.blind_pass_option()
                    else "only the last pass of each Charleston may be blind"
                )
                raise errors.BlindPassNotAllowed(
                    f"{step.label} cannot be a blind pass: {where}. Give 3 tiles from the hand.",
                    rule="NMJL-07" if self.blind_pass_option() else self.NO_BLIND_PASS_RULE,
                )
            if not 0 <= blind <= 3:
                raise errors.WrongCount(
                    f"A blind pass forwards 0 to 3 of the arriving tiles, not {blind}.",
                    rule="NMJL-07",
                )
        expected = self.required_count(seat, step)
        if expected is None:
            if not 0 <= len(tiles) <= 3:
                raise errors.WrongCount(
                    f"A courtesy pass is 0 to 3 tiles; {seat.label} chose {len(tiles)}.",
                    rule="PASS-02",
                )
        elif len(tiles) + blind != expected:
            what = f"{len(tiles)} from the hand" + (f" and {blind} blind" if blind else "")
            raise errors.WrongCount(
                f"{step.label} is exactly {expected} tile(s); {seat.label} chose {what}."
                + (
                    " Pick tiles from your hand, or declare the rest blind."
                    if self.blind_max(step)
                    else ""
                ),
                rule="NMJL-13" if step.courtesy else "FW-04" if step.addressed else "PASS-01",
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

    @enforces("PASS-08")
    def check_place(self, seat: Seat) -> None:
        if not self.received[seat]:
            raise errors.NothingToPlace(f"{seat.label} has no received tiles to place.")

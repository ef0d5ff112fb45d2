"""The standard family's table: the guards, validators and actions its chart names.

Votes, courtesy offers, Heavenly and Earthly Hands; what every family shares (placing,
passes, resolution) is in :class:`charleston_fsm.engine.table.Table`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from statemachine import State, StateChart

from ....rulebook import enforces
from ... import errors
from ...commands import Command, JudgeDeclaration
from ...seats import SEATS, Seat, joined
from ...steps import COURTESY_PAIRS, Step
from ...table import Table
from ...tiles import HAND_SIZE
from .chart import StandardCharleston
from .options import CourtesyMode, Options, SecondCharlestonOrder


class StandardTable(Table):
    """The standard family's table: votes, courtesy offers, Heavenly and Earthly Hands."""

    options: Options

    CHART: ClassVar[type[StateChart]] = StandardCharleston
    NO_BLIND_PASS_RULE: ClassVar[str] = "HOUSE-02"
    NOT_NOW_RULES: ClassVar[dict[str, str]] = {"declare_mah_jongg": "NMJL-16", "vote": "NMJL-02"}
    AFTER_THE_END: ClassVar[str] = (
        "Only East's Earthly Hand declaration and placing received tiles remain."
    )
    NOT_NOW_HINTS: ClassVar[dict[str, str]] = {
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

    # -- the family's own state ---------------------------------------------------------------
    def reset_family(self) -> None:
        self.votes: dict[Seat, str] = {}
        self.offers: dict[Seat, int] = {}
        self.agreed: dict[int, int] = {}

    def family_snapshot(self) -> dict[str, Any]:
        return {
            "votes": {s.value: v for s, v in self.votes.items()},
            "offers": {s.value: c for s, c in self.offers.items()},
            "agreed": {str(k): v for k, v in self.agreed.items()},
        }

    def load_family(self, data: Any) -> None:
        self.votes = {Seat(s): v for s, v in data["votes"].items()}
        self.offers = {Seat(s): c for s, c in data["offers"].items()}
        self.agreed = {int(k): v for k, v in data["agreed"].items()}

    def public_facts(self) -> dict[str, Any]:
        return {"votes": {s.value: v for s, v in self.votes.items()}}

    def seat_facts(self, seat: Seat) -> dict[str, Any]:
        pair = next(p for p in COURTESY_PAIRS if seat in p)
        return {
            "courtesy": {
                "pair": [s.value for s in pair],
                "offers": {s.value: self.offers[s] for s in pair if s in self.offers},
                "agreed": self.agreed.get(COURTESY_PAIRS.index(pair)),
            }
        }

    def director_facts(self) -> dict[str, Any]:
        return {
            "courtesy_agreed": {
                "-".join(p.value for p in COURTESY_PAIRS[i]): c for i, c in self.agreed.items()
            }
        }

    def director_seat_facts(self, seat: Seat) -> dict[str, Any]:
        return {"offer": self.offers.get(seat)}

    def required_count(self, seat: Seat, step: Step) -> int | None:
        if step.count is None and self.options.courtesy_mode is CourtesyMode.AGREED_MIN:
            return self.agreed[self._pair_index(seat)]
        return step.count

    def blind_pass_option(self) -> bool:
        return self.options.blind_pass

    def family_witness(self, seat: Seat, name: str) -> dict[str, Any] | None:
        if name == "vote":
            return {"choice": "stop"}  # valid wherever a vote is: at the vote, or late
        if name == "offer_courtesy":
            return {"count": 0}
        return None

    @enforces("NMJL-06", "HOUSE-04")
    def family_refusal(self, command: Command) -> errors.CharlestonError | None:
        if command.event == "judge_declaration" and command.seat is None:
            return self._judgement_refusal()
        if command.event != "vote" or not self.all_continue() or self.finished:
            return None
        if self.options.late_objection:
            return errors.SecondCharlestonMandatory(
                "The first pass of the Second Charleston has resolved and its tiles have "
                "been seen: the Second Charleston is now mandatory, and a stop is refused. "
                "Pass as your step asks.",
                rule="NMJL-06",
            )
        return errors.SecondCharlestonMandatory(
            "This ruleset takes objections at the vote only: all four voted to continue, "
            "so the Second Charleston is played in full.",
            rule="HOUSE-04",
        )

    def ending(self, name: Callable[[Seat], str]) -> dict[str, Any] | None:
        if not self.finished:
            return None
        d = self.declaration
        east = name(Seat.EAST)
        stops = [s for s in SEATS if self.votes.get(s) == "stop"]
        if d and d["kind"] == "heavenly" and not self._set_aside_heavenly():
            how, by = "heavenly", [Seat.EAST]
            text = f"{east} declared a Heavenly Hand before the first pass: no tile was passed."
        elif stops:
            how, by = "stopped", stops
            text = (
                f"Stopped by a vote: {joined([name(s) for s in stops])} voted to stop, so the "
                "Second Charleston was not played; the First Charleston and the Courtesy "
                "Pass were."
            )
        elif self.ended_reason == NO_COURTESY:
            how, by = "no_courtesy", []
            text = (
                "Every pass was played; on the Second Right no one gave a tile from the hand, "
                "so nothing moved and there was no Courtesy Pass."
            )
        else:
            how, by = "all_passes", []
            text = "All passes were played: both Charlestons and the Courtesy Pass."
        if self._set_aside_heavenly():
            text = (
                f"{east}'s Heavenly Hand was judged invalid by the director and set aside. " + text
            )
        elif d is not None:
            text += " " + _verdict_words(d, east)
        return {"how": how, "by": [s.value for s in by], "text": text}

    def default_end_reason(self) -> str:
        declared = self.declaration
        heavenly = declared and declared["kind"] == "heavenly" and declared["verdict"] != "invalid"
        return "Heavenly Hand declared" if heavenly else "all passes complete"

    # -- validators ----------------------------------------------------------------------------
    @enforces("NMJL-02")
    def check_vote(self, seat: Seat) -> None:
        if seat in self.votes:
            raise errors.AlreadyVoted(f"{seat.label} has already voted {self.votes[seat]}.")

    @enforces("NMJL-05")
    def check_late_objection(self, seat: Seat, command: Any) -> None:
        if self.options.late_objection and command.choice != "stop":
            raise errors.OnlyStopNow(
                f"All four have voted to continue; {seat.label} may still object (vote stop) "
                "until the first pass of the Second Charleston resolves, but has nothing "
                "else to vote."
            )

    @enforces("NMJL-13")
    def check_offer(self, seat: Seat, command: Any) -> None:
        if seat in self.offers:
            raise errors.AlreadyOffered(
                f"{seat.label} has already offered {self.offers[seat]} courtesy tile(s)."
            )
        if not 0 <= command.count <= 3:
            raise errors.WrongCount(
                f"A courtesy offer is 0 to 3 tiles; {seat.label} offered {command.count}.",
                rule="NMJL-13",
            )

    @enforces("NMJL-14", "NMJL-17", "NMJL-21")
    def check_heavenly_hand(self, seat: Seat) -> None:
        self._check_declarer(seat)
        if self.declaration is not None:
            raise errors.AlreadyDeclared(
                "East's Heavenly Hand was judged invalid by the director: the same hand "
                "cannot be declared again. Pass as the First Right asks.",
                rule="NMJL-21",
            )
        if self.selections:
            raise errors.HeavenlyHandTooLate(
                "The first pass has begun (a choice is confirmed): a Heavenly Hand can no "
                "longer be declared. East may declare an Earthly Hand once the Charleston "
                "is complete."
            )

    @enforces("NMJL-15", "NMJL-17")
    def check_earthly_hand(self, seat: Seat) -> None:
        self._check_declarer(seat)
        if self.declaration is not None and not self._set_aside_heavenly():
            raise errors.AlreadyDeclared(
                f"East already declared a {self.declaration['kind']} hand in this game."
            )
        held = len(self.hand(seat))
        if held != HAND_SIZE[Seat.EAST]:
            raise errors.EarthlyHandTileCount(
                f"East holds {held} tiles: an Earthly Hand is declared holding exactly "
                f"{HAND_SIZE[Seat.EAST]}, and an uneven Courtesy Pass left East with {held}."
            )

    @enforces("NMJL-21")
    def check_judgement(self, seat: Seat | None) -> None:
        refusal = self._judgement_refusal()
        if refusal is not None:
            raise refusal

    def _judgement_refusal(self) -> errors.CharlestonError | None:
        """Why no verdict can be given now: nothing declared, or judged already. A
        Heavenly Hand judged invalid is set aside, but it was judged: the director who
        loses a race to judge it learns the verdict given, not that nothing was declared."""
        d = self.declaration
        if d is None:
            return errors.NoDeclarationToJudge(
                "Nothing is declared: East has no pending Mah Jongg declaration to judge."
            )
        if not d.get("judged"):
            return None
        if self._set_aside_heavenly():
            happened = "so it was set aside and the Charleston is played from the First Right"
        elif d["verdict"] == "valid":
            happened = "so the game ended with it"
        else:
            happened = "so the Charleston stays complete"
        return errors.DeclarationAlreadyJudged(
            f"East's {d['kind'].capitalize()} Hand was already judged {d['verdict']} by the "
            f"director, {happened}. A declaration is judged once: read the verdict in the "
            "record's declaration_judged row, and record a ruling to add to it."
        )

    def _set_aside_heavenly(self) -> bool:
        """An invalid Heavenly Hand, set aside: the Charleston was played after it."""
        d = self.declaration
        return bool(d and d["kind"] == "heavenly" and d["verdict"] == "invalid" and d.get("judged"))

    def _check_declarer(self, seat: Seat) -> None:
        if seat is not Seat.EAST:
            raise errors.OnlyEastDeclares(
                f"{seat.label} cannot declare Mah Jongg now: only East holds 14 tiles before "
                "play begins."
            )

    # -- guards --------------------------------------------------------------------------------
    @enforces("NMJL-10")
    def tiles_from_hand(self) -> bool:
        return any(d.tiles for d in self.selections.values())

    @enforces("NMJL-10")
    def blind_passes_allowed(self) -> bool:
        return self.options.blind_pass

    @enforces("NMJL-05", "HOUSE-04")
    def late_objection_allowed(self) -> bool:
        return self.options.late_objection

    @enforces("NMJL-02")
    def any_stop(self) -> bool:
        return "stop" in self.votes.values()

    @enforces("NMJL-03")
    def all_continue(self) -> bool:
        return len(self.votes) == len(SEATS) and set(self.votes.values()) == {"continue"}

    @enforces("NMJL-04")
    def second_left_first(self) -> bool:
        return self.options.second_charleston_order is SecondCharlestonOrder.LEFT_ACROSS_RIGHT

    @enforces("HOUSE-01")
    def second_across_first(self) -> bool:
        return self.options.second_charleston_order is SecondCharlestonOrder.ACROSS_LEFT_RIGHT

    @enforces("HOUSE-03")
    def courtesy_counts_free(self) -> bool:
        return self.options.courtesy_mode is CourtesyMode.ASYMMETRIC

    @enforces("NMJL-12", "PASS-10")
    def from_pair_1(self, seat: Seat) -> bool:
        return seat in COURTESY_PAIRS[0]

    @enforces("NMJL-12", "PASS-10")
    def from_pair_2(self, seat: Seat) -> bool:
        return seat in COURTESY_PAIRS[1]

    @enforces("NMJL-21")
    def from_director(self, seat: Seat | None) -> bool:
        return seat is None

    @enforces("NMJL-21")
    def heavenly_declared(self) -> bool:
        return bool(self.declaration and self.declaration["kind"] == "heavenly")

    @enforces("NMJL-21")
    def judged_invalid(self, command: JudgeDeclaration) -> bool:
        return command.verdict == "invalid"

    @enforces("NMJL-13")
    def pair_1_declined(self) -> bool:
        return self._pair_offer(0) == 0

    @enforces("NMJL-13")
    def pair_2_declined(self) -> bool:
        return self._pair_offer(1) == 0

    @enforces("NMJL-13")
    def pair_1_agreed(self) -> bool:
        return (self._pair_offer(0) or 0) > 0

    @enforces("NMJL-13")
    def pair_2_agreed(self) -> bool:
        return (self._pair_offer(1) or 0) > 0

    @enforces("PASS-06", "NMJL-12")
    def pair_1_confirmed(self) -> bool:
        return all(s in self.selections for s in COURTESY_PAIRS[0])

    @enforces("PASS-06", "NMJL-12")
    def pair_2_confirmed(self) -> bool:
        return all(s in self.selections for s in COURTESY_PAIRS[1])

    def _pair_offer(self, pair: int) -> int | None:
        """The smaller offer of a pair once both have offered (``agreed_min``)."""
        if self.options.courtesy_mode is not CourtesyMode.AGREED_MIN:
            return None
        offers = [o for s in COURTESY_PAIRS[pair] if (o := self.offers.get(s)) is not None]
        return min(offers) if len(offers) == len(COURTESY_PAIRS[pair]) else None

    @staticmethod
    def _pair_index(seat: Seat) -> int:
        return 0 if seat in COURTESY_PAIRS[0] else 1

    # -- actions -------------------------------------------------------------------------------
    @enforces("NMJL-02")
    def record_vote(self, seat: Seat, command: Any) -> None:
        self.votes[seat] = command.choice
        self._accepted(command)

    @enforces("NMJL-05")
    def record_late_objection(self, seat: Seat, command: Any, source: State) -> None:
        """A stop after four continues: the pass's confirmed choices are dropped, unmoved."""
        dropped = [s.value for s in SEATS if s in self.selections]
        self.selections.clear()
        self.votes[seat] = "stop"
        self._accepted(command, late=True, step=source.id, dropped=dropped)

    @enforces("NMJL-13")
    def record_offer(self, seat: Seat, command: Any) -> None:
        self.offers[seat] = command.count
        self._accepted(command)

    @enforces("NMJL-14", "NMJL-15", "NMJL-19")
    def record_declaration(self, seat: Seat, command: Command, source: State) -> None:
        kind = "heavenly" if source.id == "CHARLESTON_P1_R" else "earthly"
        verdict = self.hand_checker(self.hand(seat))
        self.declaration = {"seat": seat.value, "kind": kind, "verdict": verdict}
        self._accepted(command, kind=kind, verdict=verdict)

    @enforces("NMJL-21")
    def record_judgement(self, command: Any) -> None:
        """A valid hand ends the game with it; an invalid Earthly Hand leaves it complete."""
        assert self.declaration is not None  # check_judgement
        kind = self.declaration["kind"]
        self.declaration = {**self.declaration, "verdict": command.verdict, "judged": True}
        if command.verdict == "valid":
            self.ended_reason = f"{kind.capitalize()} Hand judged valid"
        self._accepted(command, kind=kind)

    @enforces("NMJL-21")
    def reopen_after_invalid_heavenly(self, command: Any) -> None:
        """The Charleston is played from the First Right as if nothing had been declared."""
        assert self.declaration is not None  # check_judgement
        self.declaration = {**self.declaration, "verdict": "invalid", "judged": True}
        self.ended_reason = None
        self._accepted(command, kind="heavenly")

    @enforces("NMJL-13")
    def record_agreement(self, source: State) -> None:
        pair_index = 0 if source.id.startswith("PAIR_1") else 1
        count = self._pair_offer(pair_index) or 0
        self.agreed[pair_index] = count
        pair = COURTESY_PAIRS[pair_index]
        self._emit("courtesy_agreed", None, {"pair": [s.value for s in pair], "count": count})

    @enforces("NMJL-10")
    def end_without_courtesy(self) -> None:
        self.ended_reason = NO_COURTESY


#: the recorded reason of a Second Right that moved no tile (NMJL-10)
NO_COURTESY = "no tile passed from any hand on the Second Right: no Courtesy Pass"


def _verdict_words(declaration: dict[str, Any], east: str) -> str:
    """What became of East's declaration, in words (NMJL-19, NMJL-21)."""
    kind, verdict = declaration["kind"], declaration["verdict"]
    said = (
        f"{east} declared an Earthly Hand once the Charleston was complete; "
        if kind == "earthly"
        else ""
    )
    if verdict == "pending":
        judged = (
            "the director has still to judge it"
            if said
            else "The director has still to judge the hand"
        )
        return f"{said}{judged}."
    judge = "the director" if declaration.get("judged") else "the hand checker"
    effect = (
        "the game ends with this hand" if verdict == "valid" else "the Charleston stays complete"
    )
    judged = f"{judge} judged it {verdict}: {effect}"
    return f"{said}{judged if said else judged[0].upper() + judged[1:]}."

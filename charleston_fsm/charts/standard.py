"""The National Mah Jongg League's Charleston as a statechart (rulesets ``nmjl``, ``house``).

Read it beside the rule book (docs/rules.md): one state per step, transitions guarded by
the table's facts (everyone confirmed, someone voted stop, the ruleset's order). Commands
are events; an event a state does not accept is refused, never ignored.

The family's own guards, validators and actions are methods of :class:`StandardTable`,
the chart's domain model, below the chart; what every family shares (placing, passes,
resolution) is in :class:`charleston_fsm.table.Table`. The options on which the rule
documents disagree are :class:`Options`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field
from statemachine import Event, State, StateChart
from statemachine.transition_list import TransitionList

from .. import errors
from ..commands import Command
from ..rulebook import enforces
from ..seats import SEATS, Direction, Seat
from ..steps import COURTESY_PAIRS, Step, courtesy, standard
from ..table import Table
from ..tiles import HAND_SIZE


class SecondCharlestonOrder(StrEnum):
    """The order of the Second Charleston's three passes."""

    LEFT_ACROSS_RIGHT = "left-across-right"
    ACROSS_LEFT_RIGHT = "across-left-right"


class CourtesyMode(StrEnum):
    """How a courtesy pair settles how many tiles each gives."""

    AGREED_MIN = "agreed_min"  # the pair exchanges the smaller of the two offers
    ASYMMETRIC = "asymmetric"  # each player gives what they chose, 0-3


class Options(BaseModel):
    """The choices on which the rule documents disagree (``nmjl``, ``house``)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_enum_values=False)

    second_charleston_order: SecondCharlestonOrder = Field(
        SecondCharlestonOrder.LEFT_ACROSS_RIGHT,
        description="The order of the Second Charleston's passes.",
    )
    blind_pass: bool = Field(
        True,
        description="Whether the last pass of each Charleston may forward arriving tiles unseen.",
    )
    late_objection: bool = Field(
        True,
        description="Whether a stop is taken after four continues, until the Second "
        "Charleston's first pass resolves.",
    )
    courtesy_mode: CourtesyMode = Field(
        CourtesyMode.AGREED_MIN,
        description="agreed_min: a pair exchanges the smaller offer; asymmetric: each gives "
        "what it chose, 0-3.",
    )
    require_placing: bool = Field(
        True, description="Whether received tiles must be placed before the next pass."
    )


def _in_each(
    states: tuple[State, ...], validators: str | list[str], on: str, cond: str | None = None
) -> TransitionList:
    """The same command, accepted in each of ``states`` without leaving it.

    These are targetless transitions: they run their action and change no state. (A
    self-transition would exit and re-enter; inside a parallel region python-statemachine
    3.2 then also re-enters the region's initial state, replaying its eventless moves.)
    """
    transitions = TransitionList()
    for state in states:
        transitions = transitions | state.to(None, validators=validators, on=on, cond=cond)
    return transitions


class StandardCharleston(StateChart):
    """First Charleston, vote, optional Second Charleston, Courtesy Pass, done."""

    allow_event_without_transition = False  # strict: a refused event raises
    catch_errors_as_events = False  # a refusal propagates to the caller untouched

    # 1-3: the First Charleston (mandatory)
    CHARLESTON_P1_R = State("First Charleston: pass Right", initial=True)
    CHARLESTON_P1_A = State("First Charleston: pass Across")
    CHARLESTON_P1_L = State("First Charleston: pass Left")
    # 4: continue or stop
    CHARLESTON_DECIDE_STOP = State("Vote: continue or stop the Charleston")
    # 5-7: the Second Charleston (only if all four continue; order from the ruleset)
    CHARLESTON_P2_L = State("Second Charleston: pass Left")
    CHARLESTON_P2_A = State("Second Charleston: pass Across")
    CHARLESTON_P2_R = State("Second Charleston: pass Right")

    # 8: the Courtesy Pass, each opposite pair on its own
    class COURTESY_PASS(State.Parallel, name="Courtesy Pass (pairs in parallel)"):
        class COURTESY_PASS_PAIR_1(State.Compound, name="Courtesy Pass: East and West"):
            PAIR_1_OFFER = State("East and West offer 0-3", initial=True)
            PAIR_1_CHOOSE = State("East and West choose their tiles")
            PAIR_1_DONE = State("East and West done", final=True)

            PAIR_1_OFFER.to(PAIR_1_CHOOSE, cond="courtesy_counts_free")
            PAIR_1_OFFER.to(PAIR_1_DONE, cond="pair_1_declined", on="record_agreement")
            PAIR_1_OFFER.to(PAIR_1_CHOOSE, cond="pair_1_agreed", on="record_agreement")
            PAIR_1_CHOOSE.to(PAIR_1_DONE, cond="pair_1_confirmed", on="resolve_pass")

            offer_courtesy = PAIR_1_OFFER.to(
                None, cond="from_pair_1", validators="check_offer", on="record_offer"
            )
            confirm_pass = PAIR_1_CHOOSE.to(
                None, cond="from_pair_1", validators="check_confirm", on="record_confirm"
            )
            change_pass = PAIR_1_CHOOSE.to(
                None, cond="from_pair_1", validators="check_change", on="record_change"
            )
            withdraw_pass = PAIR_1_CHOOSE.to(
                None, cond="from_pair_1", validators="check_withdraw", on="record_withdraw"
            )
            place_tiles = _in_each(
                (PAIR_1_OFFER, PAIR_1_CHOOSE, PAIR_1_DONE),
                "check_place",
                "record_place",
                cond="from_pair_1",
            )

        class COURTESY_PASS_PAIR_2(State.Compound, name="Courtesy Pass: South and North"):
            PAIR_2_OFFER = State("South and North offer 0-3", initial=True)
            PAIR_2_CHOOSE = State("South and North choose their tiles")
            PAIR_2_DONE = State("South and North done", final=True)

            PAIR_2_OFFER.to(PAIR_2_CHOOSE, cond="courtesy_counts_free")
            PAIR_2_OFFER.to(PAIR_2_DONE, cond="pair_2_declined", on="record_agreement")
            PAIR_2_OFFER.to(PAIR_2_CHOOSE, cond="pair_2_agreed", on="record_agreement")
            PAIR_2_CHOOSE.to(PAIR_2_DONE, cond="pair_2_confirmed", on="resolve_pass")

            offer_courtesy = PAIR_2_OFFER.to(
                None, cond="from_pair_2", validators="check_offer", on="record_offer"
            )
            confirm_pass = PAIR_2_CHOOSE.to(
                None, cond="from_pair_2", validators="check_confirm", on="record_confirm"
            )
            change_pass = PAIR_2_CHOOSE.to(
                None, cond="from_pair_2", validators="check_change", on="record_change"
            )
            withdraw_pass = PAIR_2_CHOOSE.to(
                None, cond="from_pair_2", validators="check_withdraw", on="record_withdraw"
            )
            place_tiles = _in_each(
                (PAIR_2_OFFER, PAIR_2_CHOOSE, PAIR_2_DONE),
                "check_place",
                "record_place",
                cond="from_pair_2",
            )

    # 9: the end; East may still declare an Earthly Hand here
    CHARLESTON_DONE = State("Charleston complete")

    # -- the flow: a pass resolves when every player who must act has confirmed --------
    CHARLESTON_P1_R.to(CHARLESTON_P1_A, cond="all_confirmed", on="resolve_pass")
    CHARLESTON_P1_A.to(CHARLESTON_P1_L, cond="all_confirmed", on="resolve_pass")
    # with no tile from any hand nothing moves, and the vote still follows
    CHARLESTON_P1_L.to(CHARLESTON_DECIDE_STOP, cond="all_confirmed", on="resolve_pass")

    CHARLESTON_DECIDE_STOP.to(COURTESY_PASS, cond="any_stop")
    CHARLESTON_DECIDE_STOP.to(CHARLESTON_P2_L, cond=["all_continue", "second_left_first"])
    CHARLESTON_DECIDE_STOP.to(CHARLESTON_P2_A, cond=["all_continue", "second_across_first"])

    CHARLESTON_P2_L.to(
        CHARLESTON_P2_A, cond=["all_confirmed", "second_left_first"], on="resolve_pass"
    )
    CHARLESTON_P2_A.to(
        CHARLESTON_P2_R, cond=["all_confirmed", "second_left_first"], on="resolve_pass"
    )
    CHARLESTON_P2_A.to(
        CHARLESTON_P2_L, cond=["all_confirmed", "second_across_first"], on="resolve_pass"
    )
    CHARLESTON_P2_L.to(
        CHARLESTON_P2_R, cond=["all_confirmed", "second_across_first"], on="resolve_pass"
    )
    CHARLESTON_P2_R.to(COURTESY_PASS, cond=["all_confirmed", "tiles_from_hand"], on="resolve_pass")
    # the Second Right with no tile from any hand ends the Charleston: no Courtesy Pass
    CHARLESTON_P2_R.to(
        CHARLESTON_DONE,
        cond=["all_confirmed", "blind_passes_allowed"],
        unless="tiles_from_hand",
        on=["resolve_pass", "end_without_courtesy"],
    )

    done_state_COURTESY_PASS = COURTESY_PASS.to(CHARLESTON_DONE)

    # -- the players' commands --------------------------------------------------------
    _passes = (
        CHARLESTON_P1_R, CHARLESTON_P1_A, CHARLESTON_P1_L,
        CHARLESTON_P2_L, CHARLESTON_P2_A, CHARLESTON_P2_R,
    )  # fmt: skip
    confirm_pass = Event(
        _in_each(_passes, "check_confirm", "record_confirm"), name="confirm a pass"
    )
    change_pass = Event(_in_each(_passes, "check_change", "record_change"), name="change a pass")
    withdraw_pass = Event(
        _in_each(_passes, "check_withdraw", "record_withdraw"), name="withdraw a pass"
    )
    vote = Event(
        CHARLESTON_DECIDE_STOP.to(None, validators="check_vote", on="record_vote")
        # a late objection: until the first pass of the Second Charleston resolves, nobody
        # has seen a tile of it, and one stop still skips to the Courtesy Pass
        | CHARLESTON_P2_L.to(
            COURTESY_PASS,
            cond=["late_objection_allowed", "second_left_first"],
            validators="check_late_objection",
            on="record_late_objection",
        )
        | CHARLESTON_P2_A.to(
            COURTESY_PASS,
            cond=["late_objection_allowed", "second_across_first"],
            validators="check_late_objection",
            on="record_late_objection",
        ),
        name="vote continue or stop",
    )
    place_tiles = Event(
        _in_each(
            (*_passes, CHARLESTON_DECIDE_STOP, CHARLESTON_DONE),
            "check_place",
            "record_place",
        ),
        name="place received tiles",
    )
    declare_mah_jongg = Event(
        CHARLESTON_P1_R.to(
            CHARLESTON_DONE,
            cond="from_east",
            validators="check_heavenly_hand",
            on="record_declaration",
        )
        | CHARLESTON_DONE.to(
            None, cond="from_east", validators="check_earthly_hand", on="record_declaration"
        ),
        name="declare Mah Jongg",
    )


#: What each passing state asks of the players (read by the table, drawn on diagrams).
STANDARD_STEPS: dict[str, Step] = {
    "CHARLESTON_P1_R": standard("First Charleston: pass Right", Direction.RIGHT),
    "CHARLESTON_P1_A": standard("First Charleston: pass Across", Direction.ACROSS),
    "CHARLESTON_P1_L": standard("First Charleston: pass Left", Direction.LEFT, blind=True),
    "CHARLESTON_P2_L": standard("Second Charleston: pass Left", Direction.LEFT),
    "CHARLESTON_P2_A": standard("Second Charleston: pass Across", Direction.ACROSS),
    "CHARLESTON_P2_R": standard("Second Charleston: pass Right", Direction.RIGHT, blind=True),
    "PAIR_1_CHOOSE": courtesy(COURTESY_PAIRS[0]),
    "PAIR_2_CHOOSE": courtesy(COURTESY_PAIRS[1]),
}


#: The rules each state plays out (its guards, validators and actions name theirs with
#: ``@enforces`` on the table); drawn on the diagrams, listed in the rule matrix.
STATE_RULES: dict[str, tuple[str, ...]] = {
    "CHARLESTON_P1_R": ("NMJL-01", "NMJL-14"),
    "CHARLESTON_P1_A": ("NMJL-01",),
    "CHARLESTON_P1_L": ("NMJL-01", "NMJL-07", "HOUSE-02", "NMJL-11"),
    "CHARLESTON_DECIDE_STOP": ("NMJL-02", "NMJL-03"),
    "CHARLESTON_P2_L": ("NMJL-04", "HOUSE-01", "NMJL-05", "HOUSE-04"),
    "CHARLESTON_P2_A": ("NMJL-04", "HOUSE-01", "NMJL-05", "HOUSE-04"),
    "CHARLESTON_P2_R": ("NMJL-04", "HOUSE-01", "NMJL-07", "HOUSE-02", "NMJL-10"),
    "COURTESY_PASS": ("NMJL-12",),
    "PAIR_1_OFFER": ("NMJL-13",),
    "PAIR_1_CHOOSE": ("NMJL-13", "HOUSE-03"),
    "PAIR_2_OFFER": ("NMJL-13",),
    "PAIR_2_CHOOSE": ("NMJL-13", "HOUSE-03"),
    "CHARLESTON_DONE": ("NMJL-15", "NMJL-20"),
}


class StandardTable(Table):
    """The standard family's table: votes, courtesy offers, Heavenly and Earthly Hands."""

    options: Options

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

    def default_end_reason(self) -> str:
        heavenly = self.declaration and self.declaration["kind"] == "heavenly"
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

    @enforces("NMJL-14", "NMJL-17")
    def check_heavenly_hand(self, seat: Seat) -> None:
        self._check_declarer(seat)
        if self.selections:
            raise errors.HeavenlyHandTooLate(
                "The first pass has begun (a choice is confirmed): a Heavenly Hand can no "
                "longer be declared. East may declare an Earthly Hand once the Charleston "
                "is complete."
            )

    @enforces("NMJL-15", "NMJL-17")
    def check_earthly_hand(self, seat: Seat) -> None:
        self._check_declarer(seat)
        if self.declaration is not None:
            raise errors.AlreadyDeclared(
                f"East already declared a {self.declaration['kind']} hand in this game."
            )
        held = len(self.hand(seat))
        if held != HAND_SIZE[Seat.EAST]:
            raise errors.EarthlyHandTileCount(
                f"East holds {held} tiles: an Earthly Hand is declared holding exactly "
                f"{HAND_SIZE[Seat.EAST]}, and an uneven Courtesy Pass left East with {held}."
            )

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
        offers = [self.offers.get(s) for s in COURTESY_PAIRS[pair]]
        return None if None in offers else min(offers)  # type: ignore[type-var]

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

    @enforces("NMJL-13")
    def record_agreement(self, source: State) -> None:
        pair_index = 0 if source.id.startswith("PAIR_1") else 1
        count = self._pair_offer(pair_index) or 0
        self.agreed[pair_index] = count
        pair = COURTESY_PAIRS[pair_index]
        self._emit("courtesy_agreed", None, {"pair": [s.value for s in pair], "count": count})

    @enforces("NMJL-10")
    def end_without_courtesy(self) -> None:
        self.ended_reason = "no tile passed from any hand on the Second Right: no Courtesy Pass"

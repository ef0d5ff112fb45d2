"""The Four Winds program's Charleston and its Ding Dong (ruleset ``four_winds``).

Everything about the family is here: its options, its steps, its chart and its table.

- Six exchanges between two players, in the program's order: East-West, South-North,
  East-South, West-North, East-North, West-South. The first-named player gives 3 tiles;
  then the other gives 3 of its own (the tiles it is receiving stay face down until the
  exchange completes, so there is no blind pass); then both receive at once.
- Ding Dong, at East's request: every player gives one tile to each of the other three,
  and all twelve move at once; up to ``ding_dong_max`` times in a deal. The program takes
  the request on East's turn during play, which this service does not run: here the
  Charleston ends in a window (``DING_DONG_OPEN``) where East may request one, closed by
  the first Ready (any player) or by the platform or director (``close_ding_dong``).
- Which of the two a deal plays depends on its round: each is on every round, only on
  the last (North) round, or off. A round that plays neither ends at once.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field
from statemachine import Event, State, StateChart

from ...rulebook import enforces
from .. import errors
from ..commands import Command
from ..resolution import Declaration
from ..seats import SEATS, Seat
from ..steps import Step, ding_dong, exchange
from ..table import Table
from ..tiles import describe
from .shapes import in_each

E, S, W, N = SEATS


class Schedule(StrEnum):
    """On which rounds of the game a rule is played."""

    EVERY_ROUND = "every_round"
    LAST_ROUND = "last_round"  # the North round only
    OFF = "off"

    def plays(self, round_: Seat) -> bool:
        return self is Schedule.EVERY_ROUND or (self is Schedule.LAST_ROUND and round_ is N)


class FourWindsOptions(BaseModel):
    """The Four Winds program's choices, fixed when the game is created."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_enum_values=False)

    round: Seat = Field(Seat.EAST, description="The game's round (prevailing wind) of this deal.")
    charleston: Schedule = Field(Schedule.EVERY_ROUND, description="When the six exchanges run.")
    ding_dong: Schedule = Field(Schedule.EVERY_ROUND, description="When Ding Dong is possible.")
    ding_dong_max: int = Field(3, ge=1, le=9, description="Ding Dongs allowed in one deal.")
    require_placing: bool = Field(True, description="Place received tiles before giving again.")


#: What each state asks of the players.
FOUR_WINDS_STEPS: dict[str, Step] = {
    "EXCHANGE_1_EW": exchange("Exchange 1: East and West", E, W),
    "EXCHANGE_2_SN": exchange("Exchange 2: South and North", S, N),
    "EXCHANGE_3_ES": exchange("Exchange 3: East and South", E, S),
    "EXCHANGE_4_WN": exchange("Exchange 4: West and North", W, N),
    "EXCHANGE_5_EN": exchange("Exchange 5: East and North", E, N),
    "EXCHANGE_6_WS": exchange("Exchange 6: West and South", W, S),
    "DING_DONG": ding_dong("Ding Dong: one tile to each other player"),
}


#: What the table is doing in each state (``progress.phase``): an exchange is a pass.
FOUR_WINDS_STATE_PHASES: dict[str, str] = {
    "DEALT": "dealt",
    **{state: "pass" for state in FOUR_WINDS_STEPS if state != "DING_DONG"},
    "DING_DONG_OPEN": "ding_dong_window",
    "DING_DONG": "ding_dong",
    "CHARLESTON_DONE": "done",
}


#: The rules each state plays out (drawn on the diagrams, listed in the rule matrix).
FOUR_WINDS_STATE_RULES: dict[str, tuple[str, ...]] = {
    "DEALT": ("FW-07",),
    **{state: ("FW-01", "FW-02", "FW-03") for state in FOUR_WINDS_STEPS if state != "DING_DONG"},
    "DING_DONG_OPEN": ("FW-05", "FW-06", "FW-08"),
    "DING_DONG": ("FW-04",),
}


class FourWindsCharleston(StateChart):
    """Six exchanges in pairs, then a window for Ding Dong until the first Ready."""

    allow_event_without_transition = False
    catch_errors_as_events = False

    DEALT = State("Dealt: the round decides what is played", initial=True)
    EXCHANGE_1_EW = State("Exchange 1: East, then West")
    EXCHANGE_2_SN = State("Exchange 2: South, then North")
    EXCHANGE_3_ES = State("Exchange 3: East, then South")
    EXCHANGE_4_WN = State("Exchange 4: West, then North")
    EXCHANGE_5_EN = State("Exchange 5: East, then North")
    EXCHANGE_6_WS = State("Exchange 6: West, then South")
    DING_DONG_OPEN = State("East may request a Ding Dong until a Ready")
    DING_DONG = State("Ding Dong: one tile to each other player")
    CHARLESTON_DONE = State("Charleston complete")

    # -- what this deal plays -----------------------------------------------------------
    DEALT.to(EXCHANGE_1_EW, cond="charleston_this_round")
    DEALT.to(DING_DONG_OPEN, cond="ding_dong_this_round", unless="charleston_this_round")
    DEALT.to(CHARLESTON_DONE, unless=["charleston_this_round", "ding_dong_this_round"])

    # -- the six exchanges: both receive once the second player has given ---------------
    EXCHANGE_1_EW.to(EXCHANGE_2_SN, cond="all_confirmed", on="resolve_pass")
    EXCHANGE_2_SN.to(EXCHANGE_3_ES, cond="all_confirmed", on="resolve_pass")
    EXCHANGE_3_ES.to(EXCHANGE_4_WN, cond="all_confirmed", on="resolve_pass")
    EXCHANGE_4_WN.to(EXCHANGE_5_EN, cond="all_confirmed", on="resolve_pass")
    EXCHANGE_5_EN.to(EXCHANGE_6_WS, cond="all_confirmed", on="resolve_pass")
    EXCHANGE_6_WS.to(
        DING_DONG_OPEN, cond=["all_confirmed", "ding_dong_this_round"], on="resolve_pass"
    )
    EXCHANGE_6_WS.to(
        CHARLESTON_DONE, cond="all_confirmed", unless="ding_dong_this_round", on="resolve_pass"
    )

    # -- Ding Dong ------------------------------------------------------------------------
    DING_DONG.to(DING_DONG_OPEN, cond="all_confirmed", on="resolve_pass")

    # -- the players' commands --------------------------------------------------------------
    _exchanges = (
        EXCHANGE_1_EW, EXCHANGE_2_SN, EXCHANGE_3_ES,
        EXCHANGE_4_WN, EXCHANGE_5_EN, EXCHANGE_6_WS,
    )  # fmt: skip
    confirm_pass = Event(
        in_each(
            _exchanges, ["check_exchange_turn", "check_confirm"], "record_confirm", "in_the_step"
        ),
        name="give 3 tiles",
    )
    change_pass = Event(
        in_each(
            _exchanges, ["check_exchange_turn", "check_change"], "record_change", "in_the_step"
        ),
        name="change the tiles given",
    )
    withdraw_pass = Event(
        in_each((*_exchanges, DING_DONG), "check_withdraw", "record_withdraw", cond="in_the_step"),
        name="withdraw the tiles given",
    )
    place_tiles = Event(
        in_each(
            (*_exchanges, DING_DONG_OPEN, DING_DONG, CHARLESTON_DONE),
            "check_place",
            "record_place",
        ),
        name="place received tiles",
    )
    request_ding_dong = Event(
        DING_DONG_OPEN.to(
            DING_DONG,
            cond="from_east",
            validators="check_ding_dong_request",
            on="record_ding_dong_request",
        ),
        name="request a Ding Dong",
    )
    give_ding_dong = Event(
        DING_DONG.to(None, validators="check_gifts", on="record_gifts"),
        name="give one tile to each other player",
    )
    declare_ready = Event(
        DING_DONG_OPEN.to(CHARLESTON_DONE, on="record_ready"), name="declare Ready"
    )
    close_ding_dong = Event(
        DING_DONG_OPEN.to(CHARLESTON_DONE, cond="from_director", on="record_close"),
        name="close the Ding Dong window",
    )


class FourWindsTable(Table):
    """The Four Winds family's table: exchanges in pairs, Ding Dongs, Ready."""

    options: FourWindsOptions

    CHART: ClassVar[type[StateChart]] = FourWindsCharleston
    NO_BLIND_PASS_RULE: ClassVar[str] = "FW-02"
    NOT_NOW_HINTS: ClassVar[dict[str, str]] = {
        "request_ding_dong": (
            "East requests a Ding Dong once the six exchanges are over, until a player "
            "declares Ready, and not while one is being played."
        ),
        "give_ding_dong": "Ding Dong tiles are given once East has requested a Ding Dong.",
        "declare_ready": "Ready is declared once the Charleston's exchanges are over.",
    }

    # -- the family's own state ---------------------------------------------------------------
    def reset_family(self) -> None:
        self.ding_dongs = 0  # requested in this deal
        self.ready: Seat | None = None
        self.closed = False

    def family_snapshot(self) -> dict[str, Any]:
        return {
            "ding_dongs": self.ding_dongs,
            "ready": self.ready.value if self.ready else None,
            "closed": self.closed,
        }

    def load_family(self, data: Any) -> None:
        self.ding_dongs = data["ding_dongs"]
        self.ready = Seat(data["ready"]) if data["ready"] else None
        self.closed = data["closed"]

    def public_facts(self) -> dict[str, Any]:
        return {
            "ding_dong": {
                "this_round": self.ding_dong_this_round(),
                "requested": self.ding_dongs,
                "max": self.options.ding_dong_max,
                "ready": self.ready.value if self.ready else None,
                "closed": self.closed,
            }
        }

    def family_witness(self, seat: Seat, name: str) -> dict[str, Any] | None:
        if name in ("request_ding_dong", "declare_ready"):
            return {}
        if name == "give_ding_dong":
            others = [s for s in SEATS if s is not seat]
            tiles = self.passable(seat)[:3]
            return {"gifts": [{"tile": t, "to": s} for t, s in zip(tiles, others, strict=False)]}
        return None  # close_ding_dong is the director's, never a seat's

    @enforces("FW-06", "FW-07", "FW-08")
    def family_refusal(self, command: Command) -> errors.CharlestonError | None:
        if command.event != "request_ding_dong":
            return None
        if not self.ding_dong_this_round():
            return errors.DingDongDisabled(
                f"Ding Dong is {self.options.ding_dong.value.replace('_', ' ')} in this game "
                f"and this is the {self.options.round.label} round: no Ding Dong in this deal."
            )
        if self.ready is not None:
            return errors.DingDongAfterReady(
                f"{self.ready.label} has declared Ready: no Ding Dong may be requested any more."
            )
        if self.closed:
            return errors.DingDongClosed("The Ding Dong window was closed by the director.")
        return None

    def ending(self, name: Callable[[Seat], str]) -> dict[str, Any] | None:
        if not self.finished:
            return None
        played = "All six exchanges were played" if self.charleston_this_round() else ""
        if self.ready is not None:
            how, by = "ready", [self.ready]
            last = f"{name(self.ready)} declared Ready, so no more Ding Dong"
        elif self.closed:
            how, by = "closed", []
            last = "the director closed the Ding Dong window"
        elif not self.charleston_this_round():
            how, by = "nothing_played", []
            last = (
                f"the {self.options.round.label} round plays neither the exchanges nor "
                "Ding Dong: no tile was passed"
            )
        else:
            how, by = "exchanges", []
            last = ""
        ding_dongs = f" and {self.ding_dongs} Ding Dong(s)" if self.ding_dongs else ""
        parts = [f"{played}{ding_dongs}" if played else "", last]
        text = "; ".join(p for p in parts if p)
        return {"how": how, "by": [s.value for s in by], "text": text[0].upper() + text[1:] + "."}

    def default_end_reason(self) -> str:
        if self.ready is not None:
            return f"{self.ready.label} declared Ready"
        if self.closed:
            return "the Ding Dong window was closed"
        if not self.charleston_this_round():
            return f"the {self.options.round.label} round plays neither Charleston nor Ding Dong"
        return "all exchanges complete"

    # -- guards -------------------------------------------------------------------------------
    @enforces("FW-01", "FW-07")
    def charleston_this_round(self) -> bool:
        return self.options.charleston.plays(self.options.round)

    @enforces("FW-07")
    def ding_dong_this_round(self) -> bool:
        return self.options.ding_dong.plays(self.options.round)

    @enforces("PASS-10", "FW-02")
    def in_the_step(self, seat: Seat, source: State) -> bool:
        return seat in self.ruleset.steps[source.id].participants

    @enforces("FW-08")
    def from_director(self, seat: Seat | None) -> bool:
        return seat is None

    # -- validators ---------------------------------------------------------------------------
    @enforces("FW-02")
    def check_exchange_turn(self, seat: Seat, command: Any, source: State) -> None:
        """The first-named player gives first; the other gives only its own tiles."""
        step = self.ruleset.steps[source.id]
        if seat not in step.participants:
            return  # the chart's guard refuses it
        first, second = step.participants
        if seat is not second:
            return
        if first not in self.selections:
            raise errors.ExchangeTurn(
                f"{first.label} gives first in {step.label}; {second.label} gives once "
                f"{first.label} has confirmed."
            )
        hand = set(self.hand(seat))
        foreign = [t for t in command.tiles if t not in hand]
        if foreign:
            # the same answer for every tile not in the hand, so it tells nothing of
            # which tiles are on their way
            raise errors.ResponderOwnTilesOnly(
                f"Tile id {foreign[0]} is not in {seat.label}'s hand: {seat.label} gives 3 "
                f"tiles of its own hand; the tiles {first.label} gives stay face down until "
                "the exchange completes."
            )

    @enforces("FW-05", "FW-06")
    def check_ding_dong_request(self, seat: Seat) -> None:
        if seat is not Seat.EAST:
            raise errors.OnlyEastRequestsDingDong(
                f"{seat.label} cannot request a Ding Dong: only East (the dealer) may."
            )
        if self.ding_dongs >= self.options.ding_dong_max:
            raise errors.DingDongLimit(
                f"This deal has had its {self.options.ding_dong_max} Ding Dong(s), the most "
                "the game allows."
            )

    @enforces("FW-03", "FW-04", "PASS-03", "PASS-04", "PASS-05", "PASS-08")
    def check_gifts(self, seat: Seat, command: Any, source: State) -> None:
        if seat in self.selections:
            raise errors.AlreadyConfirmed(
                f"{seat.label} has already given its Ding Dong tiles; withdraw them "
                "(withdraw_pass) to give others before the Ding Dong resolves."
            )
        gifts = command.gifts
        # the tiles as any pass's: placed first, 3, each once, own, no joker
        self._check_selection(seat, self.ruleset.steps[source.id], [g.tile for g in gifts])
        receivers: set[Seat] = set()
        for gift in gifts:
            if gift.to is None:
                raise errors.DingDongToNobody(
                    f"Tile {describe([gift.tile])} names no receiver: give it to South, West, "
                    "North or East, one tile each."
                )
            if gift.to is seat:
                raise errors.DingDongToSelf(
                    f"{seat.label} cannot give a Ding Dong tile to itself; one tile goes to "
                    "each of the three other players."
                )
            if gift.to in receivers:
                raise errors.DingDongSameReceiver(
                    f"{gift.to.label} is named for two tiles; one tile goes to each of the "
                    "three other players."
                )
            receivers.add(gift.to)

    # -- actions ------------------------------------------------------------------------------
    @enforces("FW-05")
    def record_ding_dong_request(self, seat: Seat, command: Command) -> None:
        self.ding_dongs += 1
        self._accepted(command, number=self.ding_dongs)

    @enforces("FW-04")
    def record_gifts(self, seat: Seat, command: Any) -> None:
        gifts = command.gifts
        self.selections[seat] = Declaration(
            tuple(g.tile for g in gifts), targets=tuple(g.to for g in gifts)
        )
        self._accepted(command)

    @enforces("FW-06")
    def record_ready(self, seat: Seat, command: Command) -> None:
        self.ready = seat
        self._accepted(command)

    @enforces("FW-08")
    def record_close(self, command: Command) -> None:
        self.closed = True
        self._accepted(command)

"""The rule book's schedule as data, written from its statements, not from the engine.

The rule properties (:mod:`.rule_properties`, :mod:`.malformed`) compare what the engine
does with what the rule book says: who gives to whom, in which order the passes come,
how many tiles each gives, what each ruleset's options are. If the expectation were read
from the engine's own step table, seat arithmetic or option defaults, an engine wrong in
those places would agree with itself and pass. So everything here is restated from
docs/rules.md, in plain strings, each entry beside the rule it comes from:

- SEAT-01, SEAT-02: the turn order East, South, West, North; Right is the next seat,
  Across two away, Left the previous one (computed here from the order, never with
  ``Seat.toward``);
- NMJL-01: the First Charleston passes Right, Across, Left; NMJL-04 (``nmjl``) and
  HOUSE-01 (``house``): the Second Charleston Left, Across, Right or Across, Left, Right,
  as the option ``second_charleston_order`` says;
- NMJL-07: a blind pass only on the last pass of each Charleston, where the ruleset has
  blind passes (HOUSE-02: house has none; FW-02: nor has Four Winds);
- NMJL-12: the courtesy pairs East-West and South-North;
- FW-01: the six exchanges East-West, South-North, East-South, West-North, East-North,
  West-South, the first-named giving first (FW-02); FW-04: a Ding Dong is one tile to
  each of the three others; FW-07: each schedule plays on every round, on the North
  round only, or never;
- the options table of the rule book: each ruleset's values
  (:data:`RULE_BOOK_OPTIONS`), overridden by the options a game (or an exploration) is
  created with.

``tests/test_rule_properties.py`` checks each entry against the words of its rule's
statement, so the data and the book cannot drift apart unnoticed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

#: SEAT-01: the seats in turn order
TURN_ORDER: tuple[str, ...] = ("east", "south", "west", "north")

#: SEAT-02: how far round the table each direction goes
_STEPS_ROUND = {"right": 1, "across": 2, "left": 3}


def receiver(giver: str, direction: str) -> str:
    """Who receives when ``giver`` passes in ``direction`` (SEAT-02)."""
    return TURN_ORDER[(TURN_ORDER.index(giver) + _STEPS_ROUND[direction]) % 4]


#: NMJL-01: the First Charleston, by the chart's state ids (the rule book's step names)
FIRST_CHARLESTON: tuple[tuple[str, str], ...] = (
    ("CHARLESTON_P1_R", "right"),
    ("CHARLESTON_P1_A", "across"),
    ("CHARLESTON_P1_L", "left"),
)

#: NMJL-04 and HOUSE-01: the Second Charleston in each order the option allows
SECOND_CHARLESTON: dict[str, tuple[tuple[str, str], ...]] = {
    "left-across-right": (
        ("CHARLESTON_P2_L", "left"),
        ("CHARLESTON_P2_A", "across"),
        ("CHARLESTON_P2_R", "right"),
    ),
    "across-left-right": (
        ("CHARLESTON_P2_A", "across"),
        ("CHARLESTON_P2_L", "left"),
        ("CHARLESTON_P2_R", "right"),
    ),
}

#: NMJL-07: the passes that may be blind, where the ruleset has blind passes: the last
#: pass of each Charleston (the First Left, the Second Right)
BLIND_PASSES: tuple[str, ...] = ("CHARLESTON_P1_L", "CHARLESTON_P2_R")

#: NMJL-12: the courtesy pairs, by their chart region's number
COURTESY_PAIRS: dict[str, tuple[str, str]] = {
    "PAIR_1_CHOOSE": ("east", "west"),
    "PAIR_2_CHOOSE": ("south", "north"),
}

#: FW-01, FW-02: the six exchanges in the program's order, first-named giving first
EXCHANGES: tuple[tuple[str, tuple[str, str]], ...] = (
    ("EXCHANGE_1_EW", ("east", "west")),
    ("EXCHANGE_2_SN", ("south", "north")),
    ("EXCHANGE_3_ES", ("east", "south")),
    ("EXCHANGE_4_WN", ("west", "north")),
    ("EXCHANGE_5_EN", ("east", "north")),
    ("EXCHANGE_6_WS", ("west", "south")),
)

#: PASS-01, FW-01: a standard pass and an exchange are 3 tiles each; PASS-02: a courtesy
#: pass at most 3; FW-04: a Ding Dong is one tile to each of the three others
STANDARD_COUNT = 3
COURTESY_MOST = 3

#: East's hand at the deal and for an Earthly Hand (DEAL-01, NMJL-15)
EAST_HAND = 14

#: The rule book's options table: each ruleset's values (docs/rules.md, "Options")
RULE_BOOK_OPTIONS: dict[str, dict[str, Any]] = {
    "nmjl": {
        "second_charleston_order": "left-across-right",  # NMJL-04
        "blind_pass": True,  # NMJL-07
        "late_objection": True,  # NMJL-05
        "courtesy_mode": "agreed_min",  # NMJL-13
        "require_placing": True,  # PASS-08
    },
    "house": {
        "second_charleston_order": "across-left-right",  # HOUSE-01
        "blind_pass": False,  # HOUSE-02
        "late_objection": False,  # HOUSE-04
        "courtesy_mode": "asymmetric",  # HOUSE-03
        "require_placing": True,  # PASS-08
    },
    "four_winds": {
        "round": "east",  # FW-07
        "charleston": "every_round",  # FW-07
        "ding_dong": "every_round",  # FW-07
        "ding_dong_max": 3,  # FW-05
        "require_placing": True,  # PASS-08
    },
}


def plays(schedule: str, round_: str) -> bool:
    """FW-07: a schedule plays on every round, on the last (North) round only, or never."""
    return schedule == "every_round" or (schedule == "last_round" and round_ == "north")


@dataclass(frozen=True)
class Book:
    """What the rule book expects of one ruleset with one set of options."""

    ruleset: str
    options: Mapping[str, Any]

    @classmethod
    def of(cls, ruleset: str, overrides: Mapping[str, Any] | None = None) -> Book:
        """The book's values of ``ruleset``, with a game's ``overrides`` (JSON values)."""
        values = dict(RULE_BOOK_OPTIONS[ruleset])
        for name, value in (overrides or {}).items():
            values[name] = getattr(value, "value", value)  # an enum member given as a value
        return cls(ruleset, values)

    @property
    def standard(self) -> bool:
        return self.ruleset in ("nmjl", "house")

    @cached_property
    def passes(self) -> tuple[tuple[str, str], ...]:
        """Every standard pass in order, with its direction (NMJL-01, NMJL-04, HOUSE-01)."""
        if not self.standard:
            return ()
        return FIRST_CHARLESTON + SECOND_CHARLESTON[self.options["second_charleston_order"]]

    @cached_property
    def _directions(self) -> dict[str, str]:
        return dict(self.passes)

    @property
    def second_first(self) -> str:
        """The first pass of the Second Charleston: the late objection's window (NMJL-05)."""
        return SECOND_CHARLESTON[self.options["second_charleston_order"]][0][0]

    def direction(self, state: str) -> str | None:
        """The direction of a standard pass (``None``: not one)."""
        return self._directions.get(state)

    def blind_rule(self, state: str | None) -> tuple[str, ...] | None:
        """The rule that refuses a blind pass in ``state`` (``None``: one is allowed there):
        NMJL-07 outside the last pass of each Charleston, HOUSE-02 where the ruleset has
        none, FW-02 in Four Winds (the other gives its own tiles)."""
        if not self.standard:
            return ("FW-02",)
        if not self.options["blind_pass"]:
            return ("HOUSE-02",)
        return None if state in BLIND_PASSES else ("NMJL-07",)

    def participants(self, state: str) -> tuple[str, ...]:
        """The seats that give in a passing state (PASS-10)."""
        if self.standard:
            return COURTESY_PAIRS.get(state, TURN_ORDER if self.direction(state) else ())
        if state == "DING_DONG":
            return TURN_ORDER
        return dict(EXCHANGES).get(state, ())

    def next_pass(self, state: str) -> str | None:
        """The passing state after ``state`` in the schedule (``None``: the last)."""
        order = [s for s, _ in self.passes] if self.standard else [s for s, _ in EXCHANGES]
        if state not in order:
            return None
        at = order.index(state)
        return order[at + 1] if at + 1 < len(order) else None

    def target(self, state: str, giver: str) -> str | None:
        """Where ``giver``'s tiles go in ``state`` (``None``: each tile names its own)."""
        direction = self.direction(state) if self.standard else None
        if direction is not None:
            return receiver(giver, direction)
        pair = self.participants(state)
        if len(pair) == 2 and giver in pair:
            return pair[1] if giver == pair[0] else pair[0]
        return None

    @property
    def charleston_this_round(self) -> bool:
        return plays(self.options["charleston"], self.options["round"])

    @property
    def ding_dong_this_round(self) -> bool:
        return plays(self.options["ding_dong"], self.options["round"])

    def first_stage(self) -> str:
        """Where a new deal stands (NMJL-01; FW-01, FW-07)."""
        if self.standard:
            return FIRST_CHARLESTON[0][0]
        if self.charleston_this_round:
            return EXCHANGES[0][0]
        return "DING_DONG_OPEN" if self.ding_dong_this_round else "CHARLESTON_DONE"

    def after_last_pass(self, tiles_from_hand: bool) -> str:
        """Where the last pass of the schedule leads (NMJL-10, FW-07)."""
        if self.standard:
            if not tiles_from_hand and self.options["blind_pass"]:
                return "CHARLESTON_DONE"
            return "COURTESY_PASS"
        return "DING_DONG_OPEN" if self.ding_dong_this_round else "CHARLESTON_DONE"

"""Bot players: legal, varied choices made from a seat's own view only.

A bot sees exactly what a human at that seat would (:func:`views.seat_view`), so a
platform can let one take over a seat without it ever peeking at other hands.

It plays the way people do, in three habits:

- **It keeps what fits.** A tile is *matched* when the seat holds another of its face (a
  pair or better) or when it is a joker; a pass gives unmatched tiles first, in random
  order, and breaks a pair only when it must.
- **It stops when it likes its hand.** At the vote it votes stop with a chance that grows
  with its matched tiles: 5% with six or fewer (half the hands, after a First Charleston
  that kept pairs), 7 points more for each one beyond six, at most 50% (``stop_base``,
  ``stop_above``, ``stop_step``, ``stop_max``). Over shuffled deals a bot votes stop
  about one time in seven, so four bots play the Second Charleston in a little over half
  their games, and a person playing with three bots finds one of them stopping in about
  a third: as at a social table, where a player whose hand has come together keeps it,
  and the others mostly want more passes. ``continue_rate`` set to a number replaces the
  habit by a fixed chance.
- **It sometimes passes blind** where a ruleset allows it (35% of those passes), offers 0
  to 3 courtesy tiles, and as East asks for a Ding Dong 60% of the time.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .commands import (
    Command,
    ConfirmPass,
    DeclareMahJongg,
    DeclareReady,
    Gift,
    GiveDingDong,
    OfferCourtesy,
    PlaceTiles,
    RequestDingDong,
    Vote,
)
from .events import Event
from .seats import SEATS, Seat
from .table import Table
from .views import seat_view


@dataclass
class Bot:
    """A player who passes random non-joker tiles and sometimes blind-passes."""

    seat: Seat
    rng: random.Random = field(default_factory=random.Random)
    blind_rate: float = 0.35
    continue_rate: float | None = None  # a fixed chance to continue; None: by the hand
    stop_base: float = 0.05  # the chance to stop with stop_above matched tiles or fewer
    stop_above: int = 6
    stop_step: float = 0.07  # and more for each matched tile beyond stop_above
    stop_max: float = 0.5
    earthly_rate: float = 0.05
    late_objection_rate: float = 0.0  # how often it objects after four continues
    ding_dong_rate: float = 0.6  # East: how often it asks for (another) Ding Dong
    ready_rate: float = 0.05  # how often another player declares Ready while Ding Dong is open
    courtesy_offer: int | None = None  # a fixed courtesy offer (the clock's 0); None: random

    def decide(self, view: Mapping[str, Any]) -> Command | None:
        """The bot's next command for this view, or ``None`` when it has nothing to do."""
        allowed = set(view["allowed_commands"])
        if view["received"] and "place_tiles" in allowed:
            return PlaceTiles(seat=self.seat)
        step = view["step"]
        if step and not step["confirmed"] and "confirm_pass" in allowed:
            return self._choose(view, step)
        if "vote" in allowed:
            if self.seat.value not in view["game"]["votes"]:
                choice = "stop" if self.rng.random() < self.stop_chance(view) else "continue"
                return Vote(seat=self.seat, choice=choice)
            if self.late_objection_rate and self.rng.random() < self.late_objection_rate:
                return Vote(seat=self.seat, choice="stop")  # a late objection
        if "offer_courtesy" in allowed and self.seat.value not in view["courtesy"]["offers"]:
            count = self.courtesy_offer
            if count is None:
                count = self.rng.randint(0, 3)
            return OfferCourtesy(seat=self.seat, count=count)
        if "give_ding_dong" in allowed:
            return self._gifts(view)
        if "request_ding_dong" in allowed and self.rng.random() < self.ding_dong_rate:
            return RequestDingDong(seat=self.seat)
        if "declare_ready" in allowed and (
            self.seat is Seat.EAST or self.rng.random() < self.ready_rate
        ):
            return DeclareReady(seat=self.seat)  # East, not asking (again), always declares
        game = view["game"]
        if (
            "declare_mah_jongg" in allowed
            and game["finished"]
            and game["declaration"] is None
            and self.rng.random() < self.earthly_rate
        ):
            return DeclareMahJongg(seat=self.seat)
        return None

    def stop_chance(self, view: Mapping[str, Any]) -> float:
        """How likely this bot votes stop with the hand in ``view`` (the module docstring)."""
        if self.continue_rate is not None:
            return 1.0 - self.continue_rate
        beyond = max(0, len(_matched(view)) - self.stop_above)
        return min(self.stop_max, self.stop_base + self.stop_step * beyond)

    def _choose(self, view: Mapping[str, Any], step: Mapping[str, Any]) -> ConfirmPass:
        count = step["count"]
        if count is None:
            count = self.rng.randint(0, 3)
        blind = 0
        if step["blind_allowed"] and self.rng.random() < self.blind_rate:
            blind = min(self.rng.choice([1, 1, 2, 2, 3]), step["blind_max"])
        tiles = self._least_wanted(view, step["passable"], count - blind)
        return ConfirmPass(seat=self.seat, tiles=sorted(tiles), blind=blind)

    def _least_wanted(self, view: Mapping[str, Any], passable: list[int], n: int) -> list[int]:
        """``n`` passable tiles, unmatched ones first (each group in random order)."""
        matched = _matched(view)
        loose = [t for t in passable if t not in matched]
        kept = [t for t in passable if t in matched]
        self.rng.shuffle(loose)
        self.rng.shuffle(kept)
        return (loose + kept)[: min(n, len(passable))]

    def _gifts(self, view: Mapping[str, Any]) -> GiveDingDong:
        others = [s for s in SEATS if s is not self.seat]
        tiles = self._least_wanted(view, view["step"]["passable"], 3)
        return GiveDingDong(
            seat=self.seat, gifts=[Gift(tile=t, to=s) for t, s in zip(tiles, others, strict=True)]
        )


def _matched(view: Mapping[str, Any]) -> set[int]:
    """The seat's matched tiles: jokers, and tiles of a face it holds twice or more."""
    tiles = [*view["rack"], *view["received"]]
    faces = Counter(t["face"] for t in tiles)
    return {t["id"] for t in tiles if t["face"] == "J" or faces[t["face"]] > 1}


def bots_for(seed: int, **kwargs: Any) -> dict[Seat, Bot]:
    """Four bots with their own reproducible random streams."""
    return {s: Bot(seat=s, rng=random.Random(f"{seed}:{s.value}"), **kwargs) for s in SEATS}


def play_table(table: Table, seed: int, **bot_options: Any) -> int:
    """Four seeded bots play an in-memory table to its end, each from its own seat's view."""
    return play(
        table.execute,
        lambda s: seat_view(table, s),
        bots_for(seed, **bot_options),
        rng=random.Random(seed),
    )


def play(
    execute: Callable[[Command], list[Event]],
    view_of: Callable[[Seat], Mapping[str, Any]],
    bots: Mapping[Seat, Bot],
    *,
    rng: random.Random | None = None,
    max_commands: int = 500,
) -> int:
    """Let the bots play until none has anything left to do; return the commands given.

    ``execute`` and ``view_of`` are the table's (or the store's, or the HTTP client's),
    so the same loop drives an in-memory table, a stored game or a remote one.
    """
    rng = rng or random.Random(0)
    given = 0
    while given < max_commands:
        seats = list(bots)
        rng.shuffle(seats)
        acted = False
        for seat in seats:
            command = bots[seat].decide(view_of(seat))
            if command is not None:
                execute(command)
                given += 1
                acted = True
        if not acted:
            return given
    raise RuntimeError(f"bots did not finish within {max_commands} commands")

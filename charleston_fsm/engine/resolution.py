"""Pass resolution: every transfer of a step at once, blind passes included.

All declarations of a step are resolved together, deterministically, by playing out the
table's IOU chain: the player giving the most tiles from the hand starts (ties go to
the earlier seat in turn order, East first), then each receiver in turn, round the
table in the pass direction. At each turn a player hands over every tile of their own
still owed, then forwards, unseen, as many of the tiles waiting for them as their blind
count still asks for (first arrived, first forwarded). Turns continue until everyone has
given their count. With at least one tile from a hand this always ends with every
player having given exactly their count; with none, nothing can move.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..rulebook import enforces
from .seats import Seat
from .steps import Step

MAX_ROUNDS = 16  # a chain settles in at most 4 rounds; more means a bug


@dataclass(frozen=True)
class Declaration:
    """What a player committed to give: tiles from the hand, plus ``blind`` unseen.

    ``targets`` names the receiver of each tile where a step lets every tile go to its
    own player (a Ding Dong); otherwise the step's direction or pair decides.
    """

    tiles: tuple[int, ...]
    blind: int = 0
    targets: tuple[Seat, ...] = ()


@dataclass
class Handover:
    """One player's giving in a step: to whom, from the hand, and forwarded unseen."""

    giver: Seat
    receiver: Seat
    from_hand: list[int] = field(default_factory=list)
    forwarded: list[int] = field(default_factory=list)


@dataclass
class Resolution:
    handovers: list[Handover]
    kept: dict[Seat, list[int]]  # what each seat ends up receiving, in arrival order
    routes: dict[int, list[Seat]]  # every moved tile: the seats it passed through
    moved: bool

    @property
    def blind_moves(self) -> bool:
        return any(h.forwarded for h in self.handovers)


@enforces("PASS-07", "NMJL-08", "NMJL-09")
def resolve(step: Step, declarations: Mapping[Seat, Declaration]) -> Resolution:
    if step.addressed:
        return _resolve_addressed(step, declarations)
    seats = [s for s in step.participants if s in declarations]
    own = {s: list(declarations[s].tiles) for s in seats}
    owed_blind = {s: declarations[s].blind for s in seats}
    inbox: dict[Seat, list[int]] = {s: [] for s in seats}
    handovers = {s: Handover(giver=s, receiver=_receiver(step, s)) for s in seats}
    routes: dict[int, list[Seat]] = {t: [s] for s in seats for t in own[s]}

    if not any(own.values()):
        return Resolution(handovers=[], kept={s: [] for s in seats}, routes={}, moved=False)

    order = _turn_order(step, seats, own)
    for _ in range(MAX_ROUNDS):
        if not any(own[s] or owed_blind[s] for s in seats):
            break
        for seat in order:
            forwarded = inbox[seat][: owed_blind[seat]]
            del inbox[seat][: len(forwarded)]
            owed_blind[seat] -= len(forwarded)
            given, own[seat] = own[seat], []
            receiver = _receiver(step, seat)
            for tile in given + forwarded:
                routes[tile].append(receiver)
            inbox[receiver].extend(given + forwarded)
            handovers[seat].from_hand.extend(given)
            handovers[seat].forwarded.extend(forwarded)
    else:  # pragma: no cover - impossible with a tile from a hand (see module doc)
        raise AssertionError("the blind pass chain did not settle")

    return Resolution(
        handovers=[handovers[s] for s in seats],
        kept=inbox,
        routes=routes,
        moved=True,
    )


def _receiver(step: Step, seat: Seat) -> Seat:
    """Where ``seat``'s tiles go on a step whose tiles all go one way (not addressed)."""
    receiver = step.target(seat)
    if receiver is None:  # pragma: no cover - an addressed step resolves on its own
        raise AssertionError(f"{step} names no receiver for {seat}")
    return receiver


def _turn_order(step: Step, seats: Sequence[Seat], own: Mapping[Seat, list[int]]) -> list[Seat]:
    """The most-from-hand player first, then each receiver in turn."""
    order = [max(seats, key=lambda s: (len(own[s]), -s.place))]
    while len(order) < len(seats):
        nxt = _receiver(step, order[-1])
        if nxt in order:  # a swap: the other pair follows in seat order
            nxt = next(s for s in seats if s not in order)
        order.append(nxt)
    return order


def _resolve_addressed(step: Step, declarations: Mapping[Seat, Declaration]) -> Resolution:
    """Every tile straight to the receiver its giver named, all at once (no blind pass)."""
    handovers: list[Handover] = []
    kept: dict[Seat, list[int]] = {s: [] for s in step.participants}
    routes: dict[int, list[Seat]] = {}
    for giver in step.participants:
        declaration = declarations[giver]
        for tile, receiver in zip(declaration.tiles, declaration.targets, strict=True):
            handovers.append(Handover(giver=giver, receiver=receiver, from_hand=[tile]))
            kept[receiver].append(tile)
            routes[tile] = [giver, receiver]
    return Resolution(handovers=handovers, kept=kept, routes=routes, moved=bool(routes))

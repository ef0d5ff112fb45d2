"""The rule book's IOU chain (NMJL-09), restated for the checker from the rule's words.

A blind step resolves as one chain: the player giving the most tiles from the hand
starts (a tie goes to the earlier seat in turn order, East first), then each receiver in
turn; at each turn a player hands over what it still owes from its hand, then forwards,
unseen, as many of the tiles waiting for it as its blind count still asks for, the first
to arrive the first forwarded (tiles handed over together arrive in the order their giver
named them, its own before those it forwards); turns go on until everyone has given its
count. With no tile from any hand nothing moves (NMJL-10, NMJL-11).

The counts are the same however the tiles are forwarded (``rule_transfer`` checks
those); which tile each player forwards is what the chain decides. An engine that
forwards the last tile to arrive instead of the first keeps every count and every tile
and still hands players tiles the book does not: :func:`routes` is the book's answer,
written from the rule's statement and decision (docs/rules.md), never from
:mod:`charleston_fsm.engine.resolution`, which it judges. Who starts, and the order of
the turns, change no route: each player receives from one giver only and sends its own
tiles, then the first of those it receives, whenever its turns come (docs/mutation.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .rule_book import TURN_ORDER

#: more passes round the table than any chain needs (it settles within four): a bound
#: so that a wrong expectation can never make the checker itself hang
_MOST_ROUNDS = 8


def routes(
    players: Sequence[str],
    target: Callable[[str], str | None],
    chosen: Mapping[str, Mapping[str, Any]],
) -> dict[int, list[str]]:
    """Every tile the step moves and the seats it passes through, its giver first, as the
    book's chain resolves ``chosen`` (each player's ``tiles`` from the hand and ``blind``
    count); empty when no tile comes from a hand."""
    own = {p: list(chosen[p]["tiles"]) for p in players}
    if not any(own.values()):
        return {}
    owed = {p: int(chosen[p].get("blind", 0)) for p in players}
    waiting: dict[str, list[int]] = {p: [] for p in players}
    path = {tile: [p] for p in players for tile in own[p]}
    turns = _turns(players, target, own)
    for _ in range(_MOST_ROUNDS):
        if not any(own[p] or owed[p] for p in players):
            break
        for player in turns:
            receiver = target(player)
            if receiver is None:
                return {}  # a step whose tiles each name their receiver: not a chain
            forwarded = waiting[player][: owed[player]]
            waiting[player] = waiting[player][len(forwarded) :]
            owed[player] -= len(forwarded)
            handed = own[player] + forwarded
            own[player] = []
            for tile in handed:
                path[tile].append(receiver)
            waiting.setdefault(receiver, []).extend(handed)
    return path


def _turns(
    players: Sequence[str], target: Callable[[str], str | None], own: Mapping[str, list[int]]
) -> list[str]:
    """The order of the turns: the most from the hand first (the earlier seat on a tie),
    then whoever that player gives to, and so on round the table; where that comes back
    to a player who has had a turn (a swap), the earliest seat still waiting."""
    most = max(len(own[p]) for p in players)
    turns = [next(p for p in TURN_ORDER if p in players and len(own[p]) == most)]
    while len(turns) < len(players):
        following = target(turns[-1])
        if following is None or following in turns or following not in players:
            following = next(p for p in TURN_ORDER if p in players and p not in turns)
        turns.append(following)
    return turns

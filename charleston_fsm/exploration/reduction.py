"""The reduction of the seats' placing choices: received counts past the largest take are one.

Where received tiles may be passed unplaced (``require_placing`` off, Four Winds' classes
with placing free), each seat decides on its own *when* to place and *how many* of the
tiles it gives come from its received tiles. Every interleaving of those choices, and
every split, is a configuration of :func:`.abstraction.abstract_key`, which counts the
received tiles exactly: with four seats each holding 0-9 unplaced tiles, the product is
10^4 per chart state, which is what stopped the full form of the large Four Winds classes
at 40,000 configurations (docs/exploration.md). The seats' *orders* meet again in one key
already; it is the seat-local counts that multiply.

:func:`reduced_key` keeps every interleaving and every split (the exploration still tries
each move in each configuration) but merges configurations that differ only in counts no
later move can tell apart. It is a quotient of the explored graph by a bisimulation:

**The relation.** Two tables are related when their abstract keys agree except that a
seat's received count ``r`` is, in both, at least ``C`` (:data:`RECEIVED_CAP`, the most
tiles one step takes from one hand, 3), and for a seat that has chosen, ``r - f + n``
(what it will hold unplaced once its choice resolves: ``f`` of its ``n`` tiles come from
the received ones) is likewise equal or at least ``C`` in both.

**Same moves.** Nothing reads a received count but through ``min(r, C)``:

- ``place_tiles`` is accepted exactly when ``r > 0`` (``checks.check_place``);
- a choice of ``n <= C`` tiles may take ``f <= min(n, r)`` of them from the received
  tiles: the splits :func:`.abstraction.canonical_tiles` offers depend on ``min(r, C)``;
- with placing free no guard and no other validator reads the received tiles (the
  placing requirement, ``check_selection``, is off); ``allowed_commands`` and the clock's
  auto player see them only through these.

**Same successors.** ``place_tiles`` makes ``r`` 0 in both. A choice (confirm, change)
records ``min(r - f + n, C)``, which for ``r >= C`` is ``C`` whatever the split (``f <= n``)
and otherwise exact. A resolution leaves each giver with ``r - f + kept`` unplaced tiles,
and ``kept = n`` wherever a pass keeps a hand's size (every ruleset but ``house``'s
asymmetric courtesy, checked in every configuration by the ``conservation`` property), so
the resolved counts are related when the recorded ``min(r - f + n, C)`` are equal. Seats
outside the step keep ``r``. Every other part of the key is equal in both and moves alike.

So a path from one table has a path of the same commands (up to which tile ids they
name, as for the abstraction itself) from the other, through related configurations:
reachability, dead ends, cycles, the longest game and the chart transitions crossed are
the same on the quotient, and every configuration of the unreduced exploration is
related to one the reduced exploration checks. The test
(``tests/test_exploration_reduction.py``) checks this on every option set small enough
to explore both ways: the reduced configurations are exactly the unreduced ones mapped
through :func:`reduced_key`, edge for edge, with the same verdicts, crossings and
longest game.

The unreduced key does not record ``f``: two seats' choices of the same size, one from
the rack and one from the received tiles, share an unreduced key but leave different
counts unplaced. Under the cap the difference vanishes where ``n = C`` (every Four Winds
pass and Ding Dong); the reduced key records it where it does not (a courtesy count or
a blind split below 3 with placing free).

It does not apply where a pass may change a hand's size (``house``'s asymmetric
courtesy: ``kept`` may be below ``f``); there :func:`reduced_key` is the abstract key.
Where placing is required the key holds only whether received tiles wait (placing moves
them all at once), and the reduction changes nothing.
"""

from __future__ import annotations

from typing import Any

from ..engine.charts.standard import CourtesyMode
from ..engine.seats import SEATS
from ..engine.table import Table
from .abstraction import abstract_key

#: the most tiles one step takes from one seat's hand (a pass's 3, a Ding Dong's 3 gifts)
RECEIVED_CAP = 3

#: how a run names this reduction where it applies (``check``'s output)
NAME = "received counts past 3 merged (placing free)"


def applies(table: Table) -> bool:
    """Whether the reduction merges anything at this table: placing free, and every pass
    keeps each hand's size."""
    options = table.options
    if options.require_placing:
        return False
    return getattr(options, "courtesy_mode", None) is not CourtesyMode.ASYMMETRIC


def reduced_key(table: Table) -> tuple[Any, ...]:
    """The abstract key with each seat's received count capped at :data:`RECEIVED_CAP`
    and, for a seat that has chosen, the count it will hold unplaced once its choice
    resolves, capped likewise (the module's docstring says why that is sound)."""
    key = abstract_key(table)
    if not applies(table):
        return key
    configuration, per_seat, family = key
    capped = []
    for seat, (size, received, selection) in zip(SEATS, per_seat, strict=True):
        if selection is not None:
            chosen = table.selections[seat]
            unplaced = table.received[seat]
            from_received = sum(1 for t in chosen.tiles if t in unplaced)
            after = len(unplaced) - from_received + len(chosen.tiles)
            selection = (*selection, min(after, RECEIVED_CAP))
        capped.append((size, min(received, RECEIVED_CAP), selection))
    return (configuration, tuple(capped), family)


def applied(table: Table, reduce: bool, ordered: bool, extreme_splits: bool) -> list[str]:
    """Every reduction an exploration of ``table``'s options applies, in words: what a
    reviewer must know to weigh its verdicts (liveness under a reduction is only as good
    as the reduction's argument). No symmetry reduction is applied: the seats are not
    interchangeable (East gives first, only East declares)."""
    found = ["tiles counted, not named (the abstraction: docs/exploration.md)"]
    if ordered:
        found.append(
            "one interleaving of the seats' choices (turn order East, West, South, North; "
            "a seat that has chosen changes to one split)"
        )
    if extreme_splits and not table.options.require_placing:
        found.append("only the extreme splits between rack and received tiles")
    if reduce and applies(table):
        found.append(NAME)
    return found

"""The abstract configuration of a table, and the moves an exploration tries from it.

An exploration (:mod:`.graph`) plays the real :class:`~charleston_fsm.engine.table.Table`
through its public command API; this module says which commands it tries and which facts
of the table make two tables "the same" for the flow. The argument that this is sound is
in the package's docstring (:mod:`charleston_fsm.exploration`); in short, no guard or
validator reads a tile's identity, only how many tiles lie where and whether a tile is a
joker, so a key made of counts, with the jokers pinned by a canonical deal, loses nothing
the flow depends on.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..engine.commands import COMMAND_MODELS, Command, command_of
from ..engine.resolution import Declaration
from ..engine.seats import SEATS, Seat
from ..engine.steps import Step
from ..engine.table import Table
from ..engine.tiles import HAND_SIZE, TILE_COUNT, Deal, is_joker

#: The jokers of the set (ids 144-151: the tile table's last face).
JOKERS: tuple[int, ...] = tuple(t for t in range(TILE_COUNT) if is_joker(t))


def canonical_deal() -> Deal:
    """The one deal every exploration plays: each seat holds jokers, so that "a joker never
    moves" is tested at every seat, and each seat holds at least 11 tiles that may be
    passed (more than any step asks: 3, or 3 Ding Dong gifts). The rest is the wall.

    East gets jokers 144-145, South 146-147, West 148, North 149; 150-151 stay in the
    wall (a wall joker must not move either).
    """
    jokers = {Seat.EAST: JOKERS[0:2], Seat.SOUTH: JOKERS[2:4], Seat.WEST: JOKERS[4:5]}
    jokers[Seat.NORTH] = JOKERS[5:6]
    hands: dict[Seat, list[int]] = {}
    plain = iter(range(JOKERS[0]))
    for seat in SEATS:
        hands[seat] = [next(plain) for _ in range(HAND_SIZE[seat] - len(jokers[seat]))]
        hands[seat] += jokers[seat]
    return Deal.explicit(hands)


def abstract_key(table: Table) -> tuple[Any, ...]:
    """The table's flow-relevant facts: where the chart is, and counts instead of tiles.

    It is the table's own :meth:`~Table.snapshot` with every list of tiles replaced by
    what the flow reads of it (the deal and the options are the exploration's
    constants): per seat the size of its hand, its received tiles (their number where
    they may be passed unplaced, else only whether there are any: placing moves them all
    at once, and nothing else reads them) and its selection's counts. The family's state
    (votes, offers, agreed counts, Ding Dongs, Ready, closed) and the declaration name
    no tile and are kept, except facts no transition can read any more
    (:func:`_live_facts`).
    """
    # read from the table as :meth:`Table.snapshot` would write it, without the parts
    # that are the exploration's constants (ruleset, options, deal): serialising those
    # for every command tried was a tenth of the time
    counted = not table.options.require_placing
    racks, received, selections = table.racks, table.received, table.selections
    per_seat = tuple(
        (
            len(racks[s]) + len(received[s]),
            len(received[s]) if counted else bool(received[s]),
            _selection(selections.get(s)),
        )
        for s in SEATS
    )
    configuration = table.configuration
    family = {
        "configuration": configuration,
        "declaration": table.declaration,
        "ended_reason": table.ended_reason,
        "passes_resolved": table.passes_resolved,
        **table.family_snapshot(),
    }
    return (tuple(configuration), per_seat, _frozen(_live_facts(family)))


#: the states where a guard or validator reads the votes seat by seat (the vote, and the
#: late objection in the Second Charleston's first two passes)
_VOTE_STATES = frozenset({"CHARLESTON_DECIDE_STOP", "CHARLESTON_P2_L", "CHARLESTON_P2_A"})


def _live_facts(facts: dict[str, Any]) -> dict[str, Any]:
    """The family's facts without those no transition can read from here on.

    - Votes are read seat by seat only at the vote and by a late objection
      (``_VOTE_STATES``); elsewhere only whether someone stopped (the ending's words)
      matters, so they are kept as that.
    - A courtesy pair's offers are read only while the pair offers (``PAIR_n_OFFER``);
      once it has agreed, the agreed count (kept) is what its choices are checked
      against.
    """
    live = dict(facts)
    config = set(facts["configuration"])
    votes = facts.get("votes")
    if votes is not None and not config & _VOTE_STATES:
        live["votes"] = "stop" in votes.values()
    offers = facts.get("offers")
    if offers:
        from ..engine.steps import COURTESY_PAIRS

        live["offers"] = {
            seat: count
            for seat, count in offers.items()
            for n, pair in enumerate(COURTESY_PAIRS, start=1)
            if Seat(seat) in pair and f"PAIR_{n}_OFFER" in config
        }
    return live


def _selection(selection: Declaration | None) -> tuple[Any, ...] | None:
    if selection is None:
        return None
    return (len(selection.tiles), selection.blind, tuple(t.value for t in selection.targets))


def _frozen(value: Any) -> Any:
    """``value`` as nested tuples (hashable), dictionaries sorted by key."""
    if isinstance(value, dict):
        return tuple((k, _frozen(v)) for k, v in sorted(value.items()))
    if isinstance(value, list | tuple):
        return tuple(_frozen(v) for v in value)
    return value


def selection_counts(table: Table, seat: Seat, step: Step) -> Iterator[tuple[int, int]]:
    """Every (tiles from the hand, blind) a seat may give in ``step``: the exact count, split
    between hand and blind as far as the step allows; a free courtesy count 0-3."""
    count = table.required_count(seat, step)
    if count is None:
        yield from ((n, 0) for n in range(4))
        return
    for blind in range(min(table.blind_max(step), count) + 1):
        yield count - blind, blind


def canonical_tiles(
    table: Table, seat: Seat, n: int, *, extreme_splits: bool = False
) -> Iterator[list[int]]:
    """The tiles a seat gives, ``n`` of them, by a canonical rule: the first passable tiles
    of the rack, then of the received tiles. Where received tiles may be passed unplaced
    (``require_placing`` off), how many come from the received tiles changes what is left
    to place, so each split is its own move (``extreme_splits``: only none and as many as
    possible from the received tiles, as the bounded form explores)."""
    rack = [t for t in table.racks[seat] if not is_joker(t)]
    received = [t for t in table.received[seat] if not is_joker(t)]
    most = min(n, len(received))
    splits = sorted({0, most}) if extreme_splits else range(most + 1)
    for from_received in splits:
        from_rack = n - from_received
        if from_rack <= len(rack):
            yield rack[:from_rack] + received[:from_received]


CHANGES = frozenset({"change_pass", "withdraw_pass"})


#: the order in which seats act in an ordered exploration: a courtesy pair after the
#: other (East and West, then South and North), so that the two pairs, which act in
#: parallel regions, are not interleaved
TURN_ORDER: tuple[Seat, ...] = (Seat.EAST, Seat.WEST, Seat.SOUTH, Seat.NORTH)


def turn(table: Table) -> Seat | None:
    """The first seat, in :data:`TURN_ORDER`, that has something still to do in this step:
    tiles to place, a choice to confirm, a vote or a courtesy offer to make (``None``: no
    seat)."""
    facts = table.family_snapshot()
    votes, offers = facts.get("votes"), facts.get("offers")
    states = set(table.configuration)
    for seat in TURN_ORDER:
        step = table.requirement(seat)
        if table.received[seat] or (step is not None and seat not in table.selections):
            return seat
        if votes is not None and "CHARLESTON_DECIDE_STOP" in states and seat.value not in votes:
            return seat
        offering = any(s.endswith("_OFFER") for s in states)
        if offers is not None and offering and seat.value not in offers:
            return seat
    return None


def moves(
    table: Table, *, ordered: bool = False, extreme_splits: bool = False
) -> Iterator[Command]:
    """Every command the exploration tries in the table's configuration.

    Each flow-changing choice is tried: confirm and change with every count and blind
    split, withdraw, place, both votes, each courtesy offer 0-3, East's declaration and
    the director's two verdicts, Ding Dong requests, gifts, Ready and the director's
    close. A name the chart takes nowhere in this configuration
    (:func:`~charleston_fsm.engine.charts.probe.could_take`) is not tried: the chart
    refuses it whatever its argument.

    ``ordered`` explores one interleaving of the seats' independent choices instead of
    all: only the first seat with something to do acts (:func:`turn`), and a seat that
    has chosen may change or withdraw. Every step, branch and resolution is still
    reached (each combination of choices is made, in turn order); what is skipped are
    the configurations where a later seat chose before an earlier one.
    """
    from ..engine.charts.probe import could_take

    names = set(could_take(table.chart, sorted(COMMAND_MODELS)))
    acting = turn(table) if ordered else None
    for seat in SEATS:
        if acting is None or seat is acting:
            yield from _seat_moves(table, seat, names, extreme_splits)
        elif seat in table.selections:
            # a seat that has chosen may still withdraw while the others choose, or
            # change: to one choice (any other is reached by withdrawing and choosing)
            own = _seat_moves(table, seat, names, extreme_splits)
            changes = [m for m in own if m.type in CHANGES]
            yield from {m.type: m for m in reversed(changes)}.values()
    if "judge_declaration" in names:
        for verdict in ("valid", "invalid"):
            yield _command("judge_declaration", None, verdict=verdict, text="explored")
    if "close_ding_dong" in names:
        yield _command("close_ding_dong", None)


def _seat_moves(
    table: Table, seat: Seat, names: set[str], extreme_splits: bool
) -> Iterator[Command]:
    step = table.requirement(seat)
    if step is not None and step.addressed and "give_ding_dong" in names:
        others = [s for s in SEATS if s is not seat]
        for tiles in canonical_tiles(table, seat, len(others), extreme_splits=extreme_splits):
            gifts = [{"tile": t, "to": s} for t, s in zip(tiles, others, strict=True)]
            yield _command("give_ding_dong", seat, gifts=gifts)
    elif step is not None:
        # every variant of the command the seat's selection leaves open (confirm without
        # one, change with one); the other is tried once, to see it refused
        chosen = seat in table.selections
        for index, (n, blind) in enumerate(selection_counts(table, seat, step)):
            for tiles in canonical_tiles(table, seat, n, extreme_splits=extreme_splits):
                for name in ("confirm_pass", "change_pass"):
                    if name in names and (index == 0 or chosen == (name == "change_pass")):
                        yield _command(name, seat, tiles=tiles, blind=blind)
    for name in ("withdraw_pass", "place_tiles", "declare_mah_jongg"):
        if name in names:
            yield _command(name, seat)
    if "vote" in names:
        for choice in ("continue", "stop"):
            yield _command("vote", seat, choice=choice)
    if "offer_courtesy" in names:
        for count in range(4):
            yield _command("offer_courtesy", seat, count=count)
    for name in ("request_ding_dong", "declare_ready"):
        if name in names:
            yield _command(name, seat)


def _command(name: str, seat: Seat | None, **fields: Any) -> Command:
    return command_of(name, {"seat": seat, **fields})


def command_data(command: Command) -> dict[str, Any]:
    """A command as the JSON a client sends (and ``replay --commands`` reads)."""
    return command.model_dump(mode="json", exclude_none=True)

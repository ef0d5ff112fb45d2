"""Breadth-first exploration of one option set's reachable configurations.

From the canonical deal the explorer tries every move (:func:`.abstraction.moves`) in
every configuration it reaches, through :meth:`Table.execute` on a table loaded from
the configuration's snapshot. A configuration is new when its abstract key
(:func:`.abstraction.abstract_key`) is; each keeps the command that first reached it and
its parent, so the breadth-first order gives the shortest command list to any of them.
The properties (:mod:`.properties`) are checked at each configuration and on each
accepted command; the graph itself answers termination (:mod:`.analysis`).
"""

from __future__ import annotations

import json
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..engine import clocks, views
from ..engine.errors import CharlestonError
from ..engine.hands import HandChecker, pending_confirmation
from ..engine.seats import SEATS, Seat
from ..engine.table import Table
from . import properties
from .abstraction import CHANGES, abstract_key, canonical_deal, command_data, moves, turn
from .properties import Finding


@dataclass
class Failure:
    """A property that failed, with the shortest command list from the deal to it."""

    property: str
    rules: tuple[str, ...]
    message: str
    commands: list[dict[str, Any]]
    configuration: list[str]


@dataclass
class Exploration:
    """What one option set's exploration found."""

    ruleset: str
    options: dict[str, Any]
    states: int = 0
    transitions: int = 0
    seconds: float = 0.0
    final_states: int = 0
    #: per node: its successors as (node, command name)
    edges: list[list[tuple[int, str]]] = field(default_factory=list)
    #: per node: (parent node, command that reached it) or None for the deal
    parents: list[tuple[int, dict[str, Any]] | None] = field(default_factory=list)
    configurations: list[tuple[str, ...]] = field(default_factory=list)
    keys: dict[tuple[Any, ...], int] = field(default_factory=dict)
    #: chart transitions (source id, target id, event) and how many explored commands
    #: took each
    crossings: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    failures: list[Failure] = field(default_factory=list)
    checked: Counter[str] = field(default_factory=Counter)
    longest_without_change: int | None = None
    #: the nodes where the Charleston is over
    finals: set[int] = field(default_factory=set)
    #: per node: its distance in commands from the deal
    depths: list[int] = field(default_factory=list)
    #: every configuration within this many commands of the deal was explored and checked
    #: (``None``: all of them, the exploration is complete)
    complete_to_depth: int | None = None

    @property
    def complete(self) -> bool:
        return self.complete_to_depth is None

    def path(self, node: int) -> list[dict[str, Any]]:
        """The commands from the deal to ``node``, shortest first found."""
        commands: list[dict[str, Any]] = []
        step = self.parents[node]
        while step is not None:
            commands.append(step[1])
            step = self.parents[step[0]]
        return commands[::-1]

    def slim(self) -> Exploration:
        """This result without its graph (the figures, crossings and failures stay): what
        a worker process sends back."""
        self.edges, self.parents, self.configurations, self.depths = [], [], [], []
        self.keys, self.finals = {}, set()
        return self

    @property
    def held(self) -> list[str]:
        """The properties checked that never failed, by name."""
        failed = {f.property for f in self.failures}
        return sorted(p for p in self.checked if p not in failed)


class _Crossings:
    """A chart listener that counts the transitions the chart takes (eventless ones too)."""

    def __init__(self) -> None:
        self.taken: list[tuple[str, str, str]] = []

    def after_transition(self, source: Any, target: Any, event: Any) -> None:
        if target is not None:
            self.taken.append((source.id, target.id, str(getattr(event, "id", event) or "")))


def explore(
    ruleset: str,
    options: Mapping[str, Any] | None = None,
    *,
    hand_checker: HandChecker = pending_confirmation,
    on_state: Callable[[int, int], None] | None = None,
    max_states: int | None = None,
    max_depth: int | None = None,
    ordered: bool = False,
    extreme_splits: bool = False,
    first_failures: int = 1,
) -> Exploration:
    """Explore every configuration of ``ruleset`` with ``options`` reachable from the
    canonical deal; check every property in each (see the package's docstring).

    ``on_state(done, known)`` is told the progress. ``max_depth`` bounds the exploration
    to the configurations within that many commands of the deal: every one of them is
    explored and checked (its successors are found, and checked on the way, but not
    expanded). ``max_states`` stops after that many configurations are expanded (the
    result then says to which depth it is complete). ``first_failures`` failures per
    property are kept, each with its shortest path; the rest are only counted.
    ``ordered``: one interleaving of the seats' choices (:func:`.abstraction.moves`);
    ``allowed_commands`` and the clock are then checked for the seat whose turn it is.
    ``extreme_splits``: where received tiles may be passed unplaced, only none or as many
    as possible of them (:func:`.abstraction.canonical_tiles`).
    """
    from .analysis import analyse

    started = time.perf_counter()
    deal = canonical_deal()
    table = Table(deal, ruleset, options, hand_checker=hand_checker)
    listener = _Crossings()
    table.chart.add_listener(listener)
    table.redeal(deal, ruleset, options, hand_checker=hand_checker)  # the deal's own moves
    result = Exploration(ruleset=ruleset, options=table.options.model_dump(mode="json"))
    snapshots: list[dict[str, Any]] = []
    failures: Counter[str] = Counter()

    def fail(node: int, finding: Finding, last: dict[str, Any] | None = None) -> None:
        name, rules, message = finding
        failures[name] += 1
        if failures[name] <= first_failures:
            path = result.path(node) + ([last] if last else [])
            config = list(result.configurations[node])
            result.failures.append(Failure(name, rules, message, path, config))

    def add(key: tuple[Any, ...], parent: tuple[int, dict[str, Any]] | None) -> int:
        node = len(snapshots)
        result.keys[key] = node
        snapshots.append(table.snapshot())
        result.parents.append(parent)
        result.depths.append(0 if parent is None else result.depths[parent[0]] + 1)
        result.edges.append([])
        result.configurations.append(tuple(table.configuration))
        return node

    add(abstract_key(table), None)
    result.crossings.update(listener.taken)
    queue = deque([0])
    expanded = 0
    while queue:
        node = queue.popleft()
        depth = result.depths[node]
        if (max_depth is not None and depth >= max_depth) or (
            max_states is not None and expanded >= max_states
        ):
            # breadth first: every node of a smaller depth was expanded
            result.complete_to_depth = depth - 1
            queue.clear()
            break
        expanded += 1
        table.load(snapshots[node])
        seat_views = {s: views.seat_view(table, s) for s in SEATS}
        acting = turn(table) if ordered else None
        full = set(SEATS) if acting is None else {acting}  # seats whose every move is tried
        for finding in _state_findings(table, deal, seat_views, result.checked):
            fail(node, finding)
        accepted: dict[Seat | None, set[str]] = {s: set() for s in SEATS}
        accepted[None] = set()
        successors: set[tuple[Any, ...]] = set()
        before_hands = {s: set(table.hand(s)) for s in SEATS}
        explored = moves(table, ordered=ordered, extreme_splits=extreme_splits)
        clock = _clock_moves(seat_views, full)
        tries = [(c, False) for c in explored] + [(c, True) for c in clock]
        # what each command did here, by its JSON: the engine is deterministic, so a
        # command tried twice in one configuration (the clock's choice is often one of the
        # explored moves) is answered from here instead of executed again
        outcomes: dict[str, tuple[Any, ...] | None] = {}
        dirty = False
        for command, by_clock in tries:
            data = command_data(command)
            seen = json.dumps(data, sort_keys=True)
            if seen in outcomes:
                known = outcomes[seen]
                if by_clock:
                    _judge_clock(node, command, known, successors, result, fail)
                continue  # an explored move twice: its transition is already counted
            if dirty:
                table.load(snapshots[node])
            confirmed = [s for s in SEATS if s in table.selections]
            listener.taken.clear()
            try:
                events = table.execute(command)
            except CharlestonError:
                dirty = False
                outcomes[seen] = None
                if by_clock:
                    _judge_clock(node, command, None, successors, result, fail)
                continue
            except Exception as exc:  # a bug in the engine: a finding, with its path
                dirty = True
                message = f"{command.type} raised {type(exc).__name__}: {exc}"
                fail(node, ("crash", (), message), data)
                continue
            dirty = True
            key = abstract_key(table)
            outcomes[seen] = key
            if by_clock:
                _judge_clock(node, command, key, successors, result, fail)
                continue
            accepted[command.seat].add(command.type)
            successors.add(key)
            result.transitions += 1
            result.crossings.update(listener.taken)
            before = {"confirmed": confirmed, "actor": command.seat}
            for finding in _transition_findings(
                before, before_hands, events, table, result.checked
            ):
                fail(node, finding, data)
            target = result.keys.get(key)
            if target is None:
                target = add(key, (node, data))
                queue.append(target)
            result.edges[node].append((target, command.type))
        if dirty:
            table.load(snapshots[node])
        for finding in _playable(table, seat_views, accepted, full, result.checked):
            fail(node, finding)
        if table.finished:
            result.final_states += 1
            result.finals.add(node)
        if on_state is not None:
            on_state(expanded, len(snapshots))
    result.states = expanded
    for node, finding in analyse(result):
        fail(node, finding)
    result.seconds = time.perf_counter() - started
    return result


def _judge_clock(
    node: int,
    command: Any,
    key: tuple[Any, ...] | None,
    successors: set[tuple[Any, ...]],
    result: Exploration,
    fail: Callable[..., None],
) -> None:
    """The clock's command for a seat was refused (``key`` ``None``) or reached ``key``:
    it must be accepted, and lead where an explored move leads (SVC-10)."""
    data = command_data(command)
    if key is None:
        message = f"the clock's {command.type} for {command.seat} is refused"
        fail(node, ("clock", ("SVC-10",), message), data)
        return
    result.checked["clock"] += 1
    if key not in successors:
        message = (
            f"the clock's {command.type} for {command.seat} reaches a "
            "configuration no explored move reaches"
        )
        fail(node, ("clock", ("SVC-10",), message), data)


def _clock_moves(seat_views: Mapping[Seat, dict[str, Any]], seats: set[Seat]) -> list[Any]:
    """What the clock would do for each of ``seats`` if its deadline ran out here (the
    auto player the service lends a seat: :func:`clocks.auto_player`)."""
    found = []
    for seat in SEATS:
        if seat not in seats:
            continue
        command = clocks.auto_player(seat, 0).decide(seat_views[seat])
        if command is not None:
            found.append(command)
    return found


def _state_findings(
    table: Table,
    deal: Any,
    seat_views: Mapping[Seat, dict[str, Any]],
    checked: Counter[str],
) -> list[Finding]:
    for name in ("conservation", "jokers", "secrecy"):
        checked[name] += 1
    return [
        *properties.conservation(table, deal),
        *properties.jokers_in_place(table, deal),
        *properties.secrecy_of_views(table, seat_views),
    ]


def _transition_findings(
    before: dict[str, Any],
    before_hands: dict[Seat, set[int]],
    events: list[Any],
    table: Table,
    checked: Counter[str],
) -> list[Finding]:
    checked["rules"] += 1
    return [
        *properties.secrecy_of_events(events, before_hands, table),
        *properties.transition_rules(before, events, table),
    ]


def _playable(
    table: Table,
    seat_views: Mapping[Seat, dict[str, Any]],
    accepted: Mapping[Seat | None, set[str]],
    full: set[Seat],
    checked: Counter[str],
) -> list[Finding]:
    """Someone can act or the game is over; each seat's ``allowed_commands`` is exactly the
    set of command names the chart took from it here (with the canonical arguments; of a
    seat only some of whose moves were tried, ``full`` leaves out, the changes)."""
    checked["playable"] += 1
    checked["allowed_commands"] += 1
    findings: list[Finding] = []
    if not table.finished and not any(accepted.values()):
        findings.append(
            ("playable", ("SVC-01",), f"dead end: nobody can act at {table.configuration}")
        )
    for seat in SEATS:
        listed = set(seat_views[seat]["allowed_commands"])
        if seat not in full:
            listed &= CHANGES
        if listed != accepted[seat]:
            findings.append(
                (
                    "allowed_commands",
                    ("SVC-01",),
                    f"{seat.label}: allowed_commands lists {sorted(listed)} but the chart "
                    f"took {sorted(accepted[seat])}",
                )
            )
    return findings

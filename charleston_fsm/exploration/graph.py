"""Breadth-first exploration of one option set's reachable configurations.

From the canonical deal the explorer tries every move (:func:`.abstraction.moves`) in
every configuration it reaches, through the turn functions the store calls
(:mod:`charleston_fsm.engine.turns`) on a table loaded from the configuration's snapshot:
a seat's command, and the clock's firing for a seat (:mod:`.turn_checks`). A
configuration is new when its abstract key (:func:`.abstraction.abstract_key`) is; each
keeps the command that first reached it and its parent, so the breadth-first order
gives the shortest command list to any of them.
The properties (:mod:`.properties`) are checked at each configuration and on each
accepted command; the graph itself answers termination (:mod:`.analysis`).
"""

from __future__ import annotations

import json
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping
from typing import Any

from ..engine import clocks, turns, views
from ..engine.commands import parse_command
from ..engine.errors import CharlestonError
from ..engine.hands import HandChecker, pending_confirmation
from ..engine.seats import SEATS, Seat
from ..engine.table import Table
from . import (
    fairness,
    library_steps,
    open_choices,
    properties,
    reduction,
    rule_properties,
    turn_checks,
)
from .abstraction import CHANGES, abstract_key, canonical_deal, command_data, moves, turn
from .analysis import analyse
from .explored import Exploration, Failure
from .malformed import Malformed
from .properties import Finding
from .rule_book import Book


class _Crossings:
    """A chart listener that counts the transitions the chart takes (eventless ones too)."""

    #: it counts only transitions with a target: a targetless step may be taken without
    #: telling it (``engine/compiled_steps.py``), as the service takes it
    observes_moves_only = True

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
    stop_at_failure: bool = False,
    reduce: bool = True,
    on_configuration: Callable[[int, Table], None] | None = None,
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
    as possible of them (:func:`.abstraction.canonical_tiles`). ``stop_at_failure``: stop
    once a configuration has shown a failure (a seeded defect's test needs only the first).
    ``reduce``: received counts no move can tell apart are one configuration
    (:mod:`.reduction`). ``on_configuration(node, table)`` is told each new one.
    """
    key_of = reduction.reduced_key if reduce else abstract_key

    started = time.perf_counter()
    deal = canonical_deal()
    table = Table(deal, ruleset, options, hand_checker=hand_checker)
    listener = _Crossings()
    table.chart.add_listener(listener)
    table.redeal(deal, ruleset, options, hand_checker=hand_checker)  # the deal's own moves
    result = Exploration(ruleset=ruleset, options=table.options.model_dump(mode="json"))
    result.reductions = reduction.applied(table, reduce, ordered, extreme_splits)
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
        result.clock_edges.append([])
        result.configurations.append(tuple(table.configuration))
        if on_configuration is not None:
            on_configuration(node, table)
        return node

    add(key_of(table), None)
    result.crossings.update(listener.taken)
    book = Book.of(ruleset, options)  # what the rule book expects (rule_properties)
    spoiled = Malformed(book, deal.wall)
    library = library_steps.LibrarySteps(table)
    for finding in rule_properties.at_deal(table, book):
        fail(0, finding)
    queue = deque([0])
    expanded = 0
    while queue:
        node = queue.popleft()
        depth = result.depths[node]
        if (
            (max_depth is not None and depth >= max_depth)
            or (max_states is not None and expanded >= max_states)
            or (stop_at_failure and result.failures)
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
        before_steps = {state for state, _ in table.active_steps()}
        decided_in = clocks.scope(table)  # the step the clock decides in, when it fires
        # every move first: they read the table, which the tries below move on
        explored = list(moves(table, ordered=ordered, extreme_splits=extreme_splits))
        armed, firings = turn_checks.firings(table, full)
        # what each command did here, by its JSON: an explored move tried twice in one
        # configuration is answered from here instead of executed again
        outcomes: dict[str, tuple[Any, ...] | None] = {}
        dirty = False
        taken: list[dict[str, Any]] = []  # the explored moves accepted here
        keys: list[tuple[Any, str]] = []  # each explored move and its JSON
        for command in explored:
            data = command_data(command)
            seen = json.dumps(data, sort_keys=True)
            keys.append((command, seen))
            if seen in outcomes:
                continue  # an explored move twice: its transition is already counted
            if dirty:
                table.load(snapshots[node])
            confirmed = [s for s in SEATS if s in table.selections]
            listener.taken.clear()
            compiled = library.compiled(table, command)
            try:
                done = turns.command_turn(table, None, command, turn_checks.MOMENT, 0)
            except CharlestonError as refusal:
                dirty = False
                outcomes[seen] = None
                if compiled:
                    judged = library.check(snapshots[node], command, library_steps.refused(refusal))
                    result.checked[library_steps.PROPERTY] += 1
                    if judged is not None:
                        fail(node, judged, data)
                continue
            except Exception as exc:  # a bug in the engine: a finding, with its path
                dirty = True
                message = f"{command.type} raised {type(exc).__name__}: {exc}"
                fail(node, ("crash", (), message), data)
                continue
            dirty = True
            events = [event for event, _ in done.rows]
            if compiled:
                judged = library.check(snapshots[node], command, library_steps.taken(events, table))
                result.checked[library_steps.PROPERTY] += 1
                if judged is not None:
                    fail(node, judged, data)
            key = key_of(table)
            outcomes[seen] = key
            accepted[command.seat].add(command.type)
            taken.append(data)
            successors.add(key)
            result.transitions += 1
            result.crossings.update(listener.taken)
            before: dict[str, Any] = {"confirmed": confirmed, "actor": command.seat}
            before |= {"book": book, "snapshot": snapshots[node], "command": data}
            for finding in _transition_findings(
                before, before_hands, events, table, result.checked
            ):
                fail(node, finding, data)
            result.checked["steps"] += 1
            for finding in turn_checks.steps(before_steps, done):
                fail(node, finding, data)
            target = result.keys.get(key)
            if target is None:
                target = add(key, (node, data))
                queue.append(target)
            result.edges[node].append((target, command.type))
        for firing in firings:  # the clock acting for a seat whose deadline ran out here
            if dirty:
                table.load(snapshots[node])
            dirty = True
            try:
                fired = turns.firing_turn(lambda: table, armed, firing, turn_checks.LATER, 0)
            except CharlestonError:
                table.load(snapshots[node])
                chosen = firing.player().decide(seat_views[firing.seat])
                _judge_clock(node, chosen, None, successors, result, fail)
                continue
            if fired is None or fired.command is None:
                continue  # nothing left for the seat's player to do here
            chosen = parse_command(dict(fired.command))
            _judge_clock(node, chosen, key_of(table), successors, result, fail)
            for finding in turn_checks.fired(firing, armed, fired, table, decided_in):
                fail(node, finding, command_data(chosen))
        if dirty:
            table.load(snapshots[node])
        result.checked["malformed"] += 1
        for finding, data in spoiled.check(table, snapshots[node], taken):
            fail(node, finding, data)
        for finding in _playable(table, seat_views, accepted, full, result.checked):
            fail(node, finding)
        result.checked[open_choices.PROPERTY] += 1
        tried = [(command, outcomes.get(seen) is not None) for command, seen in keys]
        configuration = result.configurations[node]
        for finding in open_choices.check(table, tried, accepted, configuration, book):
            fail(node, finding)
        if table.finished:
            result.final_states += 1
            result.finals.add(node)
        if on_state is not None:
            on_state(expanded, len(snapshots))
    result.states = expanded
    for node, finding in analyse(result):
        fail(node, finding)
    fairness.check(result, deal, key_of, hand_checker, Failure)
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
    if key in successors:
        result.clock_edges[node].append((command.seat, result.keys[key]))
    else:
        message = (
            f"the clock's {command.type} for {command.seat} reaches a "
            "configuration no explored move reaches"
        )
        fail(node, ("clock", ("SVC-10",), message), data)


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
    checked.update(rule_properties.NAMES)
    return [
        *properties.secrecy_of_events(events, before_hands, table),
        *properties.transition_rules(before, events, table),
        *rule_properties.transition(
            before["snapshot"], before["command"], events, table, before["book"]
        ),
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

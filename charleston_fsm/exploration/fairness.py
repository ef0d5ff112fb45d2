"""``terminating`` and ``finishing`` checked on the explored graph under the clock's fairness.

The rules let a seat change or withdraw a confirmed choice until its pass resolves
(PASS-05), so the graph has cycles, and "every game ends" holds only because the clock
ends them. This module checks that on the graph itself, under a stated assumption:

**Fairness (the clock's deadline).** A seat's deadline runs from the step's start and a
change does not re-arm it (SVC-10); when it passes, the clock acts for every seat that
has something still to do, one after another, with no seat's command in between (the
service fires them in one sweep). So *every endless game completes a clock sweep
infinitely often*: a sweep from a configuration follows the clock's moves
(:attr:`Exploration.clock_edges`, each checked by the ``clock`` property to be accepted
and to lead where an explored move leads) until no seat has anything left to do.

A cycle *escapes* the clock when a game can go round it forever and still complete
sweeps: in the graph's terms, a strongly connected component holding a configuration
whose whole sweep stays inside the component (then the sweep, and a path back, is a loop
a fair game can repeat). With no such component every fair game leaves each cycle, and
the graph without cycles left ends (the end, or a dead end, which ``playable`` and
``finishing`` report):

- ``terminating``: no cycle escapes the clock;
- ``finishing``: no cycle of configurations before the end escapes the clock (a fair game
  always reaches the end; a cycle after the end only delays the placing of tiles).

A failure is a lasso: the shortest command list from the deal to a configuration of the
cycle (:attr:`Failure.commands`) and the loop that returns to it (:attr:`Failure.loop`),
each command a real one the engine accepted there.

It is checked only where the exploration is complete (a bound cuts cycles), and on the
graph the exploration built: under :mod:`.reduction` the graph is a bisimulation quotient,
which has a fair cycle exactly where the unreduced graph has one (each path lifts).
In an ordered exploration (the bounded ``nmjl``/``house``) only the acting seat's clock
is computed; the sweep then follows the acting seats in turn, as the clock would.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

from ..engine.errors import CharlestonError
from ..engine.hands import HandChecker
from ..engine.table import Table
from ..engine.tiles import Deal
from .abstraction import command_data, moves
from .explored import Exploration

#: the assumption, as ``check`` prints it
ASSUMPTION = (
    "fairness: every endless game completes a clock sweep (the clock acts for each seat "
    "that does not, at its deadline) infinitely often"
)


def components(edges: list[list[tuple[int, str]]]) -> list[list[int]]:
    """The graph's strongly connected components that hold a cycle (Tarjan's, iterative)."""
    n = len(edges)
    index = [-1] * n
    low = [0] * n
    on_stack = [False] * n
    stack: list[int] = []
    found: list[list[int]] = []
    counter = 0
    for root in range(n):
        if index[root] != -1:
            continue
        work = [(root, 0)]
        while work:
            node, position = work.pop()
            if position == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack[node] = True
            targets = edges[node]
            if position < len(targets):
                work.append((node, position + 1))
                target = targets[position][0]
                if index[target] == -1:
                    work.append((target, 0))
                elif on_stack[target]:
                    low[node] = min(low[node], index[target])
                continue
            if work and low[node] < low[work[-1][0]]:
                low[work[-1][0]] = low[node]
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack[member] = False
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or any(t == node for t, _ in targets):
                    found.append(component)
    return found


def sweep(result: Exploration, node: int, within: set[int] | None = None) -> list[int]:
    """The configurations a clock sweep from ``node`` passes through, ``node`` first: the
    clock acts for the first seat (in seat order) with something to do, then from there
    again, until no seat has anything to do or the sweep comes back to where it was (or,
    given ``within``, leaves it: the last configuration is then outside)."""
    path = [node]
    seen = {node}
    while result.clock_edges[path[-1]]:
        _, target = result.clock_edges[path[-1]][0]
        path.append(target)
        if target in seen or (within is not None and target not in within):
            break
        seen.add(target)
    return path


def escaping(result: Exploration) -> list[tuple[list[int], int]]:
    """Every cycle that escapes the clock: (its component, a configuration whose sweep
    stays in it)."""
    found = []
    for component in components(result.edges):
        members = set(component)
        for node in sorted(component, key=lambda n: result.depths[n]):
            if set(sweep(result, node, members)) <= members:
                found.append((component, node))
                break
    return found


def check(
    result: Exploration,
    deal: Deal,
    key_of: Callable[[Table], tuple[Any, ...]],
    hand_checker: HandChecker,
    failure: Callable[..., Any],
) -> None:
    """Check ``terminating`` and ``finishing`` under the clock's fairness; each failure is
    added to ``result.failures`` with its lasso (the module's docstring), made by
    ``failure`` (:class:`.explored.Failure`, passed in: this module does not import the
    explorer that calls it)."""
    if not result.complete:
        return
    result.checked["terminating"] += 1
    result.checked["finishing"] += 1
    # a property already failed (``finishing`` from a dead end: :mod:`.analysis`) keeps
    # its first failure, as every property does
    reported = {f.property for f in result.failures}
    for component, anchor in escaping(result):
        before_end = not (set(component) & result.finals)
        names = ["terminating", "finishing"] if before_end else ["terminating"]
        names = [n for n in names if n not in reported]
        if not names:
            continue
        loop_nodes = _loop(result, set(component), anchor)
        loop = _commands(result, deal, key_of, hand_checker, anchor, loop_nodes)
        states = sorted({"/".join(result.configurations[n]) for n in component})
        for name in names:
            reported.add(name)
            message = (
                f"a cycle of {len(component)} configuration(s) ({', '.join(states)}) escapes "
                f"the clock: a game can go round it forever ({ASSUMPTION})"
            )
            result.failures.append(
                failure(
                    name,
                    ("SVC-10", "SVC-01"),
                    message,
                    result.path(anchor),
                    list(result.configurations[anchor]),
                    loop,
                )
            )


def _loop(result: Exploration, members: set[int], anchor: int) -> list[int]:
    """The loop's configurations from ``anchor`` back to it: its sweep, then the shortest
    path inside the component home."""
    path = sweep(result, anchor, members)
    if path[-1] == anchor and len(path) > 1:
        return path
    start = path[-1]
    parent: dict[int, int] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for target, _ in result.edges[node]:
            if target not in members or target in parent:
                continue
            parent[target] = node
            if target == anchor:
                back = [anchor]
                while back[-1] != start:
                    back.append(parent[back[-1]])
                return path + back[::-1][1:]
            queue.append(target)
    return path  # unreachable in a strongly connected component


def _commands(
    result: Exploration,
    deal: Deal,
    key_of: Callable[[Table], tuple[Any, ...]],
    hand_checker: HandChecker,
    anchor: int,
    nodes: list[int],
) -> list[dict[str, Any]]:
    """Real commands for the loop's steps: the table is played from the deal to
    ``anchor``, then each step is the first explored move that reaches the next
    configuration's key (the clock's own moves lead where an explored move leads)."""
    keys: Mapping[int, tuple[Any, ...]] = {node: key for key, node in result.keys.items()}
    table = Table(deal, result.ruleset, result.options, hand_checker=hand_checker)
    from ..engine.commands import parse_command

    for data in result.path(anchor):
        table.execute(parse_command(data))
    commands: list[dict[str, Any]] = []
    for target in nodes[1:]:
        here = table.snapshot()
        for command in moves(table):
            try:
                table.execute(command)
            except CharlestonError:
                continue
            if key_of(table) == keys[target]:
                commands.append(command_data(command))
                break
            table.load(here)
        else:
            break  # not found (cannot happen on an explored edge): the loop stops here
    return commands

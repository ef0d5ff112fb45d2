"""What the explored graph itself answers: termination and the longest game.

The rules allow one kind of loop: a seat may change or withdraw a confirmed choice
until its pass resolves (PASS-05), which can bring the table back to a configuration it
was in. Everything else moves the game on. So the graph without ``change_pass`` and
``withdraw_pass`` edges must have no cycle: then every endless game changes or withdraws
forever, which the seat's clock ends (its deadline runs from the step's start and is not
re-armed by a change, SVC-10). The longest path of that acyclic graph from the deal is
the most commands a game can take without a change or a withdrawal.

Not looping is not enough: a table where the only moves left are changes and withdrawals
never ends either. So every configuration must also be able to *finish*: some path
leads from it to a configuration where the Charleston is over.
"""

from __future__ import annotations

from collections.abc import Iterator

from statemachine import StateChart

from .explored import Exploration
from .properties import Finding

#: the commands whose loops the rules allow (PASS-05)
CHOICE_LOOPS = frozenset({"change_pass", "withdraw_pass"})


def analyse(result: Exploration) -> Iterator[tuple[int, Finding]]:
    """Check termination on the explored graph; set ``longest_without_change``."""
    yield from _finishing(result)
    result.checked["terminating"] += 1
    n = len(result.edges)
    progress = [
        [target for target, name in edges if name not in CHOICE_LOOPS] for edges in result.edges
    ]
    indegree = [0] * n
    for targets in progress:
        for target in targets:
            indegree[target] += 1
    order = [node for node in range(n) if indegree[node] == 0]
    for node in order:  # Kahn's algorithm: the list grows as it is read
        for target in progress[node]:
            indegree[target] -= 1
            if indegree[target] == 0:
                order.append(target)
    if len(order) < n:
        on_cycle = min(node for node in range(n) if indegree[node] > 0)
        yield (
            on_cycle,
            (
                "terminating",
                ("SVC-01",),
                "a cycle without change or withdrawal passes through "
                f"{list(result.configurations[on_cycle])}",
            ),
        )
        return
    if not result.complete:
        return  # a path may go on past the bound
    longest = [0] * n
    for node in reversed(order):
        longest[node] = max((1 + longest[t] for t in progress[node]), default=0)
    result.longest_without_change = longest[0] if n else 0


def _finishing(result: Exploration) -> Iterator[tuple[int, Finding]]:
    """Every configuration can still reach the end (only where the graph is complete)."""
    if not result.complete:
        return
    result.checked["finishing"] += 1
    incoming: list[list[int]] = [[] for _ in result.edges]
    for node, edges in enumerate(result.edges):
        for target, _ in edges:
            incoming[target].append(node)
    can_finish = set(result.finals)
    frontier = list(can_finish)
    while frontier:
        node = frontier.pop()
        for source in incoming[node]:
            if source not in can_finish:
                can_finish.add(source)
                frontier.append(source)
    stuck = [node for node in range(len(result.edges)) if node not in can_finish]
    if stuck:
        first = min(stuck, key=lambda node: result.depths[node])
        yield (
            first,
            (
                "finishing",
                ("SVC-01",),
                f"{len(stuck)} configuration(s) from which the Charleston can never end, "
                f"the nearest at {list(result.configurations[first])}",
            ),
        )


def chart_transitions(chart: type[StateChart]) -> list[tuple[str, str, str]]:
    """Every transition of a chart class that changes state, as (source, target, events);
    eventless ones have no event ("")."""
    found = []
    for state in chart.states_map.values():
        for transition in state.transitions:
            if transition.target is None or transition.initial:
                continue
            events = " ".join(sorted(str(e) for e in transition.events)) or ""
            found.append((transition.source.id, transition.target.id, events))
    return found

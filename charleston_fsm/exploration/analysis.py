"""What the explored graph itself answers: termination and the longest game.

The rules allow one kind of loop: a seat may change or withdraw a confirmed choice
until its pass resolves (PASS-05), which can bring the table back to a configuration it
was in. Everything else moves the game on. So the graph without ``change_pass`` and
``withdraw_pass`` edges must have no cycle: then every endless game changes or withdraws
forever, which the seat's clock ends (its deadline runs from the step's start and is not
re-armed by a change, SVC-10). The longest path of that acyclic graph from the deal is
the most commands a game can take without a change or a withdrawal.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from .properties import Finding

if TYPE_CHECKING:
    from .graph import Exploration

#: the commands whose loops the rules allow (PASS-05)
CHOICE_LOOPS = frozenset({"change_pass", "withdraw_pass"})


def analyse(result: Exploration) -> Iterator[tuple[int, Finding]]:
    """Check termination on the explored graph; set ``longest_without_change``."""
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

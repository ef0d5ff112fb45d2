"""Where a table stands, said so that no client has to guess: the phase it is in, which
pass is under way and how many the Charleston can have, and how it ended.

Everything is read from the chart, the one authority on the flow:

- **The phase** of each top-level state is data beside its chart (``Ruleset.phases``:
  ``pass``, ``vote``, ``courtesy``, ``ding_dong_window``, ``ding_dong``, ``done``; a
  substate shares its parent's). A state without a phase fails the tests, never a page.
- **A pass** is a top-level state whose phase is ``pass`` or ``courtesy`` (the Courtesy
  Pass is one pass, though its two pairs resolve on their own).
- **The passes ahead** are the longest run of passes along the chart's own transitions
  from the present state, leaving out the moves the game's options close (their option
  guards, ``guards.OPTION_GUARDS``, are asked of the table) and the moves back to a state
  the walk came through (an invalid Heavenly Hand set aside, the Ding Dong window), so
  that the walk ends.
- **The passes behind**: the table counts every resolution (``passes_resolved``); the
  chart says how many passes each way to the present state played (a move out of a pass
  plays it when the pass resolves on that move, ``resolve_pass``, or when the pass is
  made of inner steps, as the Courtesy Pass is; a late objection leaves its pass
  unplayed); the way taken is the longest that the resolutions allow (a Courtesy Pass
  resolving pair by pair adds resolutions, never a way).

So the First Left of ``nmjl`` is pass 3 of 7, the vote comes after 3 of up to 7, and the
Courtesy Pass after a stop is pass 4 of 4; in ``four_winds`` an exchange is one of 6.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from statemachine import State

from .guards import OPTION_GUARDS

if TYPE_CHECKING:
    from .table import Table

#: the phases that are a pass of the Charleston, numbered for people
PASS_PHASES = frozenset({"pass", "courtesy"})


@dataclass(frozen=True)
class Progress:
    """The numbers a client shows: ``Pass 3 of 7``."""

    phase: str
    pass_number: int | None  # the pass under way, from 1; None outside a pass
    pass_total: int | None  # the most passes the Charleston can have from here; None at the end


def progress(table: Table) -> Progress:
    """The phase of ``table`` and the number of its pass, as the module docstring says."""
    top = _top(table.active_states[0])
    phases = table.ruleset.phases
    phase = phases[top.id]
    walk = _walk(table)
    behind = [n for n in walk.behind[top.id] if n <= table.passes_resolved]
    played = max(behind, default=min(walk.behind[top.id]))
    if phase == "done":
        return Progress(phase, None, None)
    current = 1 if phase in PASS_PHASES else 0
    return Progress(
        phase,
        played + 1 if current else None,
        played + current + walk.ahead[top.id],
    )


@dataclass(frozen=True)
class _Walk:
    behind: Mapping[str, frozenset[int]]  # the passes each way to a state went through
    ahead: Mapping[str, int]  # the most passes after a state


def _top(state: State) -> State:
    while state.parent is not None:
        state = state.parent
    return state


_WALKS: dict[tuple[str, Any], _Walk] = {}


def _walk(table: Table) -> _Walk:
    """The walk of the table's chart under its options, made once per ruleset and options
    (the table answers the option guards, which read nothing else)."""
    key = (table.ruleset.name, table.options)  # options are frozen, so hashable
    found = _WALKS.get(key)
    if found is None:
        found = _WALKS[key] = _walk_of(table)
    return found


def _walk_of(table: Table) -> _Walk:
    chart = table.ruleset.chart
    phases = table.ruleset.phases
    edges = _edges(chart, lambda guard: bool(getattr(table, guard)()))
    start = _top(next(s for s in chart.states if s.initial)).id
    order = _acyclic(start, edges)
    place = {s: i for i, s in enumerate(order)}
    is_pass = {s: int(phases[s] in PASS_PHASES) for s in order}
    forward = {s: [(t, w) for t, w in edges[s] if place.get(t, -1) > place[s]] for s in order}
    behind: dict[str, set[int]] = {s: set() for s in order}
    behind[start].add(0)
    for state in order:  # topological: every way into a state is known before it is left
        for target, played in forward[state]:
            behind[target] |= {n + played for n in behind[state]}
    ahead: dict[str, int] = {}
    for state in reversed(order):
        ahead[state] = max((is_pass[t] + ahead[t] for t, _ in forward[state]), default=0)
    return _Walk(
        behind={s: frozenset(n) or frozenset({0}) for s, n in behind.items()},
        ahead=ahead,
    )


def _edges(chart: Any, holds: Callable[[str], bool]) -> dict[str, list[tuple[str, int]]]:
    """Moves between top-level states, in document order, each with the passes it plays
    (0 or 1), without those whose option guards can never hold in this game."""
    compound = {s.id for s in chart.states if s.states}  # passes made of inner steps
    edges: dict[str, list[tuple[str, int]]] = {}
    for state in chart.states_map.values():
        source = _top(state).id
        edges.setdefault(source, [])
        for transition in state.transitions:
            if transition.initial or not transition.targets:
                continue
            closed = any(
                holds(str(spec.attr_name)) is (spec.expected_value is False)
                for spec in transition.cond
                if str(spec.attr_name) in OPTION_GUARDS
            )
            actions = {str(a.attr_name) for a in transition.on}
            played = int("resolve_pass" in actions or source in compound)
            for target in transition.targets:
                top = _top(target).id
                if not closed and top != source and (top, played) not in edges[source]:
                    edges[source].append((top, played))
    return edges


def _acyclic(start: str, edges: dict[str, list[tuple[str, int]]]) -> list[str]:
    """The states reachable from ``start`` in an order where every move that is not a
    move back (to a state on the way to it) goes forward; moves back are then ignored."""
    done: list[str] = []
    on_way: set[str] = set()

    def visit(state: str) -> None:
        on_way.add(state)
        for target, _ in edges[state]:
            if target not in on_way and target not in done:
                visit(target)
        on_way.discard(state)
        done.append(state)

    visit(start)
    return list(reversed(done))

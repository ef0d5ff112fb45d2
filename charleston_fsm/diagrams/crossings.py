"""How many explored transitions cross each transition of a ruleset's chart.

A diagram shows what the chart *could* do; the exhaustive exploration
(:mod:`charleston_fsm.exploration`) shows what games *do*. Drawing the counts the
exploration collected (:attr:`Exploration.crossings`) on the arrows lets a reviewer see
which branches carry the game and which are rare, and a transition that no explored
command crosses, although the options of some explored option set let it fire, is a
finding: either a branch nothing can reach (dead chart) or a flow the exploration does not
try. Transitions that can never fire under any explored option set (the diagram's grey,
dashed moves) are expected to stay at zero and are not reported.

The counts come from the bounded exploration (CI's form, :func:`.exploration.runs.run_check`),
summed over the ruleset's option sets: computing them takes that exploration's time, so
``charleston-fsm diagram`` draws them only when asked (``--crossings``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .model import ChartView, Move, chart_view

#: a chart transition as the exploration's listener records it: source id, target id, and
#: the event ("" for an eventless one; ``done.state.X`` written ``done_state_X``)
Key = tuple[str, str, str]


def _event(event: str | None) -> str:
    return (event or "").replace(".", "_")


def move_key(move: Move) -> Key:
    """The key of a diagram's move in :attr:`Exploration.crossings`."""
    return (move.source, str(move.target), _event(move.event))


@dataclass
class Crossings:
    """What the bounded exploration of one ruleset crossed."""

    ruleset: str
    #: per chart transition, how many explored commands crossed it (all option sets)
    counts: Counter[Key] = field(default_factory=Counter)
    #: the options of each explored option set
    options: list[dict[str, Any]] = field(default_factory=list)
    #: the properties that failed in some option set (the counts are still drawn)
    failed: set[str] = field(default_factory=set)

    def add(self, crossings: Mapping[tuple[str, str, str], int], options: dict[str, Any]) -> None:
        for (source, target, event), count in crossings.items():
            self.counts[(source, target, _event(event))] += count
        self.options.append(options)

    def uncrossed(self) -> list[Move]:
        """The chart's moves that some explored option set lets fire and that no explored
        command crossed (each once, in the chart's document order)."""
        return uncrossed(self.ruleset, self.counts, self.options)


def explored_crossings(ruleset: str, *, jobs: int = 1) -> Crossings:
    """Run the bounded exploration of ``ruleset`` and collect its crossings."""
    from ..exploration.runs import run_check

    found = Crossings(ruleset)
    for checked in run_check(ruleset, bounded=True, jobs=jobs):
        result = checked.exploration
        found.add(result.crossings, result.options)
        found.failed.update(f.property for f in result.failures)
    return found


def uncrossed(
    ruleset: str, counts: Mapping[Key, int], options: Iterable[Mapping[str, Any]]
) -> list[Move]:
    """The moves (with a target) that can fire under one of ``options`` but that
    ``counts`` never crossed."""
    from ..engine.rulesets import get_ruleset

    rules = get_ruleset(ruleset)
    live: dict[Key, Move] = {}
    for chosen in options:
        for move in chart_view(rules, rules.options(dict(chosen))).arrows():
            if not move.never:
                live.setdefault(move_key(move), move)
    order = [move_key(m) for m in chart_view(rules).arrows()]
    return [live[k] for k in dict.fromkeys(order) if k in live and not counts.get(k)]


def with_crossings(view: ChartView, counts: Mapping[Key, int]) -> ChartView:
    """``view`` with the counts drawn on its arrows (:attr:`ChartView.crossings`)."""
    from dataclasses import replace

    return replace(view, crossings={move_key(m): counts.get(move_key(m), 0) for m in view.arrows()})

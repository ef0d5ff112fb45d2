"""Ask a chart whether it would take an event now, without taking it.

A client greys its buttons from the list of commands a seat may give. That list must
be exact: the chart's guards *and* the model's validators must pass for some argument.
python-statemachine's ``enabled_events`` checks guards only, so this module walks the
transitions the way the library's engine selects them (each active leaf state, then
its ancestors; validators first, then guards) and runs no action. Where the compiled
steps read the event (``engine/compiled_steps.py``: a targetless step of one state),
they answer, calling the table's methods directly.

Which transitions an event could take depends on the configuration alone: that walk is
done once per chart class, configuration and event (:func:`_candidates`), and only the
guards and validators, which read the table's facts, run per question.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from itertools import chain
from typing import Any

from statemachine import StateChart

from .. import compiled_steps
from ..errors import CharlestonError

#: per active leaf (in the configuration's order): the (ancestor depth, transition) pairs
#: that match an event, in the order the engine tries them
Candidates = tuple[tuple[tuple[int, Any], ...], ...]


def would_accept(chart: StateChart, event: str, **kwargs: Any) -> bool:
    """True when ``chart.send(event, **kwargs)`` would be taken now.

    A validator that raises a refusal means no (as the engine, which stops at the first
    refusal); so does an event that no transition of the active states takes with its
    guards satisfied.
    """
    try:
        compiled = compiled_steps.would_take(chart.model, event, kwargs)
        return _taken(chart, event, kwargs) if compiled is None else compiled
    except CharlestonError:
        return False


def could_take(chart: StateChart, events: Iterable[str]) -> list[str]:
    """Those of ``events`` some transition of the active states matches, whatever the facts.

    An event no transition of the configuration matches is refused by the chart whatever
    its guards and validators say (:func:`would_accept` is false for it).
    """
    leaves = _leaves(chart)
    return [event for event in events if any(_candidates(type(chart), leaves, event))]


def _leaves(chart: StateChart) -> tuple[str, ...]:
    return tuple(state.id for state in chart.configuration if state.is_atomic)


@cache
def _candidates(chart_class: type[StateChart], leaves: tuple[str, ...], event: str) -> Candidates:
    """The transitions :func:`_first_match` tries for ``event`` from ``leaves``."""
    by_id = {state.id: state for state in chart_class.states_map.values()}
    return tuple(
        tuple(
            (depth, transition)
            for depth, state in enumerate(chain([by_id[leaf]], by_id[leaf].ancestors()))
            for transition in state.transitions
            if not transition.initial and transition.match(event)
        )
        for leaf in leaves
    )


def _taken(chart: StateChart, event: str, kwargs: dict[str, Any]) -> bool:
    callbacks = chart._callbacks  # the library's own registry, as its engine uses it
    leaves = [state for state in chart.configuration if state.is_atomic]
    candidates = _candidates(type(chart), tuple(s.id for s in leaves), event)
    taken = False
    for leaf, tried in zip(leaves, candidates, strict=True):
        if tried and _first_match(chart, callbacks, leaf, tried, event, kwargs):
            taken = True
    return taken


def _first_match(
    chart: StateChart,
    callbacks: Any,
    leaf: Any,
    tried: tuple[tuple[int, Any], ...],
    event: str,
    kwargs: dict[str, Any],
) -> bool:
    """Whether a transition of ``leaf`` or its ancestors takes ``event``; a refusal raises."""
    states = [leaf, *leaf.ancestors()]
    for depth, transition in tried:
        context = {
            **kwargs,
            "machine": chart,
            "model": chart.model,
            "event": getattr(chart, event),
            "source": transition.source,
            "target": transition.target,
            "state": states[depth],
            "transition": transition,
        }
        callbacks.call(transition.validators.key, **context)
        if callbacks.all(transition.cond.key, **context):
            return True
    return False

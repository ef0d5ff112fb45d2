"""Ask a chart whether it would take an event now, without taking it.

A client greys its buttons from the list of commands a seat may give. That list must
be exact: the chart's guards *and* the model's validators must pass for some argument.
python-statemachine's ``enabled_events`` checks guards only, so this module walks the
transitions the way the library's engine selects them (each active leaf state, then
its ancestors; validators first, then guards) and runs no action.
"""

from __future__ import annotations

from itertools import chain
from typing import Any

from statemachine import StateChart

from ..errors import CharlestonError


def would_accept(chart: StateChart, event: str, **kwargs: Any) -> bool:
    """True when ``chart.send(event, **kwargs)`` would be taken now.

    A validator that raises a refusal means no (as the engine, which stops at the first
    refusal); so does an event that no transition of the active states takes with its
    guards satisfied.
    """
    try:
        return _taken(chart, event, kwargs)
    except CharlestonError:
        return False


def _taken(chart: StateChart, event: str, kwargs: dict[str, Any]) -> bool:
    callbacks = chart._callbacks  # the library's own registry, as its engine uses it
    taken = False
    for leaf in (s for s in chart.configuration if s.is_atomic):
        if _first_match(chart, callbacks, leaf, event, kwargs):
            taken = True
    return taken


def _first_match(
    chart: StateChart, callbacks: Any, leaf: Any, event: str, kwargs: dict[str, Any]
) -> bool:
    """Whether a transition of ``leaf`` or its ancestors takes ``event``; a refusal raises."""
    for state in chain([leaf], leaf.ancestors()):
        for transition in state.transitions:
            if transition.initial or not transition.match(event):
                continue
            context = {
                **kwargs,
                "machine": chart,
                "model": chart.model,
                "event": getattr(chart, event),
                "source": transition.source,
                "target": transition.target,
                "state": state,
                "transition": transition,
            }
            callbacks.call(transition.validators.key, **context)
            if callbacks.all(transition.cond.key, **context):
                return True
    return False

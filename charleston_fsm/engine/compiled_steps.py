"""The chart's commonest step taken without the library's dispatch, from the chart itself.

Most commands change no state: a seat confirms, changes or withdraws a pass, places its
tiles, casts a vote. On the chart each is a *targetless* transition of the one state the
table is in (``shapes.in_each``): its validators and guards are asked, its action runs,
and then the chart asks whether an eventless transition is now enabled (everyone has
confirmed: the pass resolves). python-statemachine does that through its general
machinery (event data, argument binding for every callback, three transition
selections), about four fifths of a command's time in the engine.

This module reads the chart class once and keeps, for each state and event, the
transitions the library would consider, in its order, with the table's methods they name
and the arguments each takes. :func:`take` then does what the library does for such a
step, in the same order:

1. the configuration is one atomic state (never the Courtesy Pass's parallel regions)
   and every transition the event could take there is targetless and plain (named
   callbacks that are methods of the table, no convention hook such as ``on_<event>``,
   arguments among ``seat``, ``command`` and ``source``), and no listener was added to
   the chart but one that says it sees only moves (:data:`MOVES_ONLY`); otherwise the
   library runs it;
2. the transitions are tried in document order, the state's before its ancestors': each
   one's validators (the first that raises refuses the command), then its guards (every
   ``cond`` true, every ``unless`` false); the first that passes is taken, and none
   passing is :class:`~statemachine.exceptions.TransitionNotAllowed`, as from the library;
3. its ``before``, ``on`` and ``after`` actions run (no state is exited or entered);
4. if an eventless transition of the state is now enabled, the library's own processing
   loop runs the macrostep that follows (the pass resolves there, through the library).

A chart that ignores an unmatched event or turns errors into events is left to the
library whole. ``charts/probe.py`` asks the same compiled transitions whether an event
would be taken (step 2 without the actions).

The chart stays the one authority: nothing here names a state, an event or a guard; it
only reads what the chart class declares. ``charleston-fsm check`` runs every explored
command a compiled step answers through the library too and requires the same outcome
(property ``library``, ``exploration/library_steps.py``); ``tests/test_compiled_steps.py``
does the same for the malformed forms of those commands.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

from statemachine import State, StateChart
from statemachine.exceptions import TransitionNotAllowed

#: the arguments a callback may take here (the rest of the library's are not built)
_ARGUMENTS = frozenset({"seat", "command", "source"})
#: the library's convention hooks: a table or chart defining one is left to the library
_HOOKS = ("prepare_event", "before_transition", "on_transition", "after_transition")


@dataclass(frozen=True)
class _Call:
    """One callback: the table's method and the names of the arguments it takes."""

    name: str
    arguments: tuple[str, ...]


@dataclass(frozen=True)
class _Transition:
    """A targetless transition as the library would run it."""

    source: State
    validators: tuple[_Call, ...]
    conds: tuple[tuple[_Call, bool], ...]  # (guard, the value it must have)
    actions: tuple[_Call, ...]  # before, on, after

    def passes(self, table: Any, given: dict[str, Any]) -> bool:
        for call in self.validators:
            _invoke(table, call, given)
        return all(bool(_invoke(table, call, given)) is wanted for call, wanted in self.conds)


@dataclass(frozen=True)
class _Eventless:
    """An eventless transition's guards: whether it is enabled is all that is asked."""

    source: State
    conds: tuple[tuple[_Call, bool], ...]

    def enabled(self, table: Any, given: dict[str, Any]) -> bool:
        arguments = {**given, "source": self.source}
        return all(bool(_invoke(table, call, arguments)) is wanted for call, wanted in self.conds)


@dataclass(frozen=True)
class CompiledChart:
    """A chart class's targetless steps: by (state id, event), the transitions to try
    (``None``: the library takes that event there); by state id, its eventless guards
    (``None``: not readable here, so the library settles every step of that state)."""

    steps: dict[tuple[str, str], tuple[_Transition, ...] | None]
    eventless: dict[str, tuple[_Eventless, ...] | None]


#: a listener with this attribute true acts only on transitions that change the
#: configuration (the exploration's count of crossings), so it misses nothing here
MOVES_ONLY = "observes_moves_only"


def _listeners_allow(chart: StateChart) -> bool:
    """Whether every listener added to ``chart`` would do nothing on a targetless step
    (one that says nothing of itself is told every step: the library runs them all)."""
    listeners = chart._listeners
    return not listeners or all(getattr(x, MOVES_ONLY, False) for x in listeners.values())


def _invoke(table: Any, call: _Call, given: dict[str, Any]) -> Any:
    method = getattr(table, call.name)
    return method(**{name: given[name] for name in call.arguments})


def _plain_call(table_class: type, chart_class: type, name: Any) -> _Call | None:
    """``name`` as a call of the table's method, or ``None`` where it is anything else
    (a callable, an expression, a property, a name the chart defines)."""
    if not isinstance(name, str) or not name.isidentifier() or hasattr(chart_class, name):
        return None
    method = inspect.getattr_static(table_class, name, None)
    if not inspect.isfunction(method):
        return None
    parameters = list(inspect.signature(method).parameters.values())[1:]
    if any(
        p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) or p.name not in _ARGUMENTS
        for p in parameters
    ):
        return None
    return _Call(name, tuple(p.name for p in parameters))


def _specs(transition: Any, group: str) -> list[Any]:
    return [spec for spec in transition._specs if spec.group.name == group]


def _compiled(
    transition: Any, table_class: type, chart_class: type
) -> tuple[tuple[_Call, ...], tuple[tuple[_Call, bool], ...], tuple[_Call, ...]] | None:
    """A transition's validators, guards and actions as plain calls; ``None`` if any is
    not one (or a convention hook of its event exists on the table or the chart)."""
    for event in transition.events:
        for hook in (f"before_{event}", f"on_{event}", f"after_{event}"):
            if hasattr(table_class, hook) or hasattr(chart_class, hook):
                return None
    parts: dict[str, list[Any]] = {}
    for group in ("VALIDATOR", "COND", "BEFORE", "ON", "AFTER"):
        calls = []
        for spec in _specs(transition, group):
            if spec.is_convention:
                continue  # resolved only where the name exists: checked above
            call = _plain_call(table_class, chart_class, spec.func)
            if call is None:
                return None
            calls.append((call, spec.expected_value) if group == "COND" else call)
        parts[group] = calls
    actions = (*parts["BEFORE"], *parts["ON"], *parts["AFTER"])
    return tuple(parts["VALIDATOR"]), tuple(parts["COND"]), actions


_COMPILED: dict[tuple[type, type], CompiledChart] = {}


def compile_chart(chart_class: type[StateChart], table_class: type) -> CompiledChart:
    """``chart_class`` read for ``table_class`` (once: see the module docstring)."""
    key = (chart_class, table_class)
    if key not in _COMPILED:
        _COMPILED[key] = _compile(chart_class, table_class)
    return _COMPILED[key]


def _compile(chart_class: type[StateChart], table_class: type) -> CompiledChart:
    if (
        any(hasattr(table_class, h) or hasattr(chart_class, h) for h in _HOOKS)
        or chart_class.allow_event_without_transition  # an unmatched event ignored
        or chart_class.catch_errors_as_events  # a refusal turned into an event
    ):
        return CompiledChart({}, {})
    events = sorted({str(e) for t in _all_transitions(chart_class) for e in t.events})
    steps: dict[tuple[str, str], tuple[_Transition, ...] | None] = {}
    eventless: dict[str, tuple[_Eventless, ...] | None] = {}
    for state in chart_class.states_map.values():
        if not state.is_atomic or state.parent is not None:
            continue
        chain = [state, *state.ancestors()]
        for event in events:
            candidates = [
                t for s in chain for t in s.transitions if not t.initial and t.match(event)
            ]
            steps[(state.id, event)] = _step(candidates, table_class, chart_class)
        eventless[state.id] = _settling(
            [t for s in chain for t in s.transitions if not t.initial and t.is_eventless],
            table_class,
            chart_class,
        )
    return CompiledChart(steps, eventless)


def _all_transitions(chart_class: type[StateChart]) -> list[Any]:
    return [t for s in chart_class.states_map.values() for t in s.transitions]


def _step(
    candidates: list[Any], table_class: type, chart_class: type
) -> tuple[_Transition, ...] | None:
    compiled = []
    for transition in candidates:
        if transition.targets or transition.internal:
            return None  # a step that moves: the library's
        parts = _compiled(transition, table_class, chart_class)
        if parts is None:
            return None
        compiled.append(_Transition(transition.source, *parts))
    return tuple(compiled)


def _settling(
    candidates: list[Any], table_class: type, chart_class: type
) -> tuple[_Eventless, ...] | None:
    compiled = []
    for transition in candidates:
        parts = _compiled(transition, table_class, chart_class)
        if parts is None or parts[0]:  # a validator on an eventless transition: the library's
            return None
        compiled.append(_Eventless(transition.source, parts[1]))
    return tuple(compiled)


def _readable(
    table: Any, chart: StateChart, event: str
) -> tuple[tuple[_Transition, ...], tuple[_Eventless, ...]] | None:
    """The compiled transitions of ``event`` in ``chart``'s configuration and the
    eventless ones after them; ``None`` where the library must take it (step 1)."""
    configuration = chart.configuration
    if len(configuration) != 1 or not _listeners_allow(chart):
        return None
    (state,) = configuration
    compiled = compile_chart(type(chart), type(table))
    transitions = compiled.steps.get((state.id, event))
    settling = compiled.eventless.get(state.id)
    if transitions is None or settling is None:
        return None
    return transitions, settling


def would_take(table: Any, event: str, given: dict[str, Any]) -> bool | None:
    """Whether ``event`` with ``given`` would be taken now, asked of the compiled
    transitions without running an action (a validator's refusal raises, as in step 2);
    ``None`` where the library must be asked (``charts/probe.py``)."""
    readable = _readable(table, table.chart, event)
    if readable is None:
        return None
    return any(t.passes(table, {**given, "source": t.source}) for t in readable[0])


def applies(table: Any, event: str) -> bool:
    """Whether :func:`take` takes ``event`` on ``table`` now (read, nothing run)."""
    return _readable(table, table.chart, event) is not None


def take(table: Any, command: Any) -> bool:
    """Take ``command`` (its event, with its ``seat`` and itself) on ``table``'s chart as
    the library would; ``False`` where it is not a targetless step this module reads
    (nothing was done: the caller sends it to the library)."""
    chart = table.chart
    readable = _readable(table, chart, command.event)
    if readable is None:
        return False
    transitions, settling = readable
    configuration = chart.configuration
    given = {"seat": command.seat, "command": command}
    for transition in transitions:
        arguments = {**given, "source": transition.source}
        if transition.passes(table, arguments):
            for call in transition.actions:
                _invoke(table, call, arguments)
            break
    else:
        raise TransitionNotAllowed(None, configuration)
    if any(step.enabled(table, given) for step in settling):
        chart._processing_loop()  # the library's macrostep: the eventless moves
    return True

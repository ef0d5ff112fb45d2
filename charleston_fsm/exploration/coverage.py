"""What an exploration exercised: each guard seen true and false, each rule id exercised by
an accepted and by a refused command (``charleston-fsm check --coverage``).

The diagrams' crossing counts show which transitions fired; a reviewer also asks which
*decisions* were tested both ways. While an exploration runs, :func:`covered` wraps the
table's guards (every name a chart transition's ``cond`` or ``unless`` reads) and every
method marked ``@enforces`` (guards, validators, actions), and :meth:`Table.execute`:

- a guard's value is recorded each time the chart asks it (a command, the deal's own
  moves, the ``allowed_commands`` probe);
- an accepted command exercised the rule ids of every ``@enforces`` method that ran for it;
- a refused command exercised the rule id its refusal carries (``CharlestonError.rule``,
  with its ``code``): the rule codes the engine's own errors name.

The wrappers keep the wrapped function's signature (the statechart passes a callback only
the arguments its signature names) and are removed when the exploration ends; nothing
the exploration checks changes. The counts are per option set and are summed per ruleset
by ``check``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ..engine.errors import CharlestonError
from ..engine.ruleset import get_ruleset
from ..engine.table import Table


@dataclass
class Coverage:
    """What one exploration exercised."""

    #: guard name -> the values it was seen to take ("true", "false")
    guards: dict[str, set[str]] = field(default_factory=dict)
    #: rule id -> how many accepted commands exercised it
    accepted: dict[str, int] = field(default_factory=dict)
    #: rule id -> the refusal codes that named it
    refused: dict[str, set[str]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "guards": {g: sorted(v) for g, v in sorted(self.guards.items())},
            "accepted": dict(sorted(self.accepted.items())),
            "refused": {r: sorted(c) for r, c in sorted(self.refused.items())},
        }


def guard_names(ruleset: str) -> set[str]:
    """Every guard a transition of ``ruleset``'s chart reads (``cond`` and ``unless``)."""
    names = set()
    for state in get_ruleset(ruleset).chart.states_map.values():
        for transition in state.transitions:
            for spec in transition.cond:
                if isinstance(spec.func, str):
                    names.add(spec.func)
    return names


def enforced_rules(ruleset: str) -> set[str]:
    """Every rule id a method of ``ruleset``'s table enforces (guards, validators,
    actions)."""
    found: set[str] = set()
    for cls in Table.FAMILIES[get_ruleset(ruleset).chart].__mro__:
        for value in vars(cls).values():
            found.update(getattr(value, "__rules__", ()))
    return found


class _Recorder:
    def __init__(self, guards: set[str]) -> None:
        self.coverage = Coverage()
        self.guards = guards
        #: the rule ids exercised by each command being executed (innermost last)
        self.running: list[set[str]] = []

    def guard(self, name: str, value: Any) -> None:
        self.coverage.guards.setdefault(name, set()).add("true" if value else "false")

    def rules(self, ids: Iterable[str]) -> None:
        if self.running:
            self.running[-1].update(ids)


def _wrap(recorder: _Recorder, name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    rules = getattr(func, "__rules__", ())
    is_guard = name in recorder.guards

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        value = func(*args, **kwargs)
        if is_guard:
            recorder.guard(name, value)
        recorder.rules(rules)
        return value

    return wrapper


@contextmanager
def _recording(ruleset: str) -> Any:
    recorder = _Recorder(guard_names(ruleset))
    patched: list[tuple[type, str, Any]] = []
    for cls in Table.FAMILIES[get_ruleset(ruleset).chart].__mro__:
        if cls is object:
            continue
        for name, value in list(vars(cls).items()):
            if not inspect.isfunction(value):
                continue
            if name in recorder.guards or getattr(value, "__rules__", None):
                patched.append((cls, name, value))
                setattr(cls, name, _wrap(recorder, name, value))
    real_execute = Table.execute

    @functools.wraps(real_execute)
    def execute(self: Table, command: Any) -> Any:
        recorder.running.append(set())
        try:
            events = real_execute(self, command)
        except CharlestonError as exc:
            recorder.running.pop()
            if exc.rule:
                recorder.coverage.refused.setdefault(exc.rule, set()).add(exc.code)
            raise
        except BaseException:
            recorder.running.pop()
            raise
        for rule in recorder.running.pop():
            recorder.coverage.accepted[rule] = recorder.coverage.accepted.get(rule, 0) + 1
        return events

    Table.execute = execute  # type: ignore[method-assign]
    try:
        yield recorder
    finally:
        Table.execute = real_execute  # type: ignore[method-assign]
        for cls, name, value in reversed(patched):
            setattr(cls, name, value)


def covered(ruleset: str, run: Callable[[], Any]) -> tuple[Any, Coverage]:
    """Run ``run`` (an exploration of ``ruleset``) with the recorders in place; return its
    result and what it exercised."""
    with _recording(ruleset) as recorder:
        result = run()
    return result, recorder.coverage


def merge(parts: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The :meth:`Coverage.to_json` of several option sets of one ruleset, summed."""
    guards: dict[str, set[str]] = {}
    accepted: dict[str, int] = {}
    refused: dict[str, set[str]] = {}
    for part in parts:
        for name, values in part["guards"].items():
            guards.setdefault(name, set()).update(values)
        for rule, count in part["accepted"].items():
            accepted[rule] = accepted.get(rule, 0) + count
        for rule, codes in part["refused"].items():
            refused.setdefault(rule, set()).update(codes)
    return Coverage(guards, accepted, refused).to_json()


def report(ruleset: str, merged: dict[str, Any]) -> list[str]:
    """The lines ``check --coverage`` prints for one ruleset: each guard with the values
    seen, each rule id with its accepted count and refusal codes; what was not seen both
    ways is said first."""
    guards = {g: merged["guards"].get(g, []) for g in sorted(guard_names(ruleset))}
    rules = sorted(enforced_rules(ruleset) | set(merged["accepted"]) | set(merged["refused"]))
    one_way = [g for g, v in guards.items() if len(v) < 2]
    lines = [
        f"{ruleset}: {len(guards) - len(one_way)} of {len(guards)} guards seen true and false"
        + (f"; only one way or never: {', '.join(one_way)}" if one_way else ""),
    ]
    for name, values in guards.items():
        lines.append(f"  guard {name}: {' and '.join(values) if values else 'never asked'}")
    both = [r for r in rules if merged["accepted"].get(r) and merged["refused"].get(r)]
    lines.append(
        f"{ruleset}: {len(both)} of {len(rules)} rule ids exercised by an accepted and a "
        "refused command"
    )
    for rule in rules:
        count = merged["accepted"].get(rule, 0)
        codes = merged["refused"].get(rule, [])
        lines.append(
            f"  rule {rule}: accepted {count}, refused "
            + (f"({', '.join(codes)})" if codes else "never")
        )
    return lines


def print_coverage(rows: list[dict[str, Any]], console: Any) -> None:
    """Print :func:`report` for each ruleset of ``check``'s rows (each with its
    ``coverage``)."""
    by_ruleset: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_ruleset.setdefault(row["ruleset"], []).append(row["coverage"])
    for name, parts in by_ruleset.items():
        for line in report(name, merge(parts)):
            console.print(line, highlight=False, markup=False)

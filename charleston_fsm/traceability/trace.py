"""The traceability matrix: for each rule, where the code enforces it and which tests prove it.

Nothing here is listed by hand. Enforcement is read from the code: the chart transitions
whose guards, validators or actions carry ``@enforces``, the states of each ruleset's
``state_rules``, the refusals whose ``rule`` names the id, other marked functions of the
engine, and the rule's own ``fact``. Tests are read from ``tests/`` (when the checkout
has it) by parsing the files for ``@pytest.mark.rule(...)``; pytest is not run.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from statemachine import StateChart

from ..engine.errors import CharlestonError
from ..engine.rulesets import RULESETS
from ..engine.table import Table
from ..rulebook import RULES, Rule

Kind = Literal["transition", "state", "refusal", "function", "fact"]

#: Engine modules whose functions and classes may carry ``@enforces``.
ENGINE_MODULES = (
    "charleston_fsm.engine.seats",
    "charleston_fsm.engine.tiles",
    "charleston_fsm.engine.steps",
    "charleston_fsm.engine.resolution",
    "charleston_fsm.engine.commands",
    "charleston_fsm.engine.checks",
    "charleston_fsm.engine.guards",
    "charleston_fsm.engine.table",
    "charleston_fsm.engine.charts.standard.chart",
    "charleston_fsm.engine.charts.standard.table",
    "charleston_fsm.engine.charts.four_winds",
)


@dataclass(frozen=True)
class Enforcement:
    kind: Kind
    text: str


@dataclass(frozen=True)
class Row:
    rule: Rule
    enforced: tuple[Enforcement, ...]
    tests: tuple[str, ...]


@dataclass(frozen=True)
class TestMark:
    """One ``@pytest.mark.rule(...)`` found in a test file."""

    __test__ = False  # not a pytest class
    test: str  # tests/test_x.py::test_name
    rule_id: str


def rules_of(obj: Any) -> tuple[str, ...]:
    func = getattr(obj, "__func__", obj)  # classmethod, staticmethod
    func = getattr(func, "fget", func)  # property
    return tuple(getattr(func, "__rules__", ()))


# -- the chart ---------------------------------------------------------------------------
def _charts() -> dict[type[StateChart], type]:
    """Each chart class once, with the domain model class whose methods it calls."""
    return {ruleset.chart: Table.FAMILIES[ruleset.chart] for ruleset in RULESETS.values()}


def _event(transition: Any) -> str | None:
    ids = [str(e) for e in transition.events]
    plain = [i for i in ids if not ("." in i and i.replace(".", "_") in ids)]
    return plain[0] if plain else None


@dataclass(frozen=True)
class Use:
    """A chart transition whose guards, validators or actions enforce a rule."""

    rule_id: str
    source: str
    target: str | None  # None: a command taken without leaving the state
    event: str | None
    guards: tuple[str, ...]
    methods: tuple[str, ...]  # the ones marked with this rule

    @property
    def arrow(self) -> str:
        text = f"{self.source} → {self.target}" + (f" on {self.event}" if self.event else "")
        return text + (f" [{' and '.join(self.guards)}]" if self.guards else "")


def transition_uses(chart: type[StateChart], model: type) -> Iterator[Use]:
    """Every (rule, transition) pair of ``chart`` whose model methods carry ``@enforces``."""
    for state in chart.states_map.values():
        for transition in state.transitions:
            if transition.initial:
                continue
            guards = tuple(
                ("not " if spec.expected_value is False else "") + str(spec.attr_name)
                for spec in transition.cond
            )
            marked: dict[str, list[str]] = {}
            for group in (transition.cond, transition.validators, transition.on):
                for spec in group:
                    name = str(spec.attr_name)
                    for rule_id in rules_of(getattr(model, name, None)):
                        if name not in marked.setdefault(rule_id, []):
                            marked[rule_id].append(name)
            target = transition.targets[0].id if transition.targets else None
            for rule_id, names in marked.items():
                yield Use(rule_id, state.id, target, _event(transition), guards, tuple(names))


def _chart_enforcement() -> dict[str, list[Enforcement]]:
    """Moving transitions grouped by the methods that enforce; commands by event."""
    found: dict[str, list[Enforcement]] = {}
    for chart, model in _charts().items():
        takes: dict[str | None, set[str]] = {}
        for state in chart.states_map.values():
            for transition in state.transitions:
                if not transition.targets:
                    takes.setdefault(_event(transition), set()).add(state.id)
        moving: dict[tuple[str, tuple[str, ...]], list[str]] = {}
        commands: dict[tuple[str, str | None], tuple[list[str], list[str]]] = {}
        for use in transition_uses(chart, model):
            if use.target is not None:
                moving.setdefault((use.rule_id, use.methods), []).append(use.arrow)
                continue
            sources, methods = commands.setdefault((use.rule_id, use.event), ([], []))
            sources.append(use.source)
            methods.extend(m for m in use.methods if m not in methods)
        for (rule_id, names), arrows in moving.items():
            text = "; ".join(arrows) + f" ({', '.join(names)})"
            found.setdefault(rule_id, []).append(Enforcement("transition", text))
        for (rule_id, event), (sources, methods) in commands.items():
            where = (
                "wherever the chart takes it"
                if set(sources) == takes.get(event)
                else "in " + ", ".join(dict.fromkeys(sources))
            )
            text = f"{event} {where} ({', '.join(methods)})"
            found.setdefault(rule_id, []).append(Enforcement("transition", text))
    return found


def _on_chart() -> set[str]:
    """Names of the model methods some chart transition calls."""
    names: set[str] = set()
    for chart in _charts():
        for state in chart.states_map.values():
            for transition in state.transitions:
                for group in (transition.cond, transition.validators, transition.on):
                    names.update(str(spec.attr_name) for spec in group)
    return names


# -- states, refusals, functions, facts --------------------------------------------------
def _state_enforcement() -> dict[str, list[Enforcement]]:
    found: dict[str, list[Enforcement]] = {}
    for ruleset in RULESETS.values():
        for state_id in ruleset.chart.states_map:
            for rule_id in ruleset.state_rule_ids(state_id):
                entry = Enforcement("state", state_id)
                if entry not in found.setdefault(rule_id, []):
                    found[rule_id].append(entry)
    return found


def refusal_classes() -> list[type[CharlestonError]]:
    """Every refusal class imported so far (the CLI imports the store's too)."""
    seen: list[type[CharlestonError]] = []
    todo: list[type[CharlestonError]] = [CharlestonError]
    while todo:
        cls = todo.pop()
        seen.append(cls)
        todo.extend(cls.__subclasses__())
    return sorted(seen, key=lambda c: (c.__module__, c.code, c.__name__))


def refusal_rule_ids(cls: type[CharlestonError]) -> tuple[str, ...]:
    """The rule ids a refusal class may carry (its own ``rule`` set on the class itself)."""
    own = cls.__dict__.get("rule", "")
    return tuple(r for r in (own, *cls.__dict__.get("other_rules", ())) if r)


def _refusal_enforcement() -> dict[str, list[Enforcement]]:
    found: dict[str, list[Enforcement]] = {}
    for cls in refusal_classes():
        for rule_id in refusal_rule_ids(cls):
            text = f"{cls.code} ({cls.__name__})"
            found.setdefault(rule_id, []).append(Enforcement("refusal", text))
    return found


def marked_functions() -> Iterator[tuple[str, type | None, str, tuple[str, ...]]]:
    """(qualified name, class, name, rule ids) of every marked engine function or method."""
    for module_name in ENGINE_MODULES:
        module = importlib.import_module(module_name)
        for name, obj in vars(module).items():
            if getattr(obj, "__module__", None) != module_name:
                continue
            if inspect.isfunction(obj) and rules_of(obj):
                yield f"{module_name}.{name}", None, name, rules_of(obj)
            elif inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    if rules_of(member):
                        yield f"{module_name}.{name}.{attr}", obj, attr, rules_of(member)


def _function_enforcement() -> dict[str, list[Enforcement]]:
    """Marked functions, but not the model's methods the chart calls (shown as transitions)."""
    on_chart = _on_chart()
    models = set(_charts().values())
    found: dict[str, list[Enforcement]] = {}
    for qualname, owner, name, rule_ids in marked_functions():
        if owner is not None and name in on_chart and any(issubclass(m, owner) for m in models):
            continue
        for rule_id in rule_ids:
            found.setdefault(rule_id, []).append(Enforcement("function", qualname))
    return found


# -- tests ---------------------------------------------------------------------------------
def default_tests_dir() -> Path | None:
    """``tests/`` of a source checkout, if there is one."""
    root = Path(__file__).resolve().parents[2]
    tests = root / "tests"
    return tests if (root / "pyproject.toml").is_file() and tests.is_dir() else None


def _rule_marks(node: ast.AST) -> Iterator[str]:
    """String arguments of every ``pytest.mark.rule(...)`` call inside ``node``."""
    for call in ast.walk(node):
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "rule"
            and ast.unparse(call.func.value) in ("pytest.mark", "mark")
        ):
            for arg in call.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    yield arg.value


def read_test_marks(tests_dir: Path) -> list[TestMark]:
    """Every rule mark of every test in ``tests_dir`` (module ``pytestmark`` included)."""
    marks: list[TestMark] = []
    root = tests_dir.parent
    for path in sorted(tests_dir.glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        where = path.relative_to(root).as_posix()
        module_ids = [
            rule_id
            for node in tree.body
            if isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets)
            for rule_id in _rule_marks(node.value)
        ]
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
                "test"
            ):
                ids = [r for d in node.decorator_list for r in _rule_marks(d)] + module_ids
                marks += [TestMark(f"{where}::{node.name}", r) for r in dict.fromkeys(ids)]
    return marks


# -- the matrix ---------------------------------------------------------------------------
def _merge(*sources: dict[str, list[Enforcement]]) -> dict[str, list[Enforcement]]:
    merged: dict[str, list[Enforcement]] = {}
    for source in sources:
        for rule_id, entries in source.items():
            merged.setdefault(rule_id, []).extend(entries)
    return merged


def enforcement() -> dict[str, list[Enforcement]]:
    """Rule id -> every place that enforces it (ids the book lacks included, for the checks)."""
    facts = {r.id: [Enforcement("fact", r.fact)] for r in RULES.values() if r.fact}
    return _merge(
        _state_enforcement(),
        _chart_enforcement(),
        _refusal_enforcement(),
        _function_enforcement(),
        facts,
    )


def matrix(tests_dir: Path | None = None, rules: Iterable[Rule] | None = None) -> list[Row]:
    """One row per rule: where it is enforced, which tests carry its mark."""
    where = enforcement()
    tests: dict[str, list[str]] = {}
    for mark in read_test_marks(tests_dir) if tests_dir else []:
        tests.setdefault(mark.rule_id, []).append(mark.test)
    return [
        Row(rule, tuple(where.get(rule.id, ())), tuple(tests.get(rule.id, ())))
        for rule in (rules if rules is not None else RULES.values())
    ]

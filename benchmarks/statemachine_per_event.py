"""What python-statemachine costs per event on our chart's own shape, beside what we pay.

"The library's own cost" is measured on the very chart class a table runs
(``StandardCharleston``: the same states, transitions, condition lists, validators,
eventless transitions and parallel regions), driven by a **hollow model**: for every
method of the real table the chart may call (named callbacks and the library's
naming conventions alike) it has a method of the same name and the same parameters that
does no work and returns what the real one returned at that call. The answers are
recorded first from a real table running the same events, so the library takes exactly
the same path through the chart (the same guards asked, in the same order, the same
transitions taken); only the Charleston's own work is gone.

Two workloads, each timed in CPU (``time.thread_time``), the two sides interleaved in the
same run, several rounds:

* ``command``: East confirms and withdraws the first pass in turn (what one stored
  command runs through the chart: ``Table.execute`` against ``chart.send``);
* ``fold``: every command of a finished bot game replayed (``Table.fold(..., warm=True)``
  against sending the same events to the hollow chart, re-set to its initial states).

Run: ``.venv/bin/python benchmarks/statemachine_per_event.py [rounds]``. The target of
issue 20 is ours within 1.25× of the library's own.
"""

from __future__ import annotations

import inspect
import statistics
import sys
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterator
from typing import Any

from statemachine.orderedset import OrderedSet

from charleston_fsm.engine.bots import play_table
from charleston_fsm.engine.commands import Command, ConfirmPass, WithdrawPass
from charleston_fsm.engine.events import ANNOTATION_TYPES
from charleston_fsm.engine.seats import Seat
from charleston_fsm.engine.table import Table
from charleston_fsm.engine.tiles import Deal, is_joker

TOGGLES = 1_000


def _callables(cls: type) -> dict[str, Callable[..., Any]]:
    """Every public method of the table class (what the chart may bind by name)."""
    found = {}
    for name in dir(cls):
        if name.startswith("_"):
            continue
        value = inspect.getattr_static(cls, name)
        if inspect.isfunction(value):
            found[name] = value
    return found


def _parameters(fn: Callable[..., Any]) -> str:
    """The parameter list of ``fn`` after ``self``, with no annotations and no defaults."""
    parts = []
    for p in list(inspect.signature(fn).parameters.values())[1:]:
        prefix = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "")
        default = "=None" if p.default is not p.empty else ""
        parts.append(f"{prefix}{p.name}{default}")
    return ", ".join(["self", *parts])


def _arguments(fn: Callable[..., Any]) -> str:
    """The call passing every parameter of ``fn`` after ``self`` on by name."""
    parts = []
    for p in list(inspect.signature(fn).parameters.values())[1:]:
        prefix = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "")
        parts.append(f"{prefix}{p.name}" if prefix else f"{p.name}={p.name}")
    return ", ".join(["self", *parts])


def recording(cls: type[Table]) -> tuple[type[Table], dict[str, deque[Any]], dict[str, bool]]:
    """A subclass of ``cls`` whose chart callbacks (same parameters) record what they
    return while ``switch["on"]``."""
    answers: dict[str, deque[Any]] = defaultdict(deque)
    switch = {"on": False}
    namespace: dict[str, Any] = {"answers": answers, "switch": switch}
    for name, fn in _callables(cls).items():
        if _is_table_api(name):
            continue
        namespace[f"real_{name}"] = fn
        source = (
            f"def {name}({_parameters(fn)}):\n"
            f"    result = real_{name}({_arguments(fn)})\n"
            f"    if switch['on']:\n"
            f"        answers[{name!r}].append(result)\n"
            f"    return result\n"
        )
        exec(source, namespace)  # generated stubs: the benchmark's own
    methods = {n: namespace[n] for n in _callables(cls) if n in namespace}
    return type(f"Recording{cls.__name__}", (cls,), methods), answers, switch


#: methods of the table the chart never calls (its public face, used by views and stores)
def _is_table_api(name: str) -> bool:
    return name in set(vars(Table)) and not name.startswith(("record_", "resolve_", "on_"))


def hollow(cls: type[Table], answers: dict[str, deque[Any]]) -> type:
    """A model with the chart's callbacks of ``cls``, same parameters, no work: each
    returns the next recorded answer."""
    namespace: dict[str, Any] = {}
    for name, fn in _callables(cls).items():
        if _is_table_api(name):
            continue
        source = f"def {name}({_parameters(fn)}):\n    return self.answer({name!r})\n"
        exec(source, namespace)  # generated stubs: the benchmark's own
    methods = {n: namespace[n] for n in namespace if n != "__builtins__"}

    def answer(self: Any, name: str) -> Any:
        queue = answers.get(name)
        return queue.popleft() if queue else None

    return type(f"Hollow{cls.__name__}", (), {**methods, "answer": answer})


def commands_of(table: Table) -> list[Command]:
    return [e.command() for e in table.log if e.is_command and e.type not in ANNOTATION_TYPES]


def toggles(table: Table) -> list[Command]:
    tiles = [t for t in table.racks[Seat.EAST] if not is_joker(t)][:3]
    return [ConfirmPass(seat=Seat.EAST, tiles=tiles), WithdrawPass(seat=Seat.EAST)] * (TOGGLES // 2)


class Workload:
    """One sequence of commands, run by a real table and by the hollow chart."""

    def __init__(self, name: str, deal: Deal, sequence: list[Command], fold: bool) -> None:
        self.name, self.deal, self.sequence, self.fold = name, deal, sequence, fold
        cls = type(Table(deal))
        recorder_cls, self.recorded, switch = recording(cls)
        table = recorder_cls(deal)
        switch["on"] = True
        for command in sequence:
            table.execute(command)
        switch["on"] = False
        self.model_cls = hollow(cls, {})
        self.chart_cls = table.ruleset.chart
        self.table = Table(deal)
        self.log = table.log
        self.final = [state.id for state in table.active_states]

    def ours(self) -> float:
        """CPU seconds per command through ``Table.execute`` (or a warm fold)."""
        start = time.thread_time()
        if self.fold:
            Table.fold(self.deal, "nmjl", None, self.log, warm=True)
        else:
            for command in self.sequence:
                self.table.execute(command)
        return (time.thread_time() - start) / len(self.sequence)

    def library(self) -> float:
        """CPU seconds per command through ``chart.send`` on the hollow model."""
        answers = {n: deque(q) for n, q in self.recorded.items()}
        model = self.model_cls()
        model.answer = lambda name: answers[name].popleft() if answers.get(name) else None
        chart = self.chart_cls(model=model)
        chart.configuration = OrderedSet(chart.states_map[v] for v in _initial(self))
        start = time.thread_time()
        for command in self.sequence:
            chart.send(command.event, seat=command.seat, command=command)
        spent = time.thread_time() - start
        # the same path as the real table's: every recorded answer asked, the same end
        left = {n: len(q) for n, q in answers.items() if q}
        if left or {s.id for s in chart.configuration} != set(self.final):
            raise AssertionError(f"the hollow chart left the real path: {left or self.final}")
        return spent / len(self.sequence)


def _initial(workload: Workload) -> Iterator[str]:
    return (s.id for s in Table(workload.deal).chart.configuration)


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    game = Table(Deal.shuffled(3))
    play_table(game, 3)
    workloads = [
        Workload(
            "command (confirm / withdraw)",
            Deal.shuffled(1),
            toggles(Table(Deal.shuffled(1))),
            False,
        ),
        Workload("fold of a bot game", game.deal, commands_of(game), True),
    ]
    for workload in workloads:
        ours, library = [], []
        for _ in range(rounds):
            library.append(workload.library())
            ours.append(workload.ours())
        o, lib = statistics.median(ours) * 1e6, statistics.median(library) * 1e6
        print(
            f"{workload.name}: ours {o:.1f} µs, the library's own on the same chart {lib:.1f} µs "
            f"per command: {o / lib:.2f}× (rounds: ours {[round(x * 1e6) for x in ours]}, "
            f"library {[round(x * 1e6) for x in library]})"
        )


if __name__ == "__main__":
    main()

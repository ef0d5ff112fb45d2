"""What python-statemachine costs per event, with no Charleston code at all.

A minimal reproduction for docs/performance.md ("Replay"): a chart of two steps, one
self-transition with a validator, a guard and an action taking keyword arguments (the
shape of a pass confirmation), and an eventless transition out of the step (the shape
of "everyone confirmed"). It sends N events and prints events/s, beside the same work
done by plain method calls. Run: ``.venv/bin/python benchmarks/statemachine_per_event.py``.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from statemachine import State, StateChart


class Model:
    """The domain model: counts confirmations, like a table counts its seats."""

    def __init__(self) -> None:
        self.confirmed = 0

    def check(self, seat: str, command: Any) -> None:  # a validator: raises to refuse
        if command is None:
            raise ValueError("no command")

    def is_open(self, seat: str) -> bool:  # a guard
        return seat != ""

    def record(self, seat: str, command: Any) -> None:  # an action
        self.confirmed += 1

    def everyone(self) -> bool:  # the guard of the eventless transition
        return self.confirmed == 4

    def resolve(self) -> None:  # the eventless transition's action: the next step
        self.confirmed = 0


class Steps(StateChart):
    first = State(initial=True)
    second = State()

    confirm = first.to.itself(
        internal=True, validators="check", cond="is_open", on="record"
    ) | second.to.itself(internal=True, validators="check", cond="is_open", on="record")
    first.to(second, cond="everyone", on="resolve")
    second.to(first, cond="everyone", on="resolve")


def by_chart(events: int) -> float:
    chart = Steps(model=Model())
    start = time.perf_counter()
    for _ in range(events):
        chart.send("confirm", seat="east", command=1)
    return time.perf_counter() - start


def by_calls(events: int) -> float:
    model = Model()
    start = time.perf_counter()
    for _ in range(events):
        model.check("east", 1)
        if model.is_open("east"):
            model.record("east", 1)
        if model.everyone():
            model.resolve()
    return time.perf_counter() - start


def main() -> None:
    events = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    start = time.perf_counter()
    for _ in range(50):
        Steps(model=Model())
    build = (time.perf_counter() - start) / 50
    chart, calls = by_chart(events), by_calls(events)
    print(f"python-statemachine: {events / chart:,.0f} events/s ({chart / events * 1e6:.1f} µs)")
    print(f"plain calls:         {events / calls:,.0f} events/s ({calls / events * 1e6:.2f} µs)")
    print(f"building the chart:  {build * 1e3:.2f} ms")


if __name__ == "__main__":
    main()

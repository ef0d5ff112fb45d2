"""One measured figure beside its floor, and the arithmetic every row shares."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

DEFAULT_PG = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
"""The PostgreSQL server a bench run uses by default (for a scratch database)."""

ROWS = (
    "command",
    "throughput",
    "notify",
    "platform",
    "http",
    "standby",
    "replay",
    "verify",
    "memory",
)
"""The rows, in the order of the table (``--only`` takes these names); ``notify`` and
``standby`` are PostgreSQL's only."""


class RowSkipped(Exception):
    """A row that cannot be measured here; its message is the sentence the bench prints."""


@dataclass(frozen=True)
class Goal:
    """A target: ``of`` the value or the ratio to the floor, at least or at most ``bound``
    (``None``: a figure shown beside another's target, with none of its own)."""

    text: str
    bound: float | None
    of: str = "value"  # or "ratio"
    at_least: bool = False


@dataclass
class Figure:
    """A number, the floor it is compared with, and whether the target is met.

    ``higher_is_better`` decides the ratio's direction: it is always "figure per floor"
    for costs (ms, s) and "floor per figure" for rates, so a ratio of 2.0 reads "twice
    the floor's cost" both ways.
    """

    row: str
    database: str
    name: str
    value: float
    unit: str
    floor: float | None
    floor_name: str
    goal: Goal
    higher_is_better: bool = False
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def ratio(self) -> float | None:
        if not self.floor or not self.value:
            return None
        return self.floor / self.value if self.higher_is_better else self.value / self.floor

    @property
    def met(self) -> bool | None:
        """Whether the target is met (None: a ratio target with no floor measured)."""
        measured = self.ratio if self.goal.of == "ratio" else self.value
        bound = self.goal.bound
        if measured is None or bound is None:
            return None
        return measured >= bound if self.goal.at_least else measured <= bound

    def to_dict(self) -> dict[str, Any]:
        return {
            **{k: v for k, v in asdict(self).items() if k != "goal"},
            "target": self.goal.text,
            "ratio": self.ratio,
            "met": self.met,
        }


def percentile(samples: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``samples``, nearest rank; 0 for no samples."""
    if not samples:
        return 0.0
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    """Seconds per call of ``fn``, ``repeat`` times."""
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return samples


def median_figure(runs: Sequence[Figure]) -> Figure:
    """The run whose value is the median of ``runs`` (its floor and details with it),
    with the floor replaced by the median floor: each is measured in the same runs."""
    ordered = sorted(runs, key=lambda f: f.value)
    middle = ordered[(len(ordered) - 1) // 2]
    floors = [f.floor for f in runs if f.floor is not None]
    if floors:
        middle.floor = statistics.median(floors)
    middle.details = {**middle.details, "runs": [f.value for f in runs]}
    return middle

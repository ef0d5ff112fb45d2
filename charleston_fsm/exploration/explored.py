"""What an exploration found: the graph of configurations with the command that first
reached each, the figures, the chart transitions crossed and the properties' failures.

Data only, below both the explorer that fills it (:mod:`.graph`) and the analysis that
reads the finished graph (:mod:`.analysis`), so neither imports the other's caller.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..engine.seats import Seat


@dataclass
class Failure:
    """A property that failed, with the shortest command list from the deal to it."""

    property: str
    rules: tuple[str, ...]
    message: str
    commands: list[dict[str, Any]]
    configuration: list[str]
    #: a lasso's loop: the commands that lead from ``configuration`` back to it
    #: (:mod:`.fairness`; ``None``: the failure is at the path's end)
    loop: list[dict[str, Any]] | None = None


@dataclass
class Exploration:
    """What one option set's exploration found."""

    ruleset: str
    options: dict[str, Any]
    states: int = 0
    transitions: int = 0
    seconds: float = 0.0
    final_states: int = 0
    #: per node: its successors as (node, command name)
    edges: list[list[tuple[int, str]]] = field(default_factory=list)
    #: per node: (parent node, command that reached it) or None for the deal
    parents: list[tuple[int, dict[str, Any]] | None] = field(default_factory=list)
    configurations: list[tuple[str, ...]] = field(default_factory=list)
    keys: dict[tuple[Any, ...], int] = field(default_factory=dict)
    #: chart transitions (source id, target id, event) and how many explored commands
    #: took each
    crossings: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    failures: list[Failure] = field(default_factory=list)
    checked: Counter[str] = field(default_factory=Counter)
    longest_without_change: int | None = None
    #: the nodes where the Charleston is over
    finals: set[int] = field(default_factory=set)
    #: per node: its distance in commands from the deal
    depths: list[int] = field(default_factory=list)
    #: every configuration within this many commands of the deal was explored and checked
    #: (``None``: all of them, the exploration is complete)
    complete_to_depth: int | None = None
    #: per node: the clock's moves, as (seat, node it leads to) (:mod:`.fairness`)
    clock_edges: list[list[tuple[Seat, int]]] = field(default_factory=list)
    #: the reductions this exploration applied, in words (``check`` prints them)
    reductions: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return self.complete_to_depth is None

    def path(self, node: int) -> list[dict[str, Any]]:
        """The commands from the deal to ``node``, shortest first found."""
        commands: list[dict[str, Any]] = []
        step = self.parents[node]
        while step is not None:
            commands.append(step[1])
            step = self.parents[step[0]]
        return commands[::-1]

    def slim(self) -> Exploration:
        """This result without its graph (the figures, crossings and failures stay): what
        a worker process sends back."""
        self.edges, self.parents, self.configurations, self.depths = [], [], [], []
        self.clock_edges = []
        self.keys, self.finals = {}, set()
        return self

    @property
    def held(self) -> list[str]:
        """The properties checked that never failed, by name."""
        failed = {f.property for f in self.failures}
        return sorted(p for p in self.checked if p not in failed)

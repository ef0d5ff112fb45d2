"""Property ``library``: every explored step the service takes through its compiled steps
(``engine/compiled_steps.py``) is the step python-statemachine itself takes.

The explorer runs the service's turns, whose targetless steps (a confirmation, a
withdrawal, a vote that resolves nothing) skip the library's dispatch. In every
configuration, each explored command that such a step answers is run again on a second
table that takes every step through the library (``Table.library_only``), loaded with
the same snapshot: both must take it with the same events and leave the same table, or
refuse it with the same error and words. So the chart stays the one authority: a compiled
step that differs from the chart's own is a finding, with the command that shows it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..engine import compiled_steps
from ..engine.commands import Command
from ..engine.errors import CharlestonError
from ..engine.events import Event
from ..engine.table import Table
from .properties import Finding

PROPERTY = "library"

#: what a table did with a command: its events (as dicts) and snapshot, or its refusal
Outcome = tuple[Any, ...]


def taken(events: Sequence[Event], table: Table) -> Outcome:
    return ("taken", [e.to_dict() for e in events], table.snapshot())


def refused(refusal: CharlestonError) -> Outcome:
    return ("refused", type(refusal).__name__, refusal.code, refusal.rule, str(refusal))


class LibrarySteps:
    """The second table, taking every step through the library."""

    def __init__(self, table: Table) -> None:
        self.shadow = Table.restore(table.snapshot(), hand_checker=table.hand_checker)
        self.shadow.library_only = True

    @staticmethod
    def compiled(table: Table, command: Command) -> bool:
        """Whether the service's table takes ``command`` through a compiled step (read
        before it runs: the step is judged only then)."""
        return compiled_steps.applies(table, command.event)

    def check(
        self, snapshot: Mapping[str, Any], command: Command, outcome: Outcome
    ) -> Finding | None:
        """The library's outcome of ``command`` on ``snapshot`` against ``outcome``."""
        self.shadow.load(snapshot)
        try:
            own = taken(self.shadow.execute(command), self.shadow)
        except CharlestonError as refusal:
            own = refused(refusal)
        if own == outcome:
            return None
        return (
            PROPERTY,
            (),
            f"{command.type}: the compiled step {_said(outcome)}, the library {_said(own)}",
        )


def _said(outcome: Outcome) -> str:
    if outcome[0] == "refused":
        return f"refused it ({outcome[2]}, {outcome[3]}: {outcome[4]})"
    return f"took it ({len(outcome[1])} events)"

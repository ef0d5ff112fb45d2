"""The guards every chart family shares: facts the chart's transitions ask about
(everyone confirmed, the seat is East). Each names the rules it decides with
``@enforces``; a family adds its own beside its chart. Mixed into
:class:`charleston_fsm.engine.table.Table`, whose state they read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from statemachine import State

from ..rulebook import enforces
from .resolution import Declaration
from .seats import Seat

if TYPE_CHECKING:
    from .rulesets import Ruleset


class Guards:
    """Facts about the table, read by the chart's guards; they change nothing."""

    ruleset: Ruleset
    selections: dict[Seat, Declaration]

    @enforces("PASS-06")
    def all_confirmed(self, source: State) -> bool:
        step = self.ruleset.steps[source.id]
        return all(s in self.selections for s in step.participants)

    @enforces("NMJL-17", "FW-06")
    def from_east(self, seat: Seat) -> bool:
        return seat is Seat.EAST

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
    from .ruleset import Ruleset


#: Guards whose value depends on the game's options alone, and the option each reads: the
#: branches they close can never fire in a game (its diagram greys them, ``progress``
#: leaves them off the passes ahead).
OPTION_GUARDS: dict[str, str] = {
    "blind_passes_allowed": "blind_pass",
    "late_objection_allowed": "late_objection",
    "second_left_first": "second_charleston_order",
    "second_across_first": "second_charleston_order",
    "courtesy_counts_free": "courtesy_mode",
    "charleston_this_round": "charleston",
    "ding_dong_this_round": "ding_dong",
}


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

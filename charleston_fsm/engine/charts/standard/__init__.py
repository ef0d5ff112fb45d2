"""The National Mah Jongg League's Charleston as a statechart (rulesets ``nmjl``, ``house``).

Read it beside the rule book (docs/rules.md): one state per step, transitions guarded by
the table's facts (everyone confirmed, someone voted stop, the ruleset's order). Commands
are events; an event a state does not accept is refused, never ignored.

The family's own guards, validators and actions are methods of :class:`StandardTable`,
the chart's domain model, below the chart; what every family shares (placing, passes,
resolution) is in :class:`charleston_fsm.engine.table.Table`. The options on which the rule
documents disagree are :class:`Options`.
"""

from .chart import STANDARD_STEPS, STATE_PHASES, STATE_RULES, StandardCharleston
from .options import CourtesyMode, Options, SecondCharlestonOrder
from .table import StandardTable

__all__ = [
    "STANDARD_STEPS",
    "STATE_PHASES",
    "STATE_RULES",
    "CourtesyMode",
    "Options",
    "SecondCharlestonOrder",
    "StandardCharleston",
    "StandardTable",
]

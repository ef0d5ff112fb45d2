"""State diagrams generated from the chart classes that run games, never drawn by hand.

Rule reviewers read these pictures to check the service, so they are built from the very
chart class a ruleset plays (its ``states_map``, its transitions and their guards) and
from the ruleset's options, which decide which guarded branches can ever fire:

- every state shows its id and its name (the rule's wording) and, for a pass, what the
  step asks (who, how many, where, blind or not, read from the ruleset's step table);
- every guard shows as a readable phrase from :data:`GUARD_LABELS` (a test fails when a
  chart uses a guard that has no phrase);
- the commands a state accepts without leaving it (targetless transitions) are listed in
  the state's box instead of drawn as loops;
- a transition that can never fire under the ruleset's options is drawn grey and dashed
  (DOT/SVG) or left out (Mermaid), and the caption says why;
- :func:`live` draws one game's chart with its active states filled.

Output is deterministic (document order of the chart, no timestamps), so the committed
``diagrams/*.dot`` and ``diagrams/*.mmd`` are compared byte for byte by the tests.
"""

from .dot import to_dot
from .files import (
    CHART_PAGE_SECTION,
    FORMATS,
    INSTALL_GRAPHVIZ,
    Format,
    Written,
    default_out_dir,
    graphviz_available,
    live,
    path_for,
    render,
    render_view,
    run_command,
    to_svg,
    update_chart_page,
    write_all,
)
from .mermaid import _m, to_mermaid
from .model import (
    ACTION_LABELS,
    GUARD_LABELS,
    NEGATED_GUARD_LABELS,
    OPTION_GUARDS,
    ChartView,
    Guard,
    Move,
    Node,
    chart_events,
    chart_guards,
    chart_view,
    event_text,
    guard_label,
)

__all__ = [
    "ACTION_LABELS",
    "CHART_PAGE_SECTION",
    "FORMATS",
    "GUARD_LABELS",
    "INSTALL_GRAPHVIZ",
    "NEGATED_GUARD_LABELS",
    "OPTION_GUARDS",
    "ChartView",
    "Format",
    "Guard",
    "Move",
    "Node",
    "Written",
    "_m",
    "chart_events",
    "chart_guards",
    "chart_view",
    "default_out_dir",
    "event_text",
    "graphviz_available",
    "guard_label",
    "live",
    "path_for",
    "render",
    "render_view",
    "run_command",
    "to_dot",
    "to_mermaid",
    "to_svg",
    "update_chart_page",
    "write_all",
]

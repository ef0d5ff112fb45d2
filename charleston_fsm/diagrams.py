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

from __future__ import annotations

import html
import itertools
import shutil
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from statemachine import State, StateChart
from statemachine.contrib.diagram import GraphvizError, GraphvizNotFoundError
from statemachine.contrib.diagram.graphviz import run_graphviz

from .rulesets import RULESETS, CourtesyMode, Options, Ruleset, get_ruleset
from .seats import SEATS
from .steps import Step

if TYPE_CHECKING:
    from .table import Table

#: A readable phrase for every guard a chart uses (the table's method names).
GUARD_LABELS: dict[str, str] = {
    "all_confirmed": "all confirmed",
    "tiles_from_hand": "some tiles from a hand",
    "any_stop": "someone votes stop",
    "all_continue": "all four continue",
    "second_left_first": "order Left, Across, Right",
    "second_across_first": "order Across, Left, Right",
    "courtesy_counts_free": "counts may differ",
    "blind_passes_allowed": "blind passes allowed",
    "from_east": "East only",
    "from_pair_1": "East or West",
    "from_pair_2": "South or North",
    "pair_1_declined": "both offered, smaller = 0",
    "pair_2_declined": "both offered, smaller = 0",
    "pair_1_agreed": "both offered, smaller > 0",
    "pair_2_agreed": "both offered, smaller > 0",
    "pair_1_confirmed": "East and West confirmed",
    "pair_2_confirmed": "South and North confirmed",
}

#: The phrase for a guard used with ``unless=`` (default: "not <phrase>").
NEGATED_GUARD_LABELS: dict[str, str] = {
    "tiles_from_hand": "no tile from any hand",
}

#: Guards whose value depends on the game's options alone, and the option each reads.
#: They are evaluated once per ruleset to find the branches that can never fire.
OPTION_GUARDS: dict[str, str] = {
    "blind_passes_allowed": "blind_pass",
    "second_left_first": "second_charleston_order",
    "second_across_first": "second_charleston_order",
    "courtesy_counts_free": "courtesy_mode",
}

#: What a transition's action does, as shown after the guard ("/ pass resolves").
ACTION_LABELS: dict[str, str] = {
    "resolve_pass": "pass resolves",
    "record_agreement": "count agreed",
    "record_declaration": "declaration recorded",
}

FORMATS: dict[str, str] = {"dot": "dot", "mermaid": "mmd", "svg": "svg"}
"""Output format -> file suffix."""

Format = Literal["dot", "mermaid", "svg"]

INSTALL_GRAPHVIZ = (
    "Graphviz's `dot` is needed for SVG: install it with `apt-get install graphviz` "
    "(Debian/Ubuntu) or `brew install graphviz` (macOS)."
)

_ACTIVE_FILL = "#ffd54f"
_ACTIVE_CLUSTER_FILL = "#fff3c4"
_NEVER = "#9e9e9e"


# -- the model: what a diagram shows, read from the chart class ---------------------------
@dataclass(frozen=True)
class Guard:
    name: str
    negated: bool = False

    @property
    def label(self) -> str:
        if self.negated:
            return NEGATED_GUARD_LABELS.get(self.name, f"not {guard_label(self.name)}")
        return guard_label(self.name)


@dataclass(frozen=True)
class Move:
    """One transition of the chart: an automatic move, a command, or an in-state command."""

    source: str
    target: str | None
    event: str | None
    guards: tuple[Guard, ...]
    actions: tuple[str, ...]
    never: str | None = None  # why it can never fire under the options shown

    @property
    def guard_text(self) -> str:
        return " and ".join(g.label for g in self.guards)

    @property
    def action_text(self) -> str:
        return ", ".join(ACTION_LABELS.get(a, a.replace("_", " ")) for a in self.actions)


@dataclass(frozen=True)
class Node:
    id: str
    name: str
    kind: Literal["atomic", "compound", "parallel"]
    parent: str | None
    children: tuple[str, ...]
    initial: bool
    final: bool
    detail: str | None = None  # what the step asks, under these options
    left_at_once: str | None = None  # the guard that always holds and moves on at once
    never_entered: bool = False


@dataclass(frozen=True)
class ChartView:
    """A chart as one ruleset (or one game) sees it."""

    ruleset: Ruleset
    options: Options
    chart: type[StateChart]
    nodes: dict[str, Node]
    moves: tuple[Move, ...]
    caption: tuple[str, ...]  # the options and where the picture comes from
    never: tuple[str, ...]  # why some moves never fire under these options
    title: str
    active: frozenset[str] = frozenset()

    @property
    def roots(self) -> list[Node]:
        return [n for n in self.nodes.values() if n.parent is None]

    def commands(self, state_id: str) -> list[Move]:
        return [m for m in self.moves if m.source == state_id and m.target is None and m.event]

    def arrows(self) -> list[Move]:
        return [m for m in self.moves if m.target is not None]


def guard_label(name: str) -> str:
    try:
        return GUARD_LABELS[name]
    except KeyError:
        raise KeyError(
            f"Guard {name!r} has no readable label: add it to charleston_fsm.diagrams.GUARD_LABELS."
        ) from None


def chart_guards(chart: type[StateChart]) -> set[str]:
    """Every guard name the chart's transitions use."""
    return {
        str(spec.attr_name)
        for state in chart.states_map.values()
        for transition in state.transitions
        for spec in transition.cond
    }


def chart_events(chart: type[StateChart]) -> list[str]:
    """The chart's events (python names; ``done.state.X`` aliases folded into ``done_state_X``)."""
    ids = [str(e.id) for e in chart.events]
    return [i for i in dict.fromkeys(ids) if not ("." in i and i.replace(".", "_") in ids)]


def _event_of(transition) -> str | None:
    ids = [str(e) for e in transition.events]
    plain = [i for i in ids if not ("." in i and i.replace(".", "_") in ids)]
    return plain[0] if plain else None


def _kind(state: State) -> Literal["atomic", "compound", "parallel"]:
    if getattr(state, "parallel", False):
        return "parallel"
    return "compound" if state.states else "atomic"


def _step_detail(step: Step | None, options: Options) -> str | None:
    if step is None:
        return None
    who = (
        "all four"
        if tuple(step.participants) == SEATS
        else " and ".join(s.label for s in step.participants)
    )
    if step.courtesy:
        how = (
            "0-3 tiles, the smaller offer"
            if options.courtesy_mode is CourtesyMode.AGREED_MIN
            else "0-3 tiles each, counts may differ"
        )
        return f"{who} · {how}"
    where = step.direction.label if step.direction else "to the partner"
    text = f"{who} · {step.count} tiles {where}"
    if step.blind:
        text += " · blind pass allowed" if options.blind_pass else " · no blind pass here"
    return text


def chart_view(
    ruleset: Ruleset | str,
    options: Options | None = None,
    *,
    active: Iterable[str] = (),
    title: str | None = None,
) -> ChartView:
    """What the ruleset's chart looks like under ``options`` (default: the ruleset's)."""
    from .table import Table
    from .tiles import Deal

    ruleset = get_ruleset(ruleset) if isinstance(ruleset, str) else ruleset
    options = options or ruleset.defaults
    chart = ruleset.chart
    probe = Table(Deal.shuffled(0), ruleset, options)
    fixed = {name: bool(getattr(probe, name)()) for name in OPTION_GUARDS}

    def static(guard: Guard) -> bool | None:
        if guard.name not in fixed:
            return None
        return fixed[guard.name] is not guard.negated

    states = chart.states_map
    moves: list[Move] = []
    left_at_once: dict[str, str] = {}
    why_never: dict[str, str] = {}  # reason -> caption line
    for state in states.values():
        # SCXML order: the first enabled transition in document order wins. An eventless
        # one whose guards always hold leaves the state at once, so nothing after it fires.
        preempted = False
        for transition in state.transitions:
            if transition.initial:
                continue
            guards = tuple(
                Guard(str(s.attr_name), negated=s.expected_value is False) for s in transition.cond
            )
            event = _event_of(transition)
            values = [static(g) for g in guards]
            never = None
            false = next((g for g, v in zip(guards, values, strict=True) if v is False), None)
            if false is not None:
                option = OPTION_GUARDS[false.name]
                never = f"«{false.label}» never holds with {option} = {_option(options, option)}"
                why_never.setdefault(never, never)
            elif preempted:
                never = f"{state.id} is left at once"
            elif event is None and guards and all(values):
                preempted = True
                left_at_once[state.id] = " and ".join(g.label for g in guards)
            moves.append(
                Move(
                    source=state.id,
                    target=transition.targets[0].id if transition.targets else None,
                    event=event,
                    guards=guards,
                    actions=tuple(str(a.attr_name) for a in transition.on if not a.is_convention),
                    never=never,
                )
            )

    reached = _reachable(chart, moves)
    moves = [
        m if m.never or m.source in reached else _replace_never(m, f"{m.source} is never entered")
        for m in moves
    ]
    nodes = {
        sid: Node(
            id=sid,
            name=str(s.name),
            kind=_kind(s),
            parent=s.parent.id if s.parent else None,
            children=tuple(c.id for c in s.states),
            initial=bool(s.initial),
            final=bool(s.final),
            detail=_step_detail(ruleset.steps.get(sid), options),
            left_at_once=left_at_once.get(sid),
            never_entered=sid not in reached,
        )
        for sid, s in states.items()
    }

    caption = [
        "options: " + " · ".join(f"{k} = {_option(options, k)}" for k in Options.model_fields),
    ]
    if not options.blind_pass and any(step.blind for step in ruleset.steps.values()):
        blind = ", ".join(sid for sid, step in ruleset.steps.items() if step.blind)
        caption.append(f"blind_pass = false: {blind} take all 3 tiles from the hand")
    caption.append(
        f"chart: {chart.__module__}.{chart.__qualname__}, drawn by `charleston-fsm diagram`"
        " (do not edit by hand)"
    )
    never = list(why_never)
    by_guard: dict[str, list[str]] = {}
    for sid, guard in left_at_once.items():
        by_guard.setdefault(guard, []).append(sid)
    for guard, sids in by_guard.items():
        commands = list(
            dict.fromkeys(m.event for m in moves if m.source in sids and m.event and not m.target)
        )
        never.append(
            f"{', '.join(sids)} {'is' if len(sids) == 1 else 'are'} left at once "
            f"(«{guard}» always holds): no other move from there"
            + (f", and {', '.join(commands)} never accepted there" if commands else "")
        )
    unreachable = [sid for sid in states if sid not in reached]
    if unreachable:
        never.append(f"never entered: {', '.join(unreachable)}")
    return ChartView(
        ruleset=ruleset,
        options=options,
        chart=chart,
        nodes=nodes,
        moves=tuple(moves),
        caption=tuple(caption),
        never=tuple(never),
        title=title or f"Charleston, ruleset {ruleset.name}: {ruleset.title}",
        active=frozenset(active),
    )


def _option(options: Options, name: str) -> str:
    value = getattr(options, name)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(getattr(value, "value", value))


def _replace_never(move: Move, reason: str) -> Move:
    return Move(move.source, move.target, move.event, move.guards, move.actions, reason)


def _reachable(chart: type[StateChart], moves: Sequence[Move]) -> set[str]:
    """States that can be entered, following only moves that can fire."""
    states = chart.states_map
    reached: set[str] = set()

    def enter(state: State) -> None:
        chain = []
        node: State | None = state
        while node is not None:
            chain.append(node)
            node = node.parent
        for s in chain:
            reached.add(s.id)
        todo = [state]
        while todo:
            s = todo.pop()
            reached.add(s.id)
            if getattr(s, "parallel", False):
                todo.extend(s.states)
            elif s.states:
                todo.append(next((c for c in s.states if c.initial), s.states[0]))

    enter(next(s for s in chart.states if s.initial))
    changed = True
    while changed:
        changed = False
        for move in moves:
            if move.never or move.target is None or move.source not in reached:
                continue
            if move.target not in reached:
                enter(states[move.target])
                changed = True
    return reached


# -- DOT ---------------------------------------------------------------------------------
def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _wrap(items: Sequence[str], width: int = 46) -> list[str]:
    lines: list[str] = []
    current = ""
    for item in items:
        candidate = f"{current}, {item}" if current else item
        if current and len(candidate) > width:
            lines.append(current + ",")
            current = item
        else:
            current = candidate
    if current:
        lines.append(current)
    return lines


def _command_lines(view: ChartView, state_id: str) -> tuple[list[str], list[str]]:
    """(accepted, never accepted) command summaries for a state's box."""
    moves = view.commands(state_id)
    live = [m for m in moves if not m.never]
    dead = [m for m in moves if m.never]

    def summary(group: list[Move]) -> list[str]:
        if not group:
            return []
        events = list(dict.fromkeys(m.event for m in group if m.event))
        guard_sets = {m.guard_text for m in group}
        if len(guard_sets) == 1 and next(iter(guard_sets)):
            who = next(iter(guard_sets))
            return [f"commands ({who}):", *_wrap(events)]
        parts = [f"{m.event} ({m.guard_text})" if m.guards else str(m.event) for m in group]
        return ["commands:", *_wrap(list(dict.fromkeys(parts)))]

    return summary(live), summary(dead)


def _node_label(view: ChartView, node: Node, *, with_commands: bool) -> str:
    rows = [f"<TR><TD><B>{_e(node.id)}</B></TD></TR>", f"<TR><TD>{_e(node.name)}</TD></TR>"]
    if node.detail:
        rows.append(f'<TR><TD><FONT POINT-SIZE="9">{_e(node.detail)}</FONT></TD></TR>')
    if node.left_at_once:
        rows.append(
            f'<TR><TD><FONT POINT-SIZE="9" COLOR="{_NEVER}"><I>left at once: '
            f"{_e(node.left_at_once)}</I></FONT></TD></TR>"
        )
    if with_commands:
        live, dead = _command_lines(view, node.id)
        if live:
            text = "<BR/>".join(_e(line) for line in live)
            rows.append(
                f'<TR><TD SIDES="T" BORDER="1"><FONT POINT-SIZE="8" COLOR="#37474f">{text}'
                "</FONT></TD></TR>"
            )
        if dead:
            text = "<BR/>".join(_e(line) for line in ["never here:", *dead[1:]])
            rows.append(
                f'<TR><TD SIDES="T" BORDER="1"><FONT POINT-SIZE="8" COLOR="{_NEVER}"><I>'
                f"{text}</I></FONT></TD></TR>"
            )
    return (
        '<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="2">'
        + "".join(rows)
        + "</TABLE>>"
    )


def event_text(event: str) -> str:
    """How an event is written on an arrow: commands by name, completion events explained."""
    if event.startswith("done_state_"):
        return f"done.state.{event.removeprefix('done_state_')} (every region final)"
    return event


def _move_label(move: Move) -> str:
    lines = []
    if move.event:
        lines.append(f"<B>{_e(event_text(move.event))}</B>")
    if move.guards:
        lines.append(_e(f"[{move.guard_text}]"))
    if move.actions:
        lines.append(_e(f"/ {move.action_text}"))
    return "<" + "<BR/>".join(lines) + ">" if lines else '""'


def _leaves(view: ChartView, node_id: str) -> list[str]:
    node = view.nodes[node_id]
    if not node.children:
        return [node_id]
    return [leaf for child in node.children for leaf in _leaves(view, child)]


def _entry_leaf(view: ChartView, node_id: str) -> str:
    node = view.nodes[node_id]
    while node.children:
        kids = [view.nodes[c] for c in node.children]
        node = next((k for k in kids if k.initial), kids[0])
    return node.id


def to_dot(view: ChartView) -> str:
    """The chart as Graphviz DOT (deterministic: document order, no timestamps)."""
    out: list[str] = [f"digraph {_q(view.ruleset.name)} {{"]
    caption_rows = [
        f'<TR><TD ALIGN="LEFT"><FONT POINT-SIZE="16"><B>{_e(view.title)}</B></FONT></TD></TR>'
    ]
    lines = [
        *view.caption,
        "Black arrows move on their own once their [guard] holds; blue arrows are commands;"
        " a box's lower part lists the commands the state accepts without moving.",
    ]
    if view.never:
        lines.append("Grey and dashed: never fires with these options —")
        lines += [f"• {reason}" for reason in view.never]
    caption_rows += [
        f'<TR><TD ALIGN="LEFT"><FONT POINT-SIZE="11">{_e(line)}</FONT></TD></TR>' for line in lines
    ]
    out += [
        "  graph [rankdir=TB, compound=true, newrank=true, nodesep=0.35, ranksep=0.4,",
        '         fontname="Helvetica", labelloc=t, labeljust=l,',
        '         label=<<TABLE BORDER="0" CELLSPACING="0" CELLPADDING="1">'
        + "".join(caption_rows)
        + "</TABLE>>];",
        '  node [shape=box, style="rounded,filled", fillcolor="white", fontname="Helvetica",'
        ' fontsize=10, margin="0.1,0.04"];',
        '  edge [fontname="Helvetica", fontsize=9, color="#37474f"];',
        '  "__start__" [shape=point, width=0.14, label="", fillcolor="black"];',
    ]
    initial = next(n for n in view.roots if n.initial)
    out.append(f'  "__start__" -> {_q(_entry_leaf(view, initial.id))};')
    for node in view.roots:
        _dot_state(view, node, out, "  ")
    roots = [n.id for n in view.roots]
    following = dict(itertools.pairwise(roots))  # the rule table's order
    for move in view.arrows():
        attrs = [f"label={_move_label(move)}"]
        source, target = move.source, str(move.target)
        if move.never:
            attrs.append("weight=0")
        elif following.get(source) == target:
            attrs.append("weight=10")  # the main line of steps stays straight
        if view.nodes[source].children:
            attrs.append(f"ltail={_q('cluster_' + source)}")
            source = f"__out__{source}"
        if view.nodes[target].children:
            attrs.append(f"lhead={_q('cluster_' + target)}")
            target = f"__in__{target}"
        if move.never:
            attrs += [f'color="{_NEVER}"', f'fontcolor="{_NEVER}"', 'style="dashed"']
        elif move.event:
            attrs += ['color="#1565c0"', 'fontcolor="#1565c0"']
        out.append(f"  {_q(source)} -> {_q(target)} [{', '.join(attrs)}];")
    out.append("}")
    return "\n".join(out) + "\n"


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _dot_state(view: ChartView, node: Node, out: list[str], pad: str) -> None:
    active = node.id in view.active
    classes = "state active" if active else "state"
    if not node.children:
        attrs = [f"id={_q('state-' + node.id)}", f"class={_q(classes)}"]
        attrs.append(f"label={_node_label(view, node, with_commands=True)}")
        if node.final:
            attrs.append("peripheries=2")
        if active:
            attrs += [f'fillcolor="{_ACTIVE_FILL}"', "penwidth=2.5"]
        if node.never_entered or node.left_at_once:
            attrs += ['style="rounded,filled,dashed"', f'color="{_NEVER}"']
        out.append(f"{pad}{_q(node.id)} [{', '.join(attrs)}];")
        return
    out.append(f"{pad}subgraph {_q('cluster_' + node.id)} {{")
    inner = pad + "  "
    style = "rounded,filled,bold" if active else "rounded,filled"
    fill = _ACTIVE_CLUSTER_FILL if active else ("#f5f7fa" if node.kind == "parallel" else "white")
    label = _node_label(view, node, with_commands=False)
    out += [
        f"{inner}id={_q('state-' + node.id)}; class={_q(classes)};",
        f'{inner}style="{style}"; fillcolor="{fill}"; penwidth={"2.5" if active else "1"};',
        f"{inner}label={label};",
    ]
    # invisible anchors: arrows into and out of the cluster, and its top-to-bottom order
    anchor = '[shape=point, style=invis, width=0.01, height=0.01, label=""]'
    into, out_of = f"__in__{node.id}", f"__out__{node.id}"
    out.append(f"{inner}{_q(into)} {anchor};")
    out.append(f"{inner}{_q(out_of)} {anchor};")
    if node.kind == "compound":
        first = _entry_leaf(view, node.id)
        start = f"__start__{node.id}"
        out.append(f'{inner}{_q(start)} [shape=point, width=0.1, label="", fillcolor="black"];')
        out.append(f"{inner}{_q(into)} -> {_q(start)} [style=invis];")
        out.append(f"{inner}{_q(start)} -> {_q(first)};")
        for child in node.children:
            if view.nodes[child].final:
                out.append(f"{inner}{_q(child)} -> {_q(out_of)} [style=invis];")
    else:
        for child in node.children:
            out.append(f"{inner}{_q(into)} -> {_q('__in__' + child)} [style=invis];")
            out.append(f"{inner}{_q('__out__' + child)} -> {_q(out_of)} [style=invis];")
    for child in node.children:
        _dot_state(view, view.nodes[child], out, inner)
    out.append(f"{pad}}}")


# -- Mermaid -----------------------------------------------------------------------------
def _m(text: str) -> str:
    """Text safe inside a Mermaid state label or note (no quotes, no colons in edges)."""
    return text.replace('"', "'").replace("#", "no. ").replace(";", ",")


def to_mermaid(view: ChartView) -> str:
    """The chart as a Mermaid ``stateDiagram-v2`` (moves that never fire are left out)."""
    lines = [
        "---",
        f'title: "{_m(view.title)}"',
        "---",
        "stateDiagram-v2",
        "    direction TB",
    ]
    lines.append("    %% generated from the chart class by `charleston-fsm diagram`: do not edit")
    for node in view.roots:
        _mermaid_state(view, node, lines, 1)
    initial = next(n for n in view.roots if n.initial)
    lines.append(f"    [*] --> {initial.id}")
    for move in view.arrows():
        if move.never or _scope(view, move) is not None:
            continue
        lines.append(_mermaid_move(move, 1))
    lines.append(f"    note right of {initial.id}")
    lines.extend(f"        {_m(line)}" for line in view.caption)
    if view.never:
        lines.append("        Not drawn, as they never fire with these options -")
        lines.extend(f"        {_m(reason)}" for reason in view.never)
    lines.append("    end note")
    if view.active:
        lines.append(f"    classDef active fill:{_ACTIVE_FILL},stroke:#333,stroke-width:3px")
        lines.append(
            f"    classDef activeGroup fill:{_ACTIVE_CLUSTER_FILL},stroke:#333,stroke-width:3px"
        )
        for sid, node in view.nodes.items():
            if sid in view.active:
                lines.append(f"    class {sid} {'activeGroup' if node.children else 'active'}")
    return "\n".join(lines) + "\n"


def _scope(view: ChartView, move: Move) -> str | None:
    """The compound state that draws a move inside itself (None: the top level)."""
    source_parent = view.nodes[move.source].parent
    target_parent = view.nodes[str(move.target)].parent
    return source_parent if source_parent == target_parent else None


def _mermaid_move(move: Move, depth: int) -> str:
    parts = []
    if move.event:
        parts.append(event_text(move.event))
    if move.guards:
        parts.append(f"[{move.guard_text}]")
    if move.actions:
        parts.append(f"/ {move.action_text}")
    label = _m(" ".join(parts)).replace(":", " -")
    pad = "    " * depth
    return f"{pad}{move.source} --> {move.target}" + (f" : {label}" if label else "")


def _mermaid_state(view: ChartView, node: Node, lines: list[str], depth: int) -> None:
    pad = "    " * depth
    name = _m(f"{node.id}<br/>{node.name}")
    if not node.children:
        lines.append(f'{pad}state "{name}" as {node.id}')
        if node.detail:
            lines.append(f"{pad}{node.id} : {_m(node.detail).replace(':', ' -')}")
        if node.left_at_once:
            lines.append(f"{pad}{node.id} : left at once - {_m(node.left_at_once)}")
        live, _dead = _command_lines(view, node.id)
        if live:
            text = " ".join(live).replace(":", "")
            lines.append(f"{pad}{node.id} : {_m(text)}")
        return
    lines.append(f'{pad}state "{name}" as {node.id} {{')
    kids = [view.nodes[c] for c in node.children]
    if node.kind == "parallel":
        for index, child in enumerate(kids):
            if index:
                lines.append(f"{pad}    --")
            _mermaid_state(view, child, lines, depth + 1)
    else:
        first = next((k for k in kids if k.initial), kids[0])
        lines.append(f"{pad}    [*] --> {first.id}")
        for child in kids:
            _mermaid_state(view, child, lines, depth + 1)
        for move in view.arrows():
            if not move.never and _scope(view, move) == node.id:
                lines.append(_mermaid_move(move, depth + 1))
        for child in kids:
            if child.final:
                lines.append(f"{pad}    {child.id} --> [*]")
    lines.append(f"{pad}}}")


# -- rendering and files -----------------------------------------------------------------
def graphviz_available() -> bool:
    return shutil.which("dot") is not None


def to_svg(view: ChartView) -> str:
    """The chart as SVG, laid out by Graphviz (raises GraphvizNotFoundError without it)."""
    try:
        return run_graphviz(to_dot(view), "svg").decode("utf-8")
    except GraphvizNotFoundError as exc:
        raise GraphvizNotFoundError(INSTALL_GRAPHVIZ) from exc


def render_view(view: ChartView, fmt: Format) -> str:
    if fmt == "dot":
        return to_dot(view)
    if fmt == "mermaid":
        return to_mermaid(view)
    if fmt == "svg":
        return to_svg(view)
    raise ValueError(f"Unknown diagram format {fmt!r}; choose one of: {', '.join(FORMATS)}.")


def render(ruleset: str, fmt: Format) -> str:
    """The diagram of a ruleset's chart under its own options."""
    return render_view(chart_view(ruleset), fmt)


def live(table: Table, fmt: Format = "svg", *, title: str | None = None) -> str:
    """The diagram of one live game: its ruleset's chart with the active states filled.

    Uses the game's own options (which may override the ruleset's defaults). During the
    Courtesy Pass both active leaves are filled, and their regions and the parallel state
    are outlined.
    """
    active = list(table.configuration)
    leaves = [sid for sid in active if not table.chart.states_map[sid].states]
    heading = title or f"Live game, ruleset {table.ruleset.name}: now at {', '.join(leaves)}"
    view = chart_view(table.ruleset, table.options, active=active, title=heading)
    return render_view(view, fmt)


def path_for(out_dir: Path, ruleset: str, fmt: Format) -> Path:
    return out_dir / f"{ruleset}.{FORMATS[fmt]}"


@dataclass
class Written:
    paths: list[Path] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def write_all(
    out_dir: Path,
    rulesets: Sequence[str] | None = None,
    formats: Sequence[Format] = ("dot", "mermaid", "svg"),
) -> Written:
    """Write every ruleset's diagram in each format (no SVG, with a reason, without Graphviz)."""
    result = Written()
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in rulesets or sorted(RULESETS):
        view = chart_view(name)
        for fmt in formats:
            try:
                text = render_view(view, fmt)
            except GraphvizNotFoundError:
                if INSTALL_GRAPHVIZ not in result.problems:
                    result.problems.append(INSTALL_GRAPHVIZ)
                continue
            except GraphvizError as exc:
                result.problems.append(f"{name}.{FORMATS[fmt]}: Graphviz failed: {exc}")
                continue
            path = path_for(out_dir, name, fmt)
            path.write_text(text, encoding="utf-8")
            result.paths.append(path)
    return result


def default_out_dir() -> Path:
    """``diagrams/`` at the repository root in a source checkout, else in the working directory."""
    root = Path(__file__).resolve().parent.parent
    if (root / "pyproject.toml").is_file():
        return root / "diagrams"
    return Path("diagrams")


def run_command(
    *,
    ruleset: str | None,
    fmt: str,
    out: Path | None,
    echo: Callable[[str], None],
    game: tuple[str, Table] | None = None,
) -> int:
    """The body of ``charleston-fsm diagram``; returns the exit code.

    ``game`` is ``(game id, table)`` for a stored game (the CLI loads it from the store).
    ``out`` is a directory, or a file name when one ruleset in one format is asked for.
    """
    formats: list[Format]
    if fmt == "all":
        formats = ["dot", "mermaid", "svg"]
    elif fmt in FORMATS:
        formats = [fmt]  # type: ignore[list-item]
    else:
        echo(f"Unknown format {fmt!r}; choose one of: svg, dot, mermaid, all.")
        return 2
    if ruleset is not None and ruleset not in RULESETS:
        echo(f"There is no ruleset {ruleset!r}; choose one of: {', '.join(RULESETS)}.")
        return 2
    if game is not None:
        game_id, table = game
        title = f"Game {game_id}, ruleset {table.ruleset.name}"
        where = out or Path(".")
        return _write(
            lambda f: live(table, f, title=title), f"game-{game_id}", formats, where, echo
        )
    if ruleset is not None:
        return _write(lambda f: render(ruleset, f), ruleset, formats, out, echo)
    result = write_all(out or default_out_dir(), None, formats)
    for path in result.paths:
        echo(f"wrote {path}")
    if (
        out is None
        and "mermaid" in formats
        and update_readme(default_out_dir().parent / "README.md")
    ):
        echo("updated the nmjl chart in README.md")
    for problem in result.problems:
        echo(problem)
    if result.problems and len(formats) > 1:
        echo("DOT and Mermaid were written all the same.")
    return 1 if result.problems and formats == ["svg"] else 0


def _write(
    draw: Callable[[Format], str],
    stem: str,
    formats: Sequence[Format],
    out: Path | None,
    echo: Callable[[str], None],
) -> int:
    single_file = out is not None and out.suffix != "" and len(formats) == 1
    code = 0
    for fmt in formats:
        path = out if single_file else (out or default_out_dir()) / f"{stem}.{FORMATS[fmt]}"
        assert path is not None
        try:
            text = draw(fmt)
        except GraphvizNotFoundError:
            echo(INSTALL_GRAPHVIZ)
            code = 1 if len(formats) == 1 else code
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        echo(f"wrote {path}")
    return code


README_SECTION = "## State diagrams"


def update_readme(readme: Path, ruleset: str = "nmjl") -> bool:
    """Refresh the ```mermaid block of the README's "State diagrams" section; True if changed."""
    if not readme.is_file():
        return False
    text = readme.read_text(encoding="utf-8")
    section = text.find(README_SECTION)
    start = text.find("```mermaid\n", section)
    if section < 0 or start < 0:
        return False
    start += len("```mermaid\n")
    end = text.index("\n```", start) + 1
    new = text[:start] + render(ruleset, "mermaid") + text[end:]
    if new == text:
        return False
    readme.write_text(new, encoding="utf-8")
    return True

"""The chart as Graphviz DOT (SVG is laid out from it)."""

from __future__ import annotations

import html
import itertools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass
from .model import (
    ACTIVE_CLUSTER_FILL,
    ACTIVE_FILL,
    NEVER,
    RULE_COLOR,
    ChartView,
    Move,
    Node,
    command_lines,
    event_text,
)


# -- DOT ---------------------------------------------------------------------------------
def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _node_label(view: ChartView, node: Node, *, with_commands: bool) -> str:
    rows = [f"<TR><TD><B>{_e(node.id)}</B></TD></TR>", f"<TR><TD>{_e(node.name)}</TD></TR>"]
    if node.detail:
        rows.append(f'<TR><TD><FONT POINT-SIZE="9">{_e(node.detail)}</FONT></TD></TR>')
    if node.rules:
        rows.append(
            f'<TR><TD><FONT POINT-SIZE="8" COLOR="{RULE_COLOR}">rules '
            f"{_e(' · '.join(node.rules))}</FONT></TD></TR>"
        )
    if node.left_at_once:
        rows.append(
            f'<TR><TD><FONT POINT-SIZE="9" COLOR="{NEVER}"><I>left at once: '
            f"{_e(node.left_at_once)}</I></FONT></TD></TR>"
        )
    if with_commands:
        live, dead = command_lines(view, node.id)
        if live:
            text = "<BR/>".join(_e(line) for line in live)
            rows.append(
                f'<TR><TD SIDES="T" BORDER="1"><FONT POINT-SIZE="8" COLOR="#37474f">{text}'
                "</FONT></TD></TR>"
            )
        if dead:
            text = "<BR/>".join(_e(line) for line in ["never here:", *dead[1:]])
            rows.append(
                f'<TR><TD SIDES="T" BORDER="1"><FONT POINT-SIZE="8" COLOR="{NEVER}"><I>'
                f"{text}</I></FONT></TD></TR>"
            )
    return (
        '<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="2">'
        + "".join(rows)
        + "</TABLE>>"
    )


def _move_label(move: Move, crossed: int | None = None) -> str:
    lines = []
    if move.event:
        lines.append(f"<B>{_e(event_text(move.event))}</B>")
    if move.guards:
        lines.append(_e(f"[{move.guard_text}]"))
    if move.actions:
        lines.append(_e(f"/ {move.action_text}"))
    if move.rules and not move.never:
        lines.append(f'<FONT COLOR="{RULE_COLOR}">{_e(" · ".join(move.rules))}</FONT>')
    if crossed is not None:
        lines.append(f"<I>crossed {crossed}</I>")
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
        attrs = [f"label={_move_label(move, view.crossed(move))}"]
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
            attrs += [f'color="{NEVER}"', f'fontcolor="{NEVER}"', 'style="dashed"']
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
            attrs += [f'fillcolor="{ACTIVE_FILL}"', "penwidth=2.5"]
        if node.never_entered or node.left_at_once:
            attrs += ['style="rounded,filled,dashed"', f'color="{NEVER}"']
        out.append(f"{pad}{_q(node.id)} [{', '.join(attrs)}];")
        return
    out.append(f"{pad}subgraph {_q('cluster_' + node.id)} {{")
    inner = pad + "  "
    style = "rounded,filled,bold" if active else "rounded,filled"
    fill = ACTIVE_CLUSTER_FILL if active else ("#f5f7fa" if node.kind == "parallel" else "white")
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

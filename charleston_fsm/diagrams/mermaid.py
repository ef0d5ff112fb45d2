"""The chart as a Mermaid ``stateDiagram-v2`` (moves that never fire are left out)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass
from .model import (
    ACTIVE_CLUSTER_FILL,
    ACTIVE_FILL,
    ChartView,
    Move,
    Node,
    command_lines,
    event_text,
)


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
        lines.append(_mermaid_move(move, 1, view.crossed(move)))
    lines.append(f"    note right of {initial.id}")
    lines.extend(f"        {_m(line)}" for line in view.caption)
    if view.never:
        lines.append("        Not drawn, as they never fire with these options -")
        lines.extend(f"        {_m(reason)}" for reason in view.never)
    lines.append("    end note")
    if view.active:
        lines.append(f"    classDef active fill:{ACTIVE_FILL},stroke:#333,stroke-width:3px")
        lines.append(
            f"    classDef activeGroup fill:{ACTIVE_CLUSTER_FILL},stroke:#333,stroke-width:3px"
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


def _mermaid_move(move: Move, depth: int, crossed: int | None = None) -> str:
    parts = []
    if move.event:
        parts.append(event_text(move.event))
    if move.guards:
        parts.append(f"[{move.guard_text}]")
    if move.actions:
        parts.append(f"/ {move.action_text}")
    if move.rules:
        parts.append(f"· {', '.join(move.rules)}")
    if crossed is not None:
        parts.append(f"· crossed {crossed}")
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
        if node.rules:
            lines.append(f"{pad}{node.id} : rules {', '.join(node.rules)}")
        if node.left_at_once:
            lines.append(f"{pad}{node.id} : left at once - {_m(node.left_at_once)}")
        live, _dead = command_lines(view, node.id)
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
                lines.append(_mermaid_move(move, depth + 1, view.crossed(move)))
        for child in kids:
            if child.final:
                lines.append(f"{pad}    {child.id} --> [*]")
    lines.append(f"{pad}}}")

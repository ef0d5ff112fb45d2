"""What a diagram shows, read from a chart class and a ruleset's options:
states, moves, guards as phrases, rule ids, and the branches that never fire.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from statemachine import State, StateChart

from ..engine.guards import OPTION_GUARDS
from ..engine.rulesets import CourtesyMode, Options, Ruleset, get_ruleset
from ..engine.seats import SEATS
from ..engine.steps import Step
from ..rulebook import get_rule
from ..traceability.trace import rules_of

if TYPE_CHECKING:
    pass


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
    "late_objection_allowed": "late objection allowed",
    "from_east": "East only",
    "from_pair_1": "East or West",
    "from_pair_2": "South or North",
    "pair_1_declined": "both offered, smaller = 0",
    "pair_2_declined": "both offered, smaller = 0",
    "pair_1_agreed": "both offered, smaller > 0",
    "pair_2_agreed": "both offered, smaller > 0",
    "pair_1_confirmed": "East and West confirmed",
    "pair_2_confirmed": "South and North confirmed",
    "charleston_this_round": "Charleston this round",
    "ding_dong_this_round": "Ding Dong this round",
    "in_the_step": "a player of this step",
    "from_director": "platform or director",
    "heavenly_declared": "a Heavenly Hand was declared",
    "judged_invalid": "judged invalid",
}

#: The phrase for a guard used with ``unless=`` (default: "not <phrase>").
NEGATED_GUARD_LABELS: dict[str, str] = {
    "tiles_from_hand": "no tile from any hand",
    "charleston_this_round": "no Charleston this round",
    "ding_dong_this_round": "no Ding Dong this round",
}

#: What a transition's action does, as shown after the guard ("/ pass resolves").
ACTION_LABELS: dict[str, str] = {
    "resolve_pass": "pass resolves",
    "record_agreement": "count agreed",
    "record_declaration": "declaration recorded",
    "record_late_objection": "choices dropped",
    "end_without_courtesy": "no Courtesy Pass",
    "record_ding_dong_request": "Ding Dong counted",
    "record_ready": "Ready recorded",
    "record_close": "window closed",
}

ACTIVE_FILL = "#ffd54f"
ACTIVE_CLUSTER_FILL = "#fff3c4"
NEVER = "#9e9e9e"
RULE_COLOR = "#6a1b9a"


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
    rules: tuple[str, ...] = ()  # the ruleset's own rules its guards and validators enforce

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
    rules: tuple[str, ...] = ()  # the rule ids this state plays out (rule book)


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
    #: per arrow (source, target, event), how many explored commands crossed it
    #: (:mod:`.crossings`; ``None``: not drawn)
    crossings: Mapping[tuple[str, str, str], int] | None = None

    def crossed(self, move: Move) -> int | None:
        """How many explored commands crossed ``move`` (``None``: counts not drawn)."""
        if self.crossings is None or move.target is None:
            return None
        key = (move.source, str(move.target), (move.event or "").replace(".", "_"))
        return self.crossings.get(key, 0)

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
    if step.addressed:
        return f"{who} · one tile to each other player, all at once"
    if step.courtesy:
        how = (
            "0-3 tiles, the smaller offer"
            if options.courtesy_mode is CourtesyMode.AGREED_MIN
            else "0-3 tiles each, counts may differ"
        )
        return f"{who} · {how}"
    if step.direction is None:  # an exchange: the first-named gives first
        first, second = step.participants
        return f"{first.label} gives {step.count}, then {second.label} · no blind pass"
    text = f"{who} · {step.count} tiles {step.direction.label}"
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
    from ..engine.table import Table
    from ..engine.tiles import Deal

    ruleset = get_ruleset(ruleset) if isinstance(ruleset, str) else ruleset
    options = options or ruleset.defaults
    chart = ruleset.chart
    probe = Table(Deal.shuffled(0), ruleset, options)
    fixed = {
        name: bool(getattr(probe, name)()) for name in chart_guards(chart) & OPTION_GUARDS.keys()
    }

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
                    rules=_move_rules(ruleset, transition),
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
            rules=ruleset.state_rule_ids(sid),
        )
        for sid, s in states.items()
    }

    caption = [
        "options: "
        + " · ".join(f"{k} = {_option(options, k)}" for k in type(options).model_fields),
    ]
    if not probe.blind_pass_option() and any(step.blind for step in ruleset.steps.values()):
        blind = ", ".join(sid for sid, step in ruleset.steps.items() if step.blind)
        caption.append(f"blind_pass = false: {blind} take all 3 tiles from the hand")
    caption.append(
        f"chart: {chart.__module__}.{chart.__qualname__}, drawn by `charleston-fsm diagram`"
        " (do not edit by hand)"
    )
    caption.append("rules: ids of the rule book, docs/rules.md (`charleston-fsm rules`)")
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
    return replace(move, never=reason)


#: Rules of every pass are left off the arrows: they hold on every one of them.
_EVERY_PASS = ("SEAT", "TILE", "DEAL", "PASS")


def _move_rules(ruleset: Ruleset, transition) -> tuple[str, ...]:
    """The ruleset's own rules a transition's guards and validators enforce."""
    from ..engine.table import Table

    ids = [
        rule_id
        for group in (transition.cond, transition.validators)
        for spec in group
        for rule_id in rules_of(getattr(Table, str(spec.attr_name), None))
    ]
    return tuple(
        r
        for r in dict.fromkeys(ids)
        if ruleset.name in get_rule(r).rulesets and get_rule(r).prefix not in _EVERY_PASS
    )


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


def command_lines(view: ChartView, state_id: str) -> tuple[list[str], list[str]]:
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


def event_text(event: str) -> str:
    """How an event is written on an arrow: commands by name, completion events explained."""
    if event.startswith("done_state_"):
        return f"done.state.{event.removeprefix('done_state_')} (every region final)"
    return event

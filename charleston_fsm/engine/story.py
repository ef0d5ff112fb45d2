"""A pass-by-pass story of a game, for people: the demo, the scripted game and audits."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .events import Event
from .tiles import describe

#: Printed once above a story: how to read a tile and the marks at the start of lines.
LEGEND = (
    "How to read it: a tile is its face and its own number, 5B#17 = Bam 5, tile 17.",
    "  Faces: 1B-9B Bams, 1C-9C Cracks, 1D-9D Dots; EW SW WW NW winds; RD GD WD dragons "
    "(WD: White Dragon, Soap); F Flower; J Joker.",
    "  The set has 152 tiles numbered 0-151 (four or eight of each face): the #number tells "
    "copies of one face apart, so every tile can be followed through the game.",
    "  '->' the step the table moves to; '==' a pass resolved; an indented 'A -> B' shows "
    "the tiles A passed to B; '[clock]' and '[director]' rows move no tile.",
)


def step_text(state_ids: Sequence[str], chart: Any = None) -> str:
    """Where the table stands, as people say it: "Courtesy Pass: East and West offer 0-3;
    South and North offer 0-3" (the chart's state names; its ids without a chart)."""
    states = getattr(chart, "states_map", None) or {}
    leaves = [states[i] for i in state_ids if i in states and states[i].is_atomic]
    if not leaves:
        return ", ".join(state_ids)
    by_top: dict[str, list[Any]] = {}
    for leaf in leaves:
        top = leaf
        while top.parent is not None:
            top = top.parent
        by_top.setdefault(top.name.split(" (")[0], []).append(leaf)
    parts = []
    for head, group in by_top.items():
        if len(group) == 1 and group[0].parent is None:
            parts.append(head)
        else:
            parts.append(f"{head}: " + "; ".join(leaf.name for leaf in group))
    return "; ".join(parts)


def _uneven_note(given: dict[str, int]) -> str | None:
    """After a courtesy pass whose players gave different counts: who holds more now."""
    if len(set(given.values())) <= 1:
        return None
    got = dict(zip(given, reversed(list(given.values())), strict=True))  # a pair swaps
    change = []
    for seat, out in given.items():
        net = got[seat] - out
        if net:
            change.append(f"{seat} {'+' if net > 0 else ''}{net}")
    return (
        "    (uneven courtesy: each player gives the count they chose, so hands change "
        f"size: {', '.join(change)} tiles)"
    )


def _annotation(e: Event, who: str) -> str | None:
    """The rows a clock or a director adds (they move no tile)."""
    p = e.payload
    if e.type == "clock_expired":
        return (
            f"  [clock] {who} ran out of time ({p['kind']}, {p['seconds']:g} s): the clock "
            f"{p['done']} in its name"
        )
    if e.type == "seat_late":
        return f"  [clock] {who} ran out of time ({p['kind']}, {p['seconds']:g} s): flagged late"
    if e.type == "clock_paused":
        return "  [director] pauses the clock"
    if e.type == "clock_resumed":
        return f"  [director] resumes the clock (paused {p['paused_seconds']:.1f} s)"
    if e.type == "ruling_recorded":
        about = f" about {who}" if who else ""
        return f"  [director] {p['kind']}{about}: {p['text']}"
    return _round_note(e, who)


def _round_note(e: Event, who: str) -> str | None:
    """The rows of a round run as a round: the start, time added, seats, calls, links."""
    p = e.payload
    if e.type == "game_started":
        if p["scheduled"] or p.get("seated"):
            how = "at its start time" if p["scheduled"] else "once every player is there"
            return f"  [clock] the table starts {how} (held {p['held_seconds']:.1f} s)"
        return f"  [director] the table starts by the director (held {p['held_seconds']:.1f} s)"
    if e.type == "seat_arrived":
        return f"  [{who}] opens the table's page"
    if e.type == "time_extended":
        why = f": {p['reason']}" if p["reason"] else ""
        return f"  [director] adds {p['seconds']} s for {who or 'every awaited seat'}{why}"
    if e.type == "seat_taken":
        by = "the service's bot" if p["by"] == "bot" else (p["label"] or "a person")
        token = " with a new token" if p["token_replaced"] else ""
        return f"  [director] {who} is played by {by}{token}"
    if e.type == "director_called":
        why = f": {p['reason']}" if p.get("reason") else ""
        return f"  [{who}] calls the director{why}"
    if e.type == "call_answered":
        return f"  [director] answers {who}'s call: {p['answer']}"
    if e.type == "spectator_link":
        what = "revoked" if p["action"] == "revoked" else f"issued ({p['delay']} s behind)"
        if p.get("live"):
            what = "issued live (a featured table: the round's delay does not apply)"
        return f"  [director] the spectator link is {what}"
    return None


def story_lines(events: Iterable[Event], chart: Any = None) -> list[str]:
    """One readable line per thing that happened at the table (director's knowledge);
    with the ruleset's ``chart``, steps are named as people say them."""
    lines: list[str] = []
    given: dict[str, int] = {}  # tiles from hand per giver, in the pass being resolved
    for e in events:
        who = e.seat.label if e.seat else ""
        p = e.payload
        if e.type == "pass_confirmed":
            blind = f" + {p['blind']} blind" if p["blind"] else ""
            lines.append(f"  {who:<6} confirms {describe(p['tiles']) or '(none)'}{blind}")
        elif e.type == "pass_changed":
            lines.append(f"  {who:<6} changes to {describe(p['tiles'])}")
        elif e.type == "pass_withdrawn":
            lines.append(f"  {who:<6} withdraws the choice")
        elif e.type == "tiles_transferred":
            given[who] = len(p["from_hand"])
            fwd = f", forwards unseen {describe(p['forwarded'])}" if p["forwarded"] else ""
            lines.append(
                f"    {who} -> {p['receiver'].capitalize()}: "
                f"{describe(p['from_hand']) or '(none from hand)'}{fwd}"
            )
        elif e.type == "pass_resolved":
            mark = " (blind pass)" if p["blind"] else ""
            moved = "" if p["moved"] else ": nothing moved"
            lines.append(f"  == {p['label']} resolved{mark}{moved}")
            note = _uneven_note(given) if p["step"].startswith("PAIR_") else None
            if note:
                lines.append(note)
            given = {}
        elif e.type == "vote_cast":
            late = " (a late objection: the Second Charleston stops)" if p.get("late") else ""
            lines.append(f"  {who:<6} votes {p['choice']}{late}")
        elif e.type == "courtesy_offered":
            lines.append(f"  {who:<6} offers {p['count']} courtesy tile(s)")
        elif e.type == "courtesy_agreed":
            pair = " and ".join(s.capitalize() for s in p["pair"])
            lines.append(f"  {pair} agree on {p['count']} courtesy tile(s)")
        elif e.type == "ding_dong_given":
            gifts = ", ".join(
                f"{describe([g['tile']])} to {g['to'].capitalize()}" for g in p["gifts"]
            )
            lines.append(f"  {who:<6} gives {gifts}")
        elif e.type == "ding_dong_requested":
            lines.append(f"  {who} requests Ding Dong number {p['number']}")
        elif e.type == "ready_declared":
            lines.append(f"  {who} declares Ready")
        elif e.type == "ding_dong_closed":
            lines.append("  the director closes the Ding Dong window")
        elif e.type == "mah_jongg_declared":
            lines.append(f"  {who} declares Mah Jongg ({p['kind']} hand, {p['verdict']})")
        elif e.type == "state_changed":
            lines.append(f"-> {step_text(p['to'], chart)}")
        elif e.type == "charleston_ended":
            lines.append(f"** Charleston over: {p['reason']}")
        else:
            note = _annotation(e, who)
            if note:
                lines.append(note)
    return lines

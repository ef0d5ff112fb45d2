"""A pass-by-pass story of a game, for people: the demo, the scripted game and audits."""

from __future__ import annotations

from collections.abc import Iterable

from .events import Event
from .tiles import describe


def story_lines(events: Iterable[Event]) -> list[str]:
    """One readable line per thing that happened at the table (director's knowledge)."""
    lines: list[str] = []
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
            fwd = f", forwards unseen {describe(p['forwarded'])}" if p["forwarded"] else ""
            lines.append(
                f"    {who} -> {p['receiver'].capitalize()}: "
                f"{describe(p['from_hand']) or '(none from hand)'}{fwd}"
            )
        elif e.type == "pass_resolved":
            mark = " (blind pass)" if p["blind"] else ""
            moved = "" if p["moved"] else ": nothing moved"
            lines.append(f"  == {p['label']} resolved{mark}{moved}")
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
            lines.append(f"-> {', '.join(p['to'])}")
        elif e.type == "charleston_ended":
            lines.append(f"** Charleston over: {p['reason']}")
    return lines

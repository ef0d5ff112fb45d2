"""A failure as a reviewer reads it: numbered steps in the rule book's words, and a test.

A failure's command list (:func:`.runs.counterexample`) replays, but a list of JSON
commands says little to a rule reviewer. :func:`in_words` plays it again on a new table
and writes each command as a numbered step: where the table stood (its states' labels),
who acted and what they did, whether it was taken, what changed (tiles handed over, the
step the table moved to, counts agreed) and every hand's size after it; then the
property that failed and the statement of each rule it breaks.

:func:`pytest_file` writes a ready regression test for the failure: it replays the same
commands and checks every property of the path on the way (:func:`replay_findings`),
so it fails while the defect is in the engine and passes once it is fixed. A command
the fixed engine refuses ends the replay: the engine refused what the defect took (a
malformed choice that ends the list must be refused with one of the failure's rules).
A failure no single path shows (a dead end, a cycle, ``allowed_commands``, the clock)
is checked by exploring the option set again, bounded, up to the first failure.
"""

from __future__ import annotations

import pprint
import re
from collections.abc import Mapping
from typing import Any

from ..engine import views
from ..engine.commands import parse_command
from ..engine.errors import CharlestonError
from ..engine.events import Event
from ..engine.seats import SEATS, Seat
from ..engine.table import Table
from ..engine.tiles import Deal, describe
from ..rulebook import RULES
from . import properties, rule_properties
from .abstraction import canonical_deal
from .rule_book import Book

#: properties judged on one path (the rest need the graph: :func:`replay_findings`)
PATH_PROPERTIES = frozenset(
    {"conservation", "jokers", "secrecy", "rules", "malformed", "crash", *rule_properties.NAMES}
)


def _table(data: Mapping[str, Any]) -> Table:
    deal = Deal.from_dict(data["deal"]) if data.get("deal") else canonical_deal()
    return Table(deal, data["ruleset"], data.get("options") or None)


def _where(table: Table) -> str:
    leaves = [s.name for s in table.active_states if not s.states]
    return "; ".join(leaves)


def _who(seat: Any) -> str:
    return Seat(seat).label if seat else "The director"


def _did(command: Mapping[str, Any]) -> str:
    """What a command asks, in words."""
    name = command["type"]
    if name in ("confirm_pass", "change_pass"):
        verb = "confirms" if name == "confirm_pass" else "changes the choice to"
        blind = command.get("blind", 0)
        tiles = command.get("tiles", [])
        return f"{verb} {len(tiles)} tile(s) from the hand ({describe(tiles) or 'none'})" + (
            f" and {blind} blind" if blind else ""
        )
    if name == "give_ding_dong":
        gifts = [f"{describe([g['tile']])} to {_who(g.get('to'))}" for g in command["gifts"]]
        return "gives Ding Dong tiles: " + ", ".join(gifts)
    words = {
        "withdraw_pass": "withdraws the choice",
        "place_tiles": "places the received tiles",
        "vote": f"votes {command.get('choice')}",
        "offer_courtesy": f"offers {command.get('count')} courtesy tile(s)",
        "declare_mah_jongg": "declares Mah Jongg",
        "request_ding_dong": "asks for a Ding Dong",
        "declare_ready": "declares Ready",
        "close_ding_dong": "closes the Ding Dong window",
        "judge_declaration": f"judges the declaration {command.get('verdict')}",
    }
    return str(words.get(name, name))


def _changed(events: list[Event], table: Table) -> list[str]:
    """What a command's events changed, in words."""
    said: list[str] = []
    for event in events:
        p = event.payload
        if event.type == "tiles_transferred":
            blind = f", {len(p['forwarded'])} of them forwarded blind" if p["forwarded"] else ""
            count = len(p["from_hand"]) + len(p["forwarded"])
            said.append(f"{_who(event.seat)} hands {count} tile(s) to {_who(p['receiver'])}{blind}")
        elif event.type == "state_changed":
            said.append(f"the table moves to {_where(table)}")
        elif event.type == "courtesy_agreed":
            pair = " and ".join(_who(s) for s in p["pair"])
            said.append(f"{pair} agree on {p['count']} courtesy tile(s)")
        elif event.type == "charleston_ended":
            said.append(f"the Charleston ends ({p['reason']})")
    return said


def _counted(table: Table) -> str:
    parts = []
    for seat in SEATS:
        waiting = len(table.received[seat])
        parts.append(
            f"{seat.label} {len(table.hand(seat))}" + (f" ({waiting} to place)" if waiting else "")
        )
    return "tiles: " + ", ".join(parts)


def in_words(data: Mapping[str, Any]) -> str:
    """A counterexample (``check``'s failure file) as numbered steps in words."""
    table = _table(data)
    failure = data.get("failure", {})
    options = ", ".join(f"{k} {v}" for k, v in (data.get("options") or {}).items())
    lines = [f"{data['ruleset']} ({options or 'its options'}), from the deal:"]
    commands = data["commands"]
    for number, command in enumerate(commands, start=1):
        at = _where(table)
        head = f"{number:>3}. [{at}] {_who(command.get('seat'))} {_did(command)}"
        try:
            events = table.execute(parse_command(command))
        except CharlestonError as refusal:
            lines.append(f"{head}: refused ({refusal.code}, {refusal.rule}): {refusal.message}")
            break
        except Exception as exc:  # the crash the failure reports
            lines.append(f"{head}: the engine raised {type(exc).__name__}: {exc}")
            break
        changed = _changed(events, table)
        lines.append(f"{head}: taken" + (f"; {'; '.join(changed)}" if changed else ""))
        lines.append(f"       {_counted(table)}")
    if failure:
        lines.append(f"  fails {failure['property']}: {failure['message']}")
        for rule in failure.get("rules", ()):
            if rule in RULES:
                lines.append(f"  breaks {rule}: {RULES[rule].statement}")
    return "\n".join(lines)


def replay_findings(data: Mapping[str, Any]) -> list[str]:
    """Replay a counterexample and check every property of its path (the module's
    docstring); each finding as ``step N: property (rules): message``."""
    failure = data.get("failure", {})
    if failure.get("property", "rules") not in PATH_PROPERTIES:
        return _explored_again(data, failure["property"])
    table = _table(data)
    deal = table.deal
    # the rule book's values with the options the exploration was given, never the
    # engine's own defaults (they may be the defect)
    book = Book.of(data["ruleset"], data.get("overrides", data.get("options")) or None)
    found: list[str] = []
    commands = data["commands"]
    for number, command in enumerate(commands, start=1):
        before = table.snapshot()
        hands = {s: set(table.hand(s)) for s in SEATS}
        confirmed = [s for s in SEATS if s in table.selections]
        parsed = parse_command(command)
        try:
            events = table.execute(parsed)
        except CharlestonError as refusal:
            last = number == len(commands) and failure.get("property") == "malformed"
            if last and refusal.rule not in failure.get("rules", ()):
                found.append(f"step {number}: malformed: refused with {refusal.rule}")
            break  # the engine refused what the defect took
        context = {"confirmed": confirmed, "actor": parsed.seat}
        findings = [
            *properties.secrecy_of_events(events, hands, table),
            *properties.transition_rules(context, events, table),
            *rule_properties.transition(before, command, events, table, book),
            *properties.conservation(table, deal),
            *properties.jokers_in_place(table, deal),
            *properties.secrecy_of_views(table, {s: views.seat_view(table, s) for s in SEATS}),
        ]
        if number == len(commands) and failure.get("property") == "malformed":
            taken = "the malformed choice was taken"
            findings.append(("malformed", tuple(failure["rules"]), taken))
        found += [f"step {number}: {name} ({', '.join(r)}): {m}" for name, r, m in findings]
    return found


def _explored_again(data: Mapping[str, Any], name: str) -> list[str]:
    from .graph import explore

    ruleset = data["ruleset"]
    result = explore(
        ruleset,
        data.get("overrides", data.get("options")) or None,
        ordered=ruleset != "four_winds",
        extreme_splits=True,
        stop_at_failure=True,
    )
    return [f"{f.property} ({', '.join(f.rules)}): {f.message}" for f in result.failures]


def pytest_file(data: Mapping[str, Any], name: str) -> str:
    """A ready pytest module that replays the counterexample ``data`` (the module's
    docstring); ``name`` becomes its test function's name."""
    failure = data.get("failure", {})
    test = re.sub(r"\W+", "_", name).strip("_").lower()
    rules = ", ".join(failure.get("rules", ())) or "no rule id"
    literal = pprint.pformat(dict(data), width=96, compact=True, sort_dicts=False)
    return (
        f'"""Regression test written by `charleston-fsm check` for {failure.get("property")} '
        f"({rules}).\n\n{failure.get('message', '')}\n\n"
        "It replays the shortest command list to the failure and checks every property on\n"
        "the way (charleston_fsm.exploration.traces.replay_findings): it fails while the\n"
        'defect is in the engine and passes once it is fixed.\n"""\n\n'
        "from charleston_fsm.exploration.traces import in_words, replay_findings\n\n"
        f"FAILURE = {literal}\n\n\n"
        f"def test_{test}() -> None:\n"
        "    findings = replay_findings(FAILURE)\n"
        '    assert not findings, "\\n".join([*findings, in_words(FAILURE)])\n'
    )

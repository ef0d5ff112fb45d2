"""The compiled steps (``engine/compiled_steps.py``) against python-statemachine itself.

Every configuration the exploration reaches within a few commands of the deal, for each
ruleset and several option sets: every command the explorer tries there, and the
malformed forms of those it accepts (a joker, a tile not held, a wrong count, another
seat's tile, a command out of turn), is run on two tables loaded with the same snapshot,
one taking targetless steps through the compiled steps, one through the library only.
Both must answer alike: the same events, the same table after (its snapshot), or the
same refusal (its type, code, rule and words) with the table unchanged.
"""

from __future__ import annotations

from typing import Any

import pytest

from charleston_fsm.engine import compiled_steps
from charleston_fsm.engine.commands import parse_command
from charleston_fsm.engine.errors import CharlestonError
from charleston_fsm.engine.table import Table
from charleston_fsm.exploration.abstraction import canonical_deal, command_data, moves
from charleston_fsm.exploration.graph import explore
from charleston_fsm.exploration.malformed import Malformed
from charleston_fsm.exploration.rule_book import Book

#: (ruleset, options, configurations explored): the defaults and the options that change
#: the flow's targetless steps (who may act, blind passes, the courtesy's counts)
CASES = [
    ("nmjl", {}, 400),
    ("nmjl", {"blind_pass": False, "courtesy_mode": "asymmetric", "late_objection": False}, 300),
    ("house", {}, 300),
    ("four_winds", {}, 1200),
]


def _answer(table: Table, command: Any) -> tuple[Any, ...]:
    """What ``table`` does with ``command``: its events and snapshot, or its refusal."""
    before = table.snapshot()
    try:
        events = table.execute(command)
    except CharlestonError as refusal:
        unchanged = table.snapshot() == before
        return (
            "refused",
            type(refusal).__name__,
            refusal.code,
            refusal.rule,
            str(refusal),
            unchanged,
        )
    return ("taken", [e.to_dict() for e in events], table.snapshot())


@pytest.mark.parametrize(("ruleset", "options", "states"), CASES)
def test_every_step_is_the_librarys(ruleset: str, options: dict[str, Any], states: int) -> None:
    snapshots: list[dict[str, Any]] = []
    explore(
        ruleset,
        options,
        max_states=states,
        on_configuration=lambda _node, table: snapshots.append(table.snapshot()),
    )
    deal = canonical_deal()
    compiled = Table.restore(snapshots[0])
    library = Table.restore(snapshots[0])
    library.library_only = True
    spoiled = Malformed(Book.of(ruleset, options), deal.wall)
    compared = quick = 0
    for snapshot in snapshots:
        compiled.load(snapshot)
        tried = [command_data(c) for c in moves(compiled)]
        commands = tried + [c for c, _ in spoiled._spoiled(snapshot, tried)]
        for data in commands:
            command = parse_command(dict(data))
            compiled.load(snapshot)
            library.load(snapshot)
            taken_quickly = _quick(compiled, command)
            assert _answer(compiled, command) == _answer(library, command), (snapshot, data)
            compared += 1
            quick += taken_quickly
    assert compared > 1000 and quick > compared // 4, (compared, quick)


def _quick(table: Table, command: Any) -> bool:
    """Whether the compiled steps take ``command`` here (read, not run)."""
    configuration = table.chart.configuration
    if len(configuration) != 1:
        return False
    (state,) = configuration
    chart = compiled_steps.compile_chart(type(table.chart), type(table))
    return chart.steps.get((state.id, command.event)) is not None


def test_a_listener_that_sees_every_step_sends_every_step_to_the_library() -> None:
    """A listener added to the chart is told of targetless steps by the library; the
    compiled steps skip none for a listener that did not say it sees only moves."""

    class Every:
        def __init__(self) -> None:
            self.told: list[str] = []

        def after_transition(self, event: Any) -> None:
            self.told.append(str(event))

    class MovesOnly(Every):
        observes_moves_only = True

    for listener, told in ((Every(), ["confirm_pass"]), (MovesOnly(), [])):
        table = Table(canonical_deal())
        table.chart.add_listener(listener)
        seat = next(iter(table.racks))
        command = parse_command(
            {"type": "confirm_pass", "seat": seat.value, "tiles": table.passable(seat)[:3]}
        )
        assert table.execute(command)
        assert listener.told == told

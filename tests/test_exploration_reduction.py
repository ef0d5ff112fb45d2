"""The reduction of the seats' placing choices (charleston_fsm.exploration.reduction) is
sound: on every option set small enough to explore both ways, the reduced exploration is
the unreduced one with its configurations mapped through the reduced key, edge for edge,
with the same verdicts, crossings and longest game."""

from __future__ import annotations

from typing import Any

import pytest
from budget import LONG

from charleston_fsm.engine import table as table_module
from charleston_fsm.engine.ruleset import get_ruleset
from charleston_fsm.engine.seats import SEATS
from charleston_fsm.exploration import Exploration, explore
from charleston_fsm.exploration.reduction import RECEIVED_CAP, reduced_key

#: the option sets with placing free (where the reduction can merge anything) that the
#: unreduced exploration finishes: in seconds (bounded), in minutes (the long form adds
#: them); the reduction merges nothing with one Ding Dong and no exchange (no seat ever
#: holds more than 3 unplaced tiles)
FREE = {"require_placing": False}
BOTH_WAYS = [
    pytest.param({"charleston": "off", "ding_dong": "every_round", "ding_dong_max": 1}, False),
    pytest.param({"charleston": "off", "ding_dong": "every_round", "ding_dong_max": 2}, True),
    *(
        [
            pytest.param({"charleston": "every_round", "ding_dong": "off"}, True),
            pytest.param(
                {"charleston": "off", "ding_dong": "every_round", "ding_dong_max": 3}, True
            ),
        ]
        if LONG
        else []
    ),
]


def _both(options: dict[str, Any]) -> tuple[Exploration, Exploration, list[Any]]:
    """The unreduced exploration, each of its configurations' reduced keys, and the
    reduced exploration."""
    mapped: list[Any] = []
    unreduced = explore(
        "four_winds",
        options,
        reduce=False,
        on_configuration=lambda node, table: mapped.append(reduced_key(table)),
    )
    return unreduced, explore("four_winds", options), mapped


def _edges(result: Exploration, key: list[Any]) -> set[tuple[Any, str, Any]]:
    return {
        (key[node], name, key[target])
        for node, edges in enumerate(result.edges)
        for target, name in edges
    }


@pytest.mark.parametrize(("options", "merges"), BOTH_WAYS)
def test_the_reduced_exploration_is_the_unreduced_one_mapped(
    options: dict[str, Any], merges: bool
) -> None:
    unreduced, reduced, mapped = _both({**options, **FREE})
    assert unreduced.complete and reduced.complete
    own = [None] * reduced.states
    for key, node in reduced.keys.items():
        own[node] = key
    # the configuration counts, the reduction accounted for: every unreduced configuration
    # is related to exactly one reduced one, and every reduced one stands for some
    assert set(mapped) == set(own) and len(set(mapped)) == reduced.states
    assert (reduced.states < unreduced.states) is merges
    assert _edges(unreduced, mapped) == _edges(reduced, own)
    assert {mapped[n] for n in unreduced.finals} == {own[n] for n in reduced.finals}
    # the verdicts, the crossings and the longest game
    assert not unreduced.failures and not reduced.failures
    assert unreduced.held == reduced.held
    assert set(unreduced.crossings) == set(reduced.crossings)
    assert unreduced.longest_without_change == reduced.longest_without_change
    assert "received counts past 3 merged (placing free)" in reduced.reductions
    assert "received counts past 3 merged (placing free)" not in unreduced.reductions


def test_a_defect_fails_both_ways_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tile dropped in resolution: both explorations fail conservation, at the same
    configuration, by the same shortest path's length."""
    real = table_module.resolve

    def dropping(step, declarations):  # type: ignore[no-untyped-def]
        result = real(step, declarations)
        next(kept for kept in result.kept.values() if kept).pop()
        return result

    monkeypatch.setattr(table_module, "resolve", dropping)
    options = {"charleston": "off", "ding_dong": "every_round", "ding_dong_max": 2}
    unreduced, reduced, _ = _both({**options, **FREE})
    assert {f.property for f in unreduced.failures} == {f.property for f in reduced.failures}
    [was], [now] = (
        [f for f in r.failures if f.property == "conservation"] for r in (unreduced, reduced)
    )
    assert was.configuration == now.configuration and len(was.commands) == len(now.commands)


def test_no_step_takes_more_than_the_cap_from_a_hand() -> None:
    """The reduction's premise: a choice takes at most RECEIVED_CAP tiles from a hand (a
    courtesy count is 0-3, a Ding Dong one tile to each other seat)."""
    for name in ("nmjl", "house", "four_winds"):
        for step in get_ruleset(name).steps.values():
            most = len(SEATS) - 1 if step.addressed else 3 if step.count is None else step.count
            assert most <= RECEIVED_CAP, (name, step.label)

"""``bench --breakdown``'s CPU budget by stage: every stage is charged, the stages add up
to the whole command, and wrapping leaves the code as it was. Never a speed."""

from __future__ import annotations

import math

from charleston_fsm.api import deps
from charleston_fsm.bench.databases import sqlite_database
from charleston_fsm.bench.stages import REST, WRAPPED, budgets
from charleston_fsm.engine import turns
from charleston_fsm.store.games import append
from charleston_fsm.store.games.writes import Writes

STORE_STAGES = {
    "chart (Table.execute)",
    "write (round trip)",
    "store: transaction (checkout, BEGIN, COMMIT)",
}


def test_a_command_budget_charges_every_stage_and_adds_up() -> None:
    originals = {(id(owner), name): getattr(owner, name) for _, owner, name in WRAPPED}
    with sqlite_database() as database:
        http, store = budgets(database, 5)
    assert http.commands == store.commands == 5
    assert set(store.stages) >= STORE_STAGES
    assert STORE_STAGES | {"auth (token digest, role)", "view (seat_view)"} <= set(http.stages)
    assert "HTTP request parse (httptools)" in http.stages
    for budget in (http, store):
        assert REST in budget.stages
        assert all(
            math.isfinite(cpu) and cpu >= 0 for s, (cpu, _) in budget.stages.items() if s != REST
        )
        claimed = sum(cpu for cpu, _ in budget.stages.values())
        assert math.isclose(claimed, budget.total_cpu_us, rel_tol=1e-6)
    # the wrappers are gone again: the same functions as before the run
    assert {(id(owner), name): getattr(owner, name) for _, owner, name in WRAPPED} == originals
    assert append.read_head is originals[(id(append), "read_head")]
    assert deps.authenticate is originals[(id(deps), "authenticate")]
    assert turns.command_turn is originals[(id(turns), "command_turn")]
    assert Writes._append is originals[(id(Writes), "_append")]

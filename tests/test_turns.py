"""One decision per write: the engine's turn functions (``engine/turns.py``) are what the
service runs, and what the checker explores.

- A seat's command sent over real HTTP (the app ``serve`` runs, under uvicorn on a
  loopback port, over a real database) asks the engine for its turn exactly once, and a
  clock firing once; the store decides nothing of its own.
- The checker explores through the same turns: a defect seeded in the clock's player (it
  passes a joker) fails the bounded exploration, which it could not see while the
  checker called the auto player directly.
"""

from __future__ import annotations

import functools
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
import uvicorn

from charleston_fsm.api.app import create_app
from charleston_fsm.api.notify import Notifier
from charleston_fsm.engine import clocks, turns
from charleston_fsm.engine.bots import Bot
from charleston_fsm.engine.commands import ConfirmPass
from charleston_fsm.engine.seats import Seat
from charleston_fsm.engine.tiles import is_joker
from charleston_fsm.exploration.graph import explore
from charleston_fsm.store import GameStore

TURNS = ("command_turn", "firing_turn", "annotation_turn")


@pytest.fixture
def spied(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Every call of the engine's turn functions, counted by name (the real ones run)."""
    calls: Counter[str] = Counter()
    for name in TURNS:
        real = getattr(turns, name)

        @functools.wraps(real)
        def counted(*args: Any, _real: Any = real, _name: str = name, **kwargs: Any) -> Any:
            calls[_name] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(turns, name, counted)
    return calls


@pytest.fixture
def base_url(store: GameStore) -> Iterator[str]:
    """The service's app over ``store``, served by uvicorn on a free loopback port (its
    clock thread off: the test fires the clock itself)."""
    app = create_app(store, notifier=Notifier(), clock_interval=None)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def test_a_command_over_http_and_a_clock_firing_ask_the_engine_once_each(
    store: GameStore, base_url: str, spied: Counter[str]
) -> None:
    with httpx.Client(base_url=base_url, timeout=30) as client:
        created = client.post("/v1/games", json={"seed": 7, "clock": {"confirm_pass": 60}})
        assert created.status_code == 201, created.text
        game_id, tokens = created.json()["game_id"], created.json()["tokens"]
        path = f"/v1/games/{game_id}"
        spied.clear()  # creating a game is no turn
        for n, seat in enumerate(("south", "west", "north"), start=1):
            auth = {"Authorization": f"Bearer {tokens[seat]}"}
            view = client.get(path, headers=auth).json()["view"]
            tiles = [t["id"] for t in view["rack"] if not is_joker(t["id"])][:3]
            body = {"type": "confirm_pass", "tiles": tiles}
            answer = client.post(f"{path}/commands", json=body, headers=auth)
            assert answer.status_code == 200, answer.text
            assert spied == Counter(command_turn=n), spied  # one decision per command
    # East alone is awaited: its deadline passes, the clock acts for it, once
    later = datetime.now(UTC) + timedelta(minutes=5)
    written = store.clock_worker.fire_due_clocks(later, limit=1)  # one firing
    assert [g for g, _ in written] == [game_id]
    assert spied == Counter(command_turn=3, firing_turn=1), spied
    types = [e.type for e in store.reads.events(game_id)]
    assert "clock_expired" in types and types.count("pass_resolved") == 1


class _JokerPasser(Bot):
    """A seeded defect: the clock's player passes a joker whenever it holds one."""

    def decide(self, view: dict[str, Any]) -> Any:
        command = super().decide(view)
        if not isinstance(command, ConfirmPass):
            return command
        jokers = [t["id"] for t in view["rack"] if is_joker(t["id"])]
        if not jokers or not command.tiles:
            return command
        return command.model_copy(update={"tiles": [jokers[0], *command.tiles[1:]]})


def test_the_checker_sees_a_defect_of_the_clock_the_service_would_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def player(firing: clocks.ClockFiring) -> Bot:
        fair = clocks.auto_player(firing.seat, firing.deadline.armed_seq, game=firing.game)
        return _JokerPasser(**vars(fair))

    healthy = explore("house", ordered=True, extreme_splits=True, max_depth=6)
    assert not healthy.failures and healthy.checked["clock"] > 0
    # the auto player the old checker asked directly is untouched: only the firing's
    monkeypatch.setattr(clocks.ClockFiring, "player", player)
    seeded = explore("house", ordered=True, extreme_splits=True, max_depth=6)
    clock = [f for f in seeded.failures if f.property == "clock"]
    assert clock, [f.message for f in seeded.failures]
    assert "refused" in clock[0].message and clock[0].commands[-1]["type"] == "confirm_pass"
    assert any(is_joker(t) for t in clock[0].commands[-1]["tiles"])
    assert (healthy.states, healthy.transitions) == (seeded.states, seeded.transitions)


def test_a_turn_names_each_pass_row_with_its_step() -> None:
    from charleston_fsm.engine.table import Table
    from charleston_fsm.exploration.abstraction import canonical_deal

    table = Table(canonical_deal(), "nmjl")
    step = table.requirement(Seat.EAST)
    assert step is not None
    clock = clocks.advance(
        clocks.new_clock(clocks.ClockOptions(confirm_pass=30), ()), table, datetime.now(UTC), 1
    )
    tiles = [t for t in table.passable(Seat.EAST) if not is_joker(t)][:3]
    turn = turns.command_turn(
        table, clock, ConfirmPass(seat=Seat.EAST, tiles=tiles), datetime.now(UTC), 1
    )
    assert [(e.type, s) for e, s in turn.rows] == [("pass_confirmed", "CHARLESTON_P1_R")]
    assert turn.table is table and turn.clock is not None
    assert "east" not in turn.clock.deadlines and "south" in turn.clock.deadlines

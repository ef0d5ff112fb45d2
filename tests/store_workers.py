"""Players racing on one stored game, for the concurrency tests (threads and processes).

A plain module (not a test file) so that spawned processes can import the worker.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from dataclasses import dataclass

from charleston_fsm.engine.bots import Bot
from charleston_fsm.engine.errors import CharlestonError
from charleston_fsm.engine.seats import Seat
from charleston_fsm.engine.views import seat_view
from charleston_fsm.store import Conflict, GameStore, StoreError


@dataclass(frozen=True)
class Outcome:
    worker: str
    command_id: str
    first_seq: int
    last_seq: int
    duplicate: bool


def seat_worker(url: str, game_id: str, seat_value: str, worker: int, seconds: float = 120):
    """Play one seat until the Charleston is over and the seat has nothing left to do.

    The command and its id depend only on the state the worker saw, so two workers of
    one seat that saw the same state send the same command with the same id (one writes
    it, the other gets ``duplicate``); a worker that saw a stale state is refused.
    Returns (outcomes, refusals, conflicts).
    """
    store = GameStore(url)
    seat = Seat(seat_value)
    outcomes: list[Outcome] = []
    refusals = conflicts = 0
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            table = store.reads.table(game_id)
            state = hashlib.sha256(
                json.dumps(table.snapshot(), sort_keys=True).encode()
            ).hexdigest()[:20]
            bot = Bot(seat=seat, rng=random.Random(f"{state}:{seat_value}"))
            command = bot.decide(seat_view(table, seat))
            if command is None:
                if table.finished:
                    return outcomes, refusals, conflicts
                time.sleep(0.003)
                continue
            command_id = f"{seat_value}:{state}"
            try:
                result = store.writes.execute(game_id, command, command_id=command_id)
            except Conflict:
                conflicts += 1
                continue
            except StoreError:
                raise  # GameNotFound, StoreUnavailable…: never expected here
            except CharlestonError:
                refusals += 1
                continue
            outcomes.append(
                Outcome(
                    f"{seat_value}-{worker}",
                    command_id,
                    result.events[0].seq,
                    result.events[-1].seq,
                    result.duplicate,
                )
            )
        raise TimeoutError(f"{seat_value}-{worker} did not finish in {seconds} s")
    finally:
        store.dispose()


def toggler(url: str, game_id: str, seat_value: str, rounds: int) -> list[str]:
    """Confirm and withdraw the seat's own pass ``rounds`` times; any refusal is a bug
    (the three togglers never touch each other's choices and the pass never resolves)."""
    from charleston_fsm.engine.commands import ConfirmPass, WithdrawPass
    from charleston_fsm.engine.tiles import is_joker

    store = GameStore(url)
    seat = Seat(seat_value)
    try:
        tiles = [t for t in store.reads.table(game_id).racks[seat] if not is_joker(t)][:3]
        problems = []
        for n in range(rounds):
            command = ConfirmPass(seat=seat, tiles=tiles) if n % 2 == 0 else WithdrawPass(seat=seat)
            try:
                store.writes.execute(game_id, command)
            except CharlestonError as exc:
                problems.append(f"{seat_value} #{n}: {exc.code}")
        return problems
    finally:
        store.dispose()


def migrate_at(url: str, start_at: float) -> str:
    """Open a store, wait for the wall-clock moment ``start_at``, migrate; the schema
    status after (or the error), for the racing-migration test."""
    store = GameStore(url)
    try:
        store.core.schema_state()  # connected and warm: the race is in the migration itself
        time.sleep(max(0.0, start_at - time.time()))
        try:
            store.core.upgrade()
        except Exception as exc:
            return f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
        return store.core.schema_status()
    finally:
        store.dispose()

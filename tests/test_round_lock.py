"""A big round does not stall the other tables (issue 17 N5).

Creating a round makes every table (chart, deal, first deadlines, signed anchor) before
it takes the write lock, then writes them all in a few statements: on SQLite, where one
writer at a time holds the database, commands and clocks of other games go on while a
500-table round is being made. Ordering, not timing, is asserted: a command on another
game is committed while the round is still being made (not stored yet).
"""

from __future__ import annotations

import threading
import time

from sqlalchemy import func, select

from charleston_fsm.engine.seats import Seat
from charleston_fsm.engine.tiles import is_joker
from charleston_fsm.store import GameStore, NewGame
from charleston_fsm.store.database.models import RoundRow


def rounds_stored(store: GameStore) -> int:
    with store.engine.connect() as conn:
        return int(conn.scalar(select(func.count()).select_from(RoundRow)) or 0)


def test_commands_of_other_games_go_on_while_a_big_round_is_made(
    sqlite_store: GameStore,
) -> None:
    """SQLite: one writer holds the whole database (PostgreSQL locks a round's rows only,
    which no other game's command touches)."""
    store = sqlite_store
    other = store.registry.create_game(NewGame(seed=1, clock={"confirm_pass": 60}))
    east = [t for t in store.reads.table(other).racks[Seat.EAST] if not is_joker(t)][:3]
    made: dict[str, object] = {}

    def make_round() -> None:
        made["round"] = store.rounds.create_round(
            [NewGame(seed=n, clock={"confirm_pass": 60}) for n in range(500)],
            token_hash="ab" * 32,
        )

    maker = threading.Thread(target=make_round)
    maker.start()
    time.sleep(0.5)  # sequencing only: the round is under way (it takes seconds)
    during = 0
    sent = 0
    while maker.is_alive():
        command = (
            {"type": "confirm_pass", "seat": "east", "tiles": east}
            if sent % 2 == 0
            else {"type": "withdraw_pass", "seat": "east"}
        )
        store.writes.execute(other, command, command_id=f"other-{sent}")
        sent += 1
        if rounds_stored(store) == 0 and maker.is_alive():
            during += 1  # committed while the round was still being made
    maker.join()
    assert during >= 1, f"every one of {sent} commands waited for the round"
    round_id, games = made["round"]  # type: ignore[misc]
    assert len(games) == 500 and rounds_stored(store) == 1
    assert store.rounds.round_listing(round_id).to_dict()["counts"]["tables"] == 500
    assert store.tamper.verify(games[-1]).ok and store.tamper.verify(other).ok

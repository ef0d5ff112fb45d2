"""The write path's append (store/games/append.py): every write hangs on the game's move."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import func, select

from charleston_fsm.engine.commands import ConfirmPass
from charleston_fsm.engine.seats import Seat
from charleston_fsm.engine.table import Table
from charleston_fsm.engine.tiles import is_joker
from charleston_fsm.ledger.chain import chained_rows
from charleston_fsm.store import GameStore, NewGame
from charleston_fsm.store.database.models import AnchorRow, CommandRow, EventRow, ProjectionRow
from charleston_fsm.store.games import append


def _rows(store: GameStore, game_id: str) -> tuple[int | None, ...]:
    """(events, commands, anchors, the projection's seq) of the game."""
    with store.engine.connect() as conn:
        counts = [
            conn.execute(select(func.count()).where(model.game_id == game_id)).scalar()
            for model in (EventRow, CommandRow, AnchorRow)
        ]
        seq = conn.execute(select(ProjectionRow.seq).where(ProjectionRow.game_id == game_id))
        return (*counts, seq.scalar())


def _effects(store: GameStore, game_id: str, old_seq: int, epoch: int = 0) -> append.Append:
    """What East's confirmation writes, claimed to follow row ``old_seq``."""
    with store.engine.connect() as conn:
        head = append.read_head(conn, game_id, "east-confirms")
    assert head is not None and head.seen_command is None
    table = Table.restore(head.snapshot)
    tiles = [t for t in table.racks[Seat.EAST] if not is_joker(t)][:3]
    command = ConfirmPass(seat=Seat.EAST, tiles=tiles)
    now = datetime.now(UTC)
    produced = table.execute(command)
    items = [(event, None) for event in produced]
    rows = chained_rows(head.last_seq, head.head_hash, game_id, "east-confirms", items, now)
    return append.Append(
        game_id=game_id,
        command_id="east-confirms",
        command=command.model_dump(mode="json"),
        old_seq=old_seq,
        epoch=epoch,
        at=now,
        rows=rows,
        snapshot=table.snapshot(),
        game={"last_seq": old_seq + len(rows), "status": "active", "head_hash": rows[-1]["hash"]},
        anchor=None,
    )


@pytest.mark.rule("SVC-06")
def test_a_write_for_a_game_that_moved_writes_nothing(store: GameStore) -> None:
    game_id = store.registry.create_game(NewGame(seed=5))
    before = _rows(store, game_id)
    stale = _effects(store, game_id, old_seq=0)  # the game is at row 1, not 0
    with store.engine.begin() as conn:
        assert append.write(conn, stale) is False
    assert _rows(store, game_id) == before
    assert store.tamper.verify(game_id).ok

    current = _effects(store, game_id, old_seq=1)
    with store.engine.begin() as conn:
        assert append.write(conn, current) is True
    assert _rows(store, game_id) == (2, 1, 1, 2)
    assert store.tamper.verify(game_id).ok
    assert store.writes.execute(game_id, current.command, command_id="east-confirms").duplicate

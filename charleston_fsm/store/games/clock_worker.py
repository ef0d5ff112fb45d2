"""The clock worker: it finds the deadlines that passed and has the clock act on them.

Deadlines live in ``games.clock`` (the document of :mod:`charleston_fsm.engine.clock_state`)
and ``games.next_due`` (indexed), moved by the same statement that moves the game. The
worker takes one due game at a time with ``FOR UPDATE SKIP LOCKED`` (PostgreSQL; SQLite
has one writer anyway), finds under that lock the deadline that passed first
(:func:`~charleston_fsm.engine.clocks.due_firing`) and runs the write path's clock
writer (``Writes.act_for_seat``) in the same unit of work, under the command id
``clock:{seat}:{armed seq}``: two processes never act twice, a restart loses nothing,
and a seat that acted meanwhile keeps its move. A held table whose start time came is
started the same way (``time_control.StartDue``, command id ``start:<start time>``), at
that very time: every table of a round scheduled together starts in the same instant,
once, whichever process picks it. A part of the store (:mod:`.core`) over
the write path.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import bindparam, select, update

from ...engine import clocks, errors, time_control
from ...engine.annotations import scheduled_start
from ...engine.clock_state import stored
from ...engine.seats import Seat
from ...ledger.hashing import utc
from ..database.core import Part, StoreCore
from ..database.models import GameRow
from .writes import Writes

#: how long a game whose firing failed waits before the worker tries it again
RETRY_AFTER = timedelta(seconds=5)

_PICK_DUE = (
    select(GameRow.id, GameRow.clock)
    .where(GameRow.next_due <= bindparam("b_now"))
    .order_by(GameRow.next_due)
    .limit(1)
    .with_for_update(skip_locked=True)
)
_ANY_DUE = select(GameRow.id).where(GameRow.next_due <= bindparam("b_now")).limit(1)
_POSTPONE = (
    update(GameRow).where(GameRow.id == bindparam("b_game")).values(next_due=bindparam("b_due"))
)


class ClockWorker(Part):
    """``fire_due_clocks`` and ``clock_view``; the clock acts through the write path."""

    def __init__(self, core: StoreCore, writes: Writes) -> None:
        super().__init__(core)
        self.writes = writes

    def fire_due_clocks(
        self, now: datetime | None = None, limit: int = 50
    ) -> list[tuple[str, int]]:
        """Act on (or flag) every deadline due by ``now``; ``(game, last seq)`` written.

        One game per transaction, at most ``limit``. Safe to run in every process.
        """
        written: list[tuple[str, int]] = []
        for _ in range(limit):
            moment = utc(now) if now is not None else datetime.now(UTC)
            if not self._anything_due(moment):
                break
            game_id = None
            try:
                with self.writes.transaction() as work:
                    picked = work.conn.execute(_PICK_DUE, {"b_now": moment}).first()
                    if picked is None:
                        break
                    game_id = picked.id
                    # the firing's one conversion of the document: the plan takes the
                    # value (read under the same lock, so the head's clock is this one)
                    clock = stored(picked.clock)
                    firing = clocks.due_firing(clock, moment)
                    start = time_control.due_start(clock, moment)
                    if clock is not None and firing is not None:
                        done = work.run(self.writes.act_for_seat(game_id, firing, clock))
                    elif start is not None:  # a held table's start time came: start it then
                        plan = self.writes.annotation_plan(
                            game_id,
                            scheduled_start(start),
                            start.command_id,
                            cached=False,
                            clock=clock,
                        )
                        done = work.run(plan)
                    else:  # moved or paused meanwhile: only the index is stale
                        due = clocks.next_due(clock)
                        work.conn.execute(_POSTPONE, {"b_game": game_id, "b_due": due})
                        continue
            except errors.CharlestonError:
                if game_id is None:
                    raise
                # a refused or quarantined game must not hold the worker: try it later
                with self.core.writing() as conn:
                    conn.execute(_POSTPONE, {"b_game": game_id, "b_due": moment + RETRY_AFTER})
                continue
            if done is not None and done.result.events:
                written.append((game_id, done.result.last_seq))
        return written

    def _anything_due(self, moment: datetime) -> bool:
        """A read before any write transaction: an idle poll takes no lock (SQLite's write
        lock stays free for commands) and, on PostgreSQL (autocommit), sends no COMMIT."""
        with self.core.engine.connect() as conn:
            if self.core.dialect == "postgresql":
                conn = conn.execution_options(isolation_level="AUTOCOMMIT")
            return conn.execute(_ANY_DUE, {"b_now": moment}).first() is not None

    def clock_view(self, game_id: str, seat: Seat | None) -> dict[str, Any] | None:
        """The seat's own clock (``None``: the director's whole clock), one small read."""
        with self.core.reading() as conn:
            doc = conn.execute(select(GameRow.clock).where(GameRow.id == game_id)).scalar()
        clock = stored(doc)
        return clocks.director_clock(clock) if seat is None else clocks.seat_clock(clock, seat)

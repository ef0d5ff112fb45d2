"""A round's acts over all of its tables at once: start, pause, resume.

A round is paused as one act: one transaction writes each of its tables' rows (a
``clock_paused`` row per table, naming the round), so the tables are all paused or none
of them is, whatever happens to the request or the page that sent it. A table that
cannot take the act (finished, not started, already paused, without a clock,
quarantined) is left as it is and named in the answer with why; a failure of the
database writes nothing at all. A round's start gives every table the same moment, so
every clock of the round counts from one instant (a start time given at creation does
the same, table by table, in the clock worker: ``time_control.StartDue``).

Each table's rows are written by the annotation writer's plan
(``Writes.annotation_plan``) in the round's one unit of work (``unit_of_work.py``), under
the command id ``round:<id>`` of each table: a retry of the same act is answered from
what it stored, and writes nothing more. A part of the store (:mod:`.core`) over the
write path.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select

from ...engine import annotations, errors
from ...engine.annotations import Annotation
from ..database.core import Part, StoreCore
from ..database.models import GameRow, RoundRow
from ..errors import RoundNotFound
from ..games.writes import Writes, checked_id
from ..platform import feed

#: the feed entry of each act, written with its tables' rows
ENTRY_OF = {"start": "round.started", "pause": "round.paused", "resume": "round.resumed"}
#: the acts, by name: each gives a table's annotation for the round (and the moment)
ACTS: dict[str, Callable[[str, datetime], Annotation]] = {
    "start": lambda round_id, at: annotations.start({"type": "start_game", "round": round_id}, at),
    "pause": lambda round_id, _at: annotations.pause({"type": "pause_clock", "round": round_id}),
    "resume": lambda round_id, _at: annotations.resume({"type": "resume_clock", "round": round_id}),
}


@dataclass(frozen=True)
class TableOutcome:
    """What one table of the round did with the act."""

    table: int
    game_id: str
    done: bool
    duplicate: bool = False
    last_seq: int | None = None
    code: str | None = None  # why not, when not done
    detail: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class RoundAct:
    """A round's act: its name, its moment and each table's outcome (table 1 first)."""

    round_id: str
    act: str
    at: datetime
    tables: list[TableOutcome]

    @property
    def done(self) -> int:
        return sum(t.done for t in self.tables)

    def to_dict(self) -> dict[str, Any]:
        return {
            "round_id": self.round_id,
            "act": self.act,
            "at": self.at.isoformat().replace("+00:00", "Z"),
            "done": self.done,
            "tables": [t.to_dict() for t in self.tables],
        }


class RoundActs(Part):
    """``act``: start, pause or resume every table of a round, in one transaction."""

    def __init__(self, core: StoreCore, writes: Writes) -> None:
        super().__init__(core)
        self.writes = writes

    def act(self, round_id: str, act: str, command_id: str) -> RoundAct:
        """Do ``act`` to every unfinished table of the round at one moment; each table's
        outcome says whether it was done, or why not (its refusal's code and words)."""
        command_id = checked_id(f"round:{command_id}")
        make = ACTS[act]
        at = datetime.now(UTC)
        tables = self._tables(round_id)
        unknown = (
            f"The database connection was lost while the round's {act} was being committed, "
            "so it may or may not be stored (for every table or for none). Send it again "
            f"with the same command id: it is applied at most once."
        )
        outcomes: dict[str, TableOutcome] = {}
        with self.writes.transaction(unknown) as work:
            # in the order of the games' ids: two such acts never wait in a cycle
            for game_id, number, finished in sorted(tables):
                if finished:
                    outcomes[game_id] = TableOutcome(
                        number, game_id, False, code="finished", detail="It is finished."
                    )
                    continue
                plan = self.writes.annotation_plan(
                    game_id, make(round_id, at), command_id, cached=True
                )
                try:
                    written = work.run(plan)
                except errors.CharlestonError as refused:  # nothing of it was written
                    outcomes[game_id] = TableOutcome(
                        number, game_id, False, code=refused.code, detail=refused.message
                    )
                    continue
                assert written is not None
                result = written.result
                outcomes[game_id] = TableOutcome(
                    number, game_id, True, result.duplicate, result.last_seq
                )
            fresh = sum(o.done and not o.duplicate for o in outcomes.values())
            if fresh:  # a retry that wrote nothing more announces nothing more
                data = {"tables": fresh}
                entry = feed.new_entry(ENTRY_OF[act], at, round_id=round_id, data=data)
                feed.record(work.conn, [entry])
        ordered = sorted(outcomes.values(), key=lambda t: t.table)
        return RoundAct(round_id, act, at, ordered)

    def _tables(self, round_id: str) -> list[tuple[str, int, bool]]:
        with self.core.reading() as conn:
            if conn.execute(select(RoundRow.id).where(RoundRow.id == round_id)).first() is None:
                raise RoundNotFound(f"There is no round {round_id!r}.")
            rows = conn.execute(
                select(GameRow.id, GameRow.round_table, GameRow.status).where(
                    GameRow.round_id == round_id
                )
            ).all()
        return [(r.id, r.round_table, r.status == "finished") for r in rows]

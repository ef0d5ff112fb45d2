"""The director's audit of one game or of many (the verdict of verify is part of it), and
the check of every projection against a replay of its rows. A part of the store
(:mod:`.core`) over the tamper part (verify) and the reads part (replay).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sqlalchemy import bindparam, select

from ...engine import errors
from ..database.core import Part, StoreCore
from ..database.models import GameRow, ProjectionRow, RoundRow
from ..errors import GameQuarantined
from ..games.reads import CheckedReads
from . import integrity
from .audit import AuditReport, build_audit
from .sweep import Sweep
from .tamper import TamperEvidence

#: the round a game is a table of: its id, name, the table's number and label
_ROUND_OF = (
    select(GameRow.round_id, GameRow.round_table, RoundRow.name, RoundRow.settings)
    .join(RoundRow, RoundRow.id == GameRow.round_id, isouter=True)
    .where(GameRow.id == bindparam("b_game"))
)


class Auditor(Part):
    """``audit``, ``audit_all`` and ``check_projections``."""

    def __init__(self, core: StoreCore, tamper: TamperEvidence, reads: CheckedReads) -> None:
        super().__init__(core)
        self.tamper = tamper
        self.reads = reads

    def audit(self, game_id: str) -> AuditReport:
        """The director's audit; the verdict of :meth:`verify` is part of it.

        A record too broken to describe is refused (the game is quarantined by then)."""
        verdict = self.tamper.verify(game_id)
        with self.core.reading(snapshot=True) as conn:
            record = integrity.read_record(conn, game_id)
            seat_at = conn.execute(_ROUND_OF, {"b_game": game_id}).first()
        rows = [r for r in record.rows if r.seq <= record.last_seq]
        try:
            report = build_audit(rows, verdict)
        except Exception:  # rows verify already named as broken
            if verdict.ok:
                raise
            raise GameQuarantined(
                f"The audit of game {game_id!r} cannot be built from its broken record: "
                f"{verdict.message} See GET /v1/games/{game_id}/verify."
            ) from None
        if seat_at is not None and seat_at.round_id is not None:
            labels = (seat_at.settings or {}).get("labels") or []
            number = seat_at.round_table
            report.round = {
                "id": seat_at.round_id,
                "name": seat_at.name,
                "table": number,
                "label": labels[number - 1] if number and 0 < number <= len(labels) else None,
            }
        return report

    def audit_all(
        self,
        game_ids: Sequence[str] | None = None,
        *,
        jobs: int = 1,
        progress: Callable[[int], None] | None = None,
    ) -> Sweep:
        """The audit of many games (default: all) with their verify, in one sweep."""
        return self.tamper.verify_all(game_ids, audit=True, jobs=jobs, progress=progress)

    def check_projections(self) -> list[str]:
        """Games whose projection differs from a fold of their events."""
        bad: list[str] = []
        with self.core.reading() as conn:
            projections = conn.execute(
                select(GameRow.id, GameRow.last_seq, ProjectionRow.seq, ProjectionRow.snapshot)
                .join(ProjectionRow, ProjectionRow.game_id == GameRow.id, isouter=True)
                .order_by(GameRow.id)
            ).all()
        for game_id, last_seq, seq, snapshot in projections:
            if snapshot is None or seq != last_seq:
                bad.append(game_id)
                continue
            try:
                replayed = self.reads.replay(game_id, at=seq).snapshot()
            except errors.CharlestonError:
                bad.append(game_id)
                continue
            if replayed != snapshot:
                bad.append(game_id)
        return bad

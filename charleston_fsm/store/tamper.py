"""What a director uses to trust a stored game, or to find out not to: verify (which
quarantines a game that fails), the audit, the quarantine and its lift, the anchors to
export, and the projection check. A mixin of :class:`~.game_store.GameStore`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, select

from ..engine import errors
from ..engine.table import Table
from . import integrity
from .anchors import Anchor, AnchorKey
from .audit import AuditReport, build_audit
from .errors import GameQuarantined, QuarantineNotLifted
from .models import GameRow, ProjectionRow
from .sweep import Sweep, sweep
from .verify import Verification, check_game


class TamperEvidence:
    """Verify, audit, quarantine and anchors over the store's connections."""

    if TYPE_CHECKING:  # provided by GameStore
        anchor_key: AnchorKey

        def _reading(self, *, snapshot: bool = False) -> AbstractContextManager[Connection]: ...
        def _writing(self) -> AbstractContextManager[Connection]: ...
        def replay(self, game_id: str, at: int | None = None) -> Table: ...
        def last_seq(self, game_id: str) -> int: ...

    def audit(self, game_id: str) -> AuditReport:
        """The director's audit; the verdict of :meth:`verify` is part of it.

        A record too broken to describe is refused (the game is quarantined by then)."""
        verdict = self.verify(game_id)
        with self._reading(snapshot=True) as conn:
            record = integrity.read_record(conn, game_id)
        rows = [r for r in record.rows if r.seq <= record.last_seq]
        try:
            return build_audit(rows, verdict)
        except Exception:  # rows verify already named as broken
            if verdict.ok:
                raise
            raise GameQuarantined(
                f"The audit of game {game_id!r} cannot be built from its broken record: "
                f"{verdict.message} See GET /v1/games/{game_id}/verify."
            ) from None

    def verify(
        self,
        game_id: str,
        kept: Sequence[Anchor] | None = None,
        *,
        quarantine: bool = True,
        replay: bool = False,
    ) -> Verification:
        """Every check of ``verify.check_game`` on one snapshot of the game's record.

        ``kept``: the game's anchors from a director's export file. A failed verify
        quarantines the game (unless ``quarantine=False``); the result says whether the
        game is quarantined now. ``replay``: replay even a game with a sealed anchor; a
        finished game that replays clean gets its final anchor sealed.
        """
        with self._reading(snapshot=True) as conn:
            record = integrity.read_record(conn, game_id)
        verdict = check_game(record, self.anchor_key, kept, replay=replay)
        if not verdict.ok and quarantine:
            with self._writing() as conn:
                return verdict.with_quarantine(integrity.quarantine(conn, verdict, _now()))
        if verdict.ok and verdict.replay_digest is not None and record.status == "finished":
            with self._writing() as conn:
                integrity.seal_anchor(conn, self.anchor_key, record, verdict)
        with self._reading() as conn:
            return verdict.with_quarantine(integrity.active(conn, game_id))

    def seal(self, game_id: str) -> bool:
        """Replay a finished game once and seal its final anchor with the replay's digest,
        so later verifies check its chain against the signed head instead of replaying
        it (see ``verify.sealed_head``). True when it sealed; a game that does not
        verify is left unsealed (verify, when asked, names and quarantines it)."""
        with self._reading(snapshot=True) as conn:
            record = integrity.read_record(conn, game_id)
        verdict = check_game(record, self.anchor_key, replay=True)
        if not verdict.ok:
            return False
        with self._writing() as conn:
            return integrity.seal_anchor(conn, self.anchor_key, record, verdict)

    def verify_all(
        self,
        game_ids: Sequence[str] | None = None,
        kept: Mapping[str, Sequence[Anchor]] | None = None,
        *,
        replay: bool = False,
        audit: bool = False,
        jobs: int = 1,
        progress: Callable[[int], None] | None = None,
    ) -> Sweep:
        """:meth:`verify` of many games (default: all), read in bulk, ``jobs`` processes.

        Games with a sealed final anchor are not replayed unless ``replay``; those that
        replay clean are sealed. ``kept``: anchors of an export file, per game. Every game
        that fails is quarantined; each verdict says whether its game is quarantined now.
        ``audit``: also the audit of each game (``Sweep.audits``), from the same rows.
        """
        if game_ids is None:
            with self._reading() as conn:
                game_ids = list(conn.execute(select(GameRow.id).order_by(GameRow.id)).scalars())
        found = sweep(
            self, game_ids, kept, replay=replay, audit=audit, jobs=jobs, progress=progress
        )
        failed = found.failed
        if failed:
            with self._writing() as conn:
                for verdict in failed:
                    integrity.quarantine(conn, verdict, _now())
        with self._reading() as conn:
            active = {q["game_id"]: q for q in integrity.history(conn) if q["active"]}
        found.verifications = [
            v.with_quarantine(active.get(v.game_id)) for v in found.verifications
        ]
        for verdict in found.verifications:
            if verdict.game_id in found.audits:
                found.audits[verdict.game_id].verification = verdict.to_dict()
        return found

    def audit_all(
        self,
        game_ids: Sequence[str] | None = None,
        *,
        jobs: int = 1,
        progress: Callable[[int], None] | None = None,
    ) -> Sweep:
        """The audit of many games (default: all) with their verify, in one sweep."""
        return self.verify_all(game_ids, audit=True, jobs=jobs, progress=progress)

    def quarantines(self, game_id: str | None = None) -> list[dict[str, Any]]:
        """Every quarantine, active or lifted (of one game, or of all), oldest first."""
        if game_id is not None:
            self.last_seq(game_id)  # GameNotFound for an unknown game
        with self._reading() as conn:
            return integrity.history(conn, game_id)

    def lift_quarantine(
        self, game_id: str, by: str, note: str = "", kept: Sequence[Anchor] | None = None
    ) -> dict[str, Any]:
        """Lift the game's quarantine once its record verifies again (against ``kept``
        too, when the quarantine was found with an exported file); recorded with who
        lifted it and why. Refused (:class:`QuarantineNotLifted`) while it fails."""
        verdict = self.verify(game_id, kept, quarantine=False)
        if verdict.quarantine is None:
            raise QuarantineNotLifted(f"Game {game_id!r} is not quarantined.")
        if verdict.quarantine["against_kept_anchors"] and kept is None:
            raise QuarantineNotLifted(
                f"Game {game_id!r} was quarantined against an exported anchors file: lift it "
                "with the same file (charleston-fsm quarantine lift --anchors FILE)."
            )
        if not verdict.ok:
            raise QuarantineNotLifted(
                f"Game {game_id!r} still fails verify: {verdict.message} Repair the record first."
            )
        with self._writing() as conn:
            return integrity.lift(conn, game_id, by, note, _now())

    def anchors(self, game_id: str | None = None) -> list[Anchor]:
        """The stored anchors (of one game, or of all), for a director to export."""
        with self._reading() as conn:
            return integrity.stored_anchors(conn, game_id)

    def restore_anchors(self, kept: Sequence[Anchor]) -> int:
        """Put back the anchors of an exported file that are missing or differ in the
        database (a repair). Only anchors whose signature checks with this service's
        key are taken, so a file cannot bring in anything the key did not sign."""
        key = self.anchor_key
        unsigned = [a for a in kept if not key.checks(a)]
        if unsigned:
            raise QuarantineNotLifted(
                f"{len(unsigned)} anchor(s) of the file (first: game {unsigned[0].game_id!r} "
                f"seq {unsigned[0].seq}) do not carry a valid signature of key "
                f"{key.key_id!r}: nothing was restored."
            )
        with self._writing() as conn:
            return integrity.restore_anchors(conn, kept)

    def rebuild_projection(self, game_id: str) -> Verification:
        """Write the replay of the rows as the projection (a repair), only when the rows,
        head and anchors verify and the projection is all that is wrong."""
        verdict = self.verify(game_id, quarantine=False)
        other = [f for f in verdict.findings if not f.kind.startswith("projection_")]
        if other:
            raise QuarantineNotLifted(
                f"Game {game_id!r}'s rows do not verify ({other[0].message}); the projection "
                "is rebuilt only from a record that does."
            )
        if verdict.findings:
            with self._writing() as conn:
                integrity.rebuild_projection(conn, game_id)
        return self.verify(game_id, quarantine=False)

    def check_projections(self) -> list[str]:
        """Games whose projection differs from a fold of their events."""
        bad: list[str] = []
        with self._reading() as conn:
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
                replayed = self.replay(game_id, at=seq).snapshot()
            except errors.CharlestonError:
                bad.append(game_id)
                continue
            if replayed != snapshot:
                bad.append(game_id)
        return bad


def _now() -> datetime:
    return datetime.now(UTC)

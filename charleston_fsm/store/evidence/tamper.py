"""What a director uses to trust a stored game, or to find out not to: verify (which
quarantines a game that fails), the seal of a finished game, the quarantine and its
lift, the anchors to export and restore, and the projection's repair. A part of the
store (:mod:`.core`); the audit built on verify is :mod:`.auditor`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, select

from ...ledger.anchors import Anchor
from ...ledger.hashing import canonical_time
from ...ledger.verify import Verification, check_game
from ..database.core import Part, StoreCore
from ..database.models import GameRow
from ..errors import QuarantineNotLifted
from ..games.registry import GameRegistry
from ..platform import feed
from . import integrity
from .sweep import Sweep, sweep


class TamperEvidence(Part):
    """Verify, seal, quarantine and anchors over the store's connections.

    ``registry``: the games part, which says whether a game exists.
    """

    def __init__(self, core: StoreCore, registry: GameRegistry) -> None:
        super().__init__(core)
        self.registry = registry

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
        with self.core.reading(snapshot=True) as conn:
            record = integrity.read_record(conn, game_id)
        verdict = check_game(record, self.core.anchor_key, kept, replay=replay)
        if not verdict.ok and quarantine:
            with self.core.writing() as conn:
                return verdict.with_quarantine(_quarantine(conn, verdict))
        if verdict.ok and verdict.replay_digest is not None and record.status == "finished":
            with self.core.writing() as conn:
                if integrity.seal_anchor(conn, self.core.anchor_key, record, verdict):
                    feed.record_seal(conn, game_id, record.last_seq, _now())
        with self.core.reading() as conn:
            return verdict.with_quarantine(integrity.active(conn, game_id))

    def seal(self, game_id: str) -> bool:
        """Replay a finished game once and seal its final anchor with the replay's digest,
        so later verifies check its chain against the signed head instead of replaying
        it (see ``verify.sealed_head``). True when it sealed; a game that does not
        verify is left unsealed (verify, when asked, names and quarantines it)."""
        with self.core.reading(snapshot=True) as conn:
            record = integrity.read_record(conn, game_id)
        verdict = check_game(record, self.core.anchor_key, replay=True)
        if not verdict.ok:
            return False
        with self.core.writing() as conn:
            sealed = integrity.seal_anchor(conn, self.core.anchor_key, record, verdict)
            if sealed:
                # no seq: a seal is no row of the game, and may come after later rows
                feed.record_seal(conn, game_id, record.last_seq, _now())
            return sealed

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
            with self.core.reading() as conn:
                game_ids = list(conn.execute(select(GameRow.id).order_by(GameRow.id)).scalars())
        found = sweep(
            self.core, game_ids, kept, replay=replay, audit=audit, jobs=jobs, progress=progress
        )
        failed = found.failed
        if failed:
            with self.core.writing() as conn:
                for verdict in failed:
                    _quarantine(conn, verdict)
        with self.core.reading() as conn:
            active = {q["game_id"]: q for q in integrity.history(conn) if q["active"]}
        found.verifications = [
            v.with_quarantine(active.get(v.game_id)) for v in found.verifications
        ]
        for verdict in found.verifications:
            if verdict.game_id in found.audits:
                found.audits[verdict.game_id].verification = verdict.to_dict()
        return found

    def quarantines(self, game_id: str | None = None) -> list[dict[str, Any]]:
        """Every quarantine, active or lifted (of one game, or of all), oldest first."""
        if game_id is not None:
            self.registry.last_seq(game_id)  # GameNotFound for an unknown game
        with self.core.reading() as conn:
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
        with self.core.writing() as conn:
            lifted = integrity.lift(conn, game_id, by, note, _now())
            entry = feed.new_entry(
                "game.quarantine_lifted",
                _now(),
                game_id=game_id,
                data={"number": lifted["number"]},
            )
            feed.record(conn, [entry])
            return lifted

    def anchors(self, game_id: str | None = None) -> list[Anchor]:
        """The stored anchors (of one game, or of all), for a director to export."""
        with self.core.reading() as conn:
            return integrity.stored_anchors(conn, game_id)

    def restore_anchors(self, kept: Sequence[Anchor]) -> int:
        """Put back the anchors of an exported file that are missing or differ in the
        database (a repair). Only anchors whose signature checks with this service's
        key are taken, so a file cannot bring in anything the key did not sign."""
        key = self.core.anchor_key
        unsigned = [a for a in kept if not key.checks(a)]
        if unsigned:
            raise QuarantineNotLifted(
                f"{len(unsigned)} anchor(s) of the file (first: game {unsigned[0].game_id!r} "
                f"seq {unsigned[0].seq}) do not carry a valid signature of key "
                f"{key.key_id!r}: nothing was restored."
            )
        with self.core.writing() as conn:
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
            with self.core.writing() as conn:
                integrity.rebuild_projection(conn, game_id)
        return self.verify(game_id, quarantine=False)


def _quarantine(conn: Connection, verdict: Verification) -> dict[str, Any]:
    """Quarantine the verdict's game; a quarantine opened now (not one already open)
    goes to the feed with it."""
    now = _now()
    found = integrity.quarantine(conn, verdict, now)
    if found.get("since") == canonical_time(now):
        data = {"number": found["number"]}
        feed.record(
            conn, [feed.new_entry("game.quarantined", now, game_id=verdict.game_id, data=data)]
        )
    return found


def _now() -> datetime:
    return datetime.now(UTC)

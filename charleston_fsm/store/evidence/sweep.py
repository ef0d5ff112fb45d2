"""Verify (and audit) many games at once: rows read in bulk, chunks in parallel processes.

Each chunk of games is read in one snapshot transaction (four statements, whatever
its size) and checked with :func:`~.verify.check_game`, the same verdict as one game's
verify. A finished game whose final anchor is sealed (``verify.sealed_head``) is not
replayed: its rows are hashed, linked and checked against the signed head instead. A
game replayed without a finding gets its final anchor sealed, so the next sweep skips
its replay. With ``jobs > 1`` chunks go to worker processes, each with its own
connection and warm charts; the parent quarantines what failed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import UTC, datetime

from ...ledger.anchors import Anchor, AnchorKey
from ...ledger.verify import Verification, check_game
from ..database.core import StoreCore
from ..platform import feed
from . import integrity
from .audit import AuditReport, build_audit

#: games per read: large enough that a statement's round trip is noise, small enough
#: that a chunk's rows (about 75 a game) stay a few megabytes in memory
CHUNK = 250


@dataclass
class Sweep:
    """What a sweep found, in the order of the games asked for."""

    verifications: list[Verification] = field(default_factory=list)
    #: the audit of each game whose rows could be described (``audit=True``)
    audits: dict[str, AuditReport] = field(default_factory=dict)
    rows: int = 0
    #: games replayed through the chart (the others were vouched for by a sealed anchor)
    replayed: int = 0
    #: finished games whose final anchor this sweep sealed
    sealed: int = 0

    @property
    def failed(self) -> list[Verification]:
        return [v for v in self.verifications if not v.ok]

    def merge(self, other: Sweep) -> None:
        self.verifications += other.verifications
        self.audits.update(other.audits)
        self.rows += other.rows
        self.replayed += other.replayed
        self.sealed += other.sealed


def sweep_chunk(
    core: StoreCore,
    game_ids: Sequence[str],
    kept: Mapping[str, Sequence[Anchor]] | None = None,
    *,
    replay: bool = False,
    audit: bool = False,
    seal: bool = True,
) -> Sweep:
    """Check ``game_ids`` from one snapshot; seal what replayed clean (no quarantine)."""
    key = core.anchor_key
    with core.reading(snapshot=True) as conn:
        records = integrity.read_records(conn, game_ids)
    found = Sweep()
    clean = []
    for record in records:
        kept_here = None if kept is None else kept.get(record.game_id, [])
        verdict = check_game(record, key, kept_here, replay=replay)
        found.verifications.append(verdict)
        found.rows += len(record.rows)
        found.replayed += verdict.replayed
        if audit:
            rows = [r for r in record.rows if r.seq <= record.last_seq]
            try:
                found.audits[record.game_id] = build_audit(rows, verdict)
            except Exception:  # rows verify named as broken: no audit of them
                if verdict.ok:
                    raise
        if seal and verdict.ok and verdict.replay_digest is not None:
            clean.append((record, verdict))
    if clean:
        now = datetime.now(UTC)
        with core.writing() as conn:
            for record, verdict in clean:
                if integrity.seal_anchor(conn, key, record, verdict):
                    # the feed hears of every seal, whoever makes it (feed.record_seal)
                    feed.record_seal(conn, record.game_id, record.last_seq, now)
                    found.sealed += 1
    return found


# -- worker processes ---------------------------------------------------------------------------
_CORES: dict[str, StoreCore] = {}


def _chunk_in_worker(
    url: str,
    key: AnchorKey,
    game_ids: Sequence[str],
    kept: Mapping[str, Sequence[Anchor]] | None,
    replay: bool,
    audit: bool,
    seal: bool,
) -> Sweep:
    """One chunk in a worker process, on the worker's own store core (made once per
    process)."""
    core = _CORES.get(url)
    if core is None:
        core = _CORES[url] = StoreCore(url, anchor_key=key)
    return sweep_chunk(core, game_ids, kept, replay=replay, audit=audit, seal=seal)


def sweep(
    core: StoreCore,
    game_ids: Sequence[str],
    kept: Mapping[str, Sequence[Anchor]] | None = None,
    *,
    replay: bool = False,
    audit: bool = False,
    seal: bool = True,
    jobs: int = 1,
    chunk: int = CHUNK,
    progress: Callable[[int], None] | None = None,
) -> Sweep:
    """Check every game of ``game_ids`` (chunks of ``chunk``; ``jobs`` processes).

    ``progress(n)`` is called as each chunk of ``n`` games is done. Nothing is
    quarantined here (see ``TamperEvidence.verify_all``). ``core``: the store's core.
    """
    chunks = [list(game_ids[i : i + chunk]) for i in range(0, len(game_ids), chunk)]
    parts: list[Sweep | None] = [None] * len(chunks)
    if jobs <= 1 or len(chunks) <= 1:
        for index, ids in enumerate(chunks):
            parts[index] = sweep_chunk(core, ids, kept, replay=replay, audit=audit, seal=seal)
            if progress is not None:
                progress(len(ids))
    else:
        url = core.url.render_as_string(hide_password=False)
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = {
                pool.submit(
                    _chunk_in_worker,
                    url,
                    core.anchor_key,
                    ids,
                    None if kept is None else {g: kept.get(g, []) for g in ids},
                    replay,
                    audit,
                    seal,
                ): index
                for index, ids in enumerate(chunks)
            }
            for future in as_completed(futures):
                index = futures[future]
                parts[index] = future.result()
                if progress is not None:
                    progress(len(chunks[index]))
    total = Sweep()
    for part in parts:
        if part is not None:
            total.merge(part)
    return total

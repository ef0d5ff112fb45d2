"""The store's side of tamper evidence: read a game's whole record, write anchors, and
keep quarantines (statements on one connection; the transaction is the caller's).

A game is quarantined as soon as verify fails for it, whoever ran verify (the CLI, the
director's HTTP route, or a read that found a row it could not trust). Reads and commands
of a quarantined game are refused with :class:`GameQuarantined`; a director lifts the
quarantine once the record verifies again, and the lift is recorded beside the finding.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, bindparam, delete, func, insert, select, update

from ...ledger.anchors import Anchor, AnchorKey, needs_anchor
from ...ledger.hashing import canonical_time, utc
from ...ledger.rows import StoredEvent
from ...ledger.verify import GameRecord, Verification, digest, fold_rows
from ..database.models import AnchorRow, EventRow, GameRow, ProjectionRow, QuarantineRow
from ..errors import GameNotFound, GameQuarantined

MAX_NOTE = 1000


def read_record(conn: Connection, game_id: str) -> GameRecord:
    """Everything verify looks at, read in the caller's (snapshot) transaction."""
    game = conn.execute(
        select(GameRow.last_seq, GameRow.status, GameRow.head_hash).where(GameRow.id == game_id)
    ).first()
    if game is None:
        raise GameNotFound(f"There is no game {game_id!r}.")
    rows = conn.execute(
        select(EventRow).where(EventRow.game_id == game_id).order_by(EventRow.seq)
    ).all()
    projection = conn.execute(
        select(ProjectionRow.seq, ProjectionRow.snapshot).where(ProjectionRow.game_id == game_id)
    ).first()
    return GameRecord(
        game_id=game_id,
        last_seq=game.last_seq,
        status=game.status,
        head_hash=game.head_hash,
        rows=[StoredEvent.from_row(r) for r in rows],
        projection_seq=projection.seq if projection else None,
        snapshot=projection.snapshot if projection else None,
        anchors=stored_anchors(conn, game_id),
    )


def read_records(conn: Connection, game_ids: Sequence[str]) -> list[GameRecord]:
    """:func:`read_record` of many games in four statements (games, rows, projections,
    anchors), in the caller's snapshot transaction; unknown ids are left out."""
    ids = list(game_ids)
    games = conn.execute(
        select(GameRow.id, GameRow.last_seq, GameRow.status, GameRow.head_hash).where(
            GameRow.id.in_(ids)
        )
    ).all()
    rows: dict[str, list[StoredEvent]] = {g.id: [] for g in games}
    for r in conn.execute(
        select(*_EVENT_COLUMNS)
        .where(EventRow.game_id.in_(ids))
        .order_by(EventRow.game_id, EventRow.seq)
    ):
        rows[r.game_id].append(StoredEvent.from_row(r))
    projections = {
        p.game_id: p
        for p in conn.execute(
            select(ProjectionRow.game_id, ProjectionRow.seq, ProjectionRow.snapshot).where(
                ProjectionRow.game_id.in_(ids)
            )
        )
    }
    anchors: dict[str, list[Anchor]] = {}
    for a in conn.execute(
        select(AnchorRow)
        .where(AnchorRow.game_id.in_(ids))
        .order_by(AnchorRow.game_id, AnchorRow.seq)
    ):
        anchors.setdefault(a.game_id, []).append(Anchor.from_row(a))
    order = {gid: index for index, gid in enumerate(ids)}
    return [
        GameRecord(
            game_id=g.id,
            last_seq=g.last_seq,
            status=g.status,
            head_hash=g.head_hash,
            rows=rows[g.id],
            projection_seq=projections[g.id].seq if g.id in projections else None,
            snapshot=projections[g.id].snapshot if g.id in projections else None,
            anchors=anchors.get(g.id, []),
        )
        for g in sorted(games, key=lambda g: order[g.id])
    ]


_EVENT_COLUMNS = [column for column in EventRow.__table__.columns]


def seal_anchor(
    conn: Connection, key: AnchorKey, record: GameRecord, verdict: Verification
) -> bool:
    """Sign the finished game's final anchor with its replay's digest (see
    ``verify.sealed_head``), when ``verdict`` replayed ``record`` and found nothing."""
    if not verdict.ok or verdict.replay_digest is None or record.status != "finished":
        return False
    final = next((a for a in record.anchors if a.seq == record.last_seq and a.finished), None)
    if final is None or final.replay_digest == verdict.replay_digest:
        return False
    sealed = final.sealed(key, verdict.replay_digest)
    done = conn.execute(
        update(AnchorRow)
        .where(
            AnchorRow.game_id == final.game_id,
            AnchorRow.seq == final.seq,
            AnchorRow.head_hash == final.head_hash,
            AnchorRow.signature == final.signature,
        )
        .values(replay_digest=sealed.replay_digest, signature=sealed.signature)
    )
    return done.rowcount == 1


def stored_anchors(conn: Connection, game_id: str | None = None) -> list[Anchor]:
    query = select(AnchorRow).order_by(AnchorRow.game_id, AnchorRow.seq)
    if game_id is not None:
        query = query.where(AnchorRow.game_id == game_id)
    return [Anchor.from_row(r) for r in conn.execute(query).all()]


_INSERT_ANCHOR = insert(AnchorRow)


def anchor_row(
    key: AnchorKey,
    game_id: str,
    first_seq: int,
    last_seq: int,
    head_hash: str,
    finished: bool,
    at: datetime,
) -> dict[str, Any] | None:
    """The anchors row of the command that wrote rows ``first_seq..last_seq``, if it
    calls for one (``anchors.needs_anchor``)."""
    if not needs_anchor(first_seq, last_seq, finished):
        return None
    return Anchor.signed(key, game_id, last_seq, head_hash, finished, at).row()


def restore_anchors(conn: Connection, kept: Sequence[Anchor]) -> int:
    """Insert (or put back) ``kept`` anchors of games that exist; returns how many changed."""
    games = {
        g
        for (g,) in conn.execute(
            select(GameRow.id).where(GameRow.id.in_({a.game_id for a in kept}))
        )
    }
    changed = 0
    for anchor in kept:
        if anchor.game_id not in games:
            continue
        where = (AnchorRow.game_id == anchor.game_id, AnchorRow.seq == anchor.seq)
        found = conn.execute(select(AnchorRow).where(*where)).first()
        if found is not None and Anchor.from_row(found) == anchor:
            continue
        conn.execute(delete(AnchorRow).where(*where))
        conn.execute(_INSERT_ANCHOR, anchor.row())
        changed += 1
    return changed


_TOUCH = update(GameRow).where(GameRow.id == bindparam("b_game")).values(epoch=GameRow.epoch + 1)


def touch(conn: Connection, game_id: str) -> None:
    """Lock the game's row and move its epoch: a change beside the game's commands (a
    writer that cached the game then stores nothing and reads it again)."""
    conn.execute(_TOUCH, {"b_game": game_id})


def rebuild_projection(conn: Connection, game_id: str) -> None:
    """The projection := the replay of the rows up to the recorded head (game row locked)."""
    touch(conn, game_id)
    record = read_record(conn, game_id)
    table = fold_rows([r for r in record.rows if r.seq <= record.last_seq])
    values = {"seq": record.last_seq, "snapshot": table.snapshot()}
    moved = conn.execute(
        update(ProjectionRow).where(ProjectionRow.game_id == game_id).values(**values)
    )
    if moved.rowcount == 0:
        conn.execute(insert(ProjectionRow).values(game_id=game_id, **values))


# -- quarantine ----------------------------------------------------------------------------
ACTIVE = QuarantineRow.lifted_at.is_(None)
#: one scalar subquery: whether the game (bound as ``b_game``) is quarantined now
QUARANTINED = (
    select(func.count())
    .select_from(QuarantineRow)
    .where(QuarantineRow.game_id == bindparam("b_game"), ACTIVE)
    .scalar_subquery()
)


def refuse(game_id: str) -> GameQuarantined:
    """The refusal a seat (or anyone) gets: no detail of the record, only what to do."""
    return GameQuarantined(
        f"Game {game_id!r} is quarantined: verify found its stored record broken, so "
        "nothing is served from it and no command is accepted. A director must inspect "
        f"it (GET /v1/games/{game_id}/verify or 'charleston-fsm verify {game_id}'), "
        "repair the record and lift the quarantine."
    )


def quarantine(conn: Connection, verdict: Verification, at: datetime) -> dict[str, Any]:
    """Quarantine the game for ``verdict`` (kept once: an active quarantine stays as is).

    The game's row is locked first (and its epoch moved: a command decided before it
    stores nothing), so two verifiers finding it at once open one."""
    touch(conn, verdict.game_id)
    now = active(conn, verdict.game_id)
    if now is not None:
        return now
    number = (
        conn.execute(
            select(func.max(QuarantineRow.number)).where(QuarantineRow.game_id == verdict.game_id)
        ).scalar()
        or 0
    ) + 1
    report = {k: v for k, v in verdict.to_dict().items() if k != "quarantine"}
    conn.execute(
        insert(QuarantineRow).values(
            game_id=verdict.game_id, number=number, created_at=at, report=report
        )
    )
    return active(conn, verdict.game_id) or {}


def lift(conn: Connection, game_id: str, by: str, note: str, at: datetime) -> dict[str, Any]:
    touch(conn, game_id)
    conn.execute(
        update(QuarantineRow)
        .where(QuarantineRow.game_id == game_id, ACTIVE)
        .values(lifted_at=at, lifted_by=by[:128], lift_note=note[:MAX_NOTE])
    )
    return history(conn, game_id)[-1]


def active(conn: Connection, game_id: str) -> dict[str, Any] | None:
    """The game's quarantine now, or ``None``."""
    row = conn.execute(
        select(QuarantineRow).where(QuarantineRow.game_id == game_id, ACTIVE)
    ).first()
    return _out(row) if row is not None else None


def history(conn: Connection, game_id: str | None = None) -> list[dict[str, Any]]:
    """Every quarantine (active or lifted), oldest first; of one game or of all."""
    query = select(QuarantineRow).order_by(QuarantineRow.game_id, QuarantineRow.number)
    if game_id is not None:
        query = query.where(QuarantineRow.game_id == game_id)
    return [_out(r) for r in conn.execute(query).all()]


def _out(row: Any) -> dict[str, Any]:
    return {
        "game_id": row.game_id,
        "number": row.number,
        "active": row.lifted_at is None,
        "since": canonical_time(utc(row.created_at)),
        "findings": list(row.report.get("findings", [])),
        "against_kept_anchors": bool(row.report.get("against_kept_anchors")),
        "lifted_at": canonical_time(utc(row.lifted_at)) if row.lifted_at else None,
        "lifted_by": row.lifted_by,
        "lift_note": row.lift_note,
    }


def events_intact(rows: Sequence[StoredEvent], last_seq: int, prev: str | None) -> bool:
    """Cheap checks a read makes on the rows it is about to serve: contiguous, within
    the recorded head, each following the one before (``prev``: hash of the row before
    the first, if read) and matching its own hash."""
    expected = rows[0].seq if rows else 0
    for row in rows:
        if row.seq != expected or row.seq > last_seq:
            return False
        if (prev is not None and row.prev_hash != prev) or digest(row) != row.hash:
            return False
        prev, expected = row.hash, row.seq + 1
    return True

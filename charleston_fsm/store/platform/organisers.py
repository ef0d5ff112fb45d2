"""Organisers: the platform's tenants, each with a key that opens only its own games and
rounds.

The platform's key creates an organiser (a name and the sha256 of a fresh key; the key
itself is shown once and never stored), rotates its key (a new digest replaces the old
one) and revokes it (the digest stays, with ``revoked_at``, so a revoked key is refused
as revoked rather than as unknown). Rotating a revoked organiser's key issues it a new
one. Every rotation and revocation writes a ``credential_changes`` row for the organiser
in the same transaction (:func:`~.credentials.log_change`): each service process forgets
what it remembered of that key within a second (``api/token_cache.py``).

Games and rounds created with an organiser's key carry its id (``organiser_id``; a
round's tables too): :meth:`Organisers.directing` answers in one join whether a key
directs a table. A part of the store (:mod:`.core`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, insert, select, update

from ...ledger.hashing import canonical_time, utc
from ..database.core import Part
from ..database.models import MAX_GAME_ID, MAX_ORGANISER_NAME, GameRow, OrganiserRow, RoundRow
from ..errors import InvalidOrganiser, OrganiserNotFound
from ..games.registry import check_digest
from ..rounds.credentials import log_change

#: at most this many games or rounds in one page of a listing
MAX_PAGE = 500


@dataclass(frozen=True)
class Organiser:
    """An organiser as the platform sees it (never its key, nor the key's digest)."""

    organiser_id: str
    name: str
    created_at: datetime
    key_rotated_at: datetime | None
    revoked_at: datetime | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "organiser_id": self.organiser_id,
            "name": self.name,
            "created_at": canonical_time(self.created_at),
            "key_rotated_at": _moment(self.key_rotated_at),
            "revoked_at": _moment(self.revoked_at),
            "active": self.revoked_at is None,
        }


@dataclass(frozen=True)
class KeyHolder:
    """Whose key a digest is, and whether it still opens anything."""

    organiser_id: str
    revoked: bool


class Organisers(Part):
    """``create``, ``get``, ``listing``, ``rotate``, ``revoke``, ``holder``, ``directing``,
    ``owns_round``, ``games`` and ``rounds``."""

    # -- the platform's acts -------------------------------------------------------------------
    def create(self, name: str, key_hash: str) -> Organiser:
        """A new organiser named ``name`` whose key's sha256 is ``key_hash``."""
        name = check_name(name)
        check_digest(key_hash)
        row = {
            "id": uuid.uuid4().hex,
            "name": name,
            "created_at": datetime.now(UTC),
            "key_hash": key_hash,
            "key_rotated_at": None,
            "revoked_at": None,
        }
        unknown = (
            f"The database connection was lost while organiser {name!r} was being created, so "
            "it may or may not exist: list the organisers before creating it again."
        )
        with self.core.writing(unknown) as conn:
            conn.execute(insert(OrganiserRow).values(row))
        return _organiser(row)

    def rotate(self, organiser_id: str, key_hash: str) -> Organiser:
        """The organiser's key becomes ``key_hash`` (a revoked one is issued again): the old
        key opens nothing from the commit on."""
        check_digest(key_hash)
        now = datetime.now(UTC)
        return self._change(
            organiser_id,
            {"key_hash": key_hash, "key_rotated_at": now, "revoked_at": None},
            now,
            "organiser_key",
        )

    def revoke(self, organiser_id: str) -> Organiser:
        """The organiser's key opens nothing any more (its games and rounds stay, and
        their own tokens keep working). Revoking a revoked key changes nothing."""
        now = datetime.now(UTC)
        found = self.get(organiser_id)
        if found.revoked_at is not None:
            return found
        return self._change(organiser_id, {"revoked_at": now}, now, "organiser_key")

    def _change(
        self, organiser_id: str, values: dict[str, Any], now: datetime, what: str
    ) -> Organiser:
        check_id(organiser_id)
        unknown = (
            f"The database connection was lost while organiser {organiser_id!r}'s key was "
            "being changed, so the change may or may not be stored: read the organiser, "
            "then rotate or revoke again (either may be repeated safely)."
        )
        with self.core.writing(unknown) as conn:
            moved = conn.execute(
                update(OrganiserRow).where(OrganiserRow.id == organiser_id).values(values)
            )
            if moved.rowcount != 1:
                raise OrganiserNotFound(f"There is no organiser {organiser_id!r}.")
            log_change(conn, organiser_id, what, now)
        return self.get(organiser_id)

    # -- reads ---------------------------------------------------------------------------------
    def get(self, organiser_id: str) -> Organiser:
        check_id(organiser_id)
        with self.core.reading() as conn:
            row = conn.execute(select(OrganiserRow).where(OrganiserRow.id == organiser_id)).first()
        if row is None:
            raise OrganiserNotFound(f"There is no organiser {organiser_id!r}.")
        return _organiser(row._mapping)

    def listing(self) -> list[Organiser]:
        """Every organiser, oldest first."""
        with self.core.reading() as conn:
            rows = conn.execute(
                select(OrganiserRow).order_by(OrganiserRow.created_at, OrganiserRow.id)
            ).all()
        return [_organiser(r._mapping) for r in rows]

    def holder(self, key_hash: str) -> KeyHolder | None:
        """The organiser whose key (current or revoked) ``key_hash`` is; ``None``: no
        organiser's (a rotated key's old digest is no one's)."""
        with self.core.reading() as conn:
            row = conn.execute(
                select(OrganiserRow.id, OrganiserRow.revoked_at).where(
                    OrganiserRow.key_hash == key_hash
                )
            ).first()
        return None if row is None else KeyHolder(row.id, row.revoked_at is not None)

    def directing(self, game_id: str, key_hash: str) -> str | None:
        """The organiser whose live key ``key_hash`` is, when the game is one of its own."""
        with self.core.reading() as conn:
            return conn.execute(  # type: ignore[no-any-return]
                select(OrganiserRow.id)
                .join(GameRow, GameRow.organiser_id == OrganiserRow.id)
                .where(
                    GameRow.id == game_id,
                    OrganiserRow.key_hash == key_hash,
                    OrganiserRow.revoked_at.is_(None),
                )
            ).scalar()

    def owns_round(self, round_id: str, organiser_id: str) -> bool:
        with self.core.reading() as conn:
            found = conn.execute(
                select(RoundRow.id).where(
                    RoundRow.id == round_id, RoundRow.organiser_id == organiser_id
                )
            ).first()
        return found is not None

    def games(
        self, organiser_id: str | None, *, every: bool, limit: int, offset: int
    ) -> tuple[int, list[dict[str, Any]]]:
        """The games of ``organiser_id`` (``every``: of everyone, the platform's listing),
        oldest first: how many in all, and one page of them."""
        where = [] if every else [GameRow.organiser_id == organiser_id]
        columns = (
            GameRow.id,
            GameRow.created_at,
            GameRow.ruleset,
            GameRow.status,
            GameRow.round_id,
            GameRow.round_table,
            GameRow.organiser_id,
        )
        with self.core.reading(snapshot=True) as conn:
            total = conn.execute(select(func.count()).select_from(GameRow).where(*where)).scalar()
            rows = conn.execute(
                select(*columns)
                .where(*where)
                .order_by(GameRow.created_at, GameRow.id)
                .limit(limit)
                .offset(offset)
            ).all()
        return int(total or 0), [
            {
                "game_id": r.id,
                "created_at": canonical_time(utc(r.created_at)),
                "ruleset": r.ruleset,
                "status": r.status,
                "round_id": r.round_id,
                "table": r.round_table,
                "organiser_id": r.organiser_id,
                "links": {"self": f"/v1/games/{r.id}"},
            }
            for r in rows
        ]

    def rounds(
        self, organiser_id: str | None, *, every: bool, limit: int, offset: int
    ) -> tuple[int, list[dict[str, Any]]]:
        """The rounds of ``organiser_id`` (``every``: everyone's), oldest first: how many
        in all, and one page of them with their number of tables."""
        where = [] if every else [RoundRow.organiser_id == organiser_id]
        tables = (
            select(func.count())
            .select_from(GameRow)
            .where(GameRow.round_id == RoundRow.id)
            .scalar_subquery()
        )
        with self.core.reading(snapshot=True) as conn:
            total = conn.execute(select(func.count()).select_from(RoundRow).where(*where)).scalar()
            rows = conn.execute(
                select(
                    RoundRow.id,
                    RoundRow.name,
                    RoundRow.created_at,
                    RoundRow.organiser_id,
                    tables.label("tables"),
                )
                .where(*where)
                .order_by(RoundRow.created_at, RoundRow.id)
                .limit(limit)
                .offset(offset)
            ).all()
        return int(total or 0), [
            {
                "round_id": r.id,
                "name": r.name,
                "created_at": canonical_time(utc(r.created_at)),
                "tables": int(r.tables or 0),
                "organiser_id": r.organiser_id,
                "links": {"self": f"/v1/rounds/{r.id}"},
            }
            for r in rows
        ]


def check_name(name: str) -> str:
    """An organiser's name: 1 to :data:`MAX_ORGANISER_NAME` printable characters."""
    cleaned = name.strip() if isinstance(name, str) else ""
    if not 0 < len(cleaned) <= MAX_ORGANISER_NAME or not cleaned.isprintable():
        raise InvalidOrganiser(
            f"An organiser's name is 1 to {MAX_ORGANISER_NAME} printable characters (no "
            "control characters), not blank."
        )
    return cleaned


def check_id(organiser_id: str) -> None:
    """Refuse an id no organiser can have before asking the database."""
    if not 0 < len(organiser_id) <= MAX_GAME_ID or not organiser_id.isprintable():
        raise OrganiserNotFound(f"There is no organiser {organiser_id[:MAX_GAME_ID]!r}.")


def _organiser(row: Any) -> Organiser:
    return Organiser(
        organiser_id=row["id"],
        name=row["name"],
        created_at=utc(row["created_at"]),
        key_rotated_at=None if row["key_rotated_at"] is None else utc(row["key_rotated_at"]),
        revoked_at=None if row["revoked_at"] is None else utc(row["revoked_at"]),
    )


def _moment(value: datetime | None) -> str | None:
    return None if value is None else canonical_time(value)

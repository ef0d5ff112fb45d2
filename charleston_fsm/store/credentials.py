"""Credentials that change after creation: a seat's new token, a spectator's link.

A seat's token is replaced for a substitute (the old link stops working), and a table's
or a round's spectator link is issued again (with a delay) or revoked. Each change is
stored in the transaction of the row that records it (a table's ``seat_taken`` or
``spectator_link`` row, written by the annotation writer on the same connection), so
the record and the credentials never disagree; a round's link has no chain of its own.

Every change also writes a ``credential_changes`` row (the game or round, when, what).
Each service process remembers the roles of the tokens it has seen (``api/deps.py``), so
it polls the newest of these rows (:meth:`Credentials.changed_since`, several times a
second; one indexed read) and forgets what it remembered of those games and rounds: an
old token is refused on every process within a second, SQLite and PostgreSQL alike,
whether or not a notice reached it. A part of the store (:mod:`.core`) over the write path.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from sqlalchemy import Connection, delete, insert, select, update

from ..engine import annotations
from ..engine.annotations import Annotation
from ..engine.seats import Seat
from .core import Part, StoreCore
from .errors import RoundNotFound
from .models import CredentialChangeRow, CredentialRow, GameRow, RoundRow, SpectatorLinkRow
from .registry import check_digest, spectator_row
from .results import ExecuteResult
from .writes import Writes, checked_id, unknown_change

MAX_DELAY = 3600  # seconds a spectator's link may lag behind the table

#: statements changed with a row: (the transaction, its moment)
Change = Callable[[Connection, datetime], None]


class Credentials(Part):
    """``replace_seat_token``, ``set_spectator``, ``set_round_spectator``,
    ``spectator_delay``, ``round_spectator_delay`` and ``changed_since``."""

    def __init__(self, core: StoreCore, writes: Writes) -> None:
        super().__init__(core)
        self.writes = writes

    # -- changes -----------------------------------------------------------------------------
    def replace_seat_token(
        self, game_id: str, seat: Seat, token_hash: str, label: str | None, command_id: str
    ) -> ExecuteResult:
        """The seat's token becomes ``token_hash`` (a substitute sits down; the bot, if it
        played the seat, hands it over): a ``seat_taken`` row in the same transaction.
        A retry with the same command id stores the row once and sets the token it
        brings (the link of a lost answer stops working)."""

        def change(conn: Connection, now: datetime) -> None:
            conn.execute(
                delete(CredentialRow).where(
                    CredentialRow.game_id == game_id, CredentialRow.role == seat.value
                )
            )
            conn.execute(
                insert(CredentialRow).values(
                    game_id=game_id, role=seat.value, token_hash=token_hash
                )
            )
            log_change(conn, game_id, seat.value, now)

        return self._with_row(game_id, annotations.substitute(seat, label), command_id, change)

    def set_spectator(
        self, game_id: str, token_hash: str | None, delay: int, command_id: str
    ) -> ExecuteResult:
        """The table's spectator link: a new one (``token_hash``, ``delay`` seconds; the
        old one stops working) or none (revoked), with its ``spectator_link`` row."""
        action = "revoked" if token_hash is None else "issued"

        def change(conn: Connection, now: datetime) -> None:
            conn.execute(delete(SpectatorLinkRow).where(SpectatorLinkRow.game_id == game_id))
            if token_hash is not None:
                row = spectator_row(game_id, token_hash, delay, now)
                conn.execute(insert(SpectatorLinkRow).values(row))
            log_change(conn, game_id, "spectator", now)

        annotation = annotations.spectator_link(action, None if token_hash is None else delay)
        return self._with_row(game_id, annotation, command_id, change)

    def set_round_spectator(self, round_id: str, token_hash: str | None, delay: int) -> None:
        """The round's spectator link (it lists the round and opens each of its tables),
        or none: one transaction (a round has no chain of its own)."""
        if token_hash is not None:
            check_digest(token_hash)
        with self._writing() as conn:
            moved = conn.execute(
                update(RoundRow)
                .where(RoundRow.id == round_id)
                .values(spectator_hash=token_hash, spectator_delay=delay if token_hash else None)
            )
            if moved.rowcount != 1:
                raise RoundNotFound(f"There is no round {round_id!r}.")
            log_change(conn, round_id, "spectator", datetime.now(UTC))

    def _with_row(
        self, game_id: str, annotation: Annotation, command_id: str, change: Change
    ) -> ExecuteResult:
        command_id = checked_id(command_id)
        plan = self.writes.annotation_plan(game_id, annotation, command_id, cached=True)
        try:
            with self._writing(unknown_change(command_id), game_id) as conn:
                written = self.writes.drive_on(conn, plan)
                assert written is not None
                change(conn, datetime.now(UTC))
        except BaseException:
            self.core.served.forget(game_id)
            raise
        self.writes.after_commit(written)
        return written.result

    # -- reads -------------------------------------------------------------------------------
    def spectator_delay(self, game_id: str, token_hash: str) -> int | None:
        """The delay of the spectator link ``token_hash`` opens ``game_id`` with: the
        table's own link, or its round's; ``None`` when it opens nothing."""
        with self._reading() as conn:
            own = conn.execute(
                select(SpectatorLinkRow.delay).where(
                    SpectatorLinkRow.game_id == game_id, SpectatorLinkRow.token_hash == token_hash
                )
            ).scalar()
            if own is not None:
                return int(own)
            of_round = conn.execute(
                select(RoundRow.spectator_delay)
                .join(GameRow, GameRow.round_id == RoundRow.id)
                .where(GameRow.id == game_id, RoundRow.spectator_hash == token_hash)
            ).scalar()
        return None if of_round is None else int(of_round)

    def round_spectator_delay(self, round_id: str, token_hash: str) -> int | None:
        """The delay of the round's spectator link, if ``token_hash`` is it."""
        with self._reading() as conn:
            found = conn.execute(
                select(RoundRow.spectator_delay).where(
                    RoundRow.id == round_id, RoundRow.spectator_hash == token_hash
                )
            ).scalar()
        return None if found is None else int(found)

    def changed_since(self, moment: datetime) -> set[str]:
        """The games and rounds whose credentials changed after ``moment`` (a poller asks
        again with a margin: a change commits a little after the time it records)."""
        with self._reading() as conn:
            rows = conn.execute(
                select(CredentialChangeRow.id).where(CredentialChangeRow.changed_at > moment)
            ).scalars()
            return set(rows)


def log_change(conn: Connection, subject: str, what: str, now: datetime) -> None:
    """Log the change for every process's watch; forget what no watch reads any more."""
    conn.execute(delete(CredentialChangeRow).where(CredentialChangeRow.changed_at < now - KEPT))
    conn.execute(insert(CredentialChangeRow).values(id=subject, changed_at=now, what=what))


#: how far back a poll looks past its last one (a change's commit follows its moment)
POLL_MARGIN = timedelta(seconds=5)
#: how long a change is kept for the watches (far longer than a poll's look back)
KEPT = timedelta(minutes=1)

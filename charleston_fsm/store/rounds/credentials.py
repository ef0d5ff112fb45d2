"""Credentials that change after creation: a seat's new token, a spectator's link.

A seat's token is replaced for a substitute (the old link stops working), and a table's
or a round's spectator link is issued again (with a delay) or revoked. Each change is
stored in the transaction of the row that records it (a table's ``seat_taken`` or
``spectator_link`` row, the annotation writer's plan in the same unit of work), so the
record and the credentials never disagree; a round's link has no chain of its own.

Every change also writes a ``credential_changes`` row (the game or round, when, what).
Each service process remembers the roles of the tokens it has seen (``api/deps.py``), so
it polls the newest of these rows (:meth:`Credentials.changes_since`, several times a
second; one indexed read) and forgets what it remembered of those games and rounds: an
old token is refused on every process within a second, SQLite and PostgreSQL alike,
whether or not a notice reached it. A part of the store (:mod:`.core`) over the write path.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from sqlalchemy import Connection, delete, insert, select, update

from ...engine import annotations
from ...engine.annotations import Annotation
from ...engine.seating import Deadline
from ...engine.seats import SEATS, Seat
from ..database.core import Part, StoreCore
from ..database.models import (
    CredentialChangeRow,
    CredentialRow,
    GameRow,
    RoundRow,
    SpectatorLinkRow,
)
from ..errors import RoundNotFound
from ..games.registry import check_digest, spectator_row
from ..games.results import ExecuteResult
from ..games.writes import Writes, checked_id, unknown_change

MAX_DELAY = 3600  # seconds a spectator's link may lag behind the table

#: statements changed with a row: (the transaction, its moment)
Change = Callable[[Connection, datetime], None]


class Credentials(Part):
    """``replace_seat_token``, ``set_spectator``, ``set_round_spectator``,
    ``spectator_delay``, ``round_of``, ``round_delay``, ``round_spectator_delay`` and
    ``changes_since``."""

    def __init__(self, core: StoreCore, writes: Writes) -> None:
        super().__init__(core)
        self.writes = writes

    # -- changes -----------------------------------------------------------------------------
    def replace_seat_token(
        self,
        game_id: str,
        seat: Seat,
        token_hash: str,
        label: str | None,
        command_id: str,
        *,
        name: str | None = None,
        player_id: str | None = None,
        deadline: Deadline = "fresh",
    ) -> ExecuteResult:
        """The seat's token becomes ``token_hash`` (a substitute sits down; the bot, if it
        played the seat, hands it over): a ``seat_taken`` row in the same transaction,
        and the seat's name becomes ``name`` (the game's ``players``: every page, the
        room, the listing and the results name the substitute from then on; no name: the
        seat is named by its wind, never by the player replaced). ``player_id``: the
        substitute's own id on the platform; ``deadline``: ``fresh`` (the step's whole
        time from now) or ``kept``. A retry with the same command id stores the row once
        and sets the token it brings (the link of a lost answer stops working)."""

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
            players = conn.execute(select(GameRow.players).where(GameRow.id == game_id)).scalar()
            named = {**(players or {}), seat.value: name}  # in the seats' order
            named = {s.value: named[s.value] for s in SEATS if named.get(s.value)}
            conn.execute(update(GameRow).where(GameRow.id == game_id).values(players=named))
            log_change(conn, game_id, seat.value, now)

        annotation = annotations.substitute(
            seat, label, name=name, player_id=player_id, deadline=deadline
        )
        return self._with_row(game_id, annotation, command_id, change)

    def set_spectator(
        self,
        game_id: str,
        token_hash: str | None,
        delay: int,
        command_id: str,
        *,
        live: bool = False,
    ) -> int | None:
        """The table's spectator link: a new one (``token_hash``, its own ``delay``
        seconds; the old one stops working) or none (revoked), with its ``spectator_link``
        row. A table of a round is shown at least the round's delay behind on every
        link, unless the link is ``live`` (a featured table's, by the director's explicit
        choice). Returns the delay the new link is shown at (``None``: revoked)."""
        action = "revoked" if token_hash is None else "issued"
        shown = None
        if token_hash is not None:
            of_round = self.round_of(game_id)
            shown = shown_delay(delay, live, of_round[1] if of_round else 0)

        def change(conn: Connection, now: datetime) -> None:
            conn.execute(delete(SpectatorLinkRow).where(SpectatorLinkRow.game_id == game_id))
            if token_hash is not None:
                row = spectator_row(game_id, token_hash, 0 if live else delay, now, live=live)
                conn.execute(insert(SpectatorLinkRow).values(row))
            log_change(conn, game_id, "spectator", now)

        annotation = annotations.spectator_link(action, shown, live=live and shown is not None)
        self._with_row(game_id, annotation, command_id, change)
        return shown

    def set_round_spectator(self, round_id: str, token_hash: str | None, delay: int) -> None:
        """The round's spectator link (it lists the round and opens each of its tables),
        or none: one transaction (a round has no chain of its own). A new link's delay
        becomes the round's, which every link of its tables keeps (but a live one); a
        revoked link leaves the round's delay as it was."""
        if token_hash is not None:
            check_digest(token_hash)
        values: dict[str, object] = {"spectator_hash": token_hash}
        if token_hash is not None:
            values["spectator_delay"] = delay
        with self.core.writing() as conn:
            moved = conn.execute(update(RoundRow).where(RoundRow.id == round_id).values(values))
            if moved.rowcount != 1:
                raise RoundNotFound(f"There is no round {round_id!r}.")
            log_change(conn, round_id, "spectator", datetime.now(UTC))

    def _with_row(
        self, game_id: str, annotation: Annotation, command_id: str, change: Change
    ) -> ExecuteResult:
        command_id = checked_id(command_id)
        plan = self.writes.annotation_plan(game_id, annotation, command_id, cached=True)
        with self.writes.transaction(unknown_change(command_id)) as work:
            written = work.run(plan)
            assert written is not None
            change(work.conn, datetime.now(UTC))
        return written.result

    # -- reads -------------------------------------------------------------------------------
    def spectator_delay(self, game_id: str, token_hash: str) -> int | None:
        """The delay the spectator link ``token_hash`` opens ``game_id`` with: the
        table's own link (at least its round's delay, unless live), or its round's;
        ``None`` when it opens nothing."""
        with self.core.reading() as conn:
            own = conn.execute(
                select(SpectatorLinkRow.delay, SpectatorLinkRow.live, RoundRow.spectator_delay)
                .join(GameRow, GameRow.id == SpectatorLinkRow.game_id)
                .outerjoin(RoundRow, RoundRow.id == GameRow.round_id)
                .where(
                    SpectatorLinkRow.game_id == game_id, SpectatorLinkRow.token_hash == token_hash
                )
            ).first()
            if own is not None:
                return shown_delay(own.delay, own.live, own.spectator_delay or 0)
            of_round = conn.execute(
                select(RoundRow.spectator_delay)
                .join(GameRow, GameRow.round_id == RoundRow.id)
                .where(GameRow.id == game_id, RoundRow.spectator_hash == token_hash)
            ).scalar()
        return None if of_round is None else int(of_round)

    def round_of(self, game_id: str) -> tuple[str, int] | None:
        """The round ``game_id`` is a table of, and the round's spectator delay; ``None``
        for a single game."""
        with self.core.reading() as conn:
            found = conn.execute(
                select(RoundRow.id, RoundRow.spectator_delay)
                .join(GameRow, GameRow.round_id == RoundRow.id)
                .where(GameRow.id == game_id)
            ).first()
        return None if found is None else (found.id, int(found.spectator_delay or 0))

    def round_delay(self, round_id: str) -> int:
        """The round's spectator delay (kept when its link is revoked; 0: none)."""
        with self.core.reading() as conn:
            found = conn.execute(
                select(RoundRow.spectator_delay).where(RoundRow.id == round_id)
            ).first()
        if found is None:
            raise RoundNotFound(f"There is no round {round_id!r}.")
        return int(found.spectator_delay or 0)

    def round_spectator_delay(self, round_id: str, token_hash: str) -> int | None:
        """The delay of the round's spectator link, if ``token_hash`` is it."""
        with self.core.reading() as conn:
            found = conn.execute(
                select(RoundRow.spectator_delay).where(
                    RoundRow.id == round_id, RoundRow.spectator_hash == token_hash
                )
            ).scalar()
        return None if found is None else int(found)

    def changes_since(self, moment: datetime) -> set[tuple[str, datetime, str]]:
        """Each change after ``moment``: (game, round or organiser; when; what), so a
        poller that looks back past its last look (a change commits a little after the
        time it records) can tell a change it saw already."""
        with self.core.reading() as conn:
            rows = conn.execute(
                select(
                    CredentialChangeRow.id, CredentialChangeRow.changed_at, CredentialChangeRow.what
                ).where(CredentialChangeRow.changed_at > moment)
            ).all()
            return {(r.id, r.changed_at, r.what) for r in rows}


def shown_delay(own: int, live: bool, round_delay: int) -> int:
    """The delay a table's link is shown at: its own, at least its round's (0: a single
    game), but none for a featured table's live link."""
    return 0 if live else max(int(own), int(round_delay))


def log_change(conn: Connection, subject: str, what: str, now: datetime) -> None:
    """Log the change for every process's watch; forget what no watch reads any more."""
    conn.execute(delete(CredentialChangeRow).where(CredentialChangeRow.changed_at < now - KEPT))
    conn.execute(insert(CredentialChangeRow).values(id=subject, changed_at=now, what=what))


#: how far back a poll looks past its last one (a change's commit follows its moment)
POLL_MARGIN = timedelta(seconds=5)
#: how long a change is kept for the watches (far longer than a poll's look back)
KEPT = timedelta(minutes=1)

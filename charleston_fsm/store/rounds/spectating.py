"""A table and a round as a spectator's link shows them, behind the link's delay.

What a spectator may see is decided by :mod:`charleston_fsm.engine.spectators` (no tile,
ever); this part decides *when*. A link's delay is applied here, by the service, never
by the page: with a delay of ``d`` seconds a spectator is shown the table as it stood at
the last row written at least ``d`` seconds ago (``the cut``), and only the rows up to
it. All rows of one command share their moment, so a cut never splits a command. The
table behind a delay is replayed from the checked rows up to the cut (as ``replay``
does), and its clock told from those rows (``spectators.clock_from_rows``): nothing
newer than the delay is in any answer. A game whose first row is newer than the delay
is not shown yet (:class:`BehindDelay`, with when it will be).

Without a delay a spectator is shown the table now, from the projection and the clock
document, in one read. A round's spectator link lists the round's tables, each where it
stood behind the link's delay (its step, its end), as that table's view shows it. A
table replayed behind a delay is kept by its last row shown (the rows up to it never
change), so many spectators polling a round replay each table once per row that comes
of age. A part of the store (:mod:`.core`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import bindparam, select

from ...engine import seating, spectators
from ...engine.clock_state import stored
from ...engine.view_models import AsOf
from ...ledger.hashing import canonical_time, utc
from ...ledger.rows import StoredEvent
from ...ledger.verify import fold_rows
from ..database.core import Part, StoreCore
from ..database.models import EventRow, GameRow, ProjectionRow, RoundRow
from ..errors import GameNotFound, GameQuarantined, RoundNotFound
from ..evidence import integrity
from ..games.reads import CheckedReads, check_could_exist

#: tables kept as replayed behind a delay (a few rounds' worth; emptied when full)
REPLAYS_KEPT = 2048

_LIVE = (
    select(
        ProjectionRow.snapshot,
        GameRow.clock,
        GameRow.last_seq,
        GameRow.players,
        integrity.QUARANTINED.label("quarantined"),
        select(EventRow.created_at)
        .where(EventRow.game_id == GameRow.id, EventRow.seq == GameRow.last_seq)
        .scalar_subquery()
        .label("moved_at"),
    )
    .join(GameRow, GameRow.id == ProjectionRow.game_id)
    .where(ProjectionRow.game_id == bindparam("b_game"))
)


class BehindDelay(Exception):
    """Nothing of the game is old enough for the link's delay yet."""

    def __init__(self, shown_at: datetime) -> None:
        super().__init__(f"shown from {canonical_time(shown_at)}")
        self.shown_at = shown_at


@dataclass(frozen=True)
class Spectated:
    """A table as a spectator's link shows it: its view and its players."""

    view: dict[str, Any]
    players: dict[str, Any]


class Spectating(Part):
    """``view``, ``events`` and ``round_tables`` as a spectator's link shows them."""

    def __init__(self, core: StoreCore, reads: CheckedReads) -> None:
        super().__init__(core)
        self.reads = reads
        #: (game, last row shown, delay) -> the table shown behind that delay
        self._replayed: dict[tuple[str, int, int], Spectated] = {}

    def view(self, game_id: str, delay: int, now: datetime | None = None) -> Spectated:
        """The table as a spectator sees it, ``delay`` seconds behind (0: now)."""
        check_could_exist(game_id)
        if delay <= 0:
            with self.core.reading() as conn:
                found = conn.execute(_LIVE, {"b_game": game_id}).first()
            if found is None:
                raise GameNotFound(f"There is no game {game_id!r}.")
            if found.quarantined:
                raise integrity.refuse(game_id)
            as_of = AsOf(seq=found.last_seq, at=canonical_time(utc(found.moved_at)), delay=0)
            table = self.core.load(found.snapshot)
            shown = spectators.live_clock(stored(found.clock))
            view = spectators.spectator_view(table, shown, as_of, found.players)
            return Spectated(view, found.players)
        rows = self._up_to_cut(self.reads.events(game_id), delay, now)
        cut = rows[-1]
        key = (game_id, cut.seq, delay)
        kept = self._replayed.get(key)
        if kept is not None:
            return kept
        as_of = AsOf(seq=cut.seq, at=canonical_time(cut.created_at), delay=delay)
        table = fold_rows(rows)
        shown = spectators.clock_from_rows(r.event for r in rows)
        players = seating.names_after(rows[0].payload.get("players"), (r.event for r in rows))
        spectated = Spectated(spectators.spectator_view(table, shown, as_of, players), players)
        if len(self._replayed) >= REPLAYS_KEPT:
            self._replayed.clear()
        self._replayed[key] = spectated
        return spectated

    def events(
        self, game_id: str, after: int, delay: int, now: datetime | None = None
    ) -> tuple[list[dict[str, Any]], list[StoredEvent]]:
        """The rows after ``after`` a spectator may be sent now (redacted), and the rows
        after them that wait for the delay (not to be sent: when they become due)."""
        rows = self.reads.events(game_id, after=after)
        if delay > 0:
            cut = _cut_moment(delay, now)
            waiting = [r for r in rows if utc(r.created_at) > cut]
            rows = [r for r in rows if utc(r.created_at) <= cut]
        else:
            waiting = []
        return [shown(r) for r in rows], waiting

    def _up_to_cut(
        self, rows: list[StoredEvent], delay: int, now: datetime | None
    ) -> list[StoredEvent]:
        cut = _cut_moment(delay, now)
        kept = [r for r in rows if utc(r.created_at) <= cut]
        if not kept:
            raise BehindDelay(utc(rows[0].created_at) + timedelta(seconds=delay))
        return kept

    def round_tables(
        self, round_id: str, delay: int, now: datetime | None = None
    ) -> dict[str, Any]:
        """The round's tables for its spectator link: what creation fixed, and where each
        table stood ``delay`` seconds ago (0: now) as its own view shows it."""
        with self.core.reading() as conn:
            found = conn.execute(select(RoundRow).where(RoundRow.id == round_id)).first()
            if found is None:
                raise RoundNotFound(f"There is no round {round_id!r}.")
            games = conn.execute(
                select(GameRow.id, GameRow.round_table, GameRow.players)
                .where(GameRow.round_id == round_id)
                .order_by(GameRow.round_table)
            ).all()
        labels = (found.settings or {}).get("labels") or []
        tables = []
        for g in games:
            entry: dict[str, Any] = {
                "table": g.round_table,
                "game_id": g.id,
                "label": labels[g.round_table - 1] if g.round_table - 1 < len(labels) else None,
                "players": g.players,
            }
            entry.update(self._where(g.id, delay, now))
            tables.append(entry)
        return {"round_id": found.id, "name": found.name, "delay": delay, "tables": tables}

    def _where(self, game_id: str, delay: int, now: datetime | None) -> dict[str, Any]:
        """One table of a round as its spectator link shows it: its step and its end, as
        of the moment shown (``as_of``; ``None`` with ``shown_from`` while nothing is old
        enough, or when the table is quarantined: nothing of its record is shown)."""
        nothing: dict[str, Any] = {
            "as_of": None,
            "shown_from": None,
            "phase": None,
            "pass_number": None,
            "pass_total": None,
            "step": None,
            "state_labels": [],
            "finished": False,
            "ending": None,
        }
        try:
            shown = self.view(game_id, delay, now)
        except BehindDelay as exc:
            return {**nothing, "shown_from": canonical_time(exc.shown_at)}
        except GameQuarantined:
            return nothing
        game = shown.view["game"]
        return {
            **nothing,
            "players": shown.players,
            "as_of": shown.view["as_of"],
            "phase": game["phase"],
            "pass_number": game["pass_number"],
            "pass_total": game["pass_total"],
            "step": game["steps"][0]["label"] if game["steps"] else None,
            "state_labels": game["state_labels"],
            "finished": game["finished"],
            "ending": (game["ending"] or {}).get("text"),
        }


def shown(row: StoredEvent) -> dict[str, Any]:
    """One row as a spectator is sent it: redacted, with its seq and moment (no hash:
    a hash over a few tile ids could be brute-forced back to them)."""
    data = spectators.redact(row.event)
    data["seq"] = row.seq
    data["created_at"] = canonical_time(row.created_at)
    return data


def _cut_moment(delay: int, now: datetime | None) -> datetime:
    return (utc(now) if now is not None else datetime.now(UTC)) - timedelta(seconds=delay)

"""Reads of a game's rows that check what they serve.

A seat must never get a payload built from a row written outside the service, so
:meth:`CheckedReads.events` re-hashes and links every row it returns (about 15 µs a row)
and refuses rows beyond the game's recorded head; anything amiss makes the store verify
the game, which quarantines it. ``replay`` folds only rows that passed, and a fold that
fails is handed to verify too. The table and views a request needs come from the
projection, through the thread's warm table. A part of the store (:mod:`.core`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sqlalchemy import bindparam, select

from ...engine import clocks, errors
from ...engine.clock_state import Clock, stored
from ...engine.seats import Seat
from ...engine.table import Table
from ...engine.views import director_view, seat_view
from ...ledger.hashing import GENESIS
from ...ledger.rows import StoredEvent
from ...ledger.verify import Verification, fold_rows
from ..database.core import Part, StoreCore
from ..database.models import MAX_GAME_ID, MAX_SEQ, EventRow, GameRow, ProjectionRow
from ..errors import GameNotFound
from ..evidence import integrity

_READ_HEAD = select(GameRow.last_seq, integrity.QUARANTINED.label("quarantined")).where(
    GameRow.id == bindparam("b_game")
)

_READ_PLAYERS = select(GameRow.players).where(GameRow.id == bindparam("b_game"))

#: how many games' names a process keeps (a name changes only with a seat's token)
NAMES_KEPT = 4096

_BEYOND_HEAD = (
    select(EventRow.seq)
    .where(
        EventRow.game_id == bindparam("b_game"),
        EventRow.seq
        > select(GameRow.last_seq).where(GameRow.id == bindparam("b_game")).scalar_subquery(),
    )
    .limit(1)
)

_READ_PROJECTION = (
    select(
        ProjectionRow.snapshot,
        GameRow.clock,
        GameRow.players,
        integrity.QUARANTINED.label("quarantined"),
    )
    .join(GameRow, GameRow.id == ProjectionRow.game_id)
    .where(ProjectionRow.game_id == bindparam("b_game"))
)


def _names(players: Mapping[str, Any] | None) -> dict[str, str]:
    """The names a view carries: the seats given a name, as text."""
    return {seat: str(name) for seat, name in (players or {}).items() if name}


def could_exist(game_id: str) -> bool:
    """Whether some game could have this id: the column's length, printable text (and
    PostgreSQL refuses NUL in text): any other id names no game, without asking."""
    return 0 < len(game_id) <= MAX_GAME_ID and game_id.isprintable()


def check_could_exist(game_id: str) -> None:
    if not could_exist(game_id):
        raise GameNotFound(
            f"There is no game with this id: game ids have 1 to {MAX_GAME_ID} printable characters."
        )


class CheckedReads(Part):
    """``table``, ``view``, ``view_of`` and ``ensure_open`` from the projection;
    ``events`` and ``replay`` over rows that were checked first.

    ``verify``: what decides about rows that fail the check (the integrity part's
    ``verify``, which quarantines a game that fails).
    """

    def __init__(self, core: StoreCore, verify: Callable[[str], Verification]) -> None:
        super().__init__(core)
        self.verify = verify
        self._names: dict[str, dict[str, str]] = {}

    # -- reading ----------------------------------------------------------------------------
    def table(self, game_id: str) -> Table:
        """The game's table now, from its projection (one statement); the caller's own."""
        return Table.restore(self._snapshot(game_id))

    def view(self, game_id: str, seat: Seat | str | None = None) -> dict[str, Any]:
        """``views.seat_view`` (or ``director_view`` for ``None``) of the game now.

        Same result as ``seat_view(store.reads.table(game_id), seat)`` without building a chart
        per call (the projection is loaded into this thread's warm table, ~0.05 ms
        instead of ~2 ms): for request handlers and bots that only need the view.
        """
        found = self._projection(game_id)
        clock = stored(found.clock)
        return self.view_of(found.snapshot, seat, clock, _names(found.players))

    def view_of(
        self,
        snapshot: Mapping[str, Any],
        seat: Seat | str | None = None,
        clock: Clock | None = None,
        players: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """The view of a table snapshot (an ``ExecuteResult``'s): no database read.

        ``clock``: the game's clock (an ``ExecuteResult``'s, or ``stored`` of the
        column): a seat sees only its own deadline; ``players``: the game's names
        (:meth:`players`).
        """
        table = self.core.load(snapshot)
        if seat is None:
            return director_view(table, clocks.director_clock(clock), players)
        seat = Seat(seat)
        return seat_view(
            table,
            seat,
            clocks.seat_clock(clock, seat),
            clocks.withheld(clock, table, seat),
            players,
        )

    def players(self, game_id: str) -> dict[str, str]:
        """The players' names of a game by seat (only named seats). Set when the game is
        created and changed only with a seat's token (a substitute's name), so each
        process reads them once per game (up to :data:`NAMES_KEPT`) and again after
        :meth:`forget_names` (the credential watch's, within a second of a change)."""
        names = self._names.get(game_id)
        if names is None:
            check_could_exist(game_id)
            with self.core.reading() as conn:
                row = conn.execute(_READ_PLAYERS, {"b_game": game_id}).first()
            if row is None:
                raise GameNotFound(f"There is no game {game_id!r}.")
            if len(self._names) >= NAMES_KEPT:
                self._names.clear()
            names = self._names[game_id] = _names(row.players)
        return names

    def forget_names(self, game_ids: set[str] | None = None) -> None:
        """Read these games' names again (``None``: every game's): a seat changed hands."""
        if game_ids is None:
            self._names.clear()
        for game_id in game_ids or ():
            self._names.pop(game_id, None)

    def _snapshot(self, game_id: str) -> dict[str, Any]:
        return self._projection(game_id).snapshot  # type: ignore[no-any-return]

    def _projection(self, game_id: str) -> Any:
        """The projection's snapshot and the game's clock document, in one statement."""
        check_could_exist(game_id)
        with self.core.reading() as conn:
            found = conn.execute(_READ_PROJECTION, {"b_game": game_id}).first()
        if found is None:
            raise GameNotFound(f"There is no game {game_id!r}.")
        if found.quarantined:
            raise integrity.refuse(game_id)
        return found

    def ensure_open(self, game_id: str) -> None:
        """Raise :class:`GameQuarantined` (or :class:`GameNotFound`) unless the game is open."""
        self._snapshot(game_id)

    def events(self, game_id: str, after: int = 0) -> list[StoredEvent]:
        """The rows after ``after``, each checked before it is served (see ``_read_events``).

        Rows that fail the check make the store verify the game; a failed verify
        quarantines it and this raises :class:`GameQuarantined` instead of serving them.
        """
        check_could_exist(game_id)
        after = min(after, MAX_SEQ)  # the column's bound: a larger int overflows its type
        for _ in range(2):
            rows, intact = self._read_events(game_id, after)
            if intact:
                return rows
            if not self.verify(game_id).ok:
                break
        raise integrity.refuse(game_id)

    def _read_events(self, game_id: str, after: int) -> tuple[list[StoredEvent], bool]:
        """Rows from ``after`` on (row ``after`` too, for its hash), then the game's head:
        every row a command committed is then within ``last_seq``, so a row beyond it
        was written outside the service. Intact: contiguous, linked, hashes matching."""
        with self.core.reading() as conn:
            rows = [
                StoredEvent.from_row(r)
                for r in conn.execute(
                    select(EventRow)
                    .where(EventRow.game_id == game_id, EventRow.seq >= after)
                    .order_by(EventRow.seq)
                ).all()
            ]
            game = conn.execute(_READ_HEAD, {"b_game": game_id}).first()
        if game is None:
            raise GameNotFound(f"There is no game {game_id!r}.")
        if game.quarantined:
            raise integrity.refuse(game_id)
        prev: str | None = GENESIS
        if after > 0:
            if rows and rows[0].seq == after:
                prev = rows.pop(0).hash
            elif after <= game.last_seq:
                return rows, False  # row ``after`` is gone
            else:
                prev = None
        if rows and rows[0].seq != after + 1:
            return rows, False
        return rows, integrity.events_intact(rows, game.last_seq, prev)

    def refuse_beyond_head(self, game_id: str) -> None:
        """Raise :class:`GameQuarantined` when rows are stored beyond the game's recorded
        head (after verify confirms it): a command's seq would collide with them forever.
        Asked only after a command lost an insert race, so it costs nothing otherwise."""
        with self.core.reading() as conn:
            beyond = conn.execute(_BEYOND_HEAD, {"b_game": game_id}).first()
        if beyond is not None and not self.verify(game_id).ok:
            raise integrity.refuse(game_id)

    def replay(self, game_id: str, at: int | None = None) -> Table:
        """The table as it stood at event ``at`` (default: the last), folded through the chart.

        All rows of one command are written together, so a seq inside a command's rows
        gives the table after that command: what every reader saw once that seq existed.
        Rows that do not fold quarantine the game (after verify confirms it).
        """
        rows = self.events(game_id)
        try:
            return fold_rows(rows, at)
        except errors.CharlestonError as exc:
            if exc.code == "event_not_found":
                raise
            failure: Exception = exc
        except Exception as exc:  # a malformed row: verify decides
            failure = exc
        if not self.verify(game_id).ok:
            raise integrity.refuse(game_id) from None
        raise failure

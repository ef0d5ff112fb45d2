"""Rounds: the tables of one session of a tournament, created together, listed together.

A round's tables are made first, without the database (:meth:`GameRegistry.new_game_rows`),
then written in one short write transaction (its row, then every table through
:meth:`GameRegistry.insert_games`): a client sees all of its tables or none, and the other
tables' commands and clocks do not wait while a big round is being made. Its listing is
one query over the round's games and projections; each table's state comes from the
thread's warm table (``view_of``), not a chart per table.
A part of the store (:mod:`.core`) over the games part and the reads part.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import bindparam, func, insert, select

from ...engine import clock_views
from ...engine.calls import shown_calls
from ...engine.clock_state import stored
from ...engine.errors import SetupError
from ...engine.events import ANNOTATION_TYPES
from ...engine.seats import SEATS
from ...ledger.hashing import canonical_time, utc
from ...rulebook import enforces
from ..database.core import Part, StoreCore
from ..database.models import MAX_GAME_ID, EventRow, GameRow, ProjectionRow, QuarantineRow, RoundRow
from ..errors import InvalidRound, RoundNotFound
from ..evidence import integrity
from ..games.new_game import NewGame
from ..games.reads import CheckedReads
from ..games.registry import GameRegistry, check_digest
from ..platform import feed

if TYPE_CHECKING:
    from ...engine.table import Table

MAX_TABLES = 500  # tables of one round: one transaction, one listing

_ROUND_TABLES = (
    select(
        GameRow.id,
        GameRow.round_table,
        GameRow.last_seq,
        GameRow.players,
        GameRow.clock,
        ProjectionRow.snapshot,
        select(func.count())
        .select_from(QuarantineRow)
        .where(QuarantineRow.game_id == GameRow.id, integrity.ACTIVE)
        .scalar_subquery()
        .label("quarantined"),
        select(func.max(EventRow.created_at))
        .where(EventRow.game_id == GameRow.id, EventRow.type.not_in(sorted(ANNOTATION_TYPES)))
        .scalar_subquery()
        .label("moved_at"),
    )
    .join(ProjectionRow, ProjectionRow.game_id == GameRow.id)
    .where(GameRow.round_id == bindparam("b_round"))
    .order_by(GameRow.round_table)
)


@dataclass(frozen=True)
class RoundTable:
    """One table of a round as its director sees it at a glance (no tiles)."""

    table: int
    game_id: str
    ruleset: str | None
    state: list[str]
    state_labels: list[str]
    awaiting: list[str]
    late: list[str]
    finished: bool
    ended_reason: str | None
    quarantined: bool
    last_seq: int
    players: dict[str, Any]
    #: how the Charleston ended, in words (the view's ``ending.text``); None while it runs
    ending: str | None = None
    #: when the table last moved (its last row that is not a clock's or a director's):
    #: whoever is awaited has waited since then
    moved_at: str | None = None
    #: the clock at a glance (paused, held, each seat's deadline), ``None`` when off
    clock: dict[str, Any] | None = None
    #: open calls to the director by seat: when, and the caller's reason
    calls: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RoundListing:
    round_id: str
    name: str | None
    created_at: datetime
    settings: dict[str, Any]
    tables: list[RoundTable]

    @property
    def finished(self) -> int:
        return sum(t.finished for t in self.tables)

    def to_dict(self) -> dict[str, Any]:
        return {
            "round_id": self.round_id,
            "name": self.name,
            "created_at": canonical_time(self.created_at),
            "settings": self.settings,
            "counts": {
                "tables": len(self.tables),
                "finished": self.finished,
                "active": len(self.tables) - self.finished,
                "late_seats": sum(len(t.late) for t in self.tables),
                "quarantined": sum(t.quarantined for t in self.tables),
                "held": sum(bool((t.clock or {}).get("held")) for t in self.tables),
                "paused": sum(bool((t.clock or {}).get("paused")) for t in self.tables),
                "calls": sum(len(t.calls) for t in self.tables),
            },
            "tables": [asdict(t) for t in self.tables],
        }


class Rounds(Part):
    """``create_round``, ``round_opens`` and ``round_listing``."""

    def __init__(self, core: StoreCore, registry: GameRegistry, reads: CheckedReads) -> None:
        super().__init__(core)
        self.registry = registry
        self.reads = reads

    @enforces("SVC-09")
    def create_round(
        self,
        tables: Sequence[NewGame],
        *,
        token_hash: str,
        name: str | None = None,
        settings: Mapping[str, Any] | None = None,
        round_id: str | None = None,
        spectator: tuple[str, int] | None = None,
        organiser_id: str | None = None,
    ) -> tuple[str, list[str]]:
        """A round of ``tables`` (each a ``NewGame``: its round, table number and organiser
        are set here), all committed together; returns the round id and the game ids in
        table order (table 1 first).

        A table that cannot be set up raises its error, prefixed with its number, and
        nothing of the round is stored. ``token_hash``: the sha256 of the round
        director's token (it lists the round; each table has its own credentials).
        ``spectator``: the sha256 of the round's spectator link and its delay (seconds).
        ``organiser_id``: the organiser whose key creates it, given to each table too
        (its key directs them all); ``None``: the platform's.
        """
        check_round_size(len(tables))
        if len(token_hash) != 64:
            raise InvalidRound("The round's credential is a sha256 hex digest, not the token.")
        round_id = round_id or uuid.uuid4().hex
        unknown = (
            f"The database connection was lost while round {round_id!r} was being "
            "committed, so it may or may not exist (all of its tables or none). Look it up "
            "by its id, or create the round again: an unused round changes nothing."
        )
        # every table is made (and checked) before the write lock is taken: on SQLite
        # that lock stops every other table's commands and clocks while it is held
        games = []
        for number, spec in enumerate(tables, start=1):
            with numbered(number):
                table = replace(
                    spec, round_id=round_id, round_table=number, organiser_id=organiser_id
                )
                games.append(self.registry.new_game_rows(table))
        if spectator is not None:
            check_digest(spectator[0])
        created_at = datetime.now(UTC)
        with self.core.writing(unknown) as conn:
            conn.execute(
                insert(RoundRow).values(
                    id=round_id,
                    created_at=created_at,
                    name=name,
                    settings=dict(settings or {}),
                    token_hash=token_hash,
                    spectator_hash=spectator[0] if spectator else None,
                    spectator_delay=spectator[1] if spectator else None,
                    organiser_id=organiser_id,
                    tables=len(games),
                )
            )
            entry = {"name": name, "tables": len(games)}
            feed.record(
                conn, [feed.new_entry("round.created", created_at, round_id=round_id, data=entry)]
            )
            self.registry.insert_games(conn, games)
        self.registry.committed(games)
        return round_id, [g.game["id"] for g in games]

    def round_opens(self, round_id: str, token_hash: str) -> bool:
        """Whether ``token_hash`` is the round director's (``RoundNotFound`` if no round)."""
        if not _could_exist(round_id):
            raise RoundNotFound(f"There is no round {round_id[:MAX_GAME_ID]!r}.")
        with self.core.reading() as conn:
            stored = conn.execute(
                select(RoundRow.token_hash).where(RoundRow.id == round_id)
            ).scalar()
        if stored is None:
            raise RoundNotFound(f"There is no round {round_id!r}.")
        return stored == token_hash

    def round_listing(self, round_id: str) -> RoundListing:
        """Every table of the round with its state, from one snapshot of the database."""
        if not _could_exist(round_id):
            raise RoundNotFound(f"There is no round {round_id[:MAX_GAME_ID]!r}.")
        with self.core.reading(snapshot=True) as conn:
            found = conn.execute(select(RoundRow).where(RoundRow.id == round_id)).first()
            if found is None:
                raise RoundNotFound(f"There is no round {round_id!r}.")
            rows = conn.execute(_ROUND_TABLES, {"b_round": round_id}).all()
        return RoundListing(
            round_id=found.id,
            name=found.name,
            created_at=utc(found.created_at),
            settings=found.settings,
            tables=[self._round_table(r) for r in rows],
        )

    def _round_table(self, row: Any) -> RoundTable:
        if row.quarantined:  # nothing is served from its record, state included
            return RoundTable(
                table=row.round_table,
                game_id=row.id,
                ruleset=None,
                state=[],
                state_labels=[],
                awaiting=[],
                late=[],
                finished=False,
                ended_reason=None,
                quarantined=True,
                last_seq=row.last_seq,
                players=row.players,
                moved_at=_moment(row.moved_at),
            )
        clock = stored(row.clock)
        view = self.reads.view_of(row.snapshot, None, clock, row.players)
        game = view["game"]
        return RoundTable(
            table=row.round_table,
            game_id=row.id,
            ruleset=game["ruleset"],
            state=list(game["state"]),
            state_labels=list(game["state_labels"]),
            awaiting=[] if game["finished"] else awaited(self.core.load(row.snapshot), view),
            late=list(clock.late) if clock is not None else [],
            finished=bool(game["finished"]),
            ended_reason=game["ended_reason"],
            quarantined=False,
            last_seq=row.last_seq,
            players=row.players,
            ending=(game["ending"] or {}).get("text"),
            moved_at=_moment(row.moved_at),
            clock=clock_views.glance(clock),
            calls=shown_calls(clock),
        )


def _moment(value: Any) -> str | None:
    return canonical_time(utc(value)) if value is not None else None


@enforces("SVC-09")
def check_round_size(count: int) -> None:
    """Refuse a round of no table or of more than :data:`MAX_TABLES`."""
    if not 1 <= count <= MAX_TABLES:
        raise InvalidRound(
            f"A round has 1 to {MAX_TABLES} tables, not {count}: split a larger event into "
            "several rounds."
        )


def awaited(table: Table, view: Mapping[str, Any]) -> list[str]:
    """The seats the table waits for: during a pass, those that have not confirmed it;
    otherwise each seat with a command left that the table needs (not one it merely may
    give) and has not given it yet (a vote cast, an offer made)."""
    game = view["game"]
    if game["steps"]:  # a pass: the chart's steps name who has not confirmed (no probe)
        pending = {s for step in game["steps"] for s in step["awaiting"]}
        return [s.value for s in SEATS if s.value in pending]
    waiting = []
    for seat in SEATS:
        needed = set(table.allowed_commands(seat)) - OPTIONAL_COMMANDS
        if seat.value in (game.get("votes") or {}):
            needed.discard("vote")  # what is left is a late objection, which may wait
        if (view["seats"][seat.value] or {}).get("offer") is not None:
            needed.discard("offer_courtesy")
        if needed:
            waiting.append(seat.value)
    return waiting


#: commands a seat may give but the table does not wait for
OPTIONAL_COMMANDS = frozenset(
    {"declare_mah_jongg", "withdraw_pass", "change_pass", "request_ding_dong"}
)


class numbered(AbstractContextManager[None]):
    """Re-raise a table's setup error with its number in front (the round's tables are
    checked by the API, then by the store: both name the table the same way)."""

    def __init__(self, number: int) -> None:
        self.number = number

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        if isinstance(exc, SetupError):
            raise type(exc)(f"Table {self.number}: {exc.message}", rule=exc.rule) from None


def _could_exist(round_id: str) -> bool:
    return 0 < len(round_id) <= MAX_GAME_ID and round_id.isprintable()

"""The event store: games as append-only, hash-chained event rows plus a projection.

One command is one transaction: lock the game's row, continue the table from its
projection, run the command through the chart, append every event it caused, move the
projection and ``last_seq``, remember the command id, notify listeners, commit. A
reader sees all of a command or none of it.
"""

from __future__ import annotations

import random
import re
import threading
import uuid
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import contextmanager, nullcontext, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from alembic import command as alembic_command
from pydantic import ValidationError
from sqlalchemy import (
    Connection,
    Engine,
    bindparam,
    create_engine,
    event,
    insert,
    select,
    text,
)
from sqlalchemy.engine import URL
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError

from ..engine import clocks, errors
from ..engine.commands import Command, parse_command
from ..engine.events import Event
from ..engine.rulesets import get_ruleset
from ..engine.seats import SEATS, Seat
from ..engine.table import DONE, Table
from ..engine.tiles import Deal
from ..engine.views import director_view, seat_view
from . import commands, integrity
from .anchors import AnchorKey, load_key
from .commands import NOTIFY_CHANNEL
from .deadlines import ClockFiring, ClockWorker
from .errors import (
    CommandIdConflict,
    Conflict,
    GameNotFound,
    InvalidGameSetup,
    OutcomeUnknown,
    SchemaNotCurrent,
    StoreUnavailable,
)
from .hashing import GENESIS, canonical_time, utc
from .models import AnchorRow, CredentialRow, EventRow, GameRow, ProjectionRow
from .reads import CheckedReads, check_could_exist, could_exist
from .rounds import Rounds
from .rows import StoredEvent
from .schema import SchemaState, SchemaStatus, alembic_config, schema_state
from .tamper import TamperEvidence
from .urls import resolve_url

MAX_COMMAND_ID = 128  # events.command_id, commands.command_id
ROLES = frozenset([*(s.value for s in SEATS), "director"])
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class ExecuteResult:
    """What one command's transaction produced, so an answer needs no second read.

    ``snapshot`` is the table the transaction left (the projection it wrote; for a
    duplicate, the projection it read under the game's lock): answers are built from it
    with :meth:`GameStore.view_of`, never from a read after the commit, which could fail
    and turn a stored command into an error.
    """

    events: list[StoredEvent]
    duplicate: bool = False
    snapshot: dict[str, Any] = field(default_factory=dict, repr=False)
    command_id: str | None = None
    clock: dict[str, Any] | None = field(default=None, repr=False)

    @property
    def last_seq(self) -> int:
        return self.events[-1].seq if self.events else 0


@dataclass(frozen=True)
class _Locked:
    """What a write transaction read under the game's lock."""

    last_seq: int
    snapshot: dict[str, Any]
    head_hash: str
    clock: dict[str, Any] | None


@dataclass(frozen=True)
class GameSummary:
    id: str
    ruleset: str
    options: dict[str, Any]
    players: dict[str, Any]
    created_at: datetime
    last_seq: int
    status: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "ruleset": self.ruleset,
            "options": self.options,
            "players": self.players,
            "created_at": canonical_time(self.created_at),
            "last_seq": self.last_seq,
            "status": self.status,
        }


@dataclass(frozen=True)
class NewGameRows:
    """The rows of one new game, made before any transaction (``new_game_rows``)."""

    game: dict[str, Any]
    event: dict[str, Any]
    anchor: dict[str, Any] | None
    projection: dict[str, Any]
    credentials: list[dict[str, Any]]


@dataclass
class _WarmTables(threading.local):
    """One table per chart class and thread, re-loaded for each command (Table.load)."""

    tables: dict[type, Table] = field(default_factory=dict)


@dataclass
class _Sealing:
    """The store's one sealing thread, made on first use, and the seals it has to do."""

    pool: ThreadPoolExecutor | None = None
    pending: list[Future[None]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


UNKNOWN_OUTCOME = (
    "The database connection was lost during the commit, so the change may or may not be "
    "stored: read the game (or run verify) before trying again."
)


class GameStore(CheckedReads, TamperEvidence, Rounds, ClockWorker):
    """Games on PostgreSQL (psycopg 3) or SQLite; see ``docs/architecture.md``."""

    def __init__(
        self,
        url: str | URL | None = None,
        *,
        echo: bool = False,
        anchor_key: AnchorKey | None = None,
    ) -> None:
        self.url = resolve_url(url)
        self.dialect = self.url.get_backend_name()
        self.engine: Engine = self._make_engine(echo)
        self._warm = _WarmTables()
        self._anchor_key = anchor_key
        self._sealing = _Sealing()

    @property
    def anchor_key(self) -> AnchorKey:
        """The key that signs anchors (``anchors.load_key`` on first use, when not given)."""
        if self._anchor_key is None:
            self._anchor_key = load_key()
        return self._anchor_key

    def __repr__(self) -> str:
        return f"GameStore({self.url.render_as_string(hide_password=True)!r})"

    # -- connections ----------------------------------------------------------------------
    def _make_engine(self, echo: bool) -> Engine:
        if self.dialect == "sqlite":
            engine = create_engine(self.url, echo=echo, connect_args={"timeout": 30})

            @event.listens_for(engine, "connect")
            def _sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
                dbapi_connection.isolation_level = None  # BEGIN is ours, see below
                cursor = dbapi_connection.cursor()
                cursor.execute("PRAGMA journal_mode=WAL")
                # durable commits, whatever the build's default (docs/store.md)
                cursor.execute("PRAGMA synchronous=FULL")
                cursor.execute("PRAGMA busy_timeout=30000")
                cursor.execute("PRAGMA foreign_keys=ON")
                cursor.close()

            @event.listens_for(engine, "begin")
            def _sqlite_begin(connection: Connection) -> None:
                # A writer takes SQLite's write lock at BEGIN, so two commands to any
                # game run one after the other; readers never wait (WAL).
                write = connection.get_execution_options().get("charleston_write")
                connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

            return engine
        if self.dialect == "postgresql":
            return create_engine(self.url, echo=echo, pool_pre_ping=True)
        raise InvalidGameSetup(
            f"The store runs on PostgreSQL or SQLite, not {self.dialect!r}.",
        )

    @contextmanager
    def _writing(
        self, unknown: str = UNKNOWN_OUTCOME, game_id: str | None = None
    ) -> Iterator[Connection]:
        """A write transaction; database failures become typed store errors.

        Where it failed decides what callers are told. Before the commit: nothing was
        stored (``StoreUnavailable``, ``Conflict`` …). During the commit: the commit may
        have reached the database before the connection died, so ``OutcomeUnknown``
        (message ``unknown``), never "nothing was stored". After it (handing the
        connection back to the pool): the transaction is stored, nothing is raised.
        ``game_id``: a command's game, whose lost insert race may instead be a row stored
        beyond its head (``refuse_beyond_head``).
        """
        phase = "work"
        try:
            with self.engine.connect() as conn:
                conn.execution_options(charleston_write=True)
                with conn.begin():
                    yield conn
                    phase = "commit"
                phase = "committed"
        except errors.CharlestonError:
            raise
        except DBAPIError as exc:
            if phase == "commit":
                raise OutcomeUnknown(unknown) from exc
            if phase == "work":
                typed = self._typed(exc)
                if game_id is not None and isinstance(typed, Conflict):
                    self.refuse_beyond_head(game_id)
                raise typed from exc

    @contextmanager
    def _reading(self, *, snapshot: bool = False) -> Iterator[Connection]:
        """A read transaction; ``snapshot``: every statement sees the same moment
        (PostgreSQL REPEATABLE READ; a SQLite read transaction always does)."""
        try:
            with self.engine.connect() as conn:
                if snapshot and self.dialect == "postgresql":
                    conn.execution_options(isolation_level="REPEATABLE READ")
                with conn.begin():
                    yield conn
        except errors.CharlestonError:
            raise
        except DBAPIError as exc:
            raise self._typed(exc) from exc

    @staticmethod
    def _typed(exc: DBAPIError) -> errors.CharlestonError | DBAPIError:
        if exc.connection_invalidated:
            return StoreUnavailable(
                "The database connection was lost during the command; nothing was "
                "stored. Send the same command with the same command id again."
            )
        if _schema_missing(exc):
            return SchemaNotCurrent(
                "The database lacks a table or column this version of the code needs: "
                "its schema is incomplete or not this code's (see /readyz or "
                "'charleston-fsm migrate'). Retry once an operator has repaired it."
            )
        if isinstance(exc, IntegrityError):
            return Conflict("Another command reached this game first; reload the game and retry.")
        if isinstance(exc, OperationalError):
            message = str(exc.orig).lower()
            if "database is locked" in message or "busy" in message:
                return Conflict(
                    "The game is busy (another writer held it too long); retry the command."
                )
            if "serializ" in message or "deadlock" in message or "lock" in message:
                return Conflict("Another command reached this game first; retry the command.")
            return StoreUnavailable(
                f"The database refused the command ({type(exc.orig).__name__}); "
                "nothing was stored. Retry the command."
            )
        return exc

    def dispose(self) -> None:
        """Close every pooled connection (call before forking, or when done), once the
        seals under way are written."""
        self.wait_for_seals()
        self.engine.dispose()

    close = dispose

    # -- schema -------------------------------------------------------------------------
    def upgrade(self, revision: str = "head") -> None:
        """Run Alembic's migrations up to ``revision`` (``head``: the latest)."""
        config = alembic_config(self.url)
        with self.engine.connect() as conn:
            # Two processes starting at once migrate one after the other: on SQLite the
            # migration's transaction takes the write lock at BEGIN (BEGIN IMMEDIATE), so
            # the second waits (busy_timeout) and then finds the schema at head; a lock
            # taken only at the first write would fail one of them, "database is locked".
            conn.execution_options(charleston_write=True)
            with conn.begin():
                if self.dialect == "postgresql":
                    conn.execute(text("SELECT pg_advisory_xact_lock(7458020211)"))
                config.attributes["connection"] = conn
                alembic_command.upgrade(config, revision)

    def downgrade(self, revision: str = "base") -> None:
        config = alembic_config(self.url)
        with self.engine.connect() as conn:
            conn.execution_options(charleston_write=True)  # as upgrade: wait for writers
            with conn.begin():
                config.attributes["connection"] = conn
                alembic_command.downgrade(config, revision)

    def schema_status(self) -> SchemaStatus:
        """``current``, or why not: see :mod:`charleston_fsm.store.schema`."""
        return self.schema_state().status

    def schema_state(self) -> SchemaState:
        with self.engine.connect() as conn:
            return schema_state(conn)

    # -- games ----------------------------------------------------------------------------
    def create_game(
        self,
        ruleset: str = "nmjl",
        options: Mapping[str, Any] | None = None,
        seed: int | None = None,
        hands: Mapping[str | Seat, Sequence[int]] | None = None,
        players: Mapping[str | Seat, Any] | None = None,
        credentials: Mapping[str, str] | None = None,
        *,
        game_id: str | None = None,
        round_id: str | None = None,
        round_table: int | None = None,
        conn: Connection | None = None,
        clock: clocks.ClockOptions | Mapping[str, Any] | None = None,
        bots: Sequence[str | Seat] | None = None,
    ) -> str:
        """A new game: its ``game_created`` row (seq 1), projection and credentials.

        ``clock`` (:class:`~charleston_fsm.engine.clocks.ClockOptions`) and ``bots`` (seats the
        service's auto player plays) are fixed here, in the ``game_created`` payload.
        ``conn``: inside the caller's write transaction, instead of one of its own.
        """
        rows = self.new_game_rows(
            ruleset,
            options,
            seed,
            hands,
            players,
            credentials,
            game_id=game_id,
            round_id=round_id,
            round_table=round_table,
            clock=clock,
            bots=bots,
        )
        game_id = rows.game["id"]
        unknown = (
            f"The database connection was lost while game {game_id!r} was being committed, "
            "so it may or may not exist. Look it up by its id, or create a new game: an "
            "unused game changes nothing."
        )
        with self._writing(unknown) if conn is None else nullcontext(conn) as conn:
            self.insert_games(conn, [rows])
        return game_id

    def new_game_rows(
        self,
        ruleset: str = "nmjl",
        options: Mapping[str, Any] | None = None,
        seed: int | None = None,
        hands: Mapping[str | Seat, Sequence[int]] | None = None,
        players: Mapping[str | Seat, Any] | None = None,
        credentials: Mapping[str, str] | None = None,
        *,
        game_id: str | None = None,
        round_id: str | None = None,
        round_table: int | None = None,
        clock: clocks.ClockOptions | Mapping[str, Any] | None = None,
        bots: Sequence[str | Seat] | None = None,
    ) -> NewGameRows:
        """Every row of a new game, made without the database (:meth:`create_game`'s
        arguments): the chart, the deal, the clock's first deadlines and the anchor's
        signature are the slow part, and a round makes them all before it takes the
        database's write lock (:meth:`insert_games`)."""
        clock_options = _clock_options(clock)
        bot_seats = _bot_seats(bots)
        rules = get_ruleset(ruleset)
        if hands is not None:
            try:
                by_seat = {Seat(str(s)): list(h) for s, h in hands.items()}
            except ValueError:
                raise InvalidGameSetup(
                    f"Hands are given per seat (east, south, west, north), not {list(hands)}."
                ) from None
            deal = Deal.explicit(by_seat)
        else:
            if seed is None:
                seed = random.SystemRandom().randrange(2**31)
            deal = Deal.shuffled(seed)
        table = Table(deal, rules, options)
        players_doc = self._players(players)
        creds = self._credentials(credentials)
        game_id = game_id or uuid.uuid4().hex
        now = _now()
        payload = {
            "ruleset": rules.name,
            "options": table.options.model_dump(mode="json"),
            "deal": deal.to_dict(),
            "players": players_doc,
            "seed": seed,
        }
        clock_doc = None
        if clock_options is not None or bot_seats:
            payload["clock"] = clock_options.model_dump(mode="json") if clock_options else None
            payload["bots"] = sorted(s.value for s in bot_seats)
            clock_doc = clocks.advance(clocks.new_doc(clock_options, bot_seats), table, now, 1)
        first = commands.event_row(
            game_id, 1, "game_created", None, None, payload, None, now, GENESIS
        )
        return NewGameRows(
            game={
                "id": game_id,
                "round_id": round_id,
                "round_table": round_table,
                "ruleset": rules.name,
                "options": payload["options"],
                "created_at": now,
                "players": players_doc,
                "last_seq": 1,
                "status": "finished" if table.finished else "active",
                "head_hash": first["hash"],
                "clock": clock_doc,
                "next_due": clocks.next_due(clock_doc),
            },
            event=first,
            anchor=integrity.anchor_row(
                self.anchor_key, game_id, 1, 1, first["hash"], table.finished, now
            ),
            projection={"game_id": game_id, "seq": 1, "snapshot": table.snapshot()},
            credentials=[
                {"game_id": game_id, "role": r, "token_hash": h} for r, h in creds.items()
            ],
        )

    def insert_games(self, conn: Connection, games: Sequence[NewGameRows]) -> None:
        """Write games made by :meth:`new_game_rows` in the caller's transaction: one
        statement per table of the schema for all of them (a round of 500 holds the
        write lock for a fraction of a second, not for the games' making)."""
        if not games:
            return
        conn.execute(insert(GameRow), [g.game for g in games])
        conn.execute(insert(EventRow), [g.event for g in games])
        anchors = [g.anchor for g in games if g.anchor is not None]
        if anchors:
            conn.execute(insert(AnchorRow), anchors)
        conn.execute(insert(ProjectionRow), [g.projection for g in games])
        credentials = [c for g in games for c in g.credentials]
        if credentials:
            conn.execute(insert(CredentialRow), credentials)
        for g in games:
            self._notify(conn, g.game["id"], 1)

    @staticmethod
    def _players(players: Mapping[str | Seat, Any] | None) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, value in (players or {}).items():
            try:
                result[Seat(str(key)).value] = value
            except ValueError:
                raise InvalidGameSetup(
                    f"Players are given per seat (east, south, west, north), not {key!r}."
                ) from None
        return result

    @staticmethod
    def _credentials(credentials: Mapping[str, str] | None) -> dict[str, str]:
        result: dict[str, str] = {}
        for role, token_hash in (credentials or {}).items():
            role = str(role)
            if role not in ROLES:
                raise InvalidGameSetup(
                    f"Credentials are given per role ({', '.join(sorted(ROLES))}), not {role!r}."
                )
            if not isinstance(token_hash, str) or not _HEX64.match(token_hash):
                raise InvalidGameSetup(
                    f"The credential of {role} must be a sha256 hex digest (64 lowercase "
                    "hex characters), never the token itself."
                )
            result[role] = token_hash
        return result

    def role_for(self, game_id: str, token_hash: str) -> str | None:
        if not could_exist(game_id):
            return None
        with self._reading() as conn:
            return conn.execute(
                select(CredentialRow.role).where(
                    CredentialRow.game_id == game_id, CredentialRow.token_hash == token_hash
                )
            ).scalar()

    def games(self) -> list[GameSummary]:
        with self._reading() as conn:
            rows = conn.execute(select(GameRow).order_by(GameRow.created_at, GameRow.id)).all()
        return [
            GameSummary(
                id=r.id,
                ruleset=r.ruleset,
                options=r.options,
                players=r.players,
                created_at=utc(r.created_at),
                last_seq=r.last_seq,
                status=r.status,
            )
            for r in rows
        ]

    # -- commands -----------------------------------------------------------------------
    def execute(
        self, game_id: str, command: Command | Mapping[str, Any], command_id: str | None = None
    ) -> ExecuteResult:
        """Apply one command to the game, in one transaction; see the module docstring.

        A ``command_id`` seen before with the same command returns the events it wrote
        then (``duplicate=True``) and writes nothing; with another command it raises
        :class:`CommandIdConflict`. Refusals raise the engine's error and write nothing.
        """
        cmd = _parse(command)
        command_id = command_id or uuid.uuid4().hex
        if len(command_id) > MAX_COMMAND_ID:
            raise errors.InvalidCommand(
                f"A command id is at most {MAX_COMMAND_ID} characters, not {len(command_id)}."
            )
        unknown = (
            "The database connection was lost while the command was being committed, so "
            f"it may or may not be stored. Send it again with the same command id "
            f"({command_id!r}): it is applied at most once, and the answer says what is stored."
        )
        with self._writing(unknown, game_id) as conn:
            result = self._apply(conn, game_id, cmd, command_id)
        assert result is not None  # only a clock's firing can find nothing to do
        self._after_commit(game_id, result)
        return result

    def _after_commit(self, game_id: str, result: ExecuteResult) -> None:
        """Seal a game the committed command finished (:meth:`_seal_later`)."""
        if result.events and not result.duplicate and DONE in result.snapshot["configuration"]:
            self._seal_later(game_id)

    def _apply(
        self,
        conn: Connection,
        game_id: str,
        cmd: Command,
        command_id: str,
        firing: ClockFiring | None = None,
    ) -> ExecuteResult | None:
        """The command's work inside the caller's write transaction (see :meth:`execute`).

        ``firing``: the clock acts for a seat whose deadline passed; ``None`` is returned
        when, under the lock, that deadline no longer stands (the seat acted meanwhile).
        """
        command_doc = cmd.model_dump(mode="json")
        locked = self._lock(conn, game_id, command_id, command_doc)
        if isinstance(locked, ExecuteResult):
            return locked
        table = self._load(locked.snapshot)
        now = _now()
        doc = locked.clock
        if firing is not None and not firing.stands(doc, now):
            return None
        clocks.refusal(None if firing else doc, table, cmd)
        seat_steps = {
            seat: state for state, step in table.active_steps() for seat in step.participants
        }
        kind = clocks.kind_of(table, cmd)
        decided_in = clocks.scope(table)  # the step of the decision, before it moves
        try:
            produced = table.execute(cmd)
        except BaseException:
            self._warm.tables.pop(type(table.chart), None)
            raise
        items: list[tuple[Event, str | None]] = []
        if firing is not None and firing.expired is not None:
            items.append((firing.expired, None))
        for ev in produced:
            step = None
            if ev.type in commands.PASS_COMMAND_EVENTS and ev.seat is not None:
                step = seat_steps.get(ev.seat)
            elif ev.type in ("tiles_transferred", "pass_resolved"):
                step = ev.payload["step"]
            items.append((ev, step))
        if doc is not None:
            acted = firing.acted(kind, cmd, decided_in) if firing is not None and kind else None
            doc = clocks.advance(doc, table, now, locked.last_seq + len(items), acted)
            if firing is not None and firing.expired is not None:
                doc = clocks.expired_late(doc, firing.seat)
        return self._append(conn, game_id, locked, items, command_id, command_doc, table, doc, now)

    def _lock(
        self, conn: Connection, game_id: str, command_id: str, command_doc: dict[str, Any]
    ) -> _Locked | ExecuteResult:
        """Lock the game's row and read its head; a seen command id is answered here."""
        head = commands.read_head(conn, game_id, command_id)
        self._check_head(game_id, head)
        if head.seen_command is not None:
            return self._seen(conn, game_id, command_id, command_doc, head)
        return _Locked(head.last_seq, head.snapshot, head.head_hash, head.clock)

    def _append(
        self,
        conn: Connection,
        game_id: str,
        locked: _Locked,
        items: Sequence[tuple[Event, str | None]],
        command_id: str,
        command_doc: Mapping[str, Any],
        table: Table | None,
        clock: dict[str, Any] | None,
        now: datetime,
    ) -> ExecuteResult:
        """Write the rows, move projection and game (with the clock), remember the id
        (``commands.write``: one statement on PostgreSQL).

        ``table``: the table the command left (``None``: annotation rows, the table as
        it was).
        """
        snapshot = table.snapshot() if table is not None else locked.snapshot
        finished = table.finished if table is not None else DONE in snapshot["configuration"]
        rows = commands.chained_rows(
            locked.last_seq, locked.head_hash, game_id, command_id, items, now
        )
        prev = rows[-1]["hash"] if rows else locked.head_hash
        last_seq = locked.last_seq + len(rows)
        effects = commands.Effects(
            game_id=game_id,
            command_id=command_id,
            command=dict(command_doc),
            old_seq=locked.last_seq,
            at=now,
            rows=rows,
            snapshot=snapshot,
            game={
                "last_seq": last_seq,
                "status": "finished" if finished else "active",
                "head_hash": prev,
                "clock": clock,
                "next_due": clocks.next_due(clock),
            },
            anchor=integrity.anchor_row(
                self.anchor_key, game_id, locked.last_seq + 1, last_seq, prev, finished, now
            ),
        )
        if not commands.write(conn, effects):
            raise Conflict(f"Game {game_id!r} moved past seq {locked.last_seq} meanwhile; retry.")
        return ExecuteResult(
            [StoredEvent(**r) for r in rows], snapshot=snapshot, command_id=command_id, clock=clock
        )

    @staticmethod
    def _check_head(game_id: str, head: Any) -> None:
        """Refuse a command to a game that is missing, quarantined or not whole."""
        if head is None:
            raise GameNotFound(f"There is no game {game_id!r}.")
        if head.quarantined:
            raise integrity.refuse(game_id)
        if head.projection_seq is None or head.head_hash is None:
            raise Conflict(
                f"Game {game_id!r} has no projection or no row {head.last_seq}; run verify "
                "and check_projections."
            )
        if head.seen_command is None and head.projection_seq != head.last_seq:
            raise Conflict(
                f"The projection of game {game_id!r} is at seq {head.projection_seq} but "
                f"the game at {head.last_seq}; rebuild it (check_projections)."
            )

    @staticmethod
    def _seen(
        conn: Connection, game_id: str, command_id: str, command_doc: dict[str, Any], head: Any
    ) -> ExecuteResult:
        """A command id seen before: the events it wrote then, or the conflict."""
        if head.seen_command != command_doc:
            raise CommandIdConflict(
                f"Command id {command_id!r} was already used for another command "
                f"({head.seen_command['type']} by {head.seen_command.get('seat')}); "
                "choose a new id for a new command."
            )
        rows = conn.execute(
            commands.EVENTS_OF,
            {"b_game": game_id, "b_first": head.seen_first, "b_last": head.seen_last},
        ).all()
        return ExecuteResult(
            [StoredEvent.from_row(r) for r in rows],
            duplicate=True,
            snapshot=head.snapshot,
            command_id=command_id,
            clock=head.clock,
        )

    def _seal_later(self, game_id: str) -> None:
        """Seal the game that just finished (:meth:`seal`) on the store's sealing thread.

        The command's answer does not wait for the replay (tens of ms). A seal that
        fails, or never runs because the process ends first, leaves the anchor
        unsealed: the next verify replays the game and seals it then."""
        with self._sealing.lock:
            if self._sealing.pool is None:
                self._sealing.pool = ThreadPoolExecutor(1, thread_name_prefix="charleston-seal")
            self._sealing.pending = [f for f in self._sealing.pending if not f.done()]
            self._sealing.pending.append(self._sealing.pool.submit(self._seal_quietly, game_id))

    def _seal_quietly(self, game_id: str) -> None:
        with suppress(Exception):  # an unsealed anchor is the record of a seal not made
            self.seal(game_id)

    def wait_for_seals(self) -> None:
        """Return once every seal asked for so far is written (or given up)."""
        with self._sealing.lock:
            pending = list(self._sealing.pending)
        wait(pending)

    def _load(self, snapshot: Mapping[str, Any]) -> Table:
        chart = get_ruleset(snapshot["ruleset"]).chart
        table = self._warm.tables.get(chart)
        if table is None:
            table = self._warm.tables[chart] = Table.restore(snapshot)
        else:
            table.load(snapshot)
        return table

    def _notify(self, conn: Connection, game_id: str, last_seq: int) -> None:
        if self.dialect == "postgresql":
            conn.execute(
                text("SELECT pg_notify(:channel, :payload)"),
                {"channel": NOTIFY_CHANNEL, "payload": f"{game_id}:{last_seq}"},
            )

    # -- reading ----------------------------------------------------------------------------
    def table(self, game_id: str) -> Table:
        """The game's table now, from its projection (one statement); the caller's own."""
        return Table.restore(self._snapshot(game_id))

    def view(self, game_id: str, seat: Seat | str | None = None) -> dict[str, Any]:
        """``views.seat_view`` (or ``director_view`` for ``None``) of the game now.

        Same result as ``seat_view(store.table(game_id), seat)`` without building a chart
        per call (the projection is loaded into this thread's warm table, ~0.05 ms
        instead of ~2 ms): for request handlers and bots that only need the view.
        """
        found = self._projection(game_id)
        return self.view_of(found.snapshot, seat, found.clock)

    def view_of(
        self,
        snapshot: Mapping[str, Any],
        seat: Seat | str | None = None,
        clock: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The view of a table snapshot (an ``ExecuteResult``'s): no database read.

        ``clock``: the game's clock document (an ``ExecuteResult``'s): a seat sees only
        its own deadline.
        """
        table = self._load(snapshot)
        if seat is None:
            return director_view(table, clocks.director_clock(clock))
        seat = Seat(seat)
        return seat_view(
            table, seat, clocks.seat_clock(clock, seat), clocks.withheld(clock, table, seat)
        )

    def _snapshot(self, game_id: str) -> dict[str, Any]:
        return self._projection(game_id).snapshot  # type: ignore[no-any-return]

    def _projection(self, game_id: str) -> Any:
        """The projection's snapshot and the game's clock document, in one statement."""
        check_could_exist(game_id)
        with self._reading() as conn:
            found = conn.execute(_READ_PROJECTION, {"b_game": game_id}).first()
        if found is None:
            raise GameNotFound(f"There is no game {game_id!r}.")
        if found.quarantined:
            raise integrity.refuse(game_id)
        return found

    def ensure_open(self, game_id: str) -> None:
        """Raise :class:`GameQuarantined` (or :class:`GameNotFound`) unless the game is open."""
        self._snapshot(game_id)

    def last_seq(self, game_id: str) -> int:
        check_could_exist(game_id)
        with self._reading() as conn:
            seq = conn.execute(select(GameRow.last_seq).where(GameRow.id == game_id)).scalar()
        if seq is None:
            raise GameNotFound(f"There is no game {game_id!r}.")
        return seq


_READ_PROJECTION = (
    select(ProjectionRow.snapshot, GameRow.clock, integrity.QUARANTINED.label("quarantined"))
    .join(GameRow, GameRow.id == ProjectionRow.game_id)
    .where(ProjectionRow.game_id == bindparam("b_game"))
)


#: PostgreSQL's undefined_table and undefined_column; SQLite says it in words
_MISSING_SQLSTATES = frozenset({"42P01", "42703"})


def _schema_missing(exc: DBAPIError) -> bool:
    """A statement failed because the schema lacks what the models name."""
    if getattr(exc.orig, "sqlstate", None) in _MISSING_SQLSTATES:
        return True
    message = str(exc.orig).lower()
    return isinstance(exc, OperationalError) and (
        "no such table" in message or "no such column" in message
    )


def _clock_options(
    clock: clocks.ClockOptions | Mapping[str, Any] | None,
) -> clocks.ClockOptions | None:
    if clock is None or isinstance(clock, clocks.ClockOptions):
        return clock
    try:
        return clocks.ClockOptions.model_validate(dict(clock))
    except ValidationError as exc:
        problems = "; ".join(
            f"clock.{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()
        )
        raise InvalidGameSetup(
            f"The clock options are not valid ({problems}): give seconds per kind "
            "(confirm_pass, vote, courtesy, place_tiles) and on_expiry auto_play or flag_late."
        ) from None


def _bot_seats(bots: Sequence[str | Seat] | None) -> frozenset[Seat]:
    try:
        return frozenset(Seat(str(s)) for s in bots or ())
    except ValueError:
        raise InvalidGameSetup(
            f"Bot seats are east, south, west or north, not {list(bots or ())}."
        ) from None


def _parse(command: Command | Mapping[str, Any]) -> Command:
    if isinstance(command, Mapping):
        try:
            return parse_command(dict(command))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'command'}: {e['msg']}" for e in exc.errors()
            )
            raise errors.InvalidCommand(f"The command is not valid ({problems}).") from None
    return command


def _now() -> datetime:
    return datetime.now(UTC)

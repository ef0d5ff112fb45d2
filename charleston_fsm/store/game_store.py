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
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from alembic import command as alembic_command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
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
    update,
)
from sqlalchemy.engine import URL
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError

from .. import errors
from ..commands import Command, parse_command
from ..events import Event
from ..rulesets import get_ruleset
from ..seats import SEATS, Seat
from ..table import Table
from ..tiles import Deal
from ..views import director_view, seat_view
from .audit import AuditReport, build_audit
from .errors import (
    CommandIdConflict,
    Conflict,
    EventNotFound,
    GameNotFound,
    InvalidGameSetup,
    SchemaNotCurrent,
    StoreUnavailable,
)
from .hashing import GENESIS, canonical_time, row_hash, utc
from .models import CommandRow, CredentialRow, EventRow, GameRow, JSONDoc, ProjectionRow
from .urls import render, resolve_url

MIGRATIONS_DIR = Path(__file__).resolve().parents[2] / "migrations"
NOTIFY_CHANNEL = "charleston_events"
MAX_COMMAND_ID = 128  # events.command_id, commands.command_id
ROLES = frozenset([*(s.value for s in SEATS), "director"])
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_PASS_COMMAND_EVENTS = frozenset({"pass_confirmed", "pass_changed", "pass_withdrawn"})


@dataclass(frozen=True)
class StoredEvent:
    """One event row: the engine event plus where and when the store put it."""

    game_id: str
    seq: int
    type: str
    seat: str | None
    payload: dict[str, Any]
    command_id: str | None
    created_at: datetime
    prev_hash: str
    hash: str
    step: str | None = None

    @property
    def event(self) -> Event:
        return Event(self.type, Seat(self.seat) if self.seat else None, self.payload)

    def to_dict(self) -> dict[str, Any]:
        return {
            "game_id": self.game_id,
            "seq": self.seq,
            "type": self.type,
            "seat": self.seat,
            "step": self.step,
            "payload": self.payload,
            "command_id": self.command_id,
            "created_at": canonical_time(self.created_at),
            "prev_hash": self.prev_hash,
            "hash": self.hash,
        }

    @classmethod
    def from_row(cls, row: Any) -> StoredEvent:
        return cls(
            game_id=row.game_id,
            seq=row.seq,
            type=row.type,
            seat=row.seat,
            payload=row.payload,
            command_id=row.command_id,
            created_at=utc(row.created_at),
            prev_hash=row.prev_hash,
            hash=row.hash,
            step=row.step,
        )


@dataclass(frozen=True)
class ExecuteResult:
    events: list[StoredEvent]
    duplicate: bool = False

    @property
    def last_seq(self) -> int:
        return self.events[-1].seq if self.events else 0


@dataclass(frozen=True)
class Verification:
    ok: bool
    first_bad_seq: int | None
    message: str
    checked: int = 0
    head_hash: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "first_bad_seq": self.first_bad_seq,
            "message": self.message,
            "checked": self.checked,
            "head_hash": self.head_hash,
        }


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


@dataclass
class _WarmTables(threading.local):
    """One table per chart class and thread, re-loaded for each command (Table.load)."""

    tables: dict[type, Table] = field(default_factory=dict)


def alembic_config(url: URL | None = None) -> Config:
    """Alembic's configuration for the repository's ``migrations/`` folder."""
    if not (MIGRATIONS_DIR / "env.py").is_file():
        raise SchemaNotCurrent(
            f"The migrations folder {MIGRATIONS_DIR} is missing: install charleston-fsm "
            "from its repository (pip install -e .) so the store can find migrations/."
        )
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if url is not None:
        config.set_main_option("sqlalchemy.url", render(url).replace("%", "%%"))
    return config


class GameStore:
    """Games on PostgreSQL (psycopg 3) or SQLite; see ``docs/architecture.md``."""

    def __init__(self, url: str | URL | None = None, *, echo: bool = False) -> None:
        self.url = resolve_url(url)
        self.dialect = self.url.get_backend_name()
        self.engine: Engine = self._make_engine(echo)
        self._warm = _WarmTables()

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
    def _writing(self) -> Iterator[Connection]:
        """A write transaction; database failures become typed store errors."""
        try:
            with self.engine.connect() as conn:
                conn.execution_options(charleston_write=True)
                with conn.begin():
                    yield conn
        except errors.CharlestonError:
            raise
        except DBAPIError as exc:
            raise self._typed(exc) from exc

    @contextmanager
    def _reading(self) -> Iterator[Connection]:
        try:
            with self.engine.connect() as conn, conn.begin():
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
        """Close every pooled connection (call before forking, or when done)."""
        self.engine.dispose()

    close = dispose

    # -- schema -------------------------------------------------------------------------
    def upgrade(self, revision: str = "head") -> None:
        """Run Alembic's migrations up to ``revision`` (``head``: the latest)."""
        config = alembic_config(self.url)
        with self.engine.begin() as conn:
            if self.dialect == "postgresql":
                # Two processes starting at once migrate one after the other.
                conn.execute(text("SELECT pg_advisory_xact_lock(7458020211)"))
            config.attributes["connection"] = conn
            alembic_command.upgrade(config, revision)

    def downgrade(self, revision: str = "base") -> None:
        config = alembic_config(self.url)
        with self.engine.begin() as conn:
            config.attributes["connection"] = conn
            alembic_command.downgrade(config, revision)

    def schema_status(self) -> Literal["empty", "current", "outdated"]:
        heads = set(ScriptDirectory.from_config(alembic_config()).get_heads())
        with self.engine.connect() as conn:
            current = set(MigrationContext.configure(conn).get_current_heads())
        if not current:
            return "empty"
        return "current" if current == heads else "outdated"

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
    ) -> str:
        """A new game: its ``game_created`` row (seq 1), projection and credentials."""
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
        first = _event_row(game_id, 1, "game_created", None, None, payload, None, now, GENESIS)
        with self._writing() as conn:
            conn.execute(
                insert(GameRow).values(
                    id=game_id,
                    ruleset=rules.name,
                    options=payload["options"],
                    created_at=now,
                    players=players_doc,
                    last_seq=1,
                    status="finished" if table.finished else "active",
                )
            )
            conn.execute(insert(EventRow).values(**first))
            conn.execute(
                insert(ProjectionRow).values(game_id=game_id, seq=1, snapshot=table.snapshot())
            )
            if creds:
                conn.execute(
                    insert(CredentialRow),
                    [{"game_id": game_id, "role": r, "token_hash": h} for r, h in creds.items()],
                )
            self._notify(conn, game_id, 1)
        return game_id

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
        command_doc = cmd.model_dump(mode="json")
        command_id = command_id or uuid.uuid4().hex
        if len(command_id) > MAX_COMMAND_ID:
            raise errors.InvalidCommand(
                f"A command id is at most {MAX_COMMAND_ID} characters, not {len(command_id)}."
            )
        with self._writing() as conn:
            # Lock first, then read: under READ COMMITTED a statement that waited for
            # the lock sees the winner's new games row but not its other rows, so the
            # projection and head are read by a second statement, after the lock.
            last_seq = conn.execute(_LOCK_GAME, {"b_game": game_id}).scalar()
            if last_seq is None:
                raise GameNotFound(f"There is no game {game_id!r}.")
            locked = conn.execute(
                _READ_LOCKED,
                {"b_game": game_id, "b_seq": last_seq, "b_command": command_id},
            ).first()
            if locked is None:
                raise Conflict(
                    f"Game {game_id!r} has no projection or no row {last_seq}; run verify "
                    "and check_projections."
                )
            if locked.seen_command is not None:
                if locked.seen_command != command_doc:
                    raise CommandIdConflict(
                        f"Command id {command_id!r} was already used for another command "
                        f"({locked.seen_command['type']} by {locked.seen_command['seat']}); "
                        "choose a new id for a new command."
                    )
                rows = conn.execute(
                    select(EventRow)
                    .where(
                        EventRow.game_id == game_id,
                        EventRow.seq.between(locked.seen_first, locked.seen_last),
                    )
                    .order_by(EventRow.seq)
                ).all()
                return ExecuteResult([StoredEvent.from_row(r) for r in rows], duplicate=True)
            if locked.projection_seq != locked.last_seq:
                raise Conflict(
                    f"The projection of game {game_id!r} is at seq {locked.projection_seq} but "
                    f"the game at {locked.last_seq}; rebuild it (check_projections)."
                )

            table = self._load(locked.snapshot)
            seat_steps = {
                seat: state for state, step in table.active_steps() for seat in step.participants
            }
            try:
                produced = table.execute(cmd)
            except BaseException:
                self._warm.tables.pop(type(table.chart), None)
                raise
            snapshot = table.snapshot()
            finished = table.finished

            now = _now()
            prev = locked.head_hash
            rows_out: list[dict[str, Any]] = []
            for offset, ev in enumerate(produced, start=1):
                seat = ev.seat.value if ev.seat else None
                step = None
                if ev.type in _PASS_COMMAND_EVENTS and ev.seat is not None:
                    step = seat_steps.get(ev.seat)
                elif ev.type in ("tiles_transferred", "pass_resolved"):
                    step = ev.payload["step"]
                row = _event_row(
                    game_id,
                    locked.last_seq + offset,
                    ev.type,
                    seat,
                    step,
                    ev.payload,
                    command_id,
                    now,
                    prev,
                )
                prev = row["hash"]
                rows_out.append(row)
            first_seq = locked.last_seq + 1
            last_seq = locked.last_seq + len(rows_out)

            conn.execute(_INSERT_EVENTS, rows_out)
            conn.execute(
                _MOVE_PROJECTION, {"b_game": game_id, "b_seq": last_seq, "b_snapshot": snapshot}
            )
            moved = conn.execute(
                _MOVE_GAME,
                {
                    "b_game": game_id,
                    "b_old": locked.last_seq,
                    "b_new": last_seq,
                    "b_status": "finished" if finished else "active",
                },
            )
            if moved.rowcount != 1:
                raise Conflict(
                    f"Game {game_id!r} moved past seq {locked.last_seq} meanwhile; retry."
                )
            conn.execute(
                _INSERT_COMMAND,
                {
                    "game_id": game_id,
                    "command_id": command_id,
                    "command": command_doc,
                    "first_seq": first_seq,
                    "last_seq": last_seq,
                },
            )
            self._notify(conn, game_id, last_seq)
        return ExecuteResult([StoredEvent(**r) for r in rows_out], duplicate=False)

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
        table = self._load(self._snapshot(game_id))
        if seat is None:
            return director_view(table)
        return seat_view(table, Seat(seat))

    def _snapshot(self, game_id: str) -> dict[str, Any]:
        with self._reading() as conn:
            snapshot = conn.execute(
                select(ProjectionRow.snapshot).where(ProjectionRow.game_id == game_id)
            ).scalar()
        if snapshot is None:
            raise GameNotFound(f"There is no game {game_id!r}.")
        return snapshot

    def last_seq(self, game_id: str) -> int:
        with self._reading() as conn:
            seq = conn.execute(select(GameRow.last_seq).where(GameRow.id == game_id)).scalar()
        if seq is None:
            raise GameNotFound(f"There is no game {game_id!r}.")
        return seq

    def events(self, game_id: str, after: int = 0) -> list[StoredEvent]:
        with self._reading() as conn:
            rows = conn.execute(
                select(EventRow)
                .where(EventRow.game_id == game_id, EventRow.seq > after)
                .order_by(EventRow.seq)
            ).all()
            if (
                not rows
                and conn.execute(select(GameRow.id).where(GameRow.id == game_id)).first() is None
            ):
                raise GameNotFound(f"There is no game {game_id!r}.")
        return [StoredEvent.from_row(r) for r in rows]

    def replay(self, game_id: str, at: int | None = None) -> Table:
        """The table as it stood at event ``at`` (default: the last), folded through the chart.

        All rows of one command are written together, so a seq inside a command's rows
        gives the table after that command: what every reader saw once that seq existed.
        """
        return _fold(self.events(game_id), at)

    def audit(self, game_id: str) -> AuditReport:
        rows, last_seq = self._committed_rows(game_id)
        return build_audit(rows, _verify_rows(rows, last_seq))

    def verify(self, game_id: str) -> Verification:
        """Re-hash every row; name the first one whose content or chain does not match."""
        return _verify_rows(*self._committed_rows(game_id))

    def _committed_rows(self, game_id: str) -> tuple[list[StoredEvent], int]:
        """The rows up to ``games.last_seq`` read first, so a command committing meanwhile
        (on a live game) is not mistaken for a gap."""
        last_seq = self.last_seq(game_id)
        return [r for r in self.events(game_id) if r.seq <= last_seq], last_seq

    def check_projections(self) -> list[str]:
        """Games whose projection differs from a fold of their events."""
        bad: list[str] = []
        with self._reading() as conn:
            projections = conn.execute(
                select(GameRow.id, GameRow.last_seq, ProjectionRow.seq, ProjectionRow.snapshot)
                .join(ProjectionRow, ProjectionRow.game_id == GameRow.id, isouter=True)
                .order_by(GameRow.id)
            ).all()
        for game_id, last_seq, seq, snapshot in projections:
            if snapshot is None or seq != last_seq:
                bad.append(game_id)
                continue
            try:
                replayed = self.replay(game_id, at=seq).snapshot()
            except errors.CharlestonError:
                bad.append(game_id)
                continue
            if replayed != snapshot:
                bad.append(game_id)
        return bad


# The command path's statements, built once (building them costs more than a round trip).
_LOCK_GAME = select(GameRow.last_seq).where(GameRow.id == bindparam("b_game")).with_for_update()
_READ_LOCKED = (
    select(
        EventRow.seq.label("last_seq"),
        ProjectionRow.seq.label("projection_seq"),
        ProjectionRow.snapshot,
        EventRow.hash.label("head_hash"),
        CommandRow.command.label("seen_command"),
        CommandRow.first_seq.label("seen_first"),
        CommandRow.last_seq.label("seen_last"),
    )
    .select_from(ProjectionRow)
    .join(
        EventRow,
        (EventRow.game_id == ProjectionRow.game_id) & (EventRow.seq == bindparam("b_seq")),
    )
    .outerjoin(
        CommandRow,
        (CommandRow.game_id == ProjectionRow.game_id)
        & (CommandRow.command_id == bindparam("b_command")),
    )
    .where(ProjectionRow.game_id == bindparam("b_game"))
)
_MOVE_PROJECTION = (
    update(ProjectionRow)
    .where(ProjectionRow.game_id == bindparam("b_game"))
    .values(seq=bindparam("b_seq"), snapshot=bindparam("b_snapshot", type_=JSONDoc))
)
_MOVE_GAME = (
    update(GameRow)
    .where(GameRow.id == bindparam("b_game"), GameRow.last_seq == bindparam("b_old"))
    .values(last_seq=bindparam("b_new"), status=bindparam("b_status"))
)
_INSERT_EVENTS = insert(EventRow)
_INSERT_COMMAND = insert(CommandRow)


def _verify_rows(rows: Sequence[StoredEvent], last_seq: int) -> Verification:
    prev = GENESIS
    for expected_seq, row in enumerate(rows, start=1):
        if row.seq != expected_seq:
            return Verification(
                False, expected_seq, f"Row {expected_seq} is missing.", expected_seq - 1
            )
        if row.prev_hash != prev:
            return Verification(
                False,
                row.seq,
                f"Row {row.seq} does not follow row {row.seq - 1}: its prev_hash is "
                f"{row.prev_hash[:12]}…, the hash of row {row.seq - 1} is {prev[:12]}….",
                row.seq - 1,
            )
        digest = row_hash(
            prev_hash=row.prev_hash,
            game_id=row.game_id,
            seq=row.seq,
            type=row.type,
            seat=row.seat,
            step=row.step,
            payload=row.payload,
            command_id=row.command_id,
            created_at=row.created_at,
        )
        if digest != row.hash:
            return Verification(
                False,
                row.seq,
                f"Row {row.seq} ({row.type}) was changed after it was written: its "
                "content no longer matches its hash.",
                row.seq - 1,
            )
        prev = row.hash
    if len(rows) != last_seq:
        first_bad = min(len(rows), last_seq) + 1
        return Verification(
            False,
            first_bad,
            f"The game records {last_seq} rows but {len(rows)} are stored.",
            len(rows),
        )
    return Verification(True, None, f"All {len(rows)} rows match their hashes.", len(rows), prev)


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


def _fold(rows: Sequence[StoredEvent], at: int | None) -> Table:
    if not rows or rows[0].type != "game_created":
        raise errors.ReplayMismatch("The first row of a game must be its game_created row.")
    if at is None:
        end = len(rows)
    else:
        if not 1 <= at <= len(rows):
            raise EventNotFound(f"Game {rows[0].game_id!r} has events 1 to {len(rows)}, not {at}.")
        end = at
        command_id = rows[at - 1].command_id
        while command_id is not None and end < len(rows) and rows[end].command_id == command_id:
            end += 1
    setup = rows[0].payload
    return Table.fold(
        Deal.from_dict(setup["deal"]),
        setup["ruleset"],
        setup["options"],
        [r.event for r in rows[1:end]],
    )


def _now() -> datetime:
    return datetime.now(UTC)


def _event_row(
    game_id: str,
    seq: int,
    type_: str,
    seat: str | None,
    step: str | None,
    payload: dict[str, Any],
    command_id: str | None,
    created_at: datetime,
    prev_hash: str,
) -> dict[str, Any]:
    fields = {
        "game_id": game_id,
        "seq": seq,
        "type": type_,
        "seat": seat,
        "step": step,
        "payload": payload,
        "command_id": command_id,
        "created_at": created_at,
        "prev_hash": prev_hash,
    }
    return {**fields, "hash": row_hash(**fields)}

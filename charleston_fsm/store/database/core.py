"""What every part of the store shares: the database, its transactions, the anchor key,
the warm tables, the games this process served and the notices of committed writes.

:class:`StoreCore` is built once per :class:`~.game_store.GameStore` and handed to each
part (registry, writes, reads, clock worker, rounds, tamper, auditor), so a part can be
built and tested over a core of its own without the front. :class:`Part` holds that
core (``self.core``: ``reading``, ``writing``, ``load``, ``anchor_key``); the parts reach
each other only through the references they are given, never by importing the front.
"""

from __future__ import annotations

import contextlib
import json
import select
import sqlite3
import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import orjson
from alembic import command as alembic_command
from psycopg import pq
from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import URL
from sqlalchemy.exc import (
    DBAPIError,
    DisconnectionError,
    IntegrityError,
    InvalidatePoolError,
    OperationalError,
)
from sqlalchemy.exc import TimeoutError as PoolTimeout

from ...engine import errors
from ...engine.rulesets import get_ruleset
from ...engine.table import Table
from ...ledger.anchors import AnchorKey, load_key
from ..errors import (
    Conflict,
    InvalidGameSetup,
    OutcomeUnknown,
    SchemaNotCurrent,
    StoreUnavailable,
)
from ..games.served import ServedGames
from .connection_budget import ConnectionBudget, route_threads
from .notices import Notices
from .on_sqlite import on_sqlite_driver
from .schema import SchemaState, SchemaStatus, alembic_config, schema_state
from .urls import driver_options, listen_url, resolve_url, without_driver_options

#: how long a thread waits for a pooled connection before its request is answered 503
#: (every thread has one, so only a thread holding two at once could wait this long)
POOL_WAIT_SECONDS = 30.0
#: how long a SQLite connection waits for another's lock (busy timeout, WAL switch)
SQLITE_BUSY_SECONDS = 30.0

UNKNOWN_OUTCOME = (
    "The database connection was lost during the commit, so the change may or may not be "
    "stored: read the game (or run verify) before trying again."
)

NO_CONNECTION = (
    "No database connection of this process came free in time; nothing was stored. "
    "Retry the command."
)


@dataclass
class _WarmTables(threading.local):
    """One table per chart class and thread, re-loaded for each command (Table.load)."""

    tables: dict[type, Table] = field(default_factory=dict)
    #: the snapshot (by identity) each warm table equals now: a view of the snapshot a
    #: command just wrote reads the table that wrote it instead of loading it again
    holds: dict[type, Mapping[str, Any]] = field(default_factory=dict)


def json_text(value: Any) -> str:
    """A JSON column's stored text on SQLite, by orjson (a command's three documents: ~60
    µs of CPU by ``json.dumps``, ~5 by orjson; both parse back to the same value). Keys
    that are not text become text, as ``json.dumps`` makes them; an integer orjson cannot
    hold (past 64 bits) goes to ``json.dumps``."""
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        return json.dumps(value)


def _no_check(_game_id: str) -> None:
    """A lost race needs no further check (a core used without the reads part)."""


class StoreCore:
    """The SQLAlchemy engine and transactions (PostgreSQL via psycopg 3, or SQLite), the
    schema, the anchor key and the per-thread warm tables."""

    def __init__(
        self,
        url: str | URL | None = None,
        *,
        echo: bool = False,
        anchor_key: AnchorKey | None = None,
        threads: int | None = None,
    ) -> None:
        self.url = resolve_url(url)
        self.dialect = self.url.get_backend_name()
        #: the connections this process may open (``connection_budget.py``); ``threads``:
        #: the route threads that may call the store at once (default: the setting)
        self.budget = ConnectionBudget(threads or route_threads())
        self.engine: Engine = self._make_engine(echo)
        self.warm = _WarmTables()
        #: the heads of the games this process wrote or read to write (``served.py``)
        self.served = ServedGames()
        #: after-commit notices, here and to other processes (``notices.py``)
        self.notices = Notices(self.url, listen_url())
        self.notices.listen(self.served.forget, on_gap=self.served.clear)
        self._anchor_key = anchor_key
        #: asked when a write's insert lost a race: a row stored beyond the game's head
        #: must quarantine the game instead (``CheckedReads.refuse_beyond_head``)
        self.lost_race: Callable[[str], None] = _no_check
        #: the standbys reads may go to (``standbys.py``; ``None``: every read here) and
        #: this thread's choice of one for the call under way (``standbys.OnStandby``)
        self.standbys: Any = None
        self.read_on = threading.local()

    @property
    def anchor_key(self) -> AnchorKey:
        """The key that signs anchors (``anchors.load_key`` on first use, when not given)."""
        if self._anchor_key is None:
            self._anchor_key = load_key()
        return self._anchor_key

    def __repr__(self) -> str:
        return f"StoreCore({self.url.render_as_string(hide_password=True)!r})"

    # -- connections ----------------------------------------------------------------------
    def _make_engine(self, echo: bool) -> Engine:
        if self.dialect == "sqlite":
            engine = create_engine(
                self.url,
                echo=echo,
                connect_args={"timeout": SQLITE_BUSY_SECONDS},
                json_serializer=json_text,
                json_deserializer=orjson.loads,
            )

            @event.listens_for(engine, "connect")
            def _sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
                dbapi_connection.isolation_level = None  # BEGIN is ours, see below
                cursor = dbapi_connection.cursor()
                _wal(cursor)
                # durable commits, whatever the build's default (docs/store.md)
                cursor.execute("PRAGMA synchronous=FULL")
                cursor.execute(f"PRAGMA busy_timeout={int(SQLITE_BUSY_SECONDS * 1000)}")
                cursor.execute("PRAGMA foreign_keys=ON")
                cursor.close()

            @event.listens_for(engine, "begin")
            def _sqlite_begin(connection: Connection) -> None:
                # A writer takes SQLite's write lock at BEGIN, so two commands to any
                # game run one after the other; readers never wait (WAL).
                # sent to sqlite3 itself, as a write's statements are (``on_sqlite.py``)
                write = connection.get_execution_options().get("charleston_write")
                on_sqlite_driver(connection, "BEGIN IMMEDIATE" if write else "BEGIN", [()])

            return engine
        if self.dialect == "postgresql":
            # one connection per thread that may use the store, none beyond them: a
            # process never opens more than its budget says (a checkout waits instead).
            # A connection the server hung up on (a failover, a terminated backend) is
            # found dead on checkout and replaced, without a round trip (``hung_up``;
            # libpq finds the new primary: docs/deploy.md, cluster)
            engine = create_engine(
                without_driver_options(self.url),
                echo=echo,
                pool_size=self.budget.pool_size,
                max_overflow=0,
                pool_timeout=POOL_WAIT_SECONDS,
                connect_args=driver_options(self.url),
            )
            event.listen(engine, "handle_error", failover_is_disconnect)
            event.listen(engine, "checkout", hung_up)
            return engine
        raise InvalidGameSetup(
            f"The store runs on PostgreSQL or SQLite, not {self.dialect!r}.",
        )

    @contextmanager
    def writing(
        self, unknown: str = UNKNOWN_OUTCOME, games: Collection[str] = (), *, lone: bool = False
    ) -> Iterator[Connection]:
        """A write transaction; database failures become typed store errors.

        Where it failed decides what callers are told. Before the commit: nothing was
        stored (``StoreUnavailable``, ``Conflict`` …). During the commit: the commit may
        have reached the database before the connection died, so ``OutcomeUnknown``
        (message ``unknown``), never "nothing was stored". After it (handing the
        connection back to the pool): the transaction is stored, nothing is raised.
        ``games``: the games the transaction writes rows of (a unit of work's, filled as
        it runs), whose lost insert race may instead be a row stored beyond a head
        (:attr:`lost_race`).

        ``lone``: the caller's write is one statement that stands alone (a command's
        append), so on PostgreSQL it is sent as a transaction of its own, in autocommit:
        no ``BEGIN`` and no ``COMMIT``, one round trip where the bracket takes three. Such
        a statement commits as it runs, so the caller tells a connection lost during it
        as an unknown outcome (:meth:`autocommitting`); a caller whose next statements must
        be atomic with each other (a lock, then a write) begins a transaction first
        (:meth:`begin_within`), committed here as any other. SQLite begins as always:
        its write lock is taken at ``BEGIN``.
        """
        phase = "work"
        try:
            with self.engine.connect() as conn:
                conn.execution_options(charleston_write=True)
                if lone and self.dialect == "postgresql":
                    driver = conn.connection.driver_connection
                    driver.autocommit = True
                    try:
                        yield conn
                        phase = "commit"
                        if conn.in_transaction():  # begun by begin_within, or autobegun
                            conn.commit()
                        phase = "committed"
                    finally:
                        _out_of_autocommit(conn, driver)
                else:
                    with conn.begin():
                        yield conn
                        phase = "commit"
                    phase = "committed"
        except errors.CharlestonError:
            raise
        except PoolTimeout as exc:
            raise StoreUnavailable(NO_CONNECTION) from exc
        except DBAPIError as exc:
            if phase == "commit":
                raise OutcomeUnknown(unknown) from exc
            if phase == "work":
                typed = self.typed(exc)
                if isinstance(typed, Conflict):
                    for game_id in dict.fromkeys(games):
                        self.lost_race(game_id)
                raise typed from exc

    def autocommitting(self, conn: Connection) -> bool:
        """Whether a statement sent on ``conn`` now commits as it runs (a lone write's
        connection, :meth:`writing`, before any :meth:`begin_within`)."""
        return self.dialect == "postgresql" and bool(conn.connection.driver_connection.autocommit)

    def begin_within(self, conn: Connection) -> None:
        """Make the statements from now on one transaction on a lone write's connection
        (its ``COMMIT`` is :meth:`writing`'s); a no-op where they already are."""
        if not self.autocommitting(conn):
            return
        if conn.in_transaction():  # autobegun by a statement that committed as it ran
            conn.commit()
        conn.connection.driver_connection.autocommit = False
        conn.begin()

    @contextmanager
    def reading(self, *, snapshot: bool = False) -> Iterator[Connection]:
        """A read transaction; ``snapshot``: every statement sees the same moment
        (PostgreSQL REPEATABLE READ; a SQLite read transaction always does). On this
        thread's standby while a routed call runs (``standbys.OnStandby``), else here.

        It ends with ROLLBACK, never COMMIT: a read cannot store anything by accident, and
        on the wire every COMMIT is a write's (the fault tests break the connection at a
        COMMIT and must hit the command's, not a background poller's read)."""
        standby = getattr(self.read_on, "standby", None)
        engine = self.engine if standby is None else standby.engine
        try:
            with engine.connect() as conn:
                if snapshot and self.dialect == "postgresql":
                    conn.execution_options(isolation_level="REPEATABLE READ")
                transaction = conn.begin()
                try:
                    yield conn
                finally:
                    transaction.rollback()
        except errors.CharlestonError:
            raise
        except PoolTimeout as exc:
            raise StoreUnavailable(NO_CONNECTION) from exc
        except DBAPIError as exc:
            raise self.typed(exc) from exc

    @staticmethod
    def typed(exc: DBAPIError) -> errors.CharlestonError | DBAPIError:
        """The store's error for a database failure before the commit (its sentence says
        what was stored: nothing) or the failure itself when it is none of those."""
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

    def load(self, snapshot: Mapping[str, Any]) -> Table:
        """This thread's warm table of the snapshot's chart, loaded with the snapshot."""
        chart = get_ruleset(snapshot["ruleset"]).chart
        table = self.warm.tables.get(chart)
        if table is None:
            table = self.warm.tables[chart] = Table.restore(snapshot)
        elif self.warm.holds.get(chart) is not snapshot:
            self.warm.holds.pop(chart, None)  # a load that fails leaves it unknown
            table.load(snapshot)
        self.warm.holds[chart] = snapshot
        return table

    def dispose(self) -> None:
        """Send the notices not yet sent, close every pooled connection and the notices'."""
        self.notices.close()
        if self.standbys is not None:
            self.standbys.dispose()
        self.engine.dispose()

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
        """``current``, or why not: see :mod:`charleston_fsm.store.database.schema`."""
        return self.schema_state().status

    def schema_state(self) -> SchemaState:
        with self.engine.connect() as conn:
            return schema_state(conn)

    def on_primary(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn`` with every read of its call on the primary, even inside a call routed
        to a standby (verify: its verdict is the primary's to write, from its rows)."""

        def here(*args: Any, **kwargs: Any) -> Any:
            standby = getattr(self.read_on, "standby", None)
            self.read_on.standby = None
            try:
                return fn(*args, **kwargs)
            finally:
                self.read_on.standby = standby

        return here


class Part:
    """A part of the store: its own methods over the core it is given (``self.core``)."""

    def __init__(self, core: StoreCore) -> None:
        self.core = core


#: what a server says when it stops or is no primary any more (a failover, a switchover):
#: admin_shutdown, crash_shutdown, cannot_connect_now, read_only_sql_transaction (a
#: demoted primary that kept its connections), and every connection_exception (08…)
_FAILOVER_SQLSTATES = frozenset({"57P01", "57P02", "57P03", "25006"})


def failover_is_disconnect(context: Any) -> None:
    """Treat a server's going away as a lost connection: SQLAlchemy then discards that
    connection and every other the pool opened before it (they reach the same old
    server), so the next checkout connects afresh and libpq finds the new primary; the
    statement's error says nothing was stored, or, during a commit, ``outcome_unknown``."""
    state = getattr(context.original_exception, "sqlstate", None) or ""
    if state in _FAILOVER_SQLSTATES or state.startswith("08"):
        context.is_disconnect = True


def _out_of_autocommit(conn: Connection, driver: Any) -> None:
    """Hand a lone write's connection back as every other: out of autocommit, or, where
    it cannot say it is idle (broken), discarded rather than pooled in autocommit."""
    if conn.in_transaction():
        # a transaction left open by a failure (a connection gone: invalidated by it)
        with contextlib.suppress(DBAPIError):
            conn.rollback()
    if not conn.invalidated and driver.info.transaction_status == pq.TransactionStatus.IDLE:
        driver.autocommit = False
    elif not conn.invalidated:
        conn.invalidate()


def hung_up(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
    """Refuse a pooled PostgreSQL connection the server has spoken on since it was last
    used (SQLAlchemy's checkout event), so the pool connects afresh, as after a failed
    pre-ping, but without a round trip for every checkout.

    An idle connection expects nothing from the server. A server that goes away (a
    failover, a restart, a terminated backend) says so first (``57P01`` terminating
    connection) and closes the stream, so its socket reads: when reading it finds the
    stream closed, the server is gone and every connection opened before this one goes
    too (pre-ping's rule); when it finds only words, this connection is replaced. A server
    that vanished without a word (a machine cut off) is found by neither this nor a
    ping, but by the statement's own timeout (TCP keepalives: docs/deploy.md).
    """
    pgconn = dbapi_connection.pgconn
    try:
        if not _readable(pgconn.socket):
            return
        pgconn.consume_input()
    except Exception as exc:  # the socket is gone, or libpq read the end of the stream
        raise InvalidatePoolError(f"the server hung up: {exc}") from exc
    if pgconn.status != pq.ConnStatus.OK:
        raise InvalidatePoolError("the server hung up")
    raise DisconnectionError("the server spoke on an idle connection (a goodbye, likely)")


def _readable(fd: int) -> bool:
    """Whether the socket ``fd`` has something to read (or was closed), without waiting.

    ``poll``, not ``select``: ``select`` refuses a descriptor past 1023 (FD_SETSIZE), and
    a process serving a thousand spectator streams holds more sockets than that, so every
    checkout would fail. Where the system has no ``poll`` (Windows), ``select``.
    """
    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        return bool(poller.poll(0))
    return bool(select.select([fd], [], [], 0)[0])


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


def _wal(cursor: Any, patience: float = SQLITE_BUSY_SECONDS) -> None:
    """Put the SQLite file in WAL mode (a no-op once it is).

    Switching needs the file to itself; while another connection holds a write lock on a
    file not yet in WAL mode (a second process migrating it), SQLite refuses at once with
    "database is locked" instead of waiting, whatever the busy timeout. So wait here.
    """
    deadline = time.monotonic() + patience
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)

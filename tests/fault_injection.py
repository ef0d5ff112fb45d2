"""Real faults on a real PostgreSQL: terminated backends and a COMMIT whose answer is lost.

- :func:`terminate` ends a backend with ``pg_terminate_backend`` from an admin connection
  and waits until it is gone, so the victim's next round trip fails for certain.
- :class:`BackendKiller` hooks a ``GameStore``'s engine and terminates the store's own
  backend at one point of the next command: before its n-th statement, before its
  COMMIT, or after its transaction (when the connection goes back to the pool).
- :class:`LossyRelay` is a TCP relay between a client and PostgreSQL that, when armed,
  breaks the connection around the next statement that commits (a COMMIT, or a lone
  command's one statement, which commits as it runs): before passing it on (nothing
  stored) or after the database answered it (stored, and the client never hears so).
- :func:`kill_blocked` terminates a backend of another process (a ``serve``) that waits
  on a lock the test holds: the way to stop a server at a chosen statement.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any, Literal

import psycopg
from sqlalchemy import event, select
from sqlalchemy.engine import make_url

from charleston_fsm.store import GameStore
from charleston_fsm.store.database.models import CommandRow, GameRow, ProjectionRow
from charleston_fsm.store.database.urls import render

#: a point of a command where a fault strikes: the n-th statement (from 1), or the commit
Point = int | Literal["commit", "after_commit"]


def libpq(url: str) -> str:
    """A SQLAlchemy URL as a libpq connection string."""
    return render(make_url(url).set(drivername="postgresql"))


def terminate(admin_url: str, pid: int, timeout: float = 5.0) -> None:
    """Terminate backend ``pid`` and wait until PostgreSQL no longer lists it."""
    with psycopg.connect(libpq(admin_url), autocommit=True) as admin:
        assert admin.execute("SELECT pg_terminate_backend(%s)", [pid]).fetchone() == (True,)
        deadline = time.monotonic() + timeout
        while admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone():
            assert time.monotonic() < deadline, f"backend {pid} survived termination"
            time.sleep(0.01)


class BackendKiller:
    """Terminates the store's backend at ``point`` of the next command, once.

    ``statements`` lists the first words of every statement the command sent, so a test
    can tell how many statements there are and where the fault struck.
    """

    def __init__(self, store: GameStore, admin_url: str, point: Point) -> None:
        self.store = store
        self.admin_url = admin_url
        self.point = point
        self.statements: list[str] = []
        self.committing = False
        self.fired_at: str | None = None

    def _fire(self, pid: int, where: str) -> None:
        if self.fired_at is None:
            terminate(self.admin_url, pid)
            self.fired_at = where

    def _before_statement(self, conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        self.statements.append(" ".join(statement.split()[:3]))
        if self.point == len(self.statements):
            self._fire(conn.connection.dbapi_connection.info.backend_pid, self.statements[-1])

    def _before_commit(self, conn: Any) -> None:
        self.committing = True
        if self.point == "commit":
            self._fire(conn.connection.dbapi_connection.info.backend_pid, "COMMIT")

    def _checked_in(self, dbapi_connection: Any, _record: Any, _state: Any) -> None:
        # after the transaction: its COMMIT, or a lone command's statement, which
        # committed as it ran (no COMMIT of its own)
        if self.point == "after_commit" and (self.committing or self.statements):
            self._fire(dbapi_connection.info.backend_pid, "after COMMIT")

    @contextlib.contextmanager
    def armed(self) -> Iterator[BackendKiller]:
        hooks = [
            (self.store.engine, "before_cursor_execute", self._before_statement),
            (self.store.engine, "commit", self._before_commit),
            (self.store.engine.pool, "reset", self._checked_in),
        ]
        for target, name, fn in hooks:
            event.listen(target, name, fn)
        try:
            yield self
        finally:
            for target, name, fn in hooks:
                event.remove(target, name, fn)


class LossyRelay:
    """A TCP relay to PostgreSQL that, armed, breaks the connection around one COMMIT.

    ``lose="reply"``: the COMMIT reaches the database, which commits and answers; the
    relay drops the answer and closes both ends. ``lose="request"``: the relay closes both
    ends instead of passing the COMMIT on, so nothing is committed. Either way the client
    sees its connection die during COMMIT and cannot know which happened.

    A lone command sends no COMMIT: its one statement commits as it runs. Armed ``on``
    byte strings, the relay breaks around the first message that holds them all (the
    command's id and an event type: its append, never its read) instead.
    """

    COMMIT = (b"Q\x00\x00\x00\x0bCOMMIT\x00",)  # psycopg's commit: a simple Query message

    def __init__(self, url: str) -> None:
        target = make_url(url)
        self._target = (target.host or "127.0.0.1", target.port or 5432)
        self._url = target
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._armed: Literal["reply", "request"] | None = None
        self._on: tuple[bytes, ...] = self.COMMIT
        self._open: set[socket.socket] = set()  # both ends of every relayed connection
        self.broken = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self) -> str:
        """The database URL through the relay (plain TCP, so it can read the messages)."""
        relayed = self._url.set(host="127.0.0.1", port=self.port)
        return render(relayed.update_query_dict({"sslmode": "disable", "gssencmode": "disable"}))

    def arm(self, lose: Literal["reply", "request"], on: tuple[bytes, ...] = COMMIT) -> None:
        self.broken.clear()
        with self._lock:
            self._armed, self._on = lose, on

    def close(self) -> None:
        """Stops accepting and ends every relayed connection (the database's side too)."""
        self._listener.close()
        with self._lock:
            ends = list(self._open)
        self._end(*ends)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self._target)
            with self._lock:
                self._open.update((client, upstream))
            doomed = threading.Event()
            threading.Thread(target=self._up, args=(client, upstream, doomed), daemon=True).start()
            threading.Thread(
                target=self._down, args=(upstream, client, doomed), daemon=True
            ).start()

    def _take(self) -> Literal["reply", "request"] | None:
        with self._lock:
            lose, self._armed = self._armed, None
            return lose

    def _break(self, *ends: socket.socket) -> None:
        self.broken.set()  # before the client can notice
        self._end(*ends)

    def _end(self, *ends: socket.socket) -> None:
        """Closes ``ends``: a relayed connection ended on one side ends on both (a client
        gone must not leave its database session open behind it)."""
        for end in ends:
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)
            end.close()
        with self._lock:
            self._open.difference_update(ends)

    def _up(self, client: socket.socket, upstream: socket.socket, doomed: threading.Event) -> None:
        with contextlib.suppress(OSError):
            while chunk := client.recv(65536):
                if self._armed is not None and all(part in chunk for part in self._on):
                    lose = self._take()
                    if lose == "request":
                        self._break(client, upstream)
                        return
                    if lose == "reply":
                        doomed.set()
                upstream.sendall(chunk)
        self._end(client, upstream)

    def _down(
        self, upstream: socket.socket, client: socket.socket, doomed: threading.Event
    ) -> None:
        with contextlib.suppress(OSError):
            while chunk := upstream.recv(65536):
                if doomed.is_set():  # the database's answer to the COMMIT: committed
                    self._break(client, upstream)
                    return
                client.sendall(chunk)
        self._end(client, upstream)


def blocked_backend(admin: psycopg.Connection, database: str, statement: str) -> int | None:
    """The pid of a backend of ``database`` waiting on a lock while running ``statement…``
    (a LIKE pattern)."""
    row = admin.execute(
        "SELECT pid FROM pg_stat_activity WHERE datname = %s AND wait_event_type = 'Lock' "
        "AND query LIKE %s AND pid <> pg_backend_pid()",
        [database, statement + "%"],
    ).fetchone()
    return None if row is None else int(row[0])


def kill_blocked(admin_url: str, database: str, statement: str, timeout: float = 10.0) -> int:
    """Wait until a backend blocks on ``statement…`` (behind the test's lock); terminate it."""
    deadline = time.monotonic() + timeout
    with psycopg.connect(libpq(admin_url), autocommit=True) as admin:
        while (pid := blocked_backend(admin, database, statement)) is None:
            assert time.monotonic() < deadline, f"nothing blocked on {statement!r}"
            time.sleep(0.01)
    terminate(admin_url, pid)
    return pid


def game_record(store: GameStore, game_id: str) -> dict[str, Any]:
    """Everything stored about one game, read afresh: events, projection, game, commands."""
    with store.engine.connect() as conn:
        projection = conn.execute(
            select(ProjectionRow.seq, ProjectionRow.snapshot).where(
                ProjectionRow.game_id == game_id
            )
        ).one()
        game = conn.execute(
            select(GameRow.last_seq, GameRow.status).where(GameRow.id == game_id)
        ).one()
        commands = conn.execute(
            select(CommandRow.command_id, CommandRow.first_seq, CommandRow.last_seq)
            .where(CommandRow.game_id == game_id)
            .order_by(CommandRow.first_seq)
        ).all()
    return {
        "events": [e.to_dict() for e in store.reads.events(game_id)],
        "projection": tuple(projection),
        "game": tuple(game),
        "commands": [tuple(c) for c in commands],
    }


def assert_whole(store: GameStore, game_id: str) -> dict[str, Any]:
    """The game is consistent: no partial command, chain and projection match a replay."""
    record = game_record(store, game_id)
    seqs = [e["seq"] for e in record["events"]]
    last_seq = record["game"][0]
    assert seqs == list(range(1, last_seq + 1)), "events and games.last_seq disagree"
    assert record["projection"][0] == last_seq, "the projection is not at the game's last seq"
    covered = [seq for _, first, last in record["commands"] for seq in range(first, last + 1)]
    assert covered == seqs[1:], "events and commands rows disagree"
    for command_id, first, last in record["commands"]:
        assert {e["command_id"] for e in record["events"][first - 1 : last]} == {command_id}
    verification = store.tamper.verify(game_id)
    assert verification.ok, verification.message
    assert store.reads.replay(game_id).snapshot() == record["projection"][1]
    return record

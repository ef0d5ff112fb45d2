"""Notices: "game G has rows up to seq N", told after the commit.

A notice wakes what waits on a game (a stream reads the new rows after its own last seq
and redacts them for its seat) and tells other processes that their cached head of the
game is old (``served.py``). It carries nothing else, so a missed or repeated notice
never loses or leaks anything: a stream that misses one catches up at its next read.

- In this process every listener is told at once, by the writer's thread, after its
  commit (:meth:`Notices.committed`).
- Other processes (PostgreSQL) hear it through ``NOTIFY charleston_events`` sent
  **after** the commit, batched: a sending thread collects the notices of
  :data:`BATCH_SECONDS` and sends them in one statement on a connection of its own
  (autocommit). ``pg_notify`` inside each command's transaction took a lock of the whole
  database at every commit (docs/bench/history.md, "Notices"); one per batch does not.
- A listening thread (:meth:`Notices.start`, the service starts it) ``LISTEN``\\s on a
  connection of its own and tells the listeners what other processes wrote.

The worst case: a process that stops between its commit and its batch (killed, or its
sending connection lost) never sends those notices. Other processes' streams then see
the rows at their next read (a stream re-reads at least every 15 s) and their cached
heads lose one race (a read, then the write). Nothing is lost or shown wrongly.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy.engine import URL

from .urls import driver_options, libpq_conninfo, resolve_url

CHANNEL = "charleston_events"
#: how long the sending thread collects notices before it sends them in one statement
BATCH_SECONDS = 0.005
#: PostgreSQL connections of one process's notices: one sending, one listening
NOTICE_CONNECTIONS = 2
log = logging.getLogger("charleston_fsm.store")
_SEND = "SELECT pg_notify(%s, notice) FROM unnest(%s::text[]) AS notice"

#: told of a notice: (game id, seq; ``None`` when the sender did not say)
Listener = Callable[[str, int | None], None]


class Notices:
    """After-commit notices of one store: told here at once, elsewhere in batches."""

    def __init__(self, url: URL, listen_url: str | None = None) -> None:
        """``listen_url``: where to ``LISTEN`` when not ``url`` (``url`` a pooler in
        transaction mode, which cannot carry it: ``urls.LISTEN_ENV_VAR``)."""
        postgres = url.get_backend_name() == "postgresql"
        #: libpq's connection string (every host of a multi-host URL: after a failover
        #: a new connection finds the new primary, ``target_session_attrs=read-write``)
        self.dsn = libpq_conninfo(url) if postgres else None
        #: psycopg's options of the URL (``prepare_threshold``)
        self.options = driver_options(url) if postgres else {}
        listening = resolve_url(listen_url) if postgres and listen_url else None
        self.listen_dsn = libpq_conninfo(listening) if listening is not None else self.dsn
        self.kind = "postgres-listen" if self.dsn else "in-process"
        self._listeners: list[Listener] = []
        self._gap_listeners: list[Callable[[], None]] = []
        self._pending: dict[str, int] = {}  # game -> latest seq, to send
        self._wake = threading.Condition()
        self._sender: threading.Thread | None = None
        self._sending = False
        self._closing = False
        self._sender_pid: int | None = None
        self._listener: threading.Thread | None = None
        self._stop = threading.Event()
        self._connected = threading.Event()
        self.sent = 0  # notices sent to other processes (each batch counts its notices)
        self.batches = 0

    # -- telling --------------------------------------------------------------------------
    def listen(self, listener: Listener, on_gap: Callable[[], None] | None = None) -> None:
        """Tell ``listener`` every notice (this process's and, once started, the others');
        ``on_gap``: called when notices may have been missed (the listening connection
        was lost and is back)."""
        self._listeners.append(listener)
        if on_gap is not None:
            self._gap_listeners.append(on_gap)

    def committed(self, game_id: str, seq: int) -> None:
        """A write of ``game_id`` up to ``seq`` committed: tell this process's listeners
        now, and other processes in the next batch."""
        self._tell(game_id, seq)
        if self.dsn is None:
            return
        with self._wake:
            if self._pending.get(game_id, 0) < seq:
                self._pending[game_id] = seq
            if self._sender is None:
                self._sender = threading.Thread(
                    target=self._send_loop, name="charleston-notices", daemon=True
                )
                self._sender.start()
            self._wake.notify()

    def _tell(self, game_id: str, seq: int | None) -> None:
        for listener in self._listeners:
            try:
                listener(game_id, seq)
            except Exception:  # one listener's failure must not stop the others
                continue

    def flush(self, timeout: float = 5.0) -> None:
        """Return once every notice so far is sent (or ``timeout`` passed)."""
        deadline = time.monotonic() + timeout
        with self._wake:
            while (self._pending or self._sending) and self._sender is not None:
                left = deadline - time.monotonic()
                if left <= 0 or not self._wake.wait(left):
                    return

    # -- sending (one thread per process, started on the first notice) -----------------
    def _send_loop(self) -> None:
        conn: Any = None
        try:
            while True:
                with self._wake:
                    while not self._pending and not self._closing:
                        self._wake.wait()
                    if not self._pending:  # closing, everything sent
                        return
                    self._sending = True
                time.sleep(BATCH_SECONDS)  # let the batch fill
                with self._wake:
                    batch, self._pending = self._pending, {}
                conn = self._send(conn, [f"{game}:{seq}" for game, seq in batch.items()])
                with self._wake:
                    self._sending = False
                    self._wake.notify_all()
        finally:
            if conn is not None:
                conn.close()
            with self._wake:
                self._sending = False
                self._sender = None
                self._wake.notify_all()

    def _send(self, conn: Any, notices: list[str]) -> Any:
        """One statement for the whole batch; one retry on a new connection, then the
        batch is given up (other processes catch up at their next read)."""
        import psycopg

        for attempt in range(2):  # a lost connection (a failover): once more, afresh
            try:
                if conn is None or conn.closed:
                    conn = psycopg.connect(self.dsn, autocommit=True, **self.options)
                    self._sender_pid = conn.info.backend_pid
                conn.execute(_SEND, [CHANNEL, notices])
                self.sent += len(notices)
                self.batches += 1
                return conn
            except Exception as exc:
                if conn is not None:
                    conn.close()
                conn = None
                if attempt == 1:
                    log.warning("notices not sent", extra={"error": type(exc).__name__})
                else:
                    time.sleep(0.05)
        return conn

    def close(self) -> None:
        """Send what is pending, then stop both threads and close their connections."""
        with self._wake:
            self._closing = True
            sender = self._sender
            self._wake.notify_all()
        if sender is not None:
            sender.join(timeout=10)
        with self._wake:
            self._closing = False
        self.stop()

    # -- listening (the service's thread) ------------------------------------------------
    def start(self) -> None:
        """Start hearing other processes' notices (PostgreSQL; a no-op on SQLite)."""
        if self.dsn is None or self._listener is not None:
            return
        self._stop.clear()
        self._listener = threading.Thread(
            target=self._listen_loop, name="charleston-listen", daemon=True
        )
        self._listener.start()
        self._connected.wait(5)

    def stop(self) -> None:
        self._stop.set()
        if self._listener is not None:
            self._listener.join(timeout=5)
            self._listener = None
        self._connected.clear()

    @property
    def healthy(self) -> bool:
        """Whether notices of other processes are heard (always, without PostgreSQL)."""
        return self.dsn is None or self._connected.is_set()

    def _listen_loop(self, poll: float = 0.5) -> None:
        import psycopg

        backoff = 0.2
        while not self._stop.is_set():
            try:
                # every reconnection finds the primary anew (after a failover: the new
                # one); what was missed meanwhile is made up by on_gap's re-reads
                with psycopg.connect(self.listen_dsn or "", autocommit=True) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    self._connected.set()
                    backoff = 0.2
                    # whatever happened while no one listened: every waiter re-reads
                    for on_gap in self._gap_listeners:
                        on_gap()
                    while not self._stop.is_set():
                        for note in conn.notifies(timeout=poll):
                            if note.pid == self._sender_pid:
                                continue  # this process's own: told when it committed
                            game_id, _, seq = note.payload.rpartition(":")
                            self._tell(game_id, int(seq) if seq.isdigit() else None)
            except Exception as exc:  # connection lost: retry; streams keep re-reading
                self._connected.clear()
                if self._stop.is_set():
                    return
                log.warning("listen connection lost", extra={"error": type(exc).__name__})
                time.sleep(backoff)
                backoff = min(backoff * 2, 5.0)

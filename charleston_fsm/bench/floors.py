"""The database's own floor: the store's row and transaction shapes through the bare driver.

``floor_*`` tables mirror the store's (``store/database/models.py``): one event row, one projection
document, the games row's head, one command row. A floor transaction is what a command
does at the least: lock the game, insert an event, move the projection and the head,
record the command, commit; with no chart, no ORM, no Python between. (The store sends
its notices after the commit, batched: ``pgbench_rate(notify=True)`` measures the shape
with ``pg_notify`` inside, as commands ran before issue 25.)
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..engine.table import Table
from ..engine.tiles import Deal
from .databases import Database
from .processes import rate_of, run_for

PG_DDL = """
CREATE TABLE IF NOT EXISTS floor_games (id VARCHAR(64) PRIMARY KEY, last_seq INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS floor_events (
  game_id VARCHAR(64), seq INTEGER, type VARCHAR(32), seat VARCHAR(8), step VARCHAR(32),
  payload {json}, created_at {time}, command_id VARCHAR(128), prev_hash VARCHAR(64),
  hash VARCHAR(64), PRIMARY KEY (game_id, seq));
CREATE TABLE IF NOT EXISTS floor_projections (
  game_id VARCHAR(64) PRIMARY KEY, seq INTEGER, snapshot {json});
CREATE TABLE IF NOT EXISTS floor_commands (
  game_id VARCHAR(64), command_id VARCHAR(128), command {json}, first_seq INTEGER,
  last_seq INTEGER, PRIMARY KEY (game_id, command_id))
"""
HASH = "0" * 64
PAYLOAD = json.dumps({"tiles": [3, 17, 41], "blind": 0, "step": "first_right"})


def snapshot_doc() -> str:
    """A real projection document (a fresh table's snapshot), so the row sizes match."""
    return json.dumps(Table(Deal.shuffled(1)).snapshot())


def create_tables(database: Database, games: int) -> list[str]:
    """The floor tables with ``games`` games (ids ``"1"``.. so pgbench can name them)."""
    ddl = PG_DDL.format(
        json="JSONB" if database.is_postgres else "TEXT",
        time="TIMESTAMPTZ" if database.is_postgres else "TEXT",
    )
    ids = [str(i) for i in range(1, games + 1)]
    conn = database.connect()
    try:
        for statement in ddl.split(";"):
            conn.execute(statement)
        for gid in ids:
            conn.execute(
                _sql(database, "INSERT INTO floor_games VALUES (%s, 0) ON CONFLICT DO NOTHING"),
                (gid,),
            )
            conn.execute(
                _sql(
                    database,
                    "INSERT INTO floor_projections VALUES (%s, 0, %s) ON CONFLICT DO NOTHING",
                ),
                (gid, snapshot_doc()),
            )
        conn.commit() if database.is_postgres else None
    finally:
        conn.close()
    return ids


def _sql(database: Database, statement: str) -> str:
    return statement if database.is_postgres else statement.replace("%s", "?")


def insert_commit(database: Database, conn: Any, game_id: str, seq: int) -> None:
    """One event row inserted and committed: the floor of "one command" (same row shape)."""
    if not database.is_postgres:
        conn.execute("BEGIN IMMEDIATE")
    conn.execute(
        _sql(database, "INSERT INTO floor_events VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)"),
        (game_id, seq, "pass_confirmed", "east", "first_right", PAYLOAD, _now(), "c", HASH, HASH),
    )
    conn.commit() if database.is_postgres else conn.execute("COMMIT")


def transaction(database: Database, conn: Any, game_id: str, doc: str) -> None:
    """A command's transaction shape, statement by statement, through the bare driver."""
    pg = database.is_postgres
    if not pg:
        conn.execute("BEGIN IMMEDIATE")
    lock = "SELECT last_seq FROM floor_games WHERE id = %s" + (" FOR UPDATE" if pg else "")
    seq = conn.execute(_sql(database, lock), (game_id,)).fetchone()[0] + 1
    conn.execute(
        _sql(database, "INSERT INTO floor_events VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)"),
        (game_id, seq, "pass_confirmed", "east", "first_right", PAYLOAD, _now(), "c", HASH, HASH),
    )
    conn.execute(
        _sql(database, "UPDATE floor_projections SET seq = %s, snapshot = %s WHERE game_id = %s"),
        (seq, doc, game_id),
    )
    conn.execute(
        _sql(database, "UPDATE floor_games SET last_seq = %s WHERE id = %s"), (seq, game_id)
    )
    conn.execute(
        _sql(database, "INSERT INTO floor_commands VALUES (%s, %s, %s, %s, %s)"),
        (game_id, f"c{seq}", PAYLOAD, seq, seq),
    )
    if pg:
        conn.commit()
    else:
        conn.execute("COMMIT")


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _floor_worker(database: Database, game_id: str, barrier: Any, seconds: float) -> int:
    conn = database.connect()
    doc = snapshot_doc()
    try:
        return run_for(barrier, seconds, lambda: transaction(database, conn, game_id, doc))
    finally:
        conn.close()


def python_floor_rate(database: Database, processes: int, seconds: float) -> float:
    """Transactions/s of ``processes`` bare-driver processes, one floor game each."""
    ids = create_tables(database, processes)
    return rate_of(_floor_worker, [(database, g) for g in ids], seconds)[0]


PGBENCH_SCRIPT = """\\set g :client_id + 1
BEGIN;
SELECT last_seq + 1 AS next FROM floor_games WHERE id = :g::text FOR UPDATE \\gset
INSERT INTO floor_events VALUES (:g::text, :next, 'pass_confirmed', 'east', 'first_right', \
'{payload}', now(), 'c', '{hash}', '{hash}');
UPDATE floor_projections SET seq = :next, snapshot = '{doc}' WHERE game_id = :g::text;
UPDATE floor_games SET last_seq = :next WHERE id = :g::text;
INSERT INTO floor_commands VALUES (:g::text, 'c' || :next, '{payload}', :next, :next);
{notify}COMMIT;
"""
NOTIFY = "SELECT pg_notify('floor', :g::text);\n"


#: pgbench's words when the server (or the role) has no connection slot left: another
#: job holds them
_NO_SLOT = re.compile(r"too many clients already|too many connections for role")
#: how long a floor waits, in all, for connections another job holds to be given back
SLOT_WAIT_SECONDS = 60


class FloorFailed(RuntimeError):
    """A floor could not be measured: what happened, and what to do (``plain_lines``, the
    command line prints them instead of a traceback)."""

    def __init__(self, *lines: str) -> None:
        super().__init__(" ".join(lines))
        self.plain_lines = lines


def pgbench_rate(
    database: Database, clients: int, seconds: float, *, notify: bool = False
) -> float | None:
    """pgbench's tps for the command's transaction shape, one game per client (``notify``:
    with ``pg_notify`` inside the transaction); None when ``pgbench`` is not installed.

    A server with no connection slot left for ``clients`` more (another job holds them) is
    waited for, with growing pauses, for :data:`SLOT_WAIT_SECONDS` in all; then
    :class:`FloorFailed` says so."""
    pgbench = shutil.which("pgbench")
    if pgbench is None:
        return None
    create_tables(database, clients)
    doc = snapshot_doc().replace("'", "''")
    script = PGBENCH_SCRIPT.format(
        payload=PAYLOAD, hash=HASH, doc=doc, notify=NOTIFY if notify else ""
    )
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write(script)
    pause, waited = 1.0, 0.0
    try:
        while True:
            done = _pgbench(pgbench, database, clients, seconds, f.name)
            if not _NO_SLOT.search(done.stderr) or waited >= SLOT_WAIT_SECONDS:
                break
            time.sleep(pause)
            waited += pause
            pause = min(2 * pause, 16.0)
    finally:
        Path(f.name).unlink()
    found = re.search(r"tps = ([0-9.]+)", done.stdout)
    if _NO_SLOT.search(done.stderr):
        raise FloorFailed(
            f"pgbench could not open its {clients} connections for {waited:.0f} s: the "
            "server had no slot left (max_connections; other jobs hold them).",
            "Run the bench when fewer connections are held, or raise max_connections.",
        )
    if done.returncode != 0 or not found:
        raise FloorFailed(f"pgbench failed: {done.stderr.strip()[-500:]}")
    return float(found.group(1))


def _pgbench(
    pgbench: str, database: Database, clients: int, seconds: float, script: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            pgbench,
            "-n",
            "-c",
            str(clients),
            "-j",
            str(clients),
            "-T",
            str(max(1, round(seconds))),
            "-f",
            script,
            database.libpq,
        ],
        capture_output=True,
        text=True,
        timeout=seconds + 60,
    )

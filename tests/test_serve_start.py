"""Two ``serve`` processes started at once on an empty SQLite file (issue 17 N7): the
second waits for the first's migration, and both serve."""

from __future__ import annotations

import multiprocessing
import sqlite3
import threading
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import httpx
from api_helpers import Server
from store_workers import migrate_at

from charleston_fsm.store import GameStore


def start_together(url: str, logs: list[Path]) -> tuple[list[Server], list[BaseException]]:
    """Start one ``serve`` per log file at the same moment; the ready ones and the errors."""
    with ThreadPoolExecutor(len(logs)) as pool:
        futures = [pool.submit(Server, url, log) for log in logs]
    servers, failures = [], []
    for future in futures:
        if future.exception() is None:
            servers.append(future.result())
        else:
            failures.append(future.exception())
    return servers, failures


def test_two_serve_processes_start_at_once_on_an_empty_sqlite_file(tmp_path: Path) -> None:
    for attempt in range(4):  # the race was lost about 1 time in 8: try it several times
        url = f"sqlite:///{tmp_path / f'empty-{attempt}.sqlite3'}"
        logs = [tmp_path / f"{name}-{attempt}.log" for name in ("first", "second")]
        servers, failures = start_together(url, logs)
        try:
            assert not failures, failures
            for server in servers:
                created = httpx.post(f"{server.base_url}/v1/games", json={"seed": 1}, timeout=60)
                assert created.status_code == 201, created.text
        finally:
            for server in servers:
                server.stop()


def test_migrations_racing_on_an_empty_sqlite_file_run_one_after_the_other(
    tmp_path: Path,
) -> None:
    """The heart of it, tighter: processes migrate the same empty file at one moment."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(3, mp_context=context) as pool:
        for attempt in range(8):
            url = f"sqlite:///{tmp_path / f'race-{attempt}.sqlite3'}"
            start_at = time.time() + 1.0
            outcomes = list(pool.map(migrate_at, [url] * 3, [start_at] * 3))
            assert outcomes == ["current"] * 3, (attempt, outcomes)


def test_a_store_opens_a_file_another_connection_is_writing_before_wal(tmp_path: Path) -> None:
    """A new SQLite file is not in WAL mode until a store first opens it. While another
    connection holds a write lock on it (a second process migrating it), SQLite refuses
    the switch to WAL at once, whatever the busy timeout: the store must wait instead
    (this is how a second ``serve`` lost the start-up race, about 1 time in 30 under load)."""
    path = tmp_path / "fresh.sqlite3"
    writer = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    writer.execute("CREATE TABLE other_work (i INTEGER)")
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("INSERT INTO other_work VALUES (1)")
    released = threading.Timer(0.5, writer.execute, ["COMMIT"])
    released.start()
    store = GameStore(f"sqlite:///{path}")
    try:
        started = time.monotonic()
        assert store.core.schema_state().status == "unversioned"  # waited for the writer, then read
        assert time.monotonic() - started >= 0.4
        with store.engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    finally:
        released.join()
        writer.close()
        store.dispose()

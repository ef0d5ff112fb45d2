"""A serving process settles its heap once started (``api/heap.py``): the start-up
objects are frozen, so a full collection of the cyclic collector walks only what the
service made since; an app built for a test or an embedding program leaves the host's
collector alone."""

from __future__ import annotations

import gc
import time
from pathlib import Path

import pytest
from api_helpers import Server
from fastapi.testclient import TestClient

from charleston_fsm.api import create_app
from charleston_fsm.store import GameStore

#: a serve process tracks ~200,000 objects once started; far more than a handful
STARTUP_OBJECTS = 50_000


def _settled(server: Server) -> list[dict[str, object]]:
    return [line for line in server.log_lines() if line["msg"].startswith("heap settled")]


def test_serve_freezes_its_start_up_objects_once_started(tmp_path: Path, sqlite_url: str) -> None:
    server = Server(sqlite_url, tmp_path / "server.log")
    try:
        with server.client() as client:  # serving as before, once settled
            assert client.get("/healthz").status_code == 200
        settled = _settled(server)
        assert len(settled) == 1, server.log_lines()
        assert int(str(settled[0]["frozen"])) > STARTUP_OBJECTS, settled
    finally:
        server.stop()


@pytest.mark.postgres
def test_each_worker_process_freezes_its_own(tmp_path: Path, pg_url: str) -> None:
    server = Server(pg_url, tmp_path / "server.log", args=["--workers", "2"])
    try:
        deadline = time.monotonic() + 120  # ready when one answers; the other may be starting
        while len(settled := _settled(server)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len({line["pid"] for line in settled}) == 2, settled
        assert all(int(str(line["frozen"])) > STARTUP_OBJECTS for line in settled), settled
    finally:
        server.stop()


def test_an_app_built_in_process_leaves_the_collector_alone(sqlite_url: str) -> None:
    before = gc.get_freeze_count()
    store = GameStore(sqlite_url)
    try:
        with TestClient(create_app(store, clock_interval=None)) as client:
            assert client.get("/healthz").status_code == 200
            assert gc.get_freeze_count() == before
    finally:
        store.dispose()


def test_an_app_asked_to_settle_freezes_what_start_up_left(sqlite_url: str) -> None:
    store = GameStore(sqlite_url)
    try:
        with TestClient(create_app(store, clock_interval=None, freeze_heap=True)) as client:
            frozen = gc.get_freeze_count()
            assert frozen > STARTUP_OBJECTS
            # what a full collection walks from now: what was made since, not all of it
            assert len(gc.get_objects()) < frozen
            assert client.get("/healthz").status_code == 200
    finally:
        gc.unfreeze()  # the test process's collector as it was
        store.dispose()

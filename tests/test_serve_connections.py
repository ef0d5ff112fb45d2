"""The connection budget (issue 30 R7): ``serve`` says what each process may open, opens
no more under load, and refuses a plan PostgreSQL cannot admit, with what to do."""

from __future__ import annotations

import re
import resource
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import conftest
import httpx
import psycopg
import pytest
from api_helpers import Server, cli, running
from conftest import _libpq
from sqlalchemy import make_url

from charleston_fsm.api.serve import OPEN_FILES_WANTED
from charleston_fsm.bench.server import free_port
from charleston_fsm.store.database.urls import render

pytestmark = pytest.mark.postgres

LINE = re.compile(r"this process may open (\d+) PostgreSQL connections: (\d+) for routes, ")


def _sessions(url: str, application: str) -> int:
    """Sessions on the test's database that the server opened (its URL names the
    application): the suite's own connections to the shared database are not counted."""
    with psycopg.connect(_libpq(url), autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND application_name = %s",
            (application,),
        ).fetchone()
    assert row is not None
    return int(row[0])


def test_serve_says_what_it_may_open_and_opens_no_more_under_load(
    pg_url: str, tmp_path: Path
) -> None:
    application = f"budget-{uuid.uuid4().hex[:8]}"
    server_url = render(make_url(pg_url).update_query_dict({"application_name": application}))
    with running(server_url, tmp_path, args=["--route-threads", "2"]) as server:
        said = [line["msg"] for line in server.log_lines() if LINE.search(line["msg"])]
        assert len(said) == 1, server.log_path.read_text()
        total, routes = map(int, LINE.search(said[0]).groups())  # type: ignore[union-attr]
        assert routes == 2
        # the parts named add up: 2 for routes, the clock worker, the credential watch,
        # the sealing thread, the feed's sequencer, the webhook sender, the notices'
        # sending and listening connections
        assert total == 2 + 5 + 2
        assert (
            "1 clock worker, 1 credential watch, 1 sealing, 1 feed sequencer, "
            "1 webhook sender, 1 notices sending, "
        ) in said[0]

        peak = [0]
        stop = threading.Event()

        def watch() -> None:
            while not stop.is_set():
                peak[0] = max(peak[0], _sessions(pg_url, application))

        def create(seed: int) -> int:
            with httpx.Client(base_url=server.base_url, timeout=120) as client:
                return client.post("/v1/games", json={"seed": seed}).status_code

        watcher = threading.Thread(target=watch)
        watcher.start()
        try:
            with ThreadPoolExecutor(24) as pool:  # far more requests at once than threads
                statuses = list(pool.map(create, range(96)))
        finally:
            stop.set()
            watcher.join()
        assert statuses == [201] * 96
        assert 0 < peak[0] <= total, (peak[0], total)


def test_serve_refuses_more_workers_than_the_server_admits(pg_url: str) -> None:
    with psycopg.connect(_libpq(pg_url), autocommit=True) as conn:
        row = conn.execute("SHOW max_connections").fetchone()
    assert row is not None
    workers = int(row[0])  # each process may open several: this many cannot fit
    done = cli(
        "serve",
        "--database-url",
        pg_url,
        "--port",
        str(free_port()),
        "--workers",
        str(workers),
        check=False,
    )
    said = done.stdout + done.stderr
    assert done.returncode == 2, said
    assert "Traceback" not in said
    assert f"Not starting: {workers} process(es) of " in said
    assert f"(max_connections {workers}, less " in said
    assert "fewer workers (--workers " in said and "PgBouncer" in said

    # an operator's own limit (a pooler's client limit) is held to as well
    done = cli(
        "serve",
        "--database-url",
        pg_url,
        "--port",
        str(free_port()),
        "--max-connections",
        "5",
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "more than the 5 this PostgreSQL admits (--max-connections)" in done.stderr


@pytest.fixture
def limited_role(pg_admin_url: str) -> Iterator[str]:
    """A throwaway role allowed 10 connections, owning a throwaway database."""
    yield from conftest.limited_role(pg_admin_url, "charleston_budget", 10)


def test_a_role_limit_refuses_a_process_too_large_and_admits_one_that_fits(
    limited_role: str, tmp_path: Path
) -> None:
    assert "@" in limited_role and "postgres@" not in limited_role
    done = cli("serve", "--database-url", limited_role, "--port", str(free_port()), check=False)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "the role's limit 10" in done.stderr
    assert "--route-threads 3 or $CHARLESTON_ROUTE_THREADS: 10 connections a process" in (
        done.stderr
    )
    # as it says: 3 route threads fit, and the service serves
    with (
        running(limited_role, tmp_path, args=["--route-threads", "3"]) as server,
        server.client() as client,
    ):
        assert client.post("/v1/games", json={"seed": 3}).status_code == 201


def test_serve_raises_its_open_files_limit_for_streams(tmp_path: Path, pg_url: str) -> None:
    """A process started with the soft limit of open files many systems give (1,024)
    would refuse the thousandth spectator stream: ``serve`` raises it towards the hard
    limit, and says so."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    expected = OPEN_FILES_WANTED if hard == resource.RLIM_INFINITY else min(OPEN_FILES_WANTED, hard)
    if expected <= 1024:
        pytest.skip(f"this machine's hard limit ({hard}) leaves nothing to raise")
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))  # what the child starts with
    try:
        server = Server(pg_url, tmp_path / "server.log")
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    try:
        limits = Path(f"/proc/{server.proc.pid}/limits").read_text()
        found = re.search(r"Max open files\s+(\d+)", limits)
        assert found is not None and int(found.group(1)) == expected, limits
        said = [line["msg"] for line in server.log_lines() if "open files" in line["msg"]]
        assert said and f"up to {expected} open files each" in said[0], said
        assert "raised from 1024" in said[0], said
    finally:
        server.stop()


def test_an_idle_client_connection_outlives_the_clients_own_idle_time(
    tmp_path: Path, pg_url: str
) -> None:
    """A connection idle 6 s still answers its next request. Clients and proxies close
    their idle connections first (httpx after 5 s, a load balancer commonly after 60 s);
    a server that closed at 5 s (uvicorn's default) answered a request sent at that very
    moment with nothing, which CI met as "Server disconnected without sending a response"."""
    with running(pg_url, tmp_path) as server:
        host, port = server.base_url.removeprefix("http://").split(":")
        request = f"GET /healthz HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()
        with socket.create_connection((host, int(port)), timeout=30) as conn:
            for _ in range(2):
                conn.sendall(request)
                assert _one_answer(conn).startswith(b"HTTP/1.1 200")
                time.sleep(6)  # idle past httpx's 5 s: the client would have closed first


def _one_answer(conn: socket.socket) -> bytes:
    """One whole HTTP/1.1 answer read off ``conn`` (its head, then Content-Length bytes);
    ``b""`` when the server closed the connection instead."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    found = re.search(rb"content-length: *(\d+)", head, re.IGNORECASE)
    assert found is not None, head
    length = int(found.group(1))
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body

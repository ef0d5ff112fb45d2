"""``serve --workers N``: N processes on one port, each built from the CLI's settings,
with live streams that follow commands stored through another process; and where the
package finds its migrations (importlib, not the checkout)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from alembic.script import ScriptDirectory
from api_helpers import Server, StreamReader, cli, running

from charleston_fsm.engine.tiles import is_joker
from charleston_fsm.store import alembic_config
from charleston_fsm.store.database.schema import MIGRATIONS_PACKAGE, migrations_dir

PLATFORM_KEY = "platform-key-of-the-workers-test"


def _pids_of_fresh_connections(server: Server, want: int, tries: int = 300) -> set[int]:
    """``/healthz`` over new connections until ``want`` distinct processes have answered."""
    pids: set[int] = set()
    for _ in range(tries):
        with server.client() as client:  # a new connection: the kernel picks a worker
            pids.add(client.get("/healthz").json()["pid"])
        if len(pids) >= want:
            break
    return pids


def _client_on_another_worker(server: Server, token: str, pid: int) -> httpx.Client:
    """A kept-alive client whose connection another process than ``pid`` serves."""
    for _ in range(300):
        client = server.client(token)
        if client.get("/healthz").json()["pid"] != pid:
            return client
        client.close()
    raise AssertionError(f"every new connection landed on process {pid}")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _on_every_worker(server: Server, pids: set[int], probe: Callable[[httpx.Client], Any]):
    """``probe(client)`` over new connections until each of ``pids`` has run it once;
    returns {pid: what probe returned there}."""
    seen: dict[int, Any] = {}
    for _ in range(300):
        with server.client() as client:  # a new connection: the kernel picks a worker
            pid = client.get("/healthz").json()["pid"]
            if pid not in seen:
                seen[pid] = probe(client)
        if set(seen) == pids:
            return seen
    raise AssertionError(f"only workers {sorted(seen)} of {sorted(pids)} were reached")


@pytest.mark.postgres
def test_two_workers_share_a_port_and_streams_cross_them(pg_url: str, tmp_path: Path) -> None:
    key_file = tmp_path / "fleet-anchor.key"  # not the test run's key file of the environment
    args = ("--workers", "2", "--platform-key", PLATFORM_KEY, "--max-body-bytes", "2000")
    args += ("--anchor-key-file", str(key_file))
    with running(pg_url, tmp_path, args=args) as server:
        pids = _pids_of_fresh_connections(server, 2)
        assert len(pids) == 2, f"only {pids} answered"
        assert server.proc.pid not in pids  # the supervisor serves nothing itself

        # every worker built its app from the command line's settings
        def settings_hold(client: httpx.Client) -> str:
            assert client.post("/v1/games", json={"seed": 1}).status_code == 401  # platform key
            auth = {"Authorization": f"Bearer {PLATFORM_KEY}"}
            padded = {"seed": 1, "players": {"east": "x" * 3000}}
            assert client.post("/v1/games", json=padded, headers=auth).status_code == 413
            created = client.post("/v1/games", json={"seed": 3}, headers=auth)
            assert created.status_code == 201, created.text
            return str(created.json()["game_id"])

        games = _on_every_worker(server, pids, settings_hold)
        for game in games.values():  # anchors signed by each worker with the CLI's key file
            cli("verify", game, "--database-url", pg_url, "--anchor-key-file", str(key_file))

        with server.client(PLATFORM_KEY) as platform:
            created = platform.post("/v1/games", json={"seed": 21})
        assert created.status_code == 201, created.text
        game_id, tokens = created.json()["game_id"], created.json()["tokens"]
        path = f"/v1/games/{game_id}"

        west = StreamReader(server.base_url + path + "/stream", tokens["west"], which_pid=True)
        assert west.pid in pids
        east = _client_on_another_worker(server, tokens["east"], west.pid)
        try:
            rack = east.get(path).json()["view"]["rack"]
            tiles = [t["id"] for t in rack if not is_joker(t["id"])][:3]
            sent_at = time.monotonic()
            answer = east.post(path + "/commands", json={"type": "confirm_pass", "tiles": tiles})
            assert answer.status_code == 200, answer.text
            seq = answer.json()["events"][-1]["seq"]
            assert east.get("/healthz").json()["pid"] != west.pid  # stored by the other one
        finally:
            east.close()
        # woken by NOTIFY, not by the stream's 15 s safety re-read
        assert west.wait_for_seq(seq, timeout=5), west.error
        assert time.monotonic() - sent_at < 5
        confirmed = [e for e in west.events() if e["type"] == "pass_confirmed"]
        assert [e["seat"] for e in confirmed] == ["east"]
        assert "tiles" not in confirmed[0]["payload"]  # east's tiles stay east's
        west.close()
    for pid in pids:  # stopping serve stops its workers
        deadline = time.monotonic() + 10
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(pid), f"worker {pid} outlived serve"


def test_several_workers_refuse_sqlite(sqlite_url: str) -> None:
    done = cli("serve", "--workers", "2", "--database-url", sqlite_url, check=False)
    assert done.returncode == 2
    assert "--workers 2 needs PostgreSQL" in done.stdout + done.stderr
    assert "--workers 1" in done.stdout + done.stderr


def test_migrations_are_found_in_the_installed_package(tmp_path: Path) -> None:
    """The store asks importlib for ``charleston_fsm.migrations``: from any working
    directory, with the checkout's root off ``sys.path``, it finds env.py and every
    revision of versions/."""
    probe = (
        "import sys, json; from importlib import resources;"
        "from charleston_fsm.store.database.schema import migrations_dir;"
        f"print(json.dumps([str(migrations_dir()), str(resources.files({MIGRATIONS_PACKAGE!r})),"
        "sys.path]))"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", probe], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr

    found, from_importlib, path = json.loads(done.stdout)
    assert found == from_importlib
    assert str(Path.cwd()) not in path and "" not in path  # not found through the checkout
    here = migrations_dir()
    assert Path(found) == here and (here / "env.py").is_file()
    shipped = {p.stem.split("_")[0] for p in (here / "versions").glob("[0-9]*.py")}
    script = ScriptDirectory.from_config(alembic_config())
    assert {r.revision for r in script.walk_revisions()} == shipped
    assert script.get_current_head() == max(shipped)

"""``simulate --url`` rides through a service restart (issue 17 N8).

The service process is stopped in the middle of the round and started again on the same
port a few seconds later; simulate waits for it, resends what was in doubt with the same
command ids, and reports a failure only for a table that is really unfinished.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from api_helpers import Server

from charleston_fsm.bench.server import cli_command
from charleston_fsm.store import GameStore


def test_simulate_rides_through_a_service_restart(sqlite_url: str, tmp_path: Path) -> None:
    server = Server(sqlite_url, tmp_path / "first.log")
    environment = {**os.environ, "COLUMNS": "400"}
    environment.pop("CHARLESTON_DATABASE_URL", None)
    simulate = subprocess.Popen(
        [
            *cli_command(),
            "simulate",
            "--url",
            server.base_url,
            "--tables",
            "12",
            "--concurrency",
            "2",
            "--timeout",
            "240",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=environment,
    )
    restarted: Server | None = None
    try:
        store = GameStore(sqlite_url)
        try:  # wait until the round is being played: some commands stored
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline and not any(
                g.last_seq > 5 for g in store.registry.games()
            ):
                time.sleep(0.2)
        finally:
            store.dispose()
        server.proc.kill()  # the process dies in the middle of the round
        server.proc.wait()
        time.sleep(4)  # down for a while: every request meanwhile fails to connect
        restarted = Server(sqlite_url, tmp_path / "second.log", port=server.port)
        output, _ = simulate.communicate(timeout=300)
    finally:
        if simulate.poll() is None:
            simulate.kill()
        server.stop()
        if restarted is not None:
            restarted.stop()
    assert simulate.returncode == 0, output
    rows = {
        cells[1].strip(): cells[2].strip()
        for line in output.splitlines()
        if len(cells := line.split("│")) == 4
    }
    assert rows["tables"] == rows["finished"] == rows["verified"] == "12", output

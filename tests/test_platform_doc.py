"""docs/platforms.md's walkthrough, run as printed (bash) against a real ``serve``: a webhook
endpoint, the example receiver, a round the bots play, a delivery verified by the CLI,
the feed read from a cursor, a signed record verified."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from api_helpers import running

from charleston_fsm.bench.server import free_port

ROOT = Path(__file__).resolve().parent.parent
KEY = "walkthrough-key"


def walkthrough() -> str:
    text = (ROOT / "docs" / "platforms.md").read_text()
    [block] = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    return block


def test_the_walkthrough_runs_as_printed(sqlite_url: str, tmp_path: Path) -> None:
    env = {"CHARLESTON_PLATFORM_KEY": KEY, "CHARLESTON_WEBHOOK_ALLOW": "127.0.0.1"}
    with running(sqlite_url, tmp_path, env=env) as server:
        script = tmp_path / "walkthrough.sh"
        script.write_text(walkthrough().replace("scripts/", f"{ROOT}/scripts/"))
        shell_env = {
            **os.environ,
            "BASE": server.base_url,
            "KEY": KEY,
            "PORT": str(free_port()),
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        }
        done = subprocess.run(
            ["bash", str(script)],
            cwd=tmp_path,
            env=shell_env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "verified: delivery" in done.stdout
    assert "game.created" in done.stdout  # the feed read after "downtime"
    assert "ok" in done.stdout and "the hash chain holds" in done.stdout

"""The README, as written, on a clean clone: `./dev demo`, then `./dev serve` and the
curl session against it. Slow (the clone sets up its own .venv), but part of `.ci/run`."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from charleston_fsm.bench.server import free_port

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()

pytestmark = pytest.mark.slow


def _env() -> dict[str, str]:
    env = {**os.environ, "COLUMNS": "160"}
    for name in ("CHARLESTON_DATABASE_URL", "CHARLESTON_PLATFORM_KEY", "VIRTUAL_ENV"):
        env.pop(name, None)
    return env


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    target = tmp_path_factory.mktemp("quickstart") / "charleston-fsm"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(target)], check=True)
    return target


def test_readme_quickstart_demo(clone: Path) -> None:
    assert "./dev demo" in README
    done = subprocess.run(
        ["./dev", "demo"], cwd=clone, capture_output=True, text=True, env=_env(), timeout=900
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "(blind pass)" in done.stdout
    assert re.search(r"agree on [123] courtesy", done.stdout)
    assert "demo: ruleset nmjl" in done.stdout and "demo: ruleset house" in done.stdout
    assert "verify (hash chain, head, anchors, projection = replay): ok" in done.stdout
    assert (clone / "var" / "charleston.sqlite3").exists()


def test_readme_curl_session(clone: Path) -> None:
    if shutil.which("curl") is None or shutil.which("jq") is None:
        pytest.skip("the README's curl session needs curl and jq")
    session = re.search(r"<!-- curl-session -->\n```sh\n(.*?)```", README, re.S)
    assert session, "README lost its curl session"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = open(clone / "serve.log", "wb")  # noqa: SIM115
    server = subprocess.Popen(
        ["./dev", "serve", "--port", str(port)], cwd=clone, stdout=log, stderr=log, env=_env()
    )
    try:
        deadline = time.monotonic() + 600
        while True:
            assert server.poll() is None, (clone / "serve.log").read_text()[-3000:]
            try:
                if httpx.get(f"{base}/readyz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "serve did not become ready"
            time.sleep(0.2)
        done = subprocess.run(
            ["bash", "-eu", "-c", session.group(1)],
            cwd=clone,
            capture_output=True,
            text=True,
            env={**_env(), "BASE": base},
            timeout=120,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        out = done.stdout
        assert '"direction":"right"' in out and '"count":3' in out
        assert '"type":"pass_confirmed"' in out
        assert '{"status":409,"code":"not_allowed_now"' in out
        game_id = json.loads((clone / "game.json").read_text())["game_id"]
        assert game_id in out  # the audit names its game
        assert '"ok":true' in out
    finally:
        server.terminate()
        server.wait(15)
        log.close()

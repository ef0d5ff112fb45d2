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
#: the README and every page of docs/: each command they print must run as printed
DOCS = {
    path: path.read_text() for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
}
PLATFORMS = (ROOT / "docs" / "platforms.md").read_text()

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


def _run(clone: Path, command: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """A command exactly as printed, through the shell, in the clone."""
    return subprocess.run(
        ["bash", "-c", command],
        cwd=clone,
        capture_output=True,
        text=True,
        env=_env(),
        timeout=timeout,
    )


def test_readme_quickstart_demo(clone: Path) -> None:
    assert "./dev demo" in README
    done = _run(clone, "./dev demo", timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "installing charleston-fsm (the service only" in done.stderr
    assert "Collecting" in done.stderr  # progress while installing
    assert "(blind pass)" in done.stdout
    assert re.search(r"agree on [123] courtesy", done.stdout)
    assert "demo: ruleset nmjl" in done.stdout and "demo: ruleset house" in done.stdout
    assert "verify (hash chain, head, anchors, projection = replay): ok" in done.stdout
    assert (clone / "var" / "charleston.sqlite3").exists()
    # a runtime-only .venv: the test tools come with ./dev test
    for tool in ("pytest", "hypothesis", "schemathesis", "playwright", "ruff"):
        probe = subprocess.run([str(clone / ".venv/bin/python"), "-c", f"import {tool}"])
        assert probe.returncode != 0, f"{tool} is in the demo's .venv"
    # every command the demo suggests runs exactly as printed, the first one included
    suggested = [line.strip() for line in done.stdout.splitlines() if line.startswith("  ./dev ")]
    assert suggested and suggested[0].startswith("./dev cli replay "), done.stdout[-2000:]
    for command in suggested:
        ran = _run(clone, command)
        assert ran.returncode == 0, (command, ran.stdout[-2000:], ran.stderr[-2000:])
        assert "Traceback" not in ran.stdout + ran.stderr
    assert "./dev serve, then open http://127.0.0.1:8000/" in done.stdout


def _readme_commands() -> list[str]:
    """Every ``./dev …`` or ``charleston-fsm …`` line of the shell blocks of the README
    and docs/ (the wheel's own install lines, /opt/…, are checked by check-wheel.sh)."""
    found = []
    blocks = [b for text in DOCS.values() for b in re.findall(r"```sh\n(.*?)```", text, re.S)]
    for block in blocks:
        for line in block.splitlines():
            command = line.split("  #", 1)[0].strip()
            if command.startswith(("./dev", "charleston-fsm")):
                found.append(command)
    return found


def _safe(command: str) -> bool:
    """Runs on a fresh clone, ends by itself, needs nothing but the clone: no server, no
    other host, no placeholder, not the test suite."""
    words = command.split()
    if words[0] != "./dev" or len(words) < 2 or words[1] != "cli":
        return False
    if any(re.fullmatch(r"[A-Z_]{2,}|…", w) for w in words) or "db-host" in command:
        return False  # GAME_ID, a host of the reader's own
    return words[2] in ("-h", "--help", "rules", "diagram", "play", "replay", "audit", "verify")


def test_readme_commands_run_as_printed(clone: Path) -> None:
    commands = _readme_commands()
    assert "./dev demo" in commands and "./dev cli -h" in commands
    # the README names no bare charleston-fsm in its shell blocks: it is not on PATH in a
    # clone (docs/deploy.md's are the installed wheel's, run by scripts/check-wheel.sh)
    readme_blocks = "".join(re.findall(r"```sh\n(.*?)```", README, re.S))
    assert not re.search(r"^charleston-fsm", readme_blocks, re.M), readme_blocks
    usage = _run(clone, "./dev")
    assert usage.returncode == 2 and "set -euo" not in usage.stdout + usage.stderr
    assert "./dev demo" in usage.stdout
    safe = [c for c in commands if _safe(c)]
    if shutil.which("dot") is None:  # SVG needs Graphviz; the README says so
        safe = [c for c in safe if c != "./dev cli diagram"]
    assert "./dev cli rules --rule HOUSE-03" in safe and "./dev cli -h" in safe
    for command in safe:
        ran = _run(clone, command)
        said = ran.stdout + ran.stderr
        assert ran.returncode == 0, (command, said[-3000:])
        assert "Traceback" not in said and "<str>" not in said, (command, said[-3000:])
    help_text = _run(clone, "./dev cli --help").stdout
    assert "<str>" not in help_text and "<bool>" not in help_text and "replay" in help_text
    for bad in ("./dev demo --ruleset chess", "./dev cli replay x --database-url notaurl"):
        ran = _run(clone, bad)
        said = (ran.stdout + ran.stderr).strip()
        assert ran.returncode != 0 and "Traceback" not in said, said
        assert len(said.splitlines()) <= 3, said


def test_readme_curl_session(clone: Path) -> None:
    if shutil.which("curl") is None or shutil.which("jq") is None:
        pytest.skip("the README's curl session needs curl and jq")
    session = re.search(r"<!-- curl-session -->\n```sh\n(.*?)```", PLATFORMS, re.S)
    assert session, "docs/platforms.md lost its curl session"
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

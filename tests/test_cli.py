"""The service's command line, run as a real process: demo, simulate, replay, audit,
verify, migrate and serve (which migrates an empty database; the schema states it refuses
are in test_store_schema_states.py)."""

from __future__ import annotations

import re
import sqlite3
import subprocess
from pathlib import Path

import httpx
import pytest
from api_helpers import cli, running

from charleston_fsm.engine.annotations import from_director
from charleston_fsm.store import NewGame


def test_demo_then_replay_audit_verify(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'demo.sqlite3'}"  # does not exist yet: demo migrates it
    out = cli("demo", "--database-url", url, env={"CHARLESTON_FSM_PROG": "./dev cli"}).stdout
    assert "(blind pass)" in out and "forwards unseen" in out
    assert re.search(r"(East and West|South and North) agree on [123] courtesy", out)
    assert "Courtesy Pass" in out and "Charleston over" in out
    assert "projection = replay): ok" in out
    # every ruleset plays: house's courtesy is asymmetric (one of a pair may give none)
    assert "demo: ruleset nmjl" in out and "demo: ruleset house" in out
    assert out.count("projection = replay): ok") == 3
    assert "courtesy tiles given: East 0, West 1, South 2, North 0" in out
    # four_winds: six exchanges, three Ding Dongs, then a Ready
    assert "demo: ruleset four_winds" in out and "Exchange 6: West and South resolved" in out
    assert "Ding Dongs: 3" in out and "ended: South declared Ready" in out
    assert "Play one yourself in a browser: ./dev serve, then open http://127.0.0.1:8000/" in out
    game_id = re.search(r"game ([0-9a-f]{32})", out).group(1)

    replay = cli("replay", game_id, "--database-url", url).stdout
    assert "Charleston over" in replay and "state: Charleston complete (CHARLESTON_DONE)" in replay
    early = cli("replay", game_id, "--seq", "3", "--database-url", url).stdout
    assert "state: First Charleston: pass Right (CHARLESTON_P1_R)" in early
    assert "Charleston over" not in early
    audit = cli("audit", game_id, "--database-url", url).stdout
    assert game_id in audit
    as_json = cli("audit", game_id, "--json", "--database-url", url).stdout
    assert as_json.lstrip().startswith("{")
    assert "3 game(s) verified: 3 ok, 0 failed" in cli("verify", "--database-url", url).stdout

    # a changed row is found
    with sqlite3.connect(tmp_path / "demo.sqlite3") as db:
        db.execute(
            "UPDATE events SET payload = json_set(payload, '$.choice', 'stop') "
            "WHERE game_id = ? AND type = 'vote_cast'",
            (game_id,),
        )
    broken = cli("verify", game_id, "--database-url", url, check=False)
    assert broken.returncode == 1 and "changed after it was written" in broken.stdout
    assert f"{game_id}: FAILED, quarantined" in broken.stdout
    refused = cli("replay", game_id, "--database-url", url, check=False)
    assert refused.returncode == 1 and "is quarantined" in refused.stdout


def test_simulate_prints_a_summary() -> None:
    out = cli("simulate", "--games", "6", "--seed", "20").stdout
    for measure in [
        "games",
        "commands",
        "events",
        "blind passes",
        "games stopped by a vote",
        "time per command",
        "time per game",
        "broken hash chains",
    ]:
        assert measure in out
    assert re.search(r"finished\s*│\s*6\b", out), out


@pytest.mark.postgres
def test_migrate_and_serve_on_an_empty_postgres(pg_empty_url: str, tmp_path: Path) -> None:
    assert "schema empty -> current" in cli("migrate", "--database-url", pg_empty_url).stdout
    with running(pg_empty_url, tmp_path) as server:
        assert httpx.get(f"{server.base_url}/readyz").json()["schema"] == "current"


def test_serve_migrates_an_empty_database(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fresh.sqlite3'}"
    with running(url, tmp_path) as server:
        assert httpx.get(f"{server.base_url}/readyz").status_code == 200
    assert any(line.get("msg") == "service started" for line in server.log_lines())


@pytest.mark.rule("SVC-11")
def test_ruling_is_recorded_and_audited(sqlite_store, sqlite_url: str) -> None:
    game_id = sqlite_store.registry.create_game(NewGame(seed=3))
    out = cli(
        "ruling", game_id, "--kind", "void", "--text", "Misdeal", "--database-url", sqlite_url
    ).stdout
    assert f"ruling recorded at seq 2 of {game_id}" in out
    assert "VOID: Misdeal" in cli("audit", game_id, "--database-url", sqlite_url).stdout
    refused = cli(
        "ruling",
        game_id,
        "--kind",
        "shout",
        "--text",
        "x",
        "--database-url",
        sqlite_url,
        check=False,
    )
    assert refused.returncode == 1 and "kind" in refused.stdout
    assert sqlite_store.tamper.verify(game_id).ok


# -- what the demo prints, read as a newcomer would -----------------------------------------
def test_demo_reads_well_when_piped(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'demo.sqlite3'}"
    env = {"CHARLESTON_FSM_PROG": "./dev cli", "COLUMNS": "80"}  # a narrow pipe
    out = cli("demo", "--ruleset", "house", "--database-url", url, env=env).stdout
    lines = out.splitlines()
    assert out.count("How to read it:") == 1 and "5B#17 = Bam 5" in out  # the legend, once
    # steps as people say them, never the chart's ids
    assert "-> Courtesy Pass: East and West choose their tiles; South and North" in out
    assert not any(re.match(r"-> [A-Z_0-9, ]+$", line) for line in lines), out
    # piped: a hand stays on its line whatever the width (no hard wrap at 80 columns)
    east = next(line for line in lines if line.startswith("East   dealt"))
    assert len(east.split()) == 2 + 14 and len(east) > 80
    # house's uneven courtesy is explained where it appears
    assert "(uneven courtesy: each player gives the count they chose" in out
    assert "Uneven courtesy (East gave 0, West 1; South gave 2, North 0)" in out
    # the next steps, runnable from a clone as printed
    game_id = re.search(r"game ([0-9a-f]{32})", out).group(1)
    assert f"  ./dev cli replay {game_id} --database-url {url}" in lines


def test_replay_shows_the_clock_and_the_director(sqlite_store, sqlite_url: str) -> None:
    game_id = sqlite_store.registry.create_game(
        NewGame(ruleset="house", seed=3, clock={"confirm_pass": 600})
    )
    for n, body in enumerate(
        [
            {"type": "pause_clock"},
            {"type": "resume_clock"},
            {"type": "record_ruling", "kind": "warning", "text": "Slow play", "seat": "east"},
        ]
    ):
        sqlite_store.writes.annotate(game_id, from_director(body), f"director:test-{n}")
    out = cli("replay", game_id, "--database-url", sqlite_url).stdout
    assert "[director] pauses the clock" in out
    assert "[director] resumes the clock (paused " in out
    assert "[director] warning about East: Slow play" in out


def test_story_tells_the_clock_rows() -> None:
    from charleston_fsm.engine.events import Event
    from charleston_fsm.engine.seats import Seat
    from charleston_fsm.engine.story import story_lines

    facts = {"kind": "confirm_pass", "seconds": 30.0, "due_at": "2026-01-01T00:00:00Z"}
    lines = story_lines(
        [
            Event("clock_expired", Seat.NORTH, {**facts, "done": "passed 3", "command": "x"}),
            Event("seat_late", Seat.WEST, facts),
        ]
    )
    assert lines == [
        "  [clock] North ran out of time (confirm_pass, 30 s): the clock passed 3 in its name",
        "  [clock] West ran out of time (confirm_pass, 30 s): flagged late",
    ]


def test_audit_piped_keeps_each_hand_on_one_line(sqlite_store, sqlite_url: str) -> None:
    game_id = sqlite_store.registry.create_game(NewGame(seed=3))
    out = cli("audit", game_id, "--database-url", sqlite_url, env={"COLUMNS": "60"}).stdout
    deal = out[out.index("Deal:") :].splitlines()[1:5]
    assert [line.split()[0] for line in deal] == ["East", "South", "West", "North"]
    assert all(len(line.split()) == 14 for line in deal[1:]), deal


# -- help and errors: every command ------------------------------------------------------------
def _every_command() -> list[list[str]]:
    import typer.main

    from charleston_fsm.cli import app

    found: list[list[str]] = []

    def walk(command, path: list[str]) -> None:  # type: ignore[no-untyped-def]
        found.append(path)
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return found


def test_help_on_every_command_without_type_placeholders() -> None:
    from typer.testing import CliRunner

    from charleston_fsm.cli import app

    paths = _every_command()
    assert ["demo"] in paths and ["anchors", "export"] in paths
    for path in paths:
        for flag in ("-h", "--help"):
            result = CliRunner().invoke(app, [*path, flag], env={"COLUMNS": "200"})
            assert result.exit_code == 0, (path, result.output)
            assert "Usage:" in result.output, path
            for placeholder in ("<str>", "<bool>", "<int>", "<float>", "<list"):
                assert placeholder not in result.output, (path, result.output)


def test_help_as_a_process_reflows_docstrings() -> None:
    short = cli("-h").stdout
    assert "<str>" not in short and "demo" in short and "replay" in short
    long = cli("verify", "--help").stdout
    # the second paragraph of verify's docstring is one line at 400 columns
    assert "is checked against that signed head instead of being replayed again" in long


def _plain_failure(done: subprocess.CompletedProcess[str]) -> str:
    said = (done.stdout + done.stderr).strip()
    assert done.returncode != 0, said
    assert "Traceback" not in said and "╭" not in said, said
    assert 1 <= len([line for line in said.splitlines() if line.strip()]) <= 3, said
    return said


@pytest.mark.parametrize(
    ("args", "named", "accepted"),
    [
        (["demo", "--ruleset", "chess"], "'chess'", "nmjl, house, four_winds"),
        (["play", "--ruleset", "chess"], "'chess'", "nmjl, house, four_winds"),
        (["simulate", "--ruleset", "chess", "-n", "1"], "'chess'", "four_winds"),
        (["diagram", "--ruleset", "chess"], "'chess'", "four_winds"),
        (["demo", "--database-url", "mysql://x"], "'mysql://x'", "postgresql://"),
        (["demo", "--database-url", "notaurl"], "'notaurl'", "sqlite:///"),
        (["replay", "x", "--database-url", "notaurl"], "'notaurl'", "sqlite:///"),
        (["verify", "--database-url", "notaurl"], "'notaurl'", "sqlite:///"),
        (["migrate", "--database-url", "mysql://x"], "'mysql://x'", "postgresql://"),
        (["serve", "--database-url", "notaurl"], "'notaurl'", "sqlite:///"),
        (["simulate", "--url", "notaurl"], "'notaurl'", "http://127.0.0.1:8000"),
        (["demo", "--seed", "x"], "--seed", "integer"),
        (["demo", "--bogus"], "--bogus", "-h"),
        (["bogus"], "'bogus'", "-h"),
        (["rules", "--rule", "NOPE-1"], "NOPE-1", "rules"),
    ],
)
def test_bad_arguments_get_plain_lines(
    args: list[str], named: str, accepted: str, tmp_path: Path
) -> None:
    said = _plain_failure(cli(*args, check=False, env={"CHARLESTON_ANCHOR_KEY": "k" * 32}))
    assert named in said and accepted in said, said
    assert not list(tmp_path.iterdir())  # nothing was created


def test_a_closed_port_is_said_plainly() -> None:
    from charleston_fsm.bench.server import free_port

    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    said = _plain_failure(cli("simulate", "--url", url, "--games", "1", check=False))
    assert f"Cannot reach the service at {url}" in said and "serve" in said


def test_a_bad_database_url_creates_nothing(tmp_path: Path) -> None:
    target = tmp_path / "demo.sqlite3"
    done = cli("demo", "--ruleset", "chess", "--database-url", f"sqlite:///{target}", check=False)
    _plain_failure(done)
    assert not target.exists()


def test_a_missing_game_is_one_line(sqlite_url: str) -> None:
    said = _plain_failure(cli("replay", "0" * 32, "--database-url", sqlite_url, check=False))
    assert "There is no game" in said


# -- serve on a terminal -------------------------------------------------------------------------
def test_serve_on_a_terminal_prints_a_banner_before_the_logs(tmp_path: Path) -> None:
    import os
    import pty
    import select
    import time

    from charleston_fsm.bench.server import cli_command, free_port

    url = f"sqlite:///{tmp_path / 'served.sqlite3'}"
    key = tmp_path / "anchor.key"
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHARLESTON_")}
    master, slave = pty.openpty()
    args = ["serve", "--port", str(port), "--database-url", url, "--anchor-key-file", str(key)]
    proc = subprocess.Popen(
        [*cli_command(), *args],
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=slave,
        env={**env, "COLUMNS": "120"},
    )
    os.close(slave)
    seen = b""
    try:
        deadline = time.monotonic() + 120
        while b"service started" not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    seen += os.read(master, 65536)
                except OSError:
                    break
            assert proc.poll() is None or ready, seen.decode(errors="replace")
    finally:
        proc.terminate()
        proc.wait(15)
        os.close(master)
    text = re.sub(r"\x1b\[[0-9;]*m", "", seen.decode(errors="replace"))
    banner = text[: text.index("{")]  # everything before the first JSON log line
    assert f"Open        http://127.0.0.1:{port}/" in banner
    assert f"Database    {url}" in banner
    assert f"Anchor key  key file {key}, created just now" in banner
    assert "signs every game's hash chain" in banner and "Ctrl+C" in banner
    assert '"msg": "service started"' in text  # the logs stay JSON

"""The service's command line, run as a real process: demo, simulate, replay, audit,
verify, migrate and serve (which migrates an empty database; the schema states it refuses
are in test_store_schema_states.py)."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import httpx
import pytest
from api_helpers import cli, running


def test_demo_then_replay_audit_verify(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'demo.sqlite3'}"  # does not exist yet: demo migrates it
    out = cli("demo", "--database-url", url).stdout
    assert "(blind pass)" in out and "forwards unseen" in out
    assert re.search(r"(East and West|South and North) agree on [123] courtesy", out)
    assert "Courtesy Pass" in out and "Charleston over" in out
    assert "projection = replay): ok" in out
    # every ruleset plays: house's courtesy is asymmetric (one of a pair may give none)
    assert "demo: ruleset nmjl" in out and "demo: ruleset house" in out
    assert out.count("projection = replay): ok") == 3
    assert "courtesy tiles given per player: [2, 0, 0, 2]" in out
    # four_winds: six exchanges, three Ding Dongs, then a Ready
    assert "demo: ruleset four_winds" in out and "Exchange 6: West and South resolved" in out
    assert "Ding Dongs: 3" in out and "ended: North declared Ready" in out
    assert "Play one yourself in a browser: ./dev serve, then open http://127.0.0.1:8000/" in out
    game_id = re.search(r"game ([0-9a-f]{32})", out).group(1)

    replay = cli("replay", game_id, "--database-url", url).stdout
    assert "Charleston over" in replay and "CHARLESTON_DONE" in replay
    early = cli("replay", game_id, "--seq", "3", "--database-url", url).stdout
    assert "state: CHARLESTON_P1_R" in early and "Charleston over" not in early
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
    game_id = sqlite_store.create_game(seed=3)
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
    assert sqlite_store.verify(game_id).ok

"""The CI smoke form of ``charleston-fsm bench``: a real run on SQLite and PostgreSQL, with
a real ``serve`` process under the open-loop load. It checks the shape and sanity of the
figures, never their speed (the machine is shared; the lead measures on a quiet one)."""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from api_helpers import cli
from rich.console import Console

from charleston_fsm.bench.figures import ROWS, Figure, Goal
from charleston_fsm.bench.report import to_rich
from charleston_fsm.bench.server import cli_command, free_port
from charleston_fsm.bench.standby_rows import SCRIPT as STANDBY_SCRIPT

DATABASES = {"SQLite", "PostgreSQL"}


@pytest.fixture(scope="module")
def quick_run(pg_admin_url: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("bench") / "bench.json"
    # every row but the standby's (its own primary and standby: measured on its own below)
    rows = ",".join(row for row in ROWS if row != "standby")
    done = cli(
        "bench", "--quick", "--only", rows, "--database-url", pg_admin_url,
        "--json", str(out), "--markdown",
    )  # fmt: skip
    return {"json": json.loads(out.read_text()), "markdown": done.stdout}


@pytest.mark.postgres
def test_every_row_on_both_databases_has_a_number_and_a_floor(quick_run: dict[str, Any]) -> None:
    figures = quick_run["json"]["figures"]
    assert {(f["row"], f["database"]) for f in figures} == {
        (row, db)
        for row in ROWS
        for db in DATABASES
        if row != "standby" and (row != "notify" or db == "PostgreSQL")
    }
    for figure in figures:
        assert math.isfinite(figure["value"]) and figure["value"] >= 0, figure
        # every floor was measured in this run; an HTTP floor is the highest rate /healthz
        # held at p99 <= 50 ms, which a busy moment can make 0 (a speed, not asserted)
        assert figure["floor"] > 0 or (figure["row"] == "http" and figure["floor"] == 0), figure
        assert figure["floor_name"] and figure["target"], figure
        # a figure shown for context (the feed entry's price beside the outbox's) has no
        # target of its own and says so; every other is met or not
        context = figure["target"].startswith("none of its own")
        # the quick form's floor route may cost under one /proc tick (10 ms) a step: no
        # ratio then, so no verdict
        unticked = figure["name"].startswith("server CPU") and not figure["floor"]
        verdict = (None,) if context else (None, True, False) if unticked else (True, False)
        assert figure["met"] in verdict, figure
    by_row: dict[str, list[dict[str, Any]]] = {}
    for figure in figures:
        by_row.setdefault(figure["row"], []).append(figure)
    # two table counts per database over HTTP and a command's server CPU beside the floor
    # route's; PostgreSQL's commit rates at 4, 8 and 16 clients with and without
    # pg_notify; one figure per database for the rest
    assert len(by_row["http"]) == 6
    cpu = [f for f in by_row["http"] if f["name"].startswith("server CPU")]
    assert {f["database"] for f in cpu} == DATABASES
    assert all("floor route" in f["floor_name"] and f["target"] == "≤ 2.5× the floor" for f in cpu)
    targets = {f["database"]: f["target"] for f in by_row["command"]}
    assert targets == {"PostgreSQL": "≤ 2.5× the floor", "SQLite": "≤ 4.0× the floor"}
    assert sorted(f["details"]["clients"] for f in by_row["notify"]) == [4, 8, 16]
    single = ("http", "notify", "platform", "standby")
    assert all(len(by_row[row]) == 2 for row in ROWS if row not in single)
    # CPU with the feed entry, with the outbox row on it, webhooks/s; per database
    assert len(by_row["platform"]) == 6
    # sanity: memory is a real process's (a command beside its bare insert is a speed: a
    # busy CI machine once made the quick run's floor the slower, 3.02 against 2.99 ms)
    for figure in by_row["memory"]:
        assert 20 < figure["value"] < 2000


@pytest.mark.postgres
def test_the_load_generator_sends_only_legal_commands(quick_run: dict[str, Any]) -> None:
    for figure in quick_run["json"]["figures"]:
        if figure["row"] != "http":
            continue
        details = figure["details"]
        steps = details.get("steps", []) + details.get("healthz_steps", [])
        steps += details.get("floor_steps", [])  # the floor route answered every request
        assert steps, figure
        if figure["name"].startswith("HTTP"):  # each seat's untimed first command too
            assert details["first_commands_failed"] == 0, details["first_command_failure"]
        for step in steps:
            assert step["errors"] == 0, step["first_error"]
            assert step["ok"] == step["sent"] == round(step["rate"] * 1.0)
            assert 0 < step["p50_ms"] <= step["p99_ms"] <= step["max_ms"]
            # the server's CPU, and its event loop's share of it (/proc counts 10 ms ticks,
            # and the two are read one after the other)
            tick = 2 * 10 / step["sent"]
            assert 0 <= step["server_loop_cpu_ms"] <= step["server_cpu_ms"] + tick


@pytest.mark.postgres
def test_the_markdown_table_has_a_line_per_figure(quick_run: dict[str, Any]) -> None:
    lines = quick_run["markdown"].strip().splitlines()
    figures = quick_run["json"]["figures"]
    assert lines[0].startswith("| figure | database | measured | floor in the same run |")
    assert len(lines) == 2 + len(figures)
    for line, figure in zip(lines[2:], figures, strict=True):
        assert figure["name"] in line and figure["database"] in line
        assert ("not met" in line) is (figure["met"] is False)


def test_the_rich_table_shows_ratio_and_verdict() -> None:
    figures = [
        Figure(
            "command", "SQLite", "one command", 0.5, "ms", 0.2, "INSERT", Goal("≤ 2×", 2, "ratio")
        ),
        Figure(
            "http",
            "PostgreSQL",
            "HTTP",
            400,
            "/s",
            800,
            "/healthz",
            Goal("≥ 300/s", 300, at_least=True),
            higher_is_better=True,
        ),
    ]
    console = Console(width=200, record=True)
    console.print(to_rich(figures, "bench"))
    text = console.export_text()
    assert "2.50×" in text and "not met" in text  # 0.5 ms is 2.5× a 0.2 ms floor
    assert "2.00×" in text and " met" in text  # 400/s is half the floor's 800/s, and ≥ 300


def test_an_unknown_row_is_refused_by_name(tmp_path: Path) -> None:
    done = cli("bench", "--only", "command,speed", check=False)
    assert done.returncode == 2
    assert (
        "speed" in done.stdout + done.stderr and "command, throughput" in done.stdout + done.stderr
    )


def test_a_postgresql_server_that_does_not_answer_is_named_before_any_measuring() -> None:
    done = cli(
        "bench",
        "--quick",
        "--only",
        "command",
        "--database-url",
        "postgresql://postgres@127.0.0.1:1/postgres",
        check=False,
    )
    assert done.returncode == 2
    output = done.stdout + done.stderr
    assert "Cannot create a scratch database" in output and "--sqlite-only" in output
    assert "one command through the store" not in output  # nothing was measured


@pytest.mark.postgres
def test_the_standby_row_says_why_when_no_standby_can_start(
    pg_admin_url: str, tmp_path: Path
) -> None:
    """Without PostgreSQL's server binaries (PG_BIN names a folder without them) the row
    is skipped with a sentence, and the run goes on."""
    out = tmp_path / "bench.json"
    done = cli(
        "bench",
        "--quick",
        "--only",
        "standby",
        "--postgres-only",
        "--database-url",
        pg_admin_url,
        "--json",
        str(out),
        env={"PG_BIN": str(tmp_path)},
    )
    ran = json.loads(out.read_text())
    assert ran["figures"] == []
    assert len(ran["notes"]) == 1, ran["notes"]
    assert ran["notes"][0].startswith("standby: skipped, scripts/pg-standby.sh could not")
    assert "no PostgreSQL server binaries" in ran["notes"][0]
    assert "no PostgreSQL server binaries" in " ".join(done.stdout.split())


@pytest.mark.postgres
def test_the_standby_row_serves_reads_from_a_standby_beside_the_primarys_commands(
    pg_admin_url: str, tmp_path: Path
) -> None:
    """Its own primary and standby (scripts/pg-standby.sh) on this machine: the views the
    standby served beside the commands the primary took meanwhile; skipped with a
    sentence only where no PostgreSQL server binaries are installed."""
    out = tmp_path / "bench.json"
    # a topology of its own: the standby tests' (the script's default folder and ports)
    # may be starting or stopping in another test process meanwhile; a short folder, as
    # the servers' sockets live in it (a socket's path is at most 107 bytes)
    folder = tempfile.mkdtemp(prefix="cs-bench-")
    own = {
        "CHARLESTON_STANDBY_DIR": folder,
        "CHARLESTON_PRIMARY_PORT": str(free_port()),
        "CHARLESTON_STANDBY_PORT": str(free_port()),
    }
    try:
        done = cli(
            "bench", "--quick", "--only", "standby", "--postgres-only",
            "--database-url", pg_admin_url, "--json", str(out), env=own,
        )  # fmt: skip
    finally:
        subprocess.run(["bash", str(STANDBY_SCRIPT), "destroy"], env={**os.environ, **own})
        shutil.rmtree(folder, ignore_errors=True)
    ran = json.loads(out.read_text())
    if any("no PostgreSQL server binaries" in note for note in ran["notes"]):
        pytest.skip(ran["notes"][0])
    assert ran["notes"] == [], ran["notes"]
    (figure,) = ran["figures"]
    assert figure["row"] == "standby" and figure["database"] == "PostgreSQL"
    assert figure["details"]["reads"] > 0 and figure["details"]["commands"] > 0, figure
    assert figure["value"] > 0 and figure["floor"] > 0, figure
    assert figure["details"]["largest_lag_s"] is not None, figure
    assert figure["met"] is None and figure["target"].startswith("none of its own")
    assert "served by a streaming standby" in " ".join(done.stdout.split())


def _serving(pid: int) -> list[int]:
    """The ``serve`` processes among ``pid``'s descendants."""
    from charleston_fsm.bench.server import _tree

    found = []
    for child in _tree(pid)[1:]:
        with contextlib.suppress(OSError):
            if b"serve" in Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0"):
                found.append(child)
    return found


def test_a_bench_ended_by_sigterm_stops_its_serve_process(tmp_path: Path) -> None:
    """``timeout`` (or CI) ends a bench with SIGTERM: its serve goes with it."""
    bench = subprocess.Popen(
        [*cli_command(), "bench", "--quick", "--only", "http", "--sqlite-only"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 300
        while not (serving := _serving(bench.pid)) and time.monotonic() < deadline:
            assert bench.poll() is None, "the bench ended before it started serve"
            time.sleep(0.2)
        assert serving, "the bench started no serve process"
        bench.send_signal(signal.SIGTERM)
        assert bench.wait(60) == 128 + signal.SIGTERM
        for pid in serving:  # gone, not merely orphaned (a zombie's status is Z)
            status = Path(f"/proc/{pid}/status")
            assert not status.exists() or "\nState:\tZ" in status.read_text(), pid
    finally:
        if bench.poll() is None:
            bench.kill()
            bench.wait()

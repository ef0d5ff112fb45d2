"""The standby row: spectator reads/s served by a streaming standby, beside the commands/s
the primary takes meanwhile, on the same machine (PostgreSQL only).

The primary and its standby are the project's own (``scripts/pg-standby.sh``, started
here unless they already run, and stopped after): a scratch database on the primary,
seen on the standby. One process sends commands through the primary's store while reader
processes ask for a table's spectator view through ``store.standby`` (what
``/spectate`` reads); only the reads the standby answered count (a read it could not
answer goes to the primary and is counted apart). The standby's largest lag meanwhile
is kept with the figure. Without the script (an installed wheel) or PostgreSQL's server
binaries, the row is skipped with a sentence saying why.
"""

from __future__ import annotations

import subprocess
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import psycopg

from ..store import GameStore, NewGame
from .figures import Figure, Goal, RowSkipped
from .processes import rate_of, run_for
from .store_rows import toggle

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "pg-standby.sh"
READERS = 2
GAMES = READERS + 1


def standby_rows(seconds: float) -> list[Figure]:
    """Reads/s from the standby beside the primary's commands/s, over ``seconds``."""
    if not SCRIPT.exists():
        raise RowSkipped(
            "standby: skipped, scripts/pg-standby.sh is not here (an installed package has "
            "no scripts/): run the bench from a checkout to start a standby."
        )
    was_running = _script("status").returncode == 0
    started = _script("start")
    if started.returncode != 0:
        why = (started.stderr.strip().splitlines() or ["no reason given"])[-1]
        raise RowSkipped(f"standby: skipped, scripts/pg-standby.sh could not start one: {why}")
    try:
        urls = dict(line.split(" ", 1) for line in started.stdout.splitlines() if " " in line)
        return [_measure(urls["primary"], urls["standby"], seconds)]
    finally:
        if not was_running:
            _script("stop")


def _script(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *args], capture_output=True, text=True, timeout=300, check=False
    )


def _measure(primary_admin: str, standby_admin: str, seconds: float) -> Figure:
    name = f"charleston_bench_standby_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(primary_admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    primary = primary_admin.rsplit("/", 1)[0] + "/" + name
    standby = standby_admin.rsplit("/", 1)[0] + "/" + name
    writer = GameStore(primary)
    reader: GameStore | None = None
    try:
        writer.core.upgrade()
        games = [writer.registry.create_game(NewGame(seed=900 + i)) for i in range(GAMES)]
        reader = GameStore(primary, read_urls=[standby], read_max_lag=5)
        standbys = reader.standbys
        assert standbys is not None
        standbys.start()
        deadline = time.monotonic() + 60
        while not standbys.in_use:  # the schema and the games replayed, the lag measured
            if time.monotonic() > deadline:
                raise RowSkipped("standby: skipped, the standby did not catch up in 60 s")
            time.sleep(0.1)
        return _run(writer, reader, games, seconds)
    finally:
        writer.dispose()
        if reader is not None:
            reader.dispose()
        with psycopg.connect(primary_admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _run(writer: GameStore, reader: GameStore, games: list[str], seconds: float) -> Figure:
    """One writer process and :data:`READERS` reader processes, started together; this
    process keeps the standby's lag meanwhile (its own watch)."""
    standbys = reader.standbys
    assert standbys is not None
    member = standbys.members[0]
    primary = writer.url.render_as_string(hide_password=False)
    standby = member.url.render_as_string(hide_password=False)
    jobs = [("write", primary, standby, games[0])]
    jobs += [("read", primary, standby, game) for game in games[1 : READERS + 1]]
    lags: list[float] = []
    done = threading.Event()

    def keep_lag() -> None:
        while not done.wait(0.1):
            if member.lag_seconds is not None:
                lags.append(member.lag_seconds)

    keeper = threading.Thread(target=keep_lag, daemon=True)
    keeper.start()
    try:
        _, counts = rate_of(_job, jobs, seconds)
    finally:
        done.set()
        keeper.join(timeout=5)
    commands, served = counts[0], sum(counts[1:])
    return Figure(
        row="standby",
        database="PostgreSQL",
        name=f"spectator views/s served by a streaming standby ({READERS} reader processes)",
        value=served / seconds,
        unit="/s",
        floor=commands / seconds,
        floor_name="the primary's commands/s meanwhile (1 writer process, same machine)",
        goal=Goal("none of its own: reads beside the primary's write rate", None),
        details={
            "seconds": seconds,
            "reads": served,
            "per_reader": counts[1:],
            "commands": commands,
            "largest_lag_s": max(lags, default=None),
            "max_lag_s": standbys.max_lag,
        },
    )


def _job(kind: str, primary: str, standby: str, game: str, barrier: Any, seconds: float) -> int:
    """A writer's commands, or a reader's views the standby served (a view it could not
    serve went to the primary and is not counted)."""
    if kind == "write":
        writer = GameStore(primary)
        try:
            commands = toggle(writer, game)
            writer.writes.execute(game, commands[0])  # connect and warm before the clock
            turn = iter(range(1, 10**12))
            return run_for(
                barrier, seconds, lambda: writer.writes.execute(game, commands[next(turn) % 2])
            )
        finally:
            writer.dispose()
    reader = GameStore(primary, read_urls=[standby], read_max_lag=5)
    standbys = reader.standbys
    assert standbys is not None
    try:
        standbys.start()
        deadline = time.monotonic() + 60
        while not standbys.in_use and time.monotonic() < deadline:
            time.sleep(0.05)
        view = reader.standby.spectating.view
        view(game, 0)  # connect and warm
        before = standbys.members[0].reads
        run_for(barrier, seconds, lambda: view(game, 0))
        return standbys.members[0].reads - before
    finally:
        reader.dispose()

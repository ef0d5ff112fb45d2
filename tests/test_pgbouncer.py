"""The service behind PgBouncer in transaction mode (issue 35, item 3).

A real PgBouncer (Debian's ``pgbouncer``) in transaction mode, its own port and folder,
in front of the tests' PostgreSQL. What transaction mode takes from a session, and what
the store does about it:

- server-side prepared statements (psycopg prepares a query at its fifth run) live in
  one server connection, and the next transaction may run on another: the URL says
  ``prepare_threshold=none`` (shown below failing without it);
- ``LISTEN`` lives in a session, which transaction mode does not keep: the notices
  listen on ``$CHARLESTON_LISTEN_DATABASE_URL``, straight to PostgreSQL;
- the advisory locks are transaction-level (``pg_advisory_xact_lock`` of a migration,
  ``pg_try_advisory_xact_lock`` of the feed's sequencer): they hold in transaction mode.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from sqlalchemy.engine import make_url

from charleston_fsm.bench.server import free_port
from charleston_fsm.store import GameStore, NewGame, play_bots
from charleston_fsm.store.database.urls import LISTEN_ENV_VAR, libpq_conninfo, render, resolve_url
from charleston_fsm.store.platform.feed import cursor_of

pytestmark = pytest.mark.postgres


SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "pg-cluster.sh"


def _installed() -> str | None:
    found = shutil.which("pgbouncer")
    return found or ("/usr/sbin/pgbouncer" if Path("/usr/sbin/pgbouncer").exists() else None)


def _bouncer_binary() -> str:
    """PgBouncer, installed from Debian's packages (the cluster script's) when missing."""
    found = _installed()
    if found is None:
        done = subprocess.run([str(SCRIPT), "install"], capture_output=True, text=True)
        found = _installed()
    if found is None:
        reason = f"pgbouncer is not installed and could not be: {done.stderr.strip()[-500:]}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason}; CI=true: this test must run", pytrace=False)
        pytest.skip(reason)
    return found


@pytest.fixture
def bouncer(pg_empty_url: str) -> Iterator[tuple[str, str]]:
    """(the database's URL through PgBouncer, its direct URL); one server connection,
    so two clients' transactions take turns on it."""
    binary = _bouncer_binary()
    direct = make_url(pg_empty_url)
    port = free_port()
    folder = Path(tempfile.mkdtemp(prefix="bouncer-"))
    folder.chmod(0o755)
    (folder / "userlist.txt").write_text('"postgres" ""\n')
    (folder / "pgbouncer.ini").write_text(
        f"[databases]\n* = host={direct.host} port={direct.port or 5432}\n"
        f"[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n"
        f"auth_type = trust\nauth_file = {folder}/userlist.txt\npool_mode = transaction\n"
        "default_pool_size = 1\nmax_client_conn = 100\n"
        "ignore_startup_parameters = extra_float_digits,options\n"
    )
    run_as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    proc = subprocess.Popen(
        [*run_as, binary, "-q", str(folder / "pgbouncer.ini")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        through = render(direct.set(host="127.0.0.1", port=port))
        deadline = time.monotonic() + 20
        while True:
            try:
                psycopg.connect(libpq_conninfo(resolve_url(through)), connect_timeout=2).close()
                break
            except psycopg.OperationalError:
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
                assert time.monotonic() < deadline, "PgBouncer did not answer"
                time.sleep(0.1)
        yield through, pg_empty_url
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        shutil.rmtree(folder, ignore_errors=True)


def test_the_service_works_behind_pgbouncer_in_transaction_mode(
    bouncer: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    through, direct = bouncer
    url = f"{through}?prepare_threshold=none"
    monkeypatch.setenv(LISTEN_ENV_VAR, direct)
    writer = GameStore(url)
    watcher = GameStore(url)  # another process: hears the writer through LISTEN
    try:
        writer.core.upgrade()  # the migration's advisory lock is transaction-level
        heard: list[tuple[str, int | None]] = []
        got = threading.Event()

        def note(game_id: str, seq: int | None) -> None:
            heard.append((game_id, seq))
            got.set()

        watcher.core.notices.listen(note)
        watcher.core.notices.start()
        assert watcher.core.notices.healthy
        games = [writer.registry.create_game(NewGame(seed=s)) for s in (1, 2)]
        for seed, game_id in enumerate(games, start=1):
            # dozens of commands, each statement run far more than 5 times: with
            # prepared statements on, they would be prepared on the one server connection
            play_bots(writer, game_id, seed=seed)
        writer.writes.wait_for_seals()
        assert got.wait(10), "no notice came through LISTEN"
        assert {game for game, _ in heard} >= set(games)
        positioned = 0
        while (turn := watcher.feed.sequence()) > 0:  # pg_try_advisory_xact_lock
            positioned += turn
        assert positioned > 0
        for game_id in games:
            assert watcher.reads.table(game_id).finished
            assert watcher.tamper.verify(game_id).ok
        entries, _ = watcher.feed.read(None, 1000)
        assert [e.cursor for e in entries] == [cursor_of(p) for p in range(1, len(entries) + 1)]
        assert "game.sealed" in {e.type for e in entries}
    finally:
        writer.dispose()
        watcher.dispose()


def test_prepared_statements_break_in_transaction_mode_so_the_url_turns_them_off(
    bouncer: tuple[str, str],
) -> None:
    through, _ = bouncer
    conninfo = libpq_conninfo(resolve_url(through))
    first = psycopg.connect(conninfo, autocommit=True)
    second = psycopg.connect(conninfo, autocommit=True)
    try:
        for _ in range(6):  # prepared (as _pg3_0) on the one server connection
            first.execute("SELECT %s::int", [1])
        with pytest.raises(psycopg.errors.DuplicatePreparedStatement):
            for _ in range(6):  # prepares _pg3_0 again there: "already exists"
                second.execute("SELECT %s::text", ["a"])
    finally:
        first.close()
        second.close()
    off = psycopg.connect(conninfo, autocommit=True, prepare_threshold=None)
    other = psycopg.connect(conninfo, autocommit=True, prepare_threshold=None)
    try:
        for _ in range(6):
            assert off.execute("SELECT %s::int", [1]).fetchone() == (1,)
            assert other.execute("SELECT %s::text", ["a"]).fetchone() == ("a",)
    finally:
        off.close()
        other.close()

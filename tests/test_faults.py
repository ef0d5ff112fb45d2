"""Fault injection on a real PostgreSQL: every answer tells the truth, nothing is partial.

The store's connection is killed at each statement of a command and of a command that
resolves a pass, at its COMMIT and right after it (a command on a game whose head is
known is one statement that commits as it runs: killed there, it is a COMMIT killed); a
commit's answer is lost on the wire (the database committed, the client never heard);
and the same over HTTP against
``serve`` processes. For every fault: the answer is true (stored => success or
``outcome_unknown``; not stored => ``store_unavailable`` or ``outcome_unknown``), the
game holds all of the command or none of it, a retry with the same command id converges
to exactly one stored copy, and verify and replay still match.

Bounded: 35-60 s on a shared 2-core machine. ``CHARLESTON_FAULTS_SOAK=<seconds>`` adds a
soak: clients send commands over HTTP while the server's backends are terminated at random
(``pytest tests/test_faults.py -k soak -s``).
"""

from __future__ import annotations

import os
import random
import resource
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from api_helpers import Game, Server, running
from engine_helpers import PLAIN_HANDS, confirm, new_table
from fault_injection import (
    BackendKiller,
    LossyRelay,
    Point,
    assert_whole,
    blocked_backend,
    kill_blocked,
    libpq,
    terminate,
)
from sqlalchemy import event, update
from sqlalchemy.engine import make_url

from charleston_fsm.engine.commands import ConfirmPass
from charleston_fsm.engine.seats import SEATS, Seat
from charleston_fsm.store import ExecuteResult, GameStore, NewGame, OutcomeUnknown, StoreUnavailable
from charleston_fsm.store.database.models import GameRow
from charleston_fsm.store.database.urls import render

pytestmark = pytest.mark.postgres

#: the statements of one command, in order, by the way it finds the game's head (update
#: when the write path changes): ``cached``, the process's own head of the game;
#: ``uncached``, a read first; ``stale``, a cached head another writer made old (the
#: append stores nothing, then the game is locked and read, and the append is sent again)
STATEMENTS = {
    "cached": ["WITH moved AS"],
    "uncached": ["SELECT games.last_seq, games.epoch,", "WITH moved AS"],
    "stale": [
        "WITH moved AS",
        "SELECT games.last_seq FROM",
        "SELECT games.last_seq, games.epoch,",
        "WITH moved AS",
    ],
}
#: the appends (by statement number) that commit as they run: a command's write is sent
#: in autocommit, its own transaction, until the lock of a stale head begins a
#: transaction (whose COMMIT then commits the second append)
COMMITS_AS_IT_RUNS = {"cached": {1}, "uncached": {2}, "stale": {1}}
#: the paths that end with a COMMIT of their own
COMMITTING = {"stale"}
POINTS: list[tuple[str, Point]] = [
    (path, point)
    for path, statements in STATEMENTS.items()
    for point in [
        *range(1, len(statements) + 1),
        *(["commit"] if path in COMMITTING else []),
        "after_commit",
    ]
]
KINDS = ["ordinary", "resolving"]
HANDS = {seat.value: list(tiles) for seat, tiles in PLAIN_HANDS.items()}


def _three(seat: Seat) -> list[int]:
    return list(PLAIN_HANDS[seat][:3])


def _setup(kind: str) -> tuple[list[ConfirmPass], ConfirmPass, int]:
    """(commands sent before, the command under fault, how many rows it writes).

    ``ordinary``: East confirms (one row). ``resolving``: North's confirmation after the
    three others resolves the first pass (transfers, resolution, the next state)."""
    if kind == "ordinary":
        before, command = [], confirm(Seat.EAST, _three(Seat.EAST))
    else:
        before = [confirm(seat, _three(seat)) for seat in SEATS[:3]]
        command = confirm(Seat.NORTH, _three(Seat.NORTH))
    table = new_table()
    for c in before:
        table.execute(c)
    return before, command, len(table.execute(command))


# -- the store ----------------------------------------------------------------------------
def _store_game(store: GameStore, kind: str, path: str = "cached") -> tuple[str, ConfirmPass, int]:
    """A game with the commands before done, its head in ``store`` as ``path`` says."""
    before, command, rows = _setup(kind)
    game_id = store.registry.create_game(NewGame(hands=HANDS))
    for n, c in enumerate(before):
        store.writes.execute(game_id, c, command_id=f"before-{n}")
    if path == "uncached":
        store.core.served.forget(game_id)
    elif path == "stale":  # another writer moves the game's epoch (as a lifted quarantine)
        with store.engine.begin() as conn:
            conn.execute(update(GameRow).where(GameRow.id == game_id).values(epoch=7))
    return game_id, command, rows


def _attempt(store: GameStore, game_id: str, command: ConfirmPass, command_id: str) -> Any:
    try:
        return store.writes.execute(game_id, command, command_id=command_id)
    except (StoreUnavailable, OutcomeUnknown) as exc:
        return exc


def _judge_store(
    store: GameStore,
    game_id: str,
    command: ConfirmPass,
    command_id: str,
    outcome: Any,
    before: dict[str, Any],
    rows: int,
) -> bool:
    """Assert the outcome was told truly, nothing is partial, and a retry converges;
    returns whether the faulted attempt was stored."""
    record = assert_whole(store, game_id)
    mine = [e for e in record["events"] if e["command_id"] == command_id]
    stored = bool(mine)
    assert len(mine) in (0, rows)
    if not stored:
        assert record == before, "a command that was not stored changed the game"
    if isinstance(outcome, ExecuteResult):
        assert stored, "answered with events that are not stored"
        assert [e.to_dict() for e in outcome.events] == mine
        assert store.reads.view_of(outcome.snapshot, command.seat) == store.reads.view(
            game_id, command.seat
        )
    elif isinstance(outcome, StoreUnavailable):
        assert not stored, "told 'nothing was stored' about a stored command"
        assert "nothing was stored" in outcome.message
    else:
        assert isinstance(outcome, OutcomeUnknown), outcome
        assert command_id in outcome.message and "same command id" in outcome.message

    again = store.writes.execute(game_id, command, command_id=command_id)
    assert again.duplicate is stored
    assert len(again.events) == rows
    assert store.writes.execute(game_id, command, command_id=command_id).duplicate
    after = assert_whole(store, game_id)
    assert len([c for c in after["commands"] if c[0] == command_id]) == 1
    assert sum(e["command_id"] == command_id for e in after["events"]) == rows
    return stored


def test_the_command_path_is_the_listed_statements(pg_store: GameStore, pg_admin_url: str) -> None:
    """POINTS covers every statement: fails when the write path changes (update them)."""
    for kind in KINDS:
        for path, statements in STATEMENTS.items():
            game_id, command, _ = _store_game(pg_store, kind, path)
            killer = BackendKiller(pg_store, pg_admin_url, point=0)  # never fires
            with killer.armed():
                pg_store.writes.execute(game_id, command, command_id="dry")
            assert killer.statements == statements, path
            assert killer.committing is (path in COMMITTING), path


@pytest.mark.parametrize(("path", "point"), POINTS, ids=lambda v: str(v))
@pytest.mark.parametrize("kind", KINDS)
def test_store_connection_killed(
    pg_store: GameStore, pg_admin_url: str, kind: str, path: str, point: Point
) -> None:
    game_id, command, rows = _store_game(pg_store, kind, path)
    before = assert_whole(pg_store, game_id)
    killer = BackendKiller(pg_store, pg_admin_url, point)
    with killer.armed():
        outcome = _attempt(pg_store, game_id, command, "faulted")
    assert killer.fired_at is not None, "the fault never struck"
    stored = _judge_store(pg_store, game_id, command, "faulted", outcome, before, rows)
    # where it struck decides what is known: before the commit, nothing is stored; at
    # the commit (a COMMIT, or an append that commits as it runs) the client cannot
    # know; after it, the answer comes from the transaction
    if point == "commit" or point in COMMITS_AS_IT_RUNS[path]:
        assert isinstance(outcome, OutcomeUnknown) and not stored
    elif point == "after_commit":
        assert isinstance(outcome, ExecuteResult) and stored
    else:
        assert isinstance(outcome, StoreUnavailable) and not stored


def test_a_pooled_connection_the_server_hung_up_on_is_replaced_without_a_ping(
    pg_store: GameStore, pg_admin_url: str, tmp_path: Path
) -> None:
    """A pooled connection whose backend was terminated while idle is replaced at the next
    checkout, unseen by the command; a checkout of a live one sends nothing on the wire
    (no pre-ping round trip: ``core.hung_up`` looks at the socket instead)."""
    game_id, command, rows = _store_game(pg_store, "ordinary")
    with pg_store.engine.connect() as conn:
        pid = conn.connection.dbapi_connection.info.backend_pid
    terminate(pg_admin_url, pid)
    result = pg_store.writes.execute(game_id, command, command_id="after-hang-up")
    assert len(result.events) == rows and not result.duplicate
    # what each pooled connection sends from its check-in to its next checkout
    trace = (tmp_path / "wire.log").open("w")

    def check_in(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.pgconn.trace(trace.fileno())

    def checked_out(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
        dbapi_connection.pgconn.untrace()

    event.listen(pg_store.engine, "checkin", check_in)
    event.listen(pg_store.engine, "checkout", checked_out)
    try:
        with pg_store.engine.connect() as conn:
            traced = conn.connection.dbapi_connection
        for _ in range(3):
            with pg_store.engine.connect():
                pass
    finally:
        event.remove(pg_store.engine, "checkin", check_in)
        event.remove(pg_store.engine, "checkout", checked_out)
        trace.close()
    assert traced.info.backend_pid != pid
    assert (tmp_path / "wire.log").read_text() == ""


def test_a_process_holding_over_1024_files_checks_out_and_replaces_connections(
    pg_store: GameStore, pg_admin_url: str
) -> None:
    """A ``serve`` process with a thousand spectator streams holds more than 1,024 sockets,
    so its database connections' descriptors pass ``select``'s limit (FD_SETSIZE): the
    checkout's look at the socket must still work there, for a live connection and for one
    the server hung up on (the 1,000-stream standby test found every read failing)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 1200 + 64
    if hard != resource.RLIM_INFINITY and hard < wanted:
        pytest.skip(f"this machine allows {hard} open files a process; the test needs {wanted}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, wanted), hard))
    held = []
    try:
        while not held or held[-1] < 1100:  # every descriptor up to 1100 taken
            held.append(os.open(os.devnull, os.O_RDONLY))
        pg_store.engine.dispose()  # the pool's next connections open past them
        game_id, command, rows = _store_game(pg_store, "ordinary")
        with pg_store.engine.connect() as conn:
            dbapi = conn.connection.dbapi_connection
            fd, pid = dbapi.pgconn.socket, dbapi.info.backend_pid
        assert fd > 1023
        terminate(pg_admin_url, pid)  # the server hangs up on the pooled connection
        result = pg_store.writes.execute(game_id, command, command_id="past-fd-setsize")
        assert len(result.events) == rows and not result.duplicate
        with pg_store.engine.connect() as conn:
            replaced = conn.connection.dbapi_connection
            assert replaced.info.backend_pid != pid and replaced.pgconn.socket > 1023
    finally:
        pg_store.engine.dispose()
        for descriptor in held:
            os.close(descriptor)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.fixture
def relay(pg_url: str) -> Iterator[LossyRelay]:
    relay = LossyRelay(pg_url)
    try:
        yield relay
    finally:
        relay.close()


@pytest.mark.parametrize("lose", ["reply", "request"])
@pytest.mark.parametrize("kind", KINDS)
def test_store_commit_answer_lost(
    pg_store: GameStore, relay: LossyRelay, kind: str, lose: str
) -> None:
    """The wire breaks around the COMMIT: the store cannot know, and says so."""
    relayed = GameStore(relay.url())
    try:
        game_id, command, rows = _store_game(relayed, kind)
        before = assert_whole(pg_store, game_id)
        relay.arm(lose, on=(b"faulted", b"pass_confirmed"))  # type: ignore[arg-type]
        outcome = _attempt(relayed, game_id, command, "faulted")
        assert relay.broken.is_set()
    finally:
        relayed.dispose()
    assert isinstance(outcome, OutcomeUnknown), outcome
    stored = _judge_store(pg_store, game_id, command, "faulted", outcome, before, rows)
    assert stored is (lose == "reply")


# -- over HTTP ----------------------------------------------------------------------------
#: (the statement a server's command is stopped at, the lock the test holds to stop it)
LOCKS = [
    # the one statement of a command on a game the server served: blocked at the game's
    # row, then at each table it writes
    ("WITH moved AS", "SELECT 1 FROM games WHERE id = %(game)s FOR UPDATE"),
    ("WITH moved AS", "LOCK TABLE events IN SHARE MODE"),
    ("WITH moved AS", "LOCK TABLE projections IN SHARE MODE"),
    ("WITH moved AS", "LOCK TABLE games IN SHARE MODE"),
    ("WITH moved AS", "LOCK TABLE commands IN SHARE MODE"),
]


def _http_game(server: Server, kind: str) -> tuple[Game, dict[str, Any], int]:
    """A game over HTTP, the commands before done; (game, the command's body, rows)."""
    before, command, rows = _setup(kind)
    game = Game.create(server, hands=HANDS)
    try:
        for c in before:
            sent = game.command(c.seat.value, {"type": "confirm_pass", "tiles": c.tiles})
            assert sent.status_code == 200, sent.text
            assert sent.headers["Command-ID"] == sent.json()["command_id"]
        game.view(command.seat.value)  # the server knows the token: no read before the command
    except BaseException:
        game.close()
        raise
    body = {"type": "confirm_pass", "tiles": command.tiles, "command_id": f"faulted-{kind}"}
    return game, {"seat": command.seat.value, **body}, rows


def _send(game: Game, body: dict[str, Any]) -> httpx.Response:
    seat = body["seat"]
    return game.command(seat, {k: v for k, v in body.items() if k != "seat"})


def _judge_http(
    game: Game, store: GameStore, body: dict[str, Any], response: httpx.Response, rows: int
) -> tuple[str, bool]:
    """The HTTP answer is true, names the command id, and a retry converges; returns the
    answer's code (``stored`` for a 200) and whether the command was stored."""
    command_id = body["command_id"]
    stored_id = f"{body['seat']}:{command_id}"
    record = assert_whole(store, game.game_id)
    stored = any(e["command_id"] == stored_id for e in record["events"])
    data = response.json()
    assert data["command_id"] == command_id, data
    assert response.headers["Command-ID"] == command_id
    if response.status_code == 200:
        assert stored, "a 200 for a command that is not stored"
        code = "stored"
    else:
        assert response.status_code == 503, response.text
        assert response.headers["content-type"].startswith("application/problem+json")
        assert response.headers["Retry-After"]
        code = data["code"]
        assert code in ("store_unavailable", "outcome_unknown"), data
        if code == "store_unavailable":
            assert not stored, "told 'nothing was stored' about a stored command"
    again = _send(game, body)
    assert again.status_code == 200, again.text
    assert again.json()["duplicate"] is stored
    assert len(again.json()["events"]) == rows
    assert _send(game, body).json()["duplicate"] is True
    record = assert_whole(store, game.game_id)
    assert sum(e["command_id"] == stored_id for e in record["events"]) == rows
    verify = game.clients["director"].get(game.path("/verify"))
    assert verify.status_code == 200 and verify.json()["ok"], verify.text
    return code, stored


@pytest.mark.parametrize("kind", ["ordinary", "resolving"])
def test_http_server_connection_killed_at_each_statement(
    pg_store: GameStore, pg_url: str, pg_admin_url: str, tmp_path: Path, kind: str
) -> None:
    """The server is stopped at each statement (behind a lock the test holds) and its
    connection terminated there: nothing stored, retry stores once. The command's one
    statement commits as it runs, so the server cannot know whether it committed before
    its connection ended: 503 outcome_unknown (store_unavailable would claim more)."""
    database = make_url(pg_url).database
    assert database is not None
    with running(pg_url, tmp_path) as server, ThreadPoolExecutor(1) as pool:
        for statement, lock in LOCKS:
            game, body, rows = _http_game(server, kind)
            with psycopg.connect(libpq(pg_url)) as holder:
                holder.execute(lock, {"game": game.game_id} if "%(" in lock else None)
                future = pool.submit(_send, game, body)
                kill_blocked(pg_admin_url, database, statement)
                response = future.result(timeout=30)
                holder.rollback()
            assert _judge_http(game, pg_store, body, response, rows) == ("outcome_unknown", False)
            game.close()


@pytest.mark.parametrize("lose", ["reply", "request"])
def test_http_commit_answer_lost(
    pg_store: GameStore, relay: LossyRelay, tmp_path: Path, lose: str
) -> None:
    """The server's wire breaks around its COMMIT: 503 outcome_unknown with the command
    id, whether or not the database committed; the retry tells which."""
    # no feed sequencer or webhook sender here: their COMMITs would meet the armed relay.
    # Still needed now that an idle sequencer commits nothing: it commits after every write
    # that leaves feed entries, so the setup's last HTTP commands (just before arm) are
    # numbered by a COMMIT up to 50 ms later, which the armed relay may take for the
    # command's; the relay must see only the command's COMMIT.
    env = {"CHARLESTON_PLATFORM_WORKERS": "0"}
    with running(relay.url(), tmp_path, env=env) as server:
        game, body, rows = _http_game(server, "resolving")
        marker = body["command_id"].encode()
        relay.arm(lose, on=(marker, b"pass_confirmed"))  # type: ignore[arg-type]
        response = _send(game, body)
        assert relay.broken.is_set()
        code, stored = _judge_http(game, pg_store, body, response, rows)
        assert (code, stored) == ("outcome_unknown", lose == "reply")
        game.close()


def test_http_answer_needs_no_read_after_the_commit(
    pg_store: GameStore, pg_url: str, pg_admin_url: str, tmp_path: Path
) -> None:
    """Right after the server's commit, the projections table is locked and any server
    connection that waits to read it is terminated: the answer is still the truth (200,
    built from what the transaction produced), never 'nothing was stored'."""
    database = make_url(pg_url).database
    assert database is not None
    with running(pg_url, tmp_path) as server, ThreadPoolExecutor(2) as pool:
        game, body, rows = _http_game(server, "resolving")
        with psycopg.connect(libpq(pg_url)) as holder, psycopg.connect(libpq(pg_url)) as late:
            holder.execute("LOCK TABLE commands IN SHARE MODE")  # stop before the commit
            response = pool.submit(_send, game, body)
            with psycopg.connect(libpq(pg_admin_url), autocommit=True) as admin:
                while blocked_backend(admin, database, "WITH moved AS") is None:
                    time.sleep(0.01)
                # queued behind the server's transaction: granted the moment it commits
                locking = pool.submit(
                    late.execute, "LOCK TABLE projections IN ACCESS EXCLUSIVE MODE"
                )
                while blocked_backend(admin, database, "LOCK TABLE projections") is None:
                    time.sleep(0.01)
                holder.rollback()
                locking.result(timeout=10)
                killed = []
                deadline = time.monotonic() + 10
                while not response.done() and time.monotonic() < deadline:
                    pid = blocked_backend(admin, database, "SELECT projections")
                    if pid is not None:
                        terminate(pg_admin_url, pid)
                        killed.append(pid)
                    time.sleep(0.01)
            late.rollback()
        answer = response.result(timeout=10)
        assert answer.status_code == 200, answer.text
        assert killed == []
        assert _judge_http(game, pg_store, body, answer, rows) == ("stored", True)
        game.close()


# -- the soak (longer form) -----------------------------------------------------------------
SOAK_SECONDS = float(os.environ.get("CHARLESTON_FAULTS_SOAK", "0"))
SOAK_APP = "charleston-faults-soak"


def _attempts_until_answered(game: Game, body: dict[str, Any]) -> list[tuple[float, float, Any]]:
    """Send the command until a 200: [(sent, answered, status or code)] per attempt."""
    attempts: list[tuple[float, float, Any]] = []
    while True:
        sent = time.time()
        try:
            response = _send(game, body)
        except httpx.HTTPError:
            attempts.append((sent, time.time(), "no answer"))
            continue
        answered = time.time()
        data = response.json()
        if response.status_code == 200:
            attempts.append((sent, answered, "duplicate" if data["duplicate"] else "stored"))
            return attempts
        assert response.status_code == 503, response.text
        assert data["command_id"] == body["command_id"]
        attempts.append((sent, answered, data["code"]))
        assert len(attempts) < 50, attempts


def _judge_attempts(
    store: GameStore,
    game: Game,
    body: dict[str, Any],
    rows: int,
    attempts: list[tuple[float, float, Any]],
) -> list[str]:
    """The attempt whose time window holds the stored rows' timestamp is the one that
    stored the command: it was never told store_unavailable; every other attempt that
    was answered 'stored' is that one."""
    stored_id = f"{body['seat']}:{body['command_id']}"
    record = assert_whole(store, game.game_id)
    mine = [e for e in record["events"] if e["command_id"] == stored_id]
    assert len(mine) == rows, "the retries did not store the command once, in full"
    when = store.reads.events(game.game_id, after=mine[0]["seq"] - 1)[0].created_at.timestamp()
    storer = [a for a in attempts if a[0] - 0.001 <= when <= a[1] + 0.001]
    assert len(storer) == 1, (when, attempts)
    codes = [a[2] for a in attempts]
    assert storer[0][2] != "store_unavailable", f"a stored command was answered {codes}"
    assert all(a[2] != "stored" for a in attempts if a is not storer[0]), codes
    return codes


@pytest.mark.skipif(SOAK_SECONDS <= 0, reason="set CHARLESTON_FAULTS_SOAK=<seconds>")
def test_soak_random_terminations_under_load(
    pg_store: GameStore, pg_url: str, pg_admin_url: str, tmp_path: Path
) -> None:
    """Clients send commands while the server's backends are terminated at random; every
    answer is judged, every game converges and verifies."""
    stop = threading.Event()
    kills: list[int] = []
    answers: dict[str, int] = {}

    def killer() -> None:
        rng = random.Random(7)
        with psycopg.connect(libpq(pg_admin_url), autocommit=True) as admin:
            while not stop.is_set():
                time.sleep(rng.uniform(0.005, 0.05))
                pids = admin.execute(
                    "SELECT pid FROM pg_stat_activity WHERE application_name = %s "
                    "AND query NOT LIKE 'LISTEN%%'",
                    [SOAK_APP],
                ).fetchall()
                if pids:
                    pid = rng.choice(pids)[0]
                    admin.execute("SELECT pg_terminate_backend(%s)", [pid])
                    kills.append(pid)

    def client(server: Server, n: int) -> None:
        kind = KINDS[n % 2]
        while not stop.is_set():
            try:
                game, body, rows = _http_game(server, kind)
            except (AssertionError, httpx.HTTPError):
                continue  # a fault while setting up: not what is judged here
            attempts = _attempts_until_answered(game, body)
            for code in _judge_attempts(pg_store, game, body, rows, attempts):
                answers[code] = answers.get(code, 0) + 1
            game.close()

    server_url = render(make_url(pg_url).update_query_dict({"application_name": SOAK_APP}))
    with running(server_url, tmp_path) as server, ThreadPoolExecutor(3) as pool:
        hammer = threading.Thread(target=killer, daemon=True)
        hammer.start()
        clients = [pool.submit(client, server, n) for n in range(3)]
        time.sleep(SOAK_SECONDS)
        stop.set()
        for c in clients:
            c.result(timeout=120)
        hammer.join(10)
    print(f"soak: {len(kills)} terminations, answers {answers}")
    assert kills and answers.get("stored")

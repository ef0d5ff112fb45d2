"""The failover drill: a round played through ``serve`` processes while the primary dies.

``python -m charleston_fsm.bench.failover --tables 20`` (the long form; the test suite
runs 4 tables, ``tests/test_failover_drill.py``). On one machine, from a checkout:

1. ``scripts/pg-cluster.sh start``: etcd, two PostgreSQL 15 nodes under Patroni (one
   synchronous standby), so an acknowledged commit is on both;
2. two ``serve`` processes on the cluster's multi-host URL
   (``target_session_attrs=read-write``), a webhook endpoint and its receiver;
3. a round of clocked tables (one idle seat each: its deadlines fire), played by bots,
   every answer written down (``failover_checks.Ledger``);
4. mid-round the primary's Patroni and PostgreSQL are killed (SIGKILL): Patroni promotes
   the standby once the dead leader's key lapses; the killed node is started again and
   rejoins as the standby; then a switchover makes it the primary again;
5. the round finishes, and the database is held against every answer
   (``failover_checks.check_database``), every game verified through the service.

Nothing is restarted but the killed node: the service processes find the new primary
themselves. The result says how long commands were not stored after each change.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from ..store.database.urls import libpq_conninfo, resolve_url
from ..tournament.round_player import RoundPlan, Tally, create_round
from .failover_checks import DrillPlayer, Findings, Ledger, check_database
from .server import ServeProcess, exit_on_sigterm

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "pg-cluster.sh"
PLATFORM_KEY = "failover-drill-platform-key"
#: the most the service may take to store commands again after a promotion (issue 35)
RECOVERY_BOUND = 30.0
DATABASE = "charleston_drill"
#: the cluster's ports from here (scripts/pg-cluster.sh: below the kernel's client ports)
PORT_BASE = 26000


class ClusterUnavailable(RuntimeError):
    """The cluster could not be started here (packages missing and not installable)."""


class Cluster:
    """``scripts/pg-cluster.sh`` with its folder and ports."""

    def __init__(self, directory: Path, port_base: int = PORT_BASE) -> None:
        self.env = {
            **os.environ,
            "CHARLESTON_CLUSTER_DIR": str(directory),
            "CHARLESTON_CLUSTER_PORT": str(port_base),
        }

    def run(self, *args: str, timeout: float = 300) -> str:
        done = subprocess.run(
            [str(SCRIPT), *args], env=self.env, capture_output=True, text=True, timeout=timeout
        )
        if done.returncode != 0:
            raise RuntimeError(f"pg-cluster.sh {' '.join(args)}: {done.stderr.strip()[-1500:]}")
        return done.stdout.strip()

    def start(self) -> None:
        if not SCRIPT.exists():
            raise ClusterUnavailable(f"{SCRIPT} is not here (the drill runs from a checkout)")
        try:
            self.run("start")
        except RuntimeError as exc:
            if "install" in str(exc) or "no apt-get" in str(exc):
                raise ClusterUnavailable(str(exc)) from exc
            raise

    def leader(self) -> str | None:
        try:
            return self.run("leader", timeout=30)
        except RuntimeError:
            return None

    def url(self, database: str = DATABASE) -> str:
        return self.run("url", database)


@dataclass
class Receiver:
    """A webhook receiver on a loopback port: answers 204, keeps every ``webhook-id``."""

    ids: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @contextmanager
    def serving(self) -> Iterator[int]:
        kept = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                with kept.lock:
                    kept.ids.add(self.headers.get("webhook-id", ""))
                self.send_response(204)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *_: Any) -> None:
                return

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            yield int(server.server_address[1])
        finally:
            server.shutdown()
            server.server_close()


@dataclass
class DrillResult:
    tables: int
    findings: Findings
    timeline: dict[str, float]
    verified: int

    @property
    def problems(self) -> list[str]:
        return self.findings.problems

    def summary(self) -> dict[str, Any]:
        return {
            "tables": self.tables,
            "verified": self.verified,
            **self.findings.facts,
            **{k: round(v, 2) for k, v in self.timeline.items()},
            "problems": self.problems,
        }


def _fresh_database(cluster: Cluster) -> str:
    """Create the drill's database on the primary (dropped first); its URL."""
    import psycopg

    admin = libpq_conninfo(resolve_url(cluster.url("postgres")))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {DATABASE}")
    return cluster.url(DATABASE)


def _serve(url: str, folder: Path, name: str, anchor_key: str) -> ServeProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHARLESTON_")}
    env.update(
        CHARLESTON_PLATFORM_KEY=PLATFORM_KEY,
        CHARLESTON_ANCHOR_KEY=anchor_key,  # one key for both (docs/deploy.md)
        CHARLESTON_WEBHOOK_ALLOW="127.0.0.1",
        CHARLESTON_WEBHOOK_RETRY_SCALE="0.0005",
        CHARLESTON_WEBHOOK_TIMEOUT="2",
        CHARLESTON_ROUTE_THREADS="8",
    )
    return ServeProcess(url, folder / f"{name}.log", env=env, timeout=120)


def _wait(check: Any, seconds: float, what: str) -> float:
    """Poll ``check`` until true; the moment it was (monotonic). Raises after ``seconds``."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out after {seconds:g} s waiting for {what}")
        time.sleep(0.2)
    return time.monotonic()


def run_drill(
    tables: int = 4,
    *,
    clock_seconds: int = 2,
    folder: Path | None = None,
    port_base: int = PORT_BASE,
    log: Any = print,
) -> DrillResult:
    """Run the drill once (cluster started and stopped here); what it found."""
    with ExitStack() as stack:
        if folder is None:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="drill-")))
            folder.chmod(0o755)  # the cluster's own user (postgres, under root) enters it
        cluster = Cluster(folder / "cluster", port_base)
        stack.callback(lambda: cluster.run("stop", "--clean"))
        begun = time.monotonic()
        cluster.start()
        log(f"cluster started in {time.monotonic() - begun:.1f} s")
        url = _fresh_database(cluster)
        receiver = Receiver()
        receiver_port = stack.enter_context(receiver.serving())
        # both at once: one migrates the empty database, the other waits for its lock
        key = secrets.token_hex(32)
        with ThreadPoolExecutor(2) as starting:
            serves = list(starting.map(lambda i: _serve(url, folder, f"serve{i}", key), (1, 2)))
        for serve in serves:
            stack.callback(serve.stop)
        log(f"two serve processes ready {time.monotonic() - begun:.1f} s in")
        headers = {"Authorization": f"Bearer {PLATFORM_KEY}"}
        platform = stack.enter_context(
            httpx.Client(base_url=serves[0].base_url, headers=headers, timeout=60)
        )
        made = platform.post("/v1/webhooks", json={"url": f"http://127.0.0.1:{receiver_port}/"})
        made.raise_for_status()
        plan = RoundPlan(tables=tables, seed=35, clock_seconds=clock_seconds, idle_seats=1)
        tally, ledger = Tally(), Ledger()
        created = create_round(platform, plan, tally)
        clients = [
            stack.enter_context(httpx.Client(base_url=s.base_url, timeout=30)) for s in serves
        ]
        players = []
        for i, table in enumerate(created["tables"]):
            player = DrillPlayer(clients[i % len(clients)], table, plan, tally)
            player.ledger = ledger
            players.append(player)
        pool = stack.enter_context(ThreadPoolExecutor(max_workers=tables))
        started = time.monotonic()
        playing = [pool.submit(p.play, started + 600) for p in players]
        timeline = _fail_over(cluster, ledger, started, log, platform, playing)
        for future in playing:
            future.result()
        timeline["round_seconds"] = time.monotonic() - started
        verdicts = list(pool.map(DrillPlayer.verify, players))
        log(f"round played and verified {time.monotonic() - begun:.1f} s in")
        findings = _settle_and_check(url, ledger, players, receiver)
        log(f"checked {time.monotonic() - begun:.1f} s in")
        findings.problems += [v for v in verdicts if v is not None]
        for serve in serves:  # each process's listener is connected again (LISTEN)
            try:
                _wait(lambda s=serve: _ready(s.base_url), 30, f"{serve.base_url}/readyz")
            except RuntimeError as exc:
                findings.problems.append(str(exc))
        for change in ("after_promotion", "after_switchover"):
            waited = timeline.get(f"stored_again_{change}")
            if waited is None or waited > RECOVERY_BOUND:
                findings.problems.append(
                    f"commands not stored within {RECOVERY_BOUND:g} s {change}"
                )
        return DrillResult(tables, findings, timeline, sum(v is None for v in verdicts))
    raise AssertionError("unreachable")  # pragma: no cover - ExitStack returns above


def _fail_over(
    cluster: Cluster,
    ledger: Ledger,
    started: float,
    log: Any,
    platform: httpx.Client,
    playing: list[Any],
) -> dict[str, float]:
    """Kill the primary mid-round, let Patroni promote, rejoin, switch back; when."""
    _wait(lambda: ledger.stored_since(started) >= 8, 120, "the round's first commands")
    first = cluster.leader() or "node1"
    other = "node2" if first == "node1" else "node1"
    killed = time.monotonic()
    cluster.run("kill", first)
    log(f"killed {first} (SIGKILL) {killed - started:.1f} s into the round")
    promoted = _wait(lambda: cluster.leader() == other, 120, f"{other} to be promoted")
    log(f"{other} promoted {promoted - killed:.1f} s after the kill")
    _wait(lambda: ledger.stored_since(promoted) > 0, 60, "a command stored after the promotion")
    after_promotion = ledger.first_stored_after(promoted) or 0.0
    log(f"commands stored again {after_promotion:.1f} s after the promotion")
    cluster.run("revive", first)
    cluster.run("wait", "120")
    rejoined = time.monotonic()
    cluster.run("switchover", first)
    switched = time.monotonic()
    log(f"{first} rejoined {rejoined - promoted:.1f} s after the promotion")
    log(f"{first} is the primary again {switched - rejoined:.1f} s after the switchover began")
    playing_then = not all(future.done() for future in playing)

    def stored_or_over() -> bool:
        return ledger.stored_since(switched) > 0 or all(f.done() for f in playing)

    _wait(stored_or_over, 120, "a command stored after the switchover, or the round's end")
    if ledger.stored_since(switched) > 0:
        again = ledger.first_stored_after(switched) or 0.0
    else:  # the round ended first: a new game is the write that shows it
        log("the round ended before a command after the switchover: a new game is the probe")
        _wait(lambda: _game_created(platform), 60, "a game created after the switchover")
        again = time.monotonic() - switched
    log(f"writes stored again {again:.1f} s after the switchover")
    return {
        "kill_at": killed - started,
        "promotion_seconds": promoted - killed,
        "stored_again_after_promotion": after_promotion,
        "rejoin_seconds": rejoined - promoted,
        "switchover_seconds": switched - rejoined,
        "stored_again_after_switchover": again,
        "round_playing_at_switchover": float(playing_then),
    }


def _ready(base_url: str) -> bool:
    """``/readyz`` says 200: the database is reachable and the listener connected."""
    try:
        return httpx.get(f"{base_url}/readyz", timeout=5).status_code == 200
    except httpx.TransportError:
        return False


def _game_created(platform: httpx.Client) -> bool:
    try:
        return platform.post("/v1/games", json={"ruleset": "nmjl", "seed": 1}).status_code == 201
    except httpx.TransportError:
        return False


def _settle_and_check(
    url: str, ledger: Ledger, players: list[DrillPlayer], receiver: Receiver
) -> Findings:
    """Wait until the feed is positioned and every webhook delivered, then check."""
    import psycopg

    with psycopg.connect(libpq_conninfo(resolve_url(url)), autocommit=True) as conn:

        def settled() -> bool:
            entries = {r[0] for r in conn.execute("SELECT entry_id FROM feed").fetchall()}
            waiting = conn.execute("SELECT count(*) FROM feed WHERE position IS NULL").fetchone()
            with receiver.lock:
                return not waiting[0] and entries <= receiver.ids

        with suppress(RuntimeError):  # the checks say what is missing
            _wait(settled, 90, "the feed positioned and every webhook delivered")
        with receiver.lock:
            delivered = set(receiver.ids)
        return check_database(conn, ledger, [p.game_id for p in players], delivered)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--clock-seconds", type=int, default=3)
    parser.add_argument("--port-base", type=int, default=PORT_BASE)
    args = parser.parse_args(argv)
    exit_on_sigterm()  # the cluster and the serve processes stopped, not left behind
    result = run_drill(
        args.tables,
        clock_seconds=args.clock_seconds,
        port_base=args.port_base,
        log=lambda line: print(line, file=sys.stderr, flush=True),
    )
    print(json.dumps(result.summary(), indent=2))
    return 1 if result.problems else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Reads served from a streaming standby (``serve --read-database-url``), over real
processes: a primary and a standby started by ``scripts/pg-standby.sh``, ``serve``
processes, HTTP clients and SSE streams.

- A round played on the primary while spectator streams (100 here; 1,000 in the long
  form, ``CHARLESTON_LONG_TESTS=1``) and a feed poller are served from the standby: no
  concealed tile in anything a spectator or the feed got, every stream gets every row
  once and in order, the feed poller every entry once, and ``/readyz`` shows the
  standby used, its lag, and the reads it served.
- A seat's view right after its command shows the command, even while the standby has
  stopped replaying (``pg_wal_replay_pause()``): a seat reads the primary, while the
  spectators of a server that tolerates the lag are shown the standby's older moment.
- A standby lagging past the bound is not read: ``/readyz`` says so and why, spectators
  and the feed are answered from the primary (current), and a spectator stream still
  gets each row; once replay resumes, the standby is used again.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_helpers import Game, Server, StreamReader, cli, ok, play_over_http, running, tile_ids
from budget import LONG
from standby_topology import Topology, standby_topology

pytestmark = pytest.mark.postgres

STREAMS = 1000 if LONG else 100
GAMES = 20 if LONG else 4


@pytest.fixture(scope="module")
def topology() -> Iterator[Topology]:
    with standby_topology() as started:
        yield started


def serve_reading(topology: Topology, tmp_path: Path, name: str, max_lag: float) -> Any:
    return running(
        topology.primary,
        tmp_path,
        name,
        args=("--read-database-url", topology.standby, "--read-max-lag", str(max_lag)),
    )


def reads_of(server: Server) -> dict[str, Any]:
    with server.client() as client:
        ready = ok(client.get("/readyz"))
    assert ready["reads"]["standbys"], ready
    return ready["reads"]["standbys"][0]  # type: ignore[no-any-return]


class FeedPoller:
    """Reads the feed page after page, from its start, until told to stop."""

    def __init__(self, server: Server) -> None:
        self.entries: list[dict[str, Any]] = []
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(server,), daemon=True)
        self._thread.start()

    def _run(self, server: Server) -> None:
        cursor = None
        try:
            with server.client() as client:
                while not self._stop.is_set():
                    params = {"limit": 200, **({"after": cursor} if cursor else {})}
                    page = ok(client.get("/v1/feed", params=params))
                    self.entries += page["entries"]
                    cursor = page["next"]
                    if not page["entries"]:
                        time.sleep(0.1)
        except BaseException as exc:
            self.error = exc

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)


def test_a_round_on_the_primary_is_watched_from_the_standby(
    topology: Topology, tmp_path: Path
) -> None:
    with serve_reading(topology, tmp_path, "reads", max_lag=5) as server:
        games = [Game.create(server, seed=700 + i) for i in range(GAMES)]
        streams = [
            StreamReader(
                f"{server.base_url}{games[i % GAMES].path('/spectate/stream')}",
                games[i % GAMES].tokens["spectator"],
                after=0,
            )
            for i in range(STREAMS)
        ]
        poller = FeedPoller(server)
        checked = {"own": 0}
        try:
            for number, game in enumerate(games):

                def own_command_shown(command: Any, answer: httpx.Response, g: Game = game) -> None:
                    seat = command.seat.value
                    stored = max(e["seq"] for e in answer.json()["events"])
                    listed = ok(g.clients[seat].get(g.path("/events")))
                    assert listed["last_seq"] >= stored, "a seat missed its own command"
                    assert g.view(seat) == answer.json()["view"]
                    checked["own"] += 1

                play_over_http(game, 700 + number, after_command=own_command_shown)
            heads = {g.game_id: ok(g.clients["director"].get(g.path("/events")))["last_seq"]
                     for g in games}  # fmt: skip
            for i, stream in enumerate(streams):
                game = games[i % GAMES]
                assert stream.wait_for_seq(heads[game.game_id], timeout=60), stream.error
                seqs = [e["seq"] for e in stream.events()]
                assert seqs == list(range(1, heads[game.game_id] + 1)), "a gap or a repeat"
                for payload in stream.events():
                    assert tile_ids(payload) == set(), payload
            with server.client(games[0].tokens["spectator"]) as watch:
                shown = ok(watch.get(games[0].path("/spectate")))
            assert tile_ids(shown["view"]) == set(), shown
            assert shown["view"]["as_of"]["seq"] == heads[games[0].game_id]
            assert shown["view"]["game"]["finished"], shown["view"]["game"]
            time.sleep(1.0)  # the poller's next page: after the last game's last entry
        finally:
            for stream in streams:
                stream.close()
            poller.stop()
        assert poller.error is None, poller.error
        positions = [int(e["cursor"][1:]) for e in poller.entries]
        assert positions == sorted(set(positions)), "the feed poller met a gap or a repeat"
        assert {e["game_id"] for e in poller.entries} >= {g.game_id for g in games}
        for entry in poller.entries:
            assert tile_ids(entry.get("data")) == set(), entry
        standby = reads_of(server)
        assert standby["used"] and standby["not_used_because"] is None, standby
        assert standby["lag_seconds"] is not None and standby["lag_seconds"] < 5, standby
        assert standby["reads"] >= STREAMS, standby  # each stream read there at least once
        assert checked["own"] > 0


def test_a_seat_sees_its_command_while_spectators_see_the_standbys_moment(
    topology: Topology, tmp_path: Path
) -> None:
    with (
        serve_reading(topology, tmp_path, "tolerant", max_lag=120) as tolerant,
        serve_reading(topology, tmp_path, "strict", max_lag=1) as strict,
    ):
        game = Game.create(tolerant, seed=801)
        play_some(game, 2)
        wait_until(lambda: reads_of(tolerant)["used"] and reads_of(strict)["used"])
        before = spectated_seq(tolerant, game)
        with tolerant.client() as client:
            feed_before = ok(client.get("/v1/feed", params={"limit": 1000}))["next"]
        stream = StreamReader(
            f"{strict.base_url}{game.path('/spectate/stream')}", game.tokens["spectator"], after=0
        )
        topology.on_standby("SELECT pg_wal_replay_pause()")
        try:
            sent = play_some(game, 6)  # each checks the seat's own view (the primary's)
            head = max(sent)
            # the tolerant server still reads the paused standby: the older moment
            assert spectated_seq(tolerant, game) == before
            paused = reads_of(tolerant)
            assert paused["used"] and paused["replay_paused"], paused
            # the strict one stops reading it once it lags past 1 s, and says why
            wait_until(lambda: not reads_of(strict)["used"])
            lagging = reads_of(strict)
            assert lagging["replay_paused"] and lagging["lag_seconds"] > 1, lagging
            assert "lagging" in lagging["not_used_because"], lagging
            assert lagging["lag_bytes"] > 0, lagging
            assert spectated_seq(strict, game) == head  # from the primary: current
            with strict.client() as client:
                feed_now = ok(client.get("/v1/feed", params={"after": feed_before}))
            assert any(e["game_id"] == game.game_id for e in feed_now["entries"])
            assert stream.wait_for_seq(head, timeout=30), stream.error  # woken by the primary
        finally:
            topology.on_standby("SELECT pg_wal_replay_resume()")
        wait_until(lambda: reads_of(strict)["used"])
        assert spectated_seq(tolerant, game) == head  # replayed: the standby caught up
        more = play_some(game, 2)
        assert stream.wait_for_seq(max(more), timeout=30), stream.error  # the watch woke it
        seqs = [e["seq"] for e in stream.events()]
        assert seqs == list(range(1, max(more) + 1))
        stream.close()
        game.close()


def play_some(game: Game, count: int) -> list[int]:
    """``count`` commands of the package's bots; after each, the seat's own events and
    view include it. The seqs stored."""
    from charleston_fsm.engine.bots import bots_for
    from charleston_fsm.engine.seats import SEATS

    bots = bots_for(game.sent + 5)
    stored: list[int] = []
    while len(stored) < count:
        for seat in SEATS:
            command = bots[seat].decide(game.view(seat.value))
            if command is None:
                continue
            game.sent += 1
            body = {**command.model_dump(mode="json", exclude={"seat"}),
                    "command_id": f"step-{game.sent}"}  # fmt: skip
            answer = ok(game.command(seat.value, body))
            seq = max(e["seq"] for e in answer["events"])
            listed = ok(game.clients[seat.value].get(game.path("/events")))
            assert listed["last_seq"] >= seq, "a seat missed its own command"
            assert game.view(seat.value) == answer["view"]
            stored.append(seq)
            if len(stored) == count:
                break
        else:
            continue
    return stored


def spectated_seq(server: Server, game: Game) -> int:
    with server.client(game.tokens["spectator"]) as watch:
        return ok(watch.get(game.path("/spectate")))["view"]["as_of"]["seq"]  # type: ignore[no-any-return]


def wait_until(condition: Any, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the condition did not hold in time"
        time.sleep(0.1)


def test_a_read_database_that_cannot_be_a_standby_is_refused(tmp_path: Path) -> None:
    """Before anything is served: a read URL that is no PostgreSQL, or standbys of a
    SQLite primary (a standby streams a PostgreSQL primary's WAL)."""
    sqlite = f"sqlite:///{tmp_path / 'games.sqlite3'}"
    done = cli(
        "serve", "--database-url", sqlite, "--read-database-url", "mysql://h/db", check=False
    )
    said = " ".join((done.stdout + done.stderr).split())
    assert done.returncode == 2, said
    assert "'mysql://h/db' is not a database the store runs on" in said
    standby = "postgresql://postgres@127.0.0.1:25433/games"
    done = cli("serve", "--database-url", sqlite, "--read-database-url", standby, check=False)
    said = " ".join((done.stdout + done.stderr).split())
    assert done.returncode == 2, said
    assert "Reads from standbys need a PostgreSQL primary" in said
    assert not (tmp_path / "games.sqlite3").exists()  # nothing was opened

"""Real HTTP for the API tests: `charleston-fsm serve` subprocesses, httpx clients, SSE readers.

Nothing here is mocked: each server is the CLI's ``serve`` in its own process on a free
loopback port, over a database from ``tests/conftest.py``.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from charleston_fsm.bench.server import ServeProcess, cli_command
from charleston_fsm.engine.bots import bots_for, play
from charleston_fsm.engine.commands import Command
from charleston_fsm.engine.events import Event
from charleston_fsm.engine.moments import iso
from charleston_fsm.engine.seats import SEATS
from charleston_fsm.engine.tiles import is_joker

ROLES = [*(s.value for s in SEATS), "director"]


def cli(
    *args: str, check: bool = True, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``charleston-fsm ARGS`` as a process (wide console: Rich does not wrap lines).

    The time limit only stops a command that hangs: the bench suite's quick run takes
    150-230 s on a quiet 2-core machine and ran past 300 s on a busy one."""
    environment = {k: v for k, v in os.environ.items() if k != "CHARLESTON_FSM_PROG"}
    environment = {**environment, "COLUMNS": "400", **(env or {})}
    environment.pop("CHARLESTON_DATABASE_URL", None)
    done = subprocess.run(
        [*cli_command(), *args], capture_output=True, text=True, env=environment, timeout=900
    )
    if check:
        assert done.returncode == 0, done.stdout + done.stderr
    return done


class Server(ServeProcess):
    """One ``charleston-fsm serve`` process (:class:`~charleston_fsm.bench.server.ServeProcess`)
    at serve's own log level; its JSON-line logs go to ``log_path``.

    It inherits this environment (the test run's anchor key file) but not its database
    URL, nor its platform key unless ``env`` gives one.
    """

    def __init__(
        self,
        database_url: str,
        log_path: Path,
        env: Mapping[str, str] | None = None,
        args: Sequence[str] = (),
        port: int | None = None,
    ):
        environment = {**os.environ, **(env or {})}
        environment.pop("CHARLESTON_DATABASE_URL", None)
        if not env or "CHARLESTON_PLATFORM_KEY" not in env:
            environment.pop("CHARLESTON_PLATFORM_KEY", None)
        super().__init__(
            database_url,
            log_path,
            extra=args,
            log_level=None,
            env=environment,
            port=port,
            timeout=120,  # a loaded shared machine starts a process slowly
        )

    def log_lines(self) -> list[dict[str, Any]]:
        lines = []
        for raw in self.log_path.read_text().splitlines():
            raw = raw.strip()
            if raw:
                lines.append(json.loads(raw))  # every line is JSON, or this fails
        return lines


@contextmanager
def running(
    database_url: str, tmp_path: Path, name: str = "server", **kwargs: Any
) -> Iterator[Server]:
    server = Server(database_url, tmp_path / f"{name}.log", **kwargs)
    try:
        yield server
    finally:
        server.stop()


@dataclass
class Game:
    """A game created over HTTP, with one client per role."""

    server: Server
    game_id: str
    tokens: dict[str, str]
    clients: dict[str, httpx.Client] = field(default_factory=dict)
    sent: int = 0

    @classmethod
    def create(cls, server: Server, **body: Any) -> Game:
        with server.client() as c:
            response = c.post("/v1/games", json=body)
        assert response.status_code == 201, response.text
        return cls.of(server, response.json())

    @classmethod
    def of(cls, server: Server, created: Mapping[str, Any]) -> Game:
        """The game a ``POST /v1/games`` answer (201) created, a client per role."""
        game = cls(server, created["game_id"], created["tokens"])
        game.clients = {role: server.client(created["tokens"][role]) for role in ROLES}
        return game

    def path(self, tail: str = "") -> str:
        return f"/v1/games/{self.game_id}{tail}"

    def view(self, role: str) -> dict[str, Any]:
        response = self.clients[role].get(self.path())
        assert response.status_code == 200, response.text
        return response.json()["view"]

    def command(self, seat: str, body: Mapping[str, Any], **kwargs: Any) -> httpx.Response:
        return self.clients[seat].post(self.path("/commands"), json=dict(body), **kwargs)

    def plain(self, seat: str, count: int = 3, *, place: bool = False) -> list[int]:
        """The first ``count`` non-joker tiles of the seat's rack, after placing its received
        tiles when ``place`` (a pass needs them placed first)."""
        view = self.view(seat)
        if place and view["received"]:
            ok(self.command(seat, {"type": "place_tiles"}))
            view = self.view(seat)
        return [t["id"] for t in view["rack"] if not is_joker(t["id"])][:count]

    def close(self) -> None:
        for client in self.clients.values():
            client.close()


def ok(response: httpx.Response) -> dict[str, Any]:
    """The JSON of a 200 answer (the assertion shows the body otherwise)."""
    assert response.status_code == 200, response.text
    return response.json()


def command_body(command: Command) -> dict[str, Any]:
    return command.model_dump(mode="json", exclude={"seat"})


def play_over_http(
    game: Game,
    seed: int,
    *,
    after_command: Any = None,
) -> int:
    """The package's bots play the game, each seat through its own token only."""

    def execute(command: Command) -> list[Event]:
        game.sent += 1
        body = {**command_body(command), "command_id": f"bot-{game.sent}"}
        response = game.command(command.seat.value, body)
        assert response.status_code == 200, response.text
        if after_command is not None:
            after_command(command, response)
        return []

    return play(
        execute,
        lambda seat: game.view(seat.value),
        bots_for(seed),
        rng=random.Random(seed),
    )


# -- server-sent events ----------------------------------------------------------------------
@dataclass
class StreamReader:
    """Reads one SSE stream in a thread; ``messages`` are (event, id, data, received_at).

    With ``which_pid`` its connection first asks ``/healthz`` which process serves it
    (``pid``): the stream then reuses that kept-alive connection, hence that process.
    """

    url: str
    token: str
    after: int | None = None
    which_pid: bool = False
    pid: int | None = None
    messages: list[tuple[str, str | None, Any, float]] = field(default_factory=list)
    raw: list[str] = field(default_factory=list)
    error: BaseException | None = None

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._subscribed = threading.Event()
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        if not self._subscribed.wait(15):
            raise RuntimeError(f"stream did not start: {self.error!r}")

    def _run(self) -> None:
        params = {} if self.after is None else {"after": self.after}
        try:
            with httpx.Client(timeout=httpx.Timeout(30, read=None)) as client:
                if self.which_pid:
                    self.pid = client.get(self.url.split("/v1/")[0] + "/healthz").json()["pid"]
                self._read(client, params)
        except BaseException as exc:
            if not self._stop.is_set():
                self.error = exc
                self._subscribed.set()

    def _read(self, client: httpx.Client, params: dict[str, int]) -> None:
        with client.stream(
            "GET", self.url, params=params, headers={"Authorization": f"Bearer {self.token}"}
        ) as response:
            assert response.status_code == 200, response.read()
            assert response.headers["content-type"].startswith("text/event-stream")
            event, ident, data = "message", None, []
            for line in response.iter_lines():
                if self._stop.is_set():
                    return
                self.raw.append(line)
                if line == "":
                    if data:
                        self._add(event, ident, json.loads("\n".join(data)))
                    event, ident, data = "message", None, []
                elif line.startswith(":"):
                    continue
                else:
                    name, _, value = line.partition(":")
                    value = value[1:] if value.startswith(" ") else value
                    if name == "event":
                        event = value
                    elif name == "id":
                        ident = value
                    elif name == "data":
                        data.append(value)

    def _add(self, event: str, ident: str | None, data: Any) -> None:
        with self._changed:
            self.messages.append((event, ident, data, time.perf_counter()))
            if event == "subscribed":
                self._subscribed.set()
            self._changed.notify_all()

    def events(self) -> list[dict[str, Any]]:
        return [m[2] for m in self.messages if m[0] != "subscribed"]

    def wait_for_seq(self, seq: int, timeout: float = 20) -> bool:
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                if any(e.get("seq", 0) >= seq for e in self.events()):
                    return True
                left = deadline - time.monotonic()
                if left <= 0 or self.error is not None:
                    return False
                self._changed.wait(left)

    def close(self) -> None:
        self._stop.set()


# -- secrecy --------------------------------------------------------------------------------
_ID_IN_TEXT = re.compile(r"#(\d+)|[Tt]ile id (\d+)")
NOT_TILES = {"count_range"}


def tile_ids(data: Any, key: str | None = None) -> set[int]:
    """Every tile id a JSON document could carry: list members, ``id`` fields, numeric
    keys, and ids quoted in text ("5B#17", "Tile id 17")."""
    found: set[int] = set()
    if key in NOT_TILES:
        return found
    if isinstance(data, Mapping):
        for k, v in data.items():
            if isinstance(k, str) and k.isdigit():
                found.add(int(k))
            if k == "id" and isinstance(v, int) and not isinstance(v, bool):
                found.add(v)
            found |= tile_ids(v, k)
    elif isinstance(data, list):
        for item in data:
            if isinstance(item, int) and not isinstance(item, bool):
                found.add(item)
            else:
                found |= tile_ids(item, key)
    elif isinstance(data, str):
        for match in _ID_IN_TEXT.finditer(data):
            found.add(int(next(g for g in match.groups() if g)))
    return found


class Knowledge:
    """Which tiles each seat has legitimately held (from the director's view over time)."""

    def __init__(self) -> None:
        self.held: dict[str, set[int]] = {s.value: set() for s in SEATS}
        self.by_seq: dict[int, dict[str, frozenset[int]]] = {}

    def update(self, director_view: Mapping[str, Any], seq: int | None = None) -> None:
        for seat, data in director_view["seats"].items():
            self.held[seat] |= {t["id"] for t in data["rack"]}
            self.held[seat] |= {t["id"] for t in data["received"]}
        if seq is not None:
            self.by_seq[seq] = {s: frozenset(h) for s, h in self.held.items()}

    def leaks(self, seat: str, payload: Any, *, at_seq: int | None = None) -> set[int]:
        known = self.held[seat]
        if at_seq is not None:
            candidates = [s for s in self.by_seq if s >= at_seq]
            if candidates:
                known = set(self.by_seq[min(candidates)][seat])
        return tile_ids(payload) - known


def created_ahead(
    server: Server, path: str, body: Mapping[str, Any]
) -> tuple[dict[str, Any], datetime]:
    """``POST path`` of a game or round whose tables start by themselves a moment from now:
    the answer (201) and that moment. A busy machine may take longer than the moment to
    create it (422 ``start_in_the_past``); then a later one is asked for."""
    for ahead in (3, 8, 20, 60):
        start = datetime.now(UTC) + timedelta(seconds=ahead)
        with server.client() as client:
            answer = client.post(path, json={**body, "start": iso(start)})
        if answer.status_code == 422 and answer.json()["code"] == "start_in_the_past":
            continue
        assert answer.status_code == 201, answer.text
        return answer.json(), start
    raise AssertionError(f"every start asked of {path} was past when the service got it")

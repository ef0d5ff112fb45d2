"""Play a whole round against a running service, over HTTP only (``simulate --url``).

The round is created in one call (``POST /v1/rounds``); then every table is played by
the package's bots, each seat through its own token and its own view, tables side by
side in threads. Seats left idle are not played: the service's clock (when the round
has one) acts for them, and the round's listing reports them late. Nothing here reads
the database: what the summary says, the service said.
"""

from __future__ import annotations

import random
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

import httpx

from ..engine.bots import Bot, bots_for
from ..engine.seats import SEATS, Seat
from .busy_service import MAX_RETRIES, nothing_stored, wait_before_retry

#: answers after which the same command (same id) is sent again: nothing or it was stored
RETRY_STATUSES = frozenset({500, 502, 503, 504})
#: how long one request keeps trying through lost connections and 5xx answers: a service
#: process restarting under load takes 5-30 s (bounded by ``--timeout`` as well)
RIDE_THROUGH_SECONDS = 90.0
POLL_SECONDS = 0.25  # how often a table waiting for its clock (or a service bot) looks again


@dataclass
class Tally:
    """What all tables' threads sent and heard (shared, under a lock)."""

    commands: int = 0
    refusals: int = 0
    resent: int = 0
    clock_actions: int = 0  # actions the clock took for a seat (from the tables' audits)
    rulings: int = 0
    latencies: list[float] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def sent(self, seconds: float, status: int) -> None:
        with self.lock:
            self.latencies.append(seconds)
            if status == 200:
                self.commands += 1
            elif status in RETRY_STATUSES:
                self.resent += 1
            else:
                self.refusals += 1

    def percentile(self, p: float) -> float:
        if len(self.latencies) < 2:
            return self.latencies[0] if self.latencies else 0.0
        return statistics.quantiles(self.latencies, n=100, method="inclusive")[int(p) - 1]


@dataclass(frozen=True)
class RoundPlan:
    """What to create and how to play it."""

    tables: int
    ruleset: str = "nmjl"
    seed: int = 1
    clock_seconds: int | None = None
    idle_seats: int = 0
    name: str = "simulate"

    @property
    def idle(self) -> frozenset[Seat]:
        """The seats no one plays: North first, then West, South, East."""
        return frozenset(list(reversed(SEATS))[: self.idle_seats])

    def request(self) -> dict[str, Any]:
        table: dict[str, Any] = {"ruleset": self.ruleset, "seed": self.seed}
        if self.clock_seconds is not None:
            table["clock"] = clock_spec(self.clock_seconds)
        return {"name": self.name, "table": table, "count": self.tables}


def clock_spec(seconds: int) -> dict[str, Any]:
    """The create-game ``clock`` field: every kind of decision gets ``seconds``, and the
    service's auto player acts when they run out."""
    kinds = ("confirm_pass", "vote", "courtesy", "place_tiles")
    return {**dict.fromkeys(kinds, seconds), "on_expiry": "auto_play"}


@dataclass
class RoundResult:
    round_id: str
    tables: int
    finished: int
    verified: int
    late_seats: int
    elapsed: float
    tally: Tally
    problems: list[str]

    @property
    def ok(self) -> bool:
        return not self.problems and self.finished == self.verified == self.tables


def create_round(
    client: httpx.Client, plan: RoundPlan, tally: Tally | None = None
) -> dict[str, Any]:
    """Create the round; a busy service's 503 that stored nothing is waited out (its
    ``Retry-After``) and the round asked for again, counted in ``tally.resent``."""
    for attempt in range(MAX_RETRIES + 1):
        response = client.post("/v1/rounds", json=plan.request())
        if attempt == MAX_RETRIES or not nothing_stored(response.status_code, _json(response)):
            break
        if tally is not None:
            with tally.lock:
                tally.resent += 1
        time.sleep(wait_before_retry(response.headers, attempt))
    if response.status_code != 201:
        raise RuntimeError(
            f"The service refused the round ({response.status_code}): {response.text[:500]}"
        )
    return response.json()


class TablePlayer:
    """One table's human seats, each played by a bot through its own token."""

    def __init__(
        self, client: httpx.Client, table: dict[str, Any], plan: RoundPlan, tally: Tally
    ) -> None:
        self.client = client
        self.game_id = table["game_id"]
        self.tokens = table["tokens"]
        self.tally = tally
        self.number = table["table"]
        played = set(SEATS) - plan.idle - {Seat(s) for s in table.get("bots", [])}
        every = bots_for(plan.seed * 1000 + self.number)
        self.bots: dict[Seat, Bot] = {s: every[s] for s in SEATS if s in played}
        self.rng = random.Random(self.number)
        self.sent = 0
        self.give_up_at = time.monotonic() + RIDE_THROUGH_SECONDS  # set by play_round

    def _request(
        self, method: str, path: str, role: str, *, tally: bool = False, **kwargs: Any
    ) -> httpx.Response:
        """One request, made again (the same one: a command keeps its id) after a lost
        connection or a 5xx, until it is answered or ``RIDE_THROUGH_SECONDS`` (and the
        round's ``--timeout``) have passed: a service restarting is waited for."""
        headers = {"Authorization": f"Bearer {self.tokens[role]}"}
        give_up = min(time.monotonic() + RIDE_THROUGH_SECONDS, max(self.give_up_at, 0.0))
        give_up = max(give_up, time.monotonic() + 5.0)  # the checks after play get a chance
        attempt = 0
        while True:
            started = time.perf_counter()
            try:
                response = self.client.request(
                    method, f"/v1/games/{self.game_id}{path}", headers=headers, **kwargs
                )
            except httpx.TransportError:
                if tally:
                    self.tally.sent(time.perf_counter() - started, 503)
                if time.monotonic() >= give_up:
                    raise
                wait = wait_before_retry({}, attempt)
            else:
                if tally:
                    self.tally.sent(time.perf_counter() - started, response.status_code)
                if response.status_code not in RETRY_STATUSES or time.monotonic() >= give_up:
                    return response
                wait = wait_before_retry(response.headers, attempt)  # its Retry-After
            attempt += 1
            time.sleep(min(wait, max(0.0, give_up - time.monotonic())))

    def _get(self, path: str, role: str) -> httpx.Response:
        return self._request("GET", path, role)

    def view(self, role: str) -> dict[str, Any]:
        """The role's view (read again after a 5xx or a lost connection: a read is safe)."""
        response = self._get("", role)
        response.raise_for_status()
        return response.json()["view"]  # type: ignore[no-any-return]

    def send(self, seat: Seat, body: dict[str, Any]) -> bool:
        """Send one command; resent with its id while the answer leaves it in doubt."""
        self.sent += 1
        body = {**body, "command_id": f"sim-{seat.value}-{self.sent}"}
        try:
            response = self._request("POST", "/commands", seat.value, tally=True, json=body)
        except httpx.TransportError:
            return False  # the table is looked at again; what is unfinished is reported
        return response.status_code == 200

    def play(self, deadline: float) -> bool:
        """Play until the table is finished and no bot has anything left (or ``deadline``)."""
        while time.monotonic() < deadline:
            acted = False
            seats = list(self.bots)
            self.rng.shuffle(seats)
            finished = False
            for seat in seats:
                view = self.view(seat.value)
                finished = view["game"]["finished"]
                command = self.bots[seat].decide(view)
                if command is not None:
                    self.send(seat, command.model_dump(mode="json", exclude={"seat"}))
                    acted = True
            if not seats:
                finished = self.view("director")["game"]["finished"]
            if not acted:
                if finished:
                    return True
                time.sleep(POLL_SECONDS)  # the clock or the service's bots act now
        return self.finished()

    def finished(self) -> bool:
        """Whether the service says the table is finished (what counts, not our loop)."""
        try:
            return bool(self.view("director")["game"]["finished"])
        except httpx.HTTPError:
            return False

    def audit(self) -> dict[str, Any]:
        response = self._get("/audit", "director")
        response.raise_for_status()
        return response.json()  # type: ignore[no-any-return]

    def check_clock(self, listed_late: Sequence[str]) -> str | None:
        """``None`` when the audit names exactly the seats the round's listing shows late,
        each with what the clock did in its name; else what differs."""
        audit = self.audit()
        ran_out = {e["seat"] for e in audit["clock"] if e["type"] in ("clock_expired", "seat_late")}
        if ran_out != set(listed_late):
            return (
                f"table {self.number}: the listing shows late {sorted(listed_late)}, the audit "
                f"{sorted(ran_out)}"
            )
        with self.tally.lock:
            self.tally.clock_actions += sum(e["type"] == "clock_expired" for e in audit["clock"])
        return None

    def record_ruling(self, text: str) -> str | None:
        """Record a director's note on this table; ``None`` once its audit shows it."""
        body = {"type": "record_ruling", "kind": "note", "text": text, "command_id": "sim-ruling"}
        response = self._request("POST", "/director/commands", "director", json=body)
        if response.status_code != 200:
            return f"table {self.number}: the ruling was refused ({response.status_code})"
        if not any(r["text"] == text for r in self.audit()["rulings"]):
            return f"table {self.number}: the ruling is not in the audit"
        return None

    def verify(self) -> str | None:
        """``None`` when the director's verify finds the record intact, else why not."""
        response = self._get("/verify", "director")
        if response.status_code != 200:
            return f"table {self.number}: verify answered {response.status_code}"
        found = response.json()
        return None if found["ok"] else f"table {self.number}: {found['message']}"


def play_round(
    base_urls: Sequence[str],
    plan: RoundPlan,
    *,
    platform_key: str | None = None,
    concurrency: int = 16,
    timeout: float = 600.0,
    on_table_done: Callable[[int], None] = lambda finished: None,
    on_created: Callable[[dict[str, Any]], None] = lambda created: None,
    ruling: str | None = None,
) -> RoundResult:
    """Create the round (through the first service), play every table (table *i* through
    service *i* mod n: several processes on one database), verify each, read the listing,
    check that each table's audit names its late seats; ``ruling``: a director's note
    recorded on table 1 (and found in its audit)."""
    tally = Tally()
    problems: list[str] = []
    limits = httpx.Limits(max_connections=concurrency * 2, max_keepalive_connections=concurrency)
    with ExitStack() as stack:
        clients = [
            stack.enter_context(httpx.Client(base_url=url, timeout=60, limits=limits))
            for url in base_urls
        ]
        headers = {"Authorization": f"Bearer {platform_key}"} if platform_key else {}
        started = time.perf_counter()
        with httpx.Client(base_url=base_urls[0], headers=headers, timeout=120) as platform:
            created = create_round(platform, plan, tally)
        on_created(created)
        players = [
            TablePlayer(clients[i % len(clients)], t, plan, tally)
            for i, t in enumerate(created["tables"])
        ]
        deadline = time.monotonic() + timeout
        for player in players:
            player.give_up_at = deadline
        finished = 0
        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            futures = {pool.submit(p.play, deadline): p for p in players}
            for future in as_completed(futures):
                player = futures[future]
                try:
                    done = future.result()
                except Exception as exc:  # a table's thread failed: is the table finished?
                    done = player.finished()
                    if not done:
                        problems.append(f"table {player.number}: {type(exc).__name__}: {exc}")
                else:
                    if not done:
                        problems.append(f"table {player.number}: not finished in {timeout:g} s")
                finished += done
                on_table_done(finished)
            elapsed = time.perf_counter() - started
            verdicts = list(pool.map(TablePlayer.verify, players))
        problems += [v for v in verdicts if v is not None]
        listing = _ridden_through(
            lambda: clients[-1].get(
                f"/v1/rounds/{created['round_id']}",
                headers={"Authorization": f"Bearer {created['token']}"},
            )
        )
        listing.raise_for_status()
        counts = listing.json()["counts"]
        late = {t["game_id"]: t["late"] for t in listing.json()["tables"]}
        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            checks = pool.map(lambda p: p.check_clock(late.get(p.game_id, [])), players)
            problems += [c for c in checks if c is not None]
        if ruling is not None and players:
            recorded = players[0].record_ruling(ruling)
            problems += [recorded] if recorded else []
            tally.rulings += recorded is None
    return RoundResult(
        round_id=created["round_id"],
        tables=len(players),
        finished=counts["finished"],
        verified=sum(v is None for v in verdicts),
        late_seats=counts["late_seats"],
        elapsed=elapsed,
        tally=tally,
        problems=problems,
    )


def _ridden_through(request: Callable[[], httpx.Response]) -> httpx.Response:
    """A safe read, made again through a restart (lost connections, 5xx) for a while."""
    give_up = time.monotonic() + RIDE_THROUGH_SECONDS
    attempt = 0
    while True:
        headers: Any = {}
        try:
            response = request()
        except httpx.TransportError:
            if time.monotonic() >= give_up:
                raise
        else:
            if response.status_code not in RETRY_STATUSES or time.monotonic() >= give_up:
                return response
            headers = response.headers
        attempt += 1
        time.sleep(wait_before_retry(headers, attempt))


def _json(response: httpx.Response) -> Any:
    """An answer's JSON body (``None`` when it has none)."""
    try:
        return response.json()
    except ValueError:
        return None

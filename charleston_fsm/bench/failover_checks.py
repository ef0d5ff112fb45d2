"""What the failover drill's clients heard, and the checks of the database afterwards.

The drill (``failover.py``) plays a round through ``serve`` processes while the primary
dies. Its bots' every answer is written down here (:class:`Ledger`): a ``200`` says the
command is stored, a ``503 outcome_unknown`` (or a lost connection) leaves it in doubt
until the same ``command_id`` is answered again. Afterwards the database itself is read
(:func:`check_database`) and must agree with every answer: nothing acknowledged is
missing, nothing refused is there, each deadline fired once, the feed's positions run
1..N with no entry twice, and every entry reached the webhook receiver.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

import httpx

from ..engine.seats import Seat
from ..tournament.busy_service import wait_before_retry
from ..tournament.round_player import RETRY_STATUSES, RIDE_THROUGH_SECONDS, TablePlayer

#: what a client may be told of one attempt of a command
STORED, UNKNOWN, UNAVAILABLE, LOST = "stored", "outcome_unknown", "store_unavailable", "lost"


@dataclass
class Ledger:
    """Every answer every command of the drill got, in order, and when the stored ones
    came (``time.monotonic``)."""

    answers: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    stored_at: list[float] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def note(self, game_id: str, command_id: str, answer: str) -> None:
        with self.lock:
            self.answers.setdefault((game_id, command_id), []).append(answer)
            if answer == STORED:
                self.stored_at.append(time.monotonic())

    def stored_since(self, moment: float) -> int:
        with self.lock:
            return sum(at >= moment for at in self.stored_at)

    def first_stored_after(self, moment: float) -> float | None:
        """Seconds from ``moment`` to the first command stored after it (``None``: none)."""
        with self.lock:
            later = [at for at in self.stored_at if at >= moment]
        return min(later) - moment if later else None

    def count(self, answer: str) -> int:
        with self.lock:
            return sum(said.count(answer) for said in self.answers.values())


class DrillPlayer(TablePlayer):
    """A table's bots whose every command answer is written in the drill's ledger."""

    ledger: Ledger

    def send(self, seat: Seat, body: dict[str, Any]) -> bool:
        """Send one command, again with the same id while its answer leaves it in doubt
        (a lost connection, ``503``), until it is answered or the ride-through ends."""
        self.sent += 1
        sent_id = f"drill-{seat.value}-{self.sent}"
        command_id = f"{seat.value}:{sent_id}"  # the id as stored: scoped per seat
        body = {**body, "command_id": sent_id}
        headers = {"Authorization": f"Bearer {self.tokens[seat.value]}"}
        path = f"/v1/games/{self.game_id}/commands"
        give_up = time.monotonic() + RIDE_THROUGH_SECONDS
        attempt = 0
        while True:
            started = time.perf_counter()
            waits: Any = {}
            try:
                response = self.client.post(path, json=body, headers=headers)
            except httpx.TransportError:
                self.ledger.note(self.game_id, command_id, LOST)
            else:
                self.tally.sent(time.perf_counter() - started, response.status_code)
                answer = _answer(response)
                self.ledger.note(self.game_id, command_id, answer)
                if response.status_code not in RETRY_STATUSES:
                    return response.status_code == 200
                waits = response.headers
            if time.monotonic() >= give_up:
                return False
            attempt += 1
            time.sleep(min(wait_before_retry(waits, attempt), 1.0))


def _answer(response: httpx.Response) -> str:
    if response.status_code == 200:
        return STORED
    try:
        code = response.json().get("code")
    except ValueError:
        code = None
    return f"{response.status_code}:{code or 'no code'}"


@dataclass
class Findings:
    """What the database says against what the clients were told."""

    problems: list[str] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)


def check_database(
    conn: Any, ledger: Ledger, game_ids: Collection[str], delivered: Collection[str]
) -> Findings:
    """Read the drill's database (a psycopg connection to the primary) and compare."""
    found = Findings()
    stored = {
        (game, command)
        for game, command in conn.execute("SELECT game_id, command_id FROM commands").fetchall()
    }
    _check_answers(found, ledger, stored)
    _check_clocks(found, conn)
    _check_feed(found, conn, delivered)
    unfinished = conn.execute(
        "SELECT count(*) FROM games WHERE id = ANY(%s) AND status <> 'finished'", [list(game_ids)]
    ).fetchone()[0]
    if unfinished:
        found.problems.append(f"{unfinished} game(s) of the round not finished")
    return found


def _check_answers(found: Findings, ledger: Ledger, stored: set[tuple[str, str]]) -> None:
    """Every command answered stored is in the database; every one left in doubt was
    answered again, truly: stored and there, or refused and not there."""
    in_doubt = resolved_stored = resolved_refused = 0
    for key, said in ledger.answers.items():
        if STORED in said and key not in stored:
            found.problems.append(f"{key}: answered stored, not in the database")
        final = said[-1]
        doubted = any(a == LOST or a.endswith(f":{UNKNOWN}") for a in said)
        if doubted:
            in_doubt += 1
        if final == STORED:
            resolved_stored += doubted
        elif final == LOST or final.startswith("503:") or final.startswith("5"):
            found.problems.append(f"{key}: never answered ({said})")
        else:  # refused: nothing of it may be stored
            resolved_refused += doubted
            if key in stored:
                found.problems.append(f"{key}: answered {final}, yet stored")
    found.facts.update(
        commands=len(ledger.answers),
        answered_stored=sum(STORED in s for s in ledger.answers.values()),
        outcome_unknown_answers=ledger.count(f"503:{UNKNOWN}"),
        unavailable_answers=ledger.count(f"503:{UNAVAILABLE}"),
        lost_connections=ledger.count(LOST),
        in_doubt=in_doubt,
        in_doubt_then_stored=resolved_stored,
        in_doubt_then_refused=resolved_refused,
    )


def _check_clocks(found: Findings, conn: Any) -> None:
    """Each deadline fired once: one row per (game, deadline's command id), none left due."""
    twice = conn.execute(
        "SELECT game_id, command_id, count(*) FROM events "
        "WHERE type IN ('clock_expired', 'seat_late') GROUP BY game_id, command_id "
        "HAVING count(*) > 1"
    ).fetchall()
    for game, command, times in twice:
        found.problems.append(f"{game}: deadline {command} fired {times} times")
    fired = conn.execute(
        "SELECT count(*) FROM events WHERE type IN ('clock_expired', 'seat_late')"
    ).fetchone()[0]
    overdue = conn.execute(
        "SELECT count(*) FROM games WHERE next_due < now() - interval '30 seconds'"
    ).fetchone()[0]
    if overdue:
        found.problems.append(f"{overdue} game(s) with a deadline 30 s overdue")
    found.facts["deadlines_fired"] = fired


def _check_feed(found: Findings, conn: Any, delivered: Collection[str]) -> None:
    """Positions 1..N, each entry once; every entry reached the webhook receiver."""
    count, distinct, low, high, unpositioned = conn.execute(
        "SELECT count(*), count(DISTINCT position), min(position), max(position), "
        "count(*) FILTER (WHERE position IS NULL) FROM feed"
    ).fetchone()
    if unpositioned:
        found.problems.append(f"{unpositioned} feed entries without a position")
    if count and (distinct != count or low != 1 or high != count):
        found.problems.append(
            f"feed positions: {count} entries, {distinct} distinct, from {low} to {high}"
        )
    doubled = conn.execute(
        "SELECT game_id, seq, type, count(*) FROM feed WHERE seq IS NOT NULL "
        "GROUP BY game_id, seq, type HAVING count(*) > 1"
    ).fetchall()
    for game, seq, kind, times in doubled:
        found.problems.append(f"feed: {kind} of {game} seq {seq} {times} times")
    unsealed = conn.execute(
        "SELECT count(*) FROM games g WHERE status = 'finished' AND NOT EXISTS "
        "(SELECT 1 FROM feed f WHERE f.game_id = g.id AND f.type = 'game.sealed')"
    ).fetchone()[0]
    if unsealed:
        found.problems.append(f"{unsealed} finished game(s) never sealed")
    entries = {row[0] for row in conn.execute("SELECT entry_id FROM feed").fetchall()}
    missing = entries - set(delivered)
    if missing:
        found.problems.append(f"{len(missing)} feed entries never reached the webhook receiver")
    found.facts.update(feed_entries=count, webhook_entries_received=len(entries & set(delivered)))

"""Webhooks and the feed across real ``serve`` processes on one PostgreSQL.

Two processes play a round of bot tables (their clock workers write the games); both
send webhooks. The receiver is down at first, then answers 500 to some deliveries and
times out on others, and one process is killed (SIGKILL) while it writes and sends:
every feed entry must still reach the receiver, none as a new entry twice (a retry
carries the same ``webhook-id``), each game's entries in the game's order; and the
feed's cursor must read the same order from either process, and after a restart.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import httpx
import pytest
from api_helpers import Server
from feed_helpers import Delivery, assert_no_tiles, by_game, receiver

from charleston_fsm.bench.server import free_port
from charleston_fsm.ledger.webhook_signatures import verify

pytestmark = pytest.mark.postgres

KEY = "platform-key-for-the-webhook-test"
ENV = {
    "CHARLESTON_PLATFORM_KEY": KEY,
    "CHARLESTON_WEBHOOK_ALLOW": "127.0.0.1",
    "CHARLESTON_WEBHOOK_RETRY_SCALE": "0.0005",  # 2.5 ms, 0.15 s, 0.9 s, 3.6 s, 9 s …
    "CHARLESTON_WEBHOOK_TIMEOUT": "1",
}
HEADERS = {"Authorization": f"Bearer {KEY}"}


def whole_feed(base_url: str) -> list[dict]:
    entries: list[dict] = []
    after = ""
    while True:
        page = httpx.get(
            f"{base_url}/v1/feed", params={"after": after, "limit": 500}, headers=HEADERS
        )
        assert page.status_code == 200, page.text
        body = page.json()
        entries += body["entries"]
        if not body["entries"]:
            return entries
        after = body["next"]


def wait_until(check, seconds: float = 240.0, what: str = "") -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def test_every_entry_arrives_once_as_new_in_order_through_outages_and_a_kill(
    pg_url: str, tmp_path: Path
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/hook"
    one = Server(pg_url, tmp_path / "one.log", env=ENV)
    two = Server(pg_url, tmp_path / "two.log", env=ENV)
    try:
        made = httpx.post(
            f"{one.base_url}/v1/webhooks", json={"url": url}, headers=HEADERS, timeout=30
        )
        assert made.status_code == 201, made.text
        secret = made.json()["secret"]
        tables = {"seed": 3, "bots": ["east", "south", "west", "north"], "bot_pace": 0}
        created = httpx.post(
            f"{two.base_url}/v1/rounds",
            json={"name": "R", "table": tables, "count": 4},
            headers=HEADERS,
            timeout=60,
        )
        assert created.status_code == 201, created.text
        round_id, token = created.json()["round_id"], created.json()["token"]
        time.sleep(2)  # the receiver is down meanwhile: attempts fail, retries are set
        os.kill(one.proc.pid, signal.SIGKILL)  # mid-way: its leases and its clocks die
        one.proc.wait()

        tries: dict[str, int] = {}
        lock = threading.Lock()

        def answer(delivery: Delivery) -> int:
            with lock:
                n = tries[delivery.headers["webhook-id"]] = (
                    tries.get(delivery.headers["webhook-id"], 0) + 1
                )
            if n == 1 and len(tries) % 5 == 0:
                return 500
            if n == 1 and len(tries) % 7 == 0:
                time.sleep(1.5)  # past the 1 s time-out: the sender retries it
            return 204

        with receiver(answer, port=port) as got:
            listing = f"{two.base_url}/v1/rounds/{round_id}"

            def finished() -> bool:
                view = httpx.get(listing, headers={"Authorization": f"Bearer {token}"})
                counts = view.json()["counts"]
                return counts["finished"] == 4

            wait_until(finished, what="the round's tables to finish")
            entries = whole_feed(two.base_url)
            ids = {e["id"] for e in entries}

            def all_arrived() -> bool:
                return ids <= {d.headers["webhook-id"] for d in got.accepted()}

            wait_until(all_arrived, what="every entry to arrive")
            accepted = got.accepted()
        first: dict[str, dict] = {}
        for delivery in accepted:
            assert verify(delivery.headers, delivery.body, secret=secret)
            data = delivery.entry["data"]
            kept = first.setdefault(delivery.headers["webhook-id"], data)
            assert kept == data  # a retry is the same entry, never a new one
            assert_no_tiles(data)
        # every delivered entry is in the feed (sealed entries may come after our read)
        assert ids <= set(first)
        for game_id, seqs in by_game(first.values()).items():
            moments = [s for s in seqs if s is not None]
            assert moments == sorted(moments), game_id
        types = [e["type"] for e in entries]
        assert types.count("round.created") == 1 and types.count("game.finished") == 4

        # the feed after a restart of the other process: the same order, cursor for cursor
        half = len(entries) // 2
        middle = entries[half]["cursor"]
        two.stop()
        again = Server(pg_url, tmp_path / "again.log", env=ENV)
        try:
            resumed = httpx.get(
                f"{again.base_url}/v1/feed",
                params={"after": middle, "limit": 1000},
                headers=HEADERS,
            ).json()["entries"]
            after_middle = entries[half + 1 :]  # (entries written since come after them)
            assert resumed[: len(after_middle)] == after_middle
        finally:
            again.stop()
    finally:
        one.stop()
        two.stop()

"""Webhooks from the outbox (store/platform/outbox.py, api/webhook_sender.py) to a real receiver.

The sender here is the ``DeliveryWorker`` a ``serve`` process runs, driven turn by turn
(``deliver_once``) against a threaded HTTP server on 127.0.0.1 (``feed_helpers``); the
processes' test (a ``serve`` killed mid-way) is ``test_webhook_processes.py``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator

import pytest
from feed_helpers import Delivery, Receiver, assert_no_tiles, by_game, receiver

from charleston_fsm.api.webhook_sender import ALLOW_ENV, TIMEOUT_ENV, DeliveryWorker, check_url
from charleston_fsm.engine.annotations import pause, resume
from charleston_fsm.ledger.record import public_key_text
from charleston_fsm.ledger.webhook_signatures import WebhookNotVerified, verify
from charleston_fsm.store import GameStore, NewGame, play_bots
from charleston_fsm.store.platform.outbox import RETRY_SCALE_ENV
from charleston_fsm.store.platform.webhooks import InvalidWebhook


@pytest.fixture(autouse=True)
def _loopback_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ALLOW_ENV, "127.0.0.1")
    monkeypatch.setenv(RETRY_SCALE_ENV, "0.0002")  # the schedule in ms: 1, 60, 360 …
    monkeypatch.setenv(TIMEOUT_ENV, "1")


@pytest.fixture
def worker(store: GameStore) -> Iterator[DeliveryWorker]:
    sender = DeliveryWorker(store)  # no thread: the tests turn it
    yield sender
    sender.stop()


def drain(store: GameStore, worker: DeliveryWorker, seconds: float = 60) -> None:
    """Turn the worker until nothing is pending (retries included)."""
    deadline = time.monotonic() + seconds
    while True:
        worker.deliver_once()
        if store.outbox.next_due() is None:
            return
        assert time.monotonic() < deadline, "deliveries still pending"
        time.sleep(0.01)


def all_entries(store: GameStore) -> list[dict]:
    store.feed.sequence()
    return [e.to_dict() for e in store.feed.read(None, 1000)[0]]


def first_accepted(got: Receiver) -> list[dict]:
    """Each entry once, in the order the receiver first accepted it."""
    seen: dict[str, dict] = {}
    for delivery in got.accepted():
        seen.setdefault(delivery.headers["webhook-id"], delivery.entry["data"])
    return list(seen.values())


def test_every_entry_is_delivered_signed_v1_in_each_games_order(
    store: GameStore, worker: DeliveryWorker
) -> None:
    with receiver() as got:
        endpoint = store.webhooks.create(got.url, ["*"])
        ids = [store.registry.create_game(NewGame(seed=s)) for s in (5, 6)]
        for n, game_id in enumerate(ids):
            play_bots(store, game_id, seed=n)
        store.writes.wait_for_seals()
        drain(store, worker)
        entries = all_entries(store)
        delivered = first_accepted(got)
        assert sorted(e["id"] for e in delivered) == sorted(e["id"] for e in entries)
        for delivery in got.accepted():
            assert verify(delivery.headers, delivery.body, secret=endpoint["secret"])
            assert delivery.headers["webhook-id"] == delivery.entry["data"]["id"]
            assert_no_tiles(delivery.entry["data"])
        for game_id, seqs in by_game(delivered).items():
            moments = [s for s in seqs if s is not None]
            assert moments == sorted(moments), game_id
        log = store.webhooks.deliveries(endpoint["id"])
        assert log["delivered"] == len(entries) and log["pending"] == 0


def test_v1a_deliveries_verify_with_the_published_key_and_nothing_else(
    store: GameStore, worker: DeliveryWorker
) -> None:
    with receiver() as got:
        store.webhooks.create(got.url, ["game.created"], signing="v1a")
        store.registry.create_game(NewGame(seed=1))
        drain(store, worker)
        [delivery] = got.accepted()
        key = public_key_text(store.anchor_key)
        assert verify(delivery.headers, delivery.body, public_key=key)
        with pytest.raises(WebhookNotVerified, match="No signature"):
            verify(delivery.headers, delivery.body + b" ", public_key=key)
        with pytest.raises(WebhookNotVerified, match="more than 300 s"):
            verify(delivery.headers, delivery.body, public_key=key, now=time.time() + 3600)


def test_500_and_time_outs_are_retried_with_the_same_id_and_the_order_kept(
    store: GameStore, worker: DeliveryWorker
) -> None:
    tries: dict[str, int] = {}
    lock = threading.Lock()

    def flaky(delivery: Delivery) -> int:
        with lock:
            n = tries[delivery.headers["webhook-id"]] = (
                tries.get(delivery.headers["webhook-id"], 0) + 1
            )
        if n == 1:
            return 500
        if n == 2:
            time.sleep(1.5)  # past the sender's 1 s time-out
        return 200

    with receiver(flaky) as got:
        store.webhooks.create(got.url, ["*"])
        game_id = store.registry.create_game(NewGame(seed=9, clock={"vote": 60}))
        for _ in range(3):
            store.writes.annotate(game_id, pause({"type": "pause_clock"}))
            store.writes.annotate(game_id, resume({"type": "resume_clock"}))
        drain(store, worker)
        entries = all_entries(store)
        delivered = first_accepted(got)
        assert [e["id"] for e in delivered] == [e["id"] for e in entries]  # one game: its order
        assert all(n >= 3 for n in tries.values())
        statuses = {d.headers["webhook-id"]: [] for d in got.deliveries}
        for d in got.deliveries:
            statuses[d.headers["webhook-id"]].append(json.loads(d.body))
        for bodies in statuses.values():  # a retry is the same entry, never a new one
            assert all(b["data"] == bodies[0]["data"] for b in bodies)


def test_a_410_disables_the_endpoint_and_a_paused_one_collects(
    store: GameStore, worker: DeliveryWorker
) -> None:
    with receiver(lambda _d: 410) as gone, receiver() as kept:
        first = store.webhooks.create(gone.url, ["*"])
        second = store.webhooks.create(kept.url, ["game.created"])
        store.webhooks.set_status(second["id"], "paused")
        store.registry.create_game(NewGame(seed=1))
        store.registry.create_game(NewGame(seed=2))
        drain(store, worker)
        assert len(gone.deliveries) == 2  # one per game (two queues, sent at once)
        assert store.webhooks.get(first["id"])["status"] == "disabled"
        store.registry.create_game(NewGame(seed=3))
        drain(store, worker)
        assert len(gone.deliveries) == 2  # nothing more to a disabled endpoint
        assert kept.deliveries == []
        store.webhooks.set_status(second["id"], "active")
        drain(store, worker)
        assert len(kept.accepted()) == 3
        log = store.webhooks.deliveries(first["id"])
        assert log["attempts"][0]["status_code"] == 410
        store.webhooks.delete(first["id"])
        assert [e["id"] for e in store.webhooks.list()] == [second["id"]]


def test_an_endpoint_created_later_gets_the_entries_from_then_on(
    store: GameStore, worker: DeliveryWorker
) -> None:
    store.registry.create_game(NewGame(seed=1))
    with receiver() as got:
        store.webhooks.create(got.url, ["*"])
        later = store.registry.create_game(NewGame(seed=2))
        drain(store, worker)
        assert [d.entry["data"]["game_id"] for d in got.accepted()] == [later]


def test_an_organisers_endpoint_gets_its_own_entries_and_the_platforms_every_one(
    store: GameStore, worker: DeliveryWorker
) -> None:
    """The outbox's fan-out (the write path's one statement, and the statements of a new
    game, a round and its acts) gives an organiser's endpoint only the entries of its own
    games and rounds; the platform's endpoint (no organiser) gets them all."""
    with receiver() as platform, receiver() as first, receiver() as second:
        store.webhooks.create(platform.url, ["*"])
        endpoints = {
            "org-a": store.webhooks.create(first.url, ["*"], organiser_id="org-a"),
            "org-b": store.webhooks.create(second.url, ["*"], organiser_id="org-b"),
        }
        made: dict[str | None, set[str]] = {}
        for n, owner in enumerate(("org-a", "org-b", None)):
            game = store.registry.create_game(NewGame(seed=n, organiser_id=owner))
            play_bots(store, game, seed=n)  # the write path's rider
            round_id, tables = store.rounds.create_round(
                [NewGame(seed=7, held=True)] * 2, token_hash="ef" * 32, organiser_id=owner
            )
            store.round_acts.act(round_id, "start", f"s{n}")
            made[owner] = {game, round_id, *tables}
        store.writes.wait_for_seals()
        drain(store, worker)
        entries = all_entries(store)

        def of(owner: str) -> list[str]:
            return [e["id"] for e in entries if {e["game_id"], e["round_id"]} & made[owner]]

        assert sorted(e["id"] for e in first_accepted(platform)) == sorted(e["id"] for e in entries)
        for owner, got in (("org-a", first), ("org-b", second)):
            ids = [d.entry["data"]["id"] for d in got.accepted()]
            assert sorted(set(ids)) == sorted(of(owner)) and of(owner), owner
            log = store.webhooks.deliveries(endpoints[owner]["id"])
            assert log["delivered"] == len(of(owner)) and log["pending"] == log["failed"] == 0
            kinds = {e["type"] for e in entries if e["id"] in set(ids)}
            assert {"game.created", "game.finished", "round.started"} <= kinds
        assert [e["id"] for e in store.webhooks.list("org-a")] == [endpoints["org-a"]["id"]]


def test_private_and_loopback_destinations_are_refused_unless_allowed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(ALLOW_ENV)
    for url in (
        "http://127.0.0.1:9/x",
        "http://localhost/x",
        "http://10.1.2.3/x",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]/x",
        "http://192.168.0.10/",
    ):
        with pytest.raises(InvalidWebhook, match="private, loopback"):
            check_url(url)
    for url in ("ftp://example.com/x", "http:///x", "not a url"):
        with pytest.raises(InvalidWebhook):
            check_url(url)
    monkeypatch.setenv(ALLOW_ENV, "10.0.0.0/8, 127.0.0.1")
    check_url("http://10.1.2.3/x")
    check_url("http://127.0.0.1:9/x")
    with pytest.raises(InvalidWebhook):
        check_url("http://192.168.0.10/")


def test_a_rounds_finished_entry_reaches_an_endpoint_subscribed_to_it(
    store: GameStore, worker: DeliveryWorker
) -> None:
    """``round.finished`` rides the finishing write's fan-out: an endpoint wanting only it
    gets it once, signed, when the round's last table finishes (and not before)."""
    with receiver() as got:
        endpoint = store.webhooks.create(got.url, ["round.finished"])
        round_id, tables = store.rounds.create_round(
            [NewGame(seed=8), NewGame(seed=9)], token_hash="ab" * 32, name="Hooked"
        )
        play_bots(store, tables[0], seed=8)
        drain(store, worker)
        assert got.accepted() == []
        play_bots(store, tables[1], seed=9)
        drain(store, worker)
        [delivery] = got.accepted()
        assert verify(delivery.headers, delivery.body, secret=endpoint["secret"])
        body = delivery.entry
        assert body["type"] == "round.finished"
        assert body["data"]["round_id"] == round_id
        assert body["data"]["data"] == {"name": "Hooked", "tables": 2}
        assert_no_tiles(body["data"])

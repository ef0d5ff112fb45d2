"""The bench's platform row measures only what it delivered, and says why when it cannot.

Real parts: a scratch SQLite file (the bench's own), its stdlib receiver process, and a
threaded receiver answering 500. Speed is the bench's business, never asserted here.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest
from feed_helpers import receiver

from charleston_fsm.api.webhook_sender import ALLOW_ENV, TIMEOUT_ENV, DeliveryWorker
from charleston_fsm.bench import platform_rows
from charleston_fsm.bench.databases import sqlite_database
from charleston_fsm.store.database.models import WebhookOutboxRow
from charleston_fsm.store.platform import feed


@pytest.fixture(autouse=True)
def _loopback_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ALLOW_ENV, "127.0.0.1")
    monkeypatch.setenv(TIMEOUT_ENV, "2")


def test_the_deliveries_row_counts_rows_its_receiver_took_run_after_run() -> None:
    """The bench repeats each row on one database: every run's receiver has its own port,
    so a run must leave no endpoint behind (a second run sent to the first one's closed
    receiver: "connection refused", found by a 3-run bench)."""
    with sqlite_database() as database:
        entry, outbox = platform_rows.outbox_cpu_row(database, samples=20)  # no endpoint left
        figures = [platform_rows.deliveries_row(database, 40) for _ in range(2)]
        store = database.store()
        try:
            with store.core.reading() as conn:
                left = conn.execute(WebhookOutboxRow.__table__.select()).all()
            endpoints = store.webhooks.list()
        finally:
            store.dispose()
    assert [f.details["deliveries"] for f in figures] == [40, 40]
    assert all(f.value > 0 for f in figures)
    assert left == [] and endpoints == []  # each run took its endpoint and rows away
    # the outbox is measured on top of the feed entry, which has no target of its own
    assert outbox.floor == entry.value and outbox.goal.bound == 1.10 and entry.met is None
    assert entry.details["feed_and_outbox_ratio"] == pytest.approx(entry.ratio * outbox.ratio)


def test_a_receiver_that_refuses_stops_the_row_with_what_it_answered() -> None:
    with sqlite_database() as database, receiver(answer=lambda _delivery: 500) as got:
        store = database.store()
        try:
            store.webhooks.create(got.url, ["*"])
            now = datetime.now(UTC)
            with store.core.writing() as conn:
                feed.record(conn, [feed.new_entry("game.paused", now, game_id="g", seq=1)])
            worker = DeliveryWorker(store)
            try:
                with pytest.raises(platform_rows.DeliveriesFailed) as failed:
                    platform_rows._deliver_all(worker, 1, time.perf_counter() + 60)
            finally:
                worker.stop()
        finally:
            store.dispose()
    assert "HTTP 500" in str(failed.value) and got.url in str(failed.value)
    assert "nothing was measured" in failed.value.plain_lines[0]

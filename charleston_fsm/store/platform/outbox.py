"""The webhooks' outbox: one row per endpoint and feed entry, written with the entry.

A webhook sent after the commit by a process that may die is lost; one sent before the
commit may announce what was never stored. So each feed entry an endpoint subscribes to
gets an outbox row **in the transaction that writes the entry** (:data:`FAN_OUT`, part of
the write path's one statement on PostgreSQL; :func:`fan_out` elsewhere), and any
``serve`` process's delivery worker sends it after the commit (``api/webhook_worker.py``).

Which endpoints: every endpoint not disabled whose ``event_types`` is ``*`` or names the
entry's type, and that is the platform's (``organiser_id`` NULL) or the organiser's whose
game or round the entry is of (an organiser's endpoint never gets another's entries), as
the writing statement sees them (an endpoint created while a write is
under way gets that write's entries or not; every later one, surely). A paused endpoint
keeps collecting rows, sent once it is resumed.

Claiming (:meth:`Outbox.claim`): a row is due when pending, its ``next_attempt_at`` has
come and no earlier pending row of the same endpoint and queue (the entry's game, or its
round) is left: a game's entries reach an endpoint in the game's order. A claim moves
``next_attempt_at`` past the lease (the send's timeout and a margin), under ``FOR UPDATE
SKIP LOCKED`` on PostgreSQL (lock, lease and read in one statement), so one process at a
time sends a given row; a process that dies mid-send leaves the row to be sent again
when the lease ends, with the same ``webhook-id`` (at least once). :meth:`Outbox.complete`
records the attempt (the endpoint's delivery log), and either the delivery, the next
retry (:data:`RETRY_SCHEDULE`, about three days in all, each wait ±25 % at random so
that endpoints failing together do not retry together; a ``Retry-After`` the receiver
sent instead) or, past the last, the giving up; ``410 Gone`` disables the endpoint.

**One endpoint's trouble is its own.** An attempt that got no answer (refused, reset, DNS,
TLS, time-out, a URL the rule refuses) or a ``429`` / ``Retry-After`` **holds** its
endpoint (``held_until``: its retry time): no process claims any of that endpoint's rows
before then, and the rows the sender had claimed but not yet sent are released to that
time without an attempt (:meth:`Outbox.complete`'s ``release``). A dead endpoint so costs
the senders one time-out per retry, not one per entry; other endpoints never wait on it.

**Disabled after failing for days.** ``failing_since`` is an endpoint's first failed
attempt since its last delivery (any 2xx clears it). A failed attempt at least
:data:`DISABLE_AFTER_SECONDS` (``CHARLESTON_WEBHOOK_DISABLE_AFTER``; five days) after it
disables the endpoint, and so does a ``410``; either writes a ``webhook.disabled`` feed
entry in the same transaction (its ``data``: ``endpoint_id``, ``organiser_id``,
``reason``). While disabled no entry is queued for it (its pending rows wait for
``resume``); the feed holds what it missed.
"""

from __future__ import annotations

import os
import random
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import (
    Connection,
    Select,
    bindparam,
    func,
    insert,
    literal_column,
    or_,
    select,
    text,
    update,
)

from ...ledger.hashing import utc
from ..database.core import Part
from ..database.models import FeedRow, WebhookAttemptRow, WebhookEndpointRow, WebhookOutboxRow
from ..database.on_sqlite import on_sqlite_driver
from .deliveries import Attempt, Claimed, Completion

#: seconds to wait after each failed attempt (Standard Webhooks' schedule, stretched to
#: about three days): the row is given up after the last
RETRY_SCHEDULE = (5, 300, 1800, 7200, 18000, 36000, 36000, 36000, 36000, 36000, 36000, 36000)
#: a multiplier of the schedule (tests and drills shorten it: 0.001 makes it minutes)
RETRY_SCALE_ENV = "CHARLESTON_WEBHOOK_RETRY_SCALE"
#: each wait of the schedule is multiplied by a random factor in this range (jitter)
JITTER = (0.75, 1.25)
#: an endpoint failing without a delivery for this long is disabled (five days)
DISABLE_AFTER_SECONDS = 5 * 24 * 3600
DISABLE_AFTER_ENV = "CHARLESTON_WEBHOOK_DISABLE_AFTER"

_QUEUE = "coalesce(r.game_id, 'round:' || r.round_id, 'service')"
#: which endpoints get a row for the feed entry ``r``: not disabled, wanting its type, and
#: the platform's own (``organiser_id`` NULL: everything) or the organiser's whose game or
#: round the entry is of (a lookup by primary key, inside the writing statement: the game's
#: row is the one the write moves, read as it was before, and a new game or round is
#: inserted by an earlier statement of the same transaction)
_SUBSCRIBED = (
    "w.status <> 'disabled' AND (w.event_types = '*' "
    "OR w.event_types LIKE ('% ' || r.type || ' %')) "
    "AND (w.organiser_id IS NULL OR w.organiser_id IN ("
    "SELECT g.organiser_id FROM games g WHERE g.id = r.game_id "
    "UNION ALL SELECT o.organiser_id FROM rounds o WHERE o.id = r.round_id))"
)
#: what a claim reads of a row's endpoint and entry (besides the row's id and attempts)
_SENT = (
    WebhookEndpointRow.id.label("endpoint_id"),
    WebhookEndpointRow.url,
    WebhookEndpointRow.secret,
    WebhookEndpointRow.previous_secret,
    WebhookEndpointRow.previous_secret_until,
    *(c for c in FeedRow.__table__.columns if c.name != "id"),
)
#: the partial indexes' condition, as a literal: a bound parameter would not prove it
_PENDING = literal_column("'pending'")
_OUTBOX_COLUMNS = "endpoint_id, entry_id, feed_id, queue, status, attempts, next_attempt_at"


class _FeedFanOut:
    """The outbox rows of feed entries (``append.FanOut``)."""

    def pg(self, inserted: str) -> str:
        return (
            f"INSERT INTO webhook_outbox ({_OUTBOX_COLUMNS}) "
            f"SELECT w.id, r.entry_id, r.id, {_QUEUE}, 'pending', 0, r.at "
            f"FROM {inserted} r JOIN webhook_endpoints w ON "
            + _SUBSCRIBED.replace("%", "%%")  # psycopg's placeholders
        )

    def after_insert(self, conn: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
        # SQLite: the write holds the database's write lock, so the feed's last rows are
        # the ones just inserted (a fixed statement, no list of ids to bind, sent to the
        # driver as the rows were: append.insert_rows)
        on_sqlite_driver(conn, _FAN_OUT_LAST, [(len(rows),)])


FAN_OUT = _FeedFanOut()

_FAN_OUT = text(
    f"INSERT INTO webhook_outbox ({_OUTBOX_COLUMNS}) "
    f"SELECT w.id, r.entry_id, r.id, {_QUEUE}, 'pending', 0, r.at "
    f"FROM feed r JOIN webhook_endpoints w ON {_SUBSCRIBED} "
    "WHERE r.entry_id IN :ids"
).bindparams(bindparam("ids", expanding=True))


_FAN_OUT_LAST = (
    f"INSERT INTO webhook_outbox ({_OUTBOX_COLUMNS}) "
    f"SELECT w.id, r.entry_id, r.id, {_QUEUE}, 'pending', 0, r.at "
    f"FROM feed r JOIN webhook_endpoints w ON {_SUBSCRIBED} "
    "WHERE r.id IN (SELECT id FROM feed ORDER BY id DESC LIMIT ?)"
)


def fan_out(conn: Connection, entry_ids: Sequence[str]) -> None:
    """The outbox rows of the feed entries ``entry_ids``, inserted in ``conn``'s transaction."""
    if entry_ids:
        conn.execute(_FAN_OUT, {"ids": list(entry_ids)})


def retry_scale() -> float:
    try:
        return float(os.environ.get(RETRY_SCALE_ENV) or 1.0)
    except ValueError:
        return 1.0


def disable_after() -> timedelta:
    try:
        seconds = float(os.environ.get(DISABLE_AFTER_ENV) or DISABLE_AFTER_SECONDS)
    except ValueError:
        seconds = DISABLE_AFTER_SECONDS
    return timedelta(seconds=seconds)


_EARLIER = WebhookOutboxRow.__table__.alias("earlier")
#: pending rows of active endpoints whose time has come (the partial index of pending rows)
_PENDING_NOW = (
    select(WebhookOutboxRow.id)
    .join(WebhookEndpointRow, WebhookEndpointRow.id == WebhookOutboxRow.endpoint_id)
    .where(
        WebhookOutboxRow.status == "pending",
        WebhookOutboxRow.next_attempt_at <= bindparam("now"),
        WebhookEndpointRow.status == "active",
        or_(
            WebhookEndpointRow.held_until.is_(None),
            WebhookEndpointRow.held_until <= bindparam("now"),
        ),
        # the endpoints this process is sending to already (their rows wait for that)
        WebhookOutboxRow.endpoint_id.not_in(bindparam("skip", expanding=True)),
    )
)
#: whether any row is due at all: most turns of the worker find nothing
_ANYTHING_DUE = _PENDING_NOW.limit(1)
#: the due rows, each the first pending of its endpoint's queue, in the feed's order
#: (built once: a statement's construction costs more than its cached compilation). The
#: first of its queue: the least feed id of the queue's pending rows, a subplan run per
#: candidate on the queue index (endpoint, queue, feed id), so its plan does not hang on
#: the table's statistics (a NOT EXISTS over the earlier rows, planned on a table too new
#: to have any, scanned the whole index per candidate: 3 s a claim of 500 rows out of
#: 4,000 on PostgreSQL)
_DUE = _PENDING_NOW.where(
    WebhookOutboxRow.feed_id
    == (
        select(func.min(_EARLIER.c.feed_id))
        .where(
            _EARLIER.c.endpoint_id == WebhookOutboxRow.endpoint_id,
            _EARLIER.c.queue == WebhookOutboxRow.queue,
            _EARLIER.c.status == _PENDING,
        )
        .scalar_subquery()
    )
).order_by(WebhookOutboxRow.feed_id)


class Outbox(Part):
    """``claim`` due rows, ``complete`` them; ``pending`` counts what is left."""

    def claim(
        self, limit: int = 100, lease_seconds: float = 30.0, skip: Sequence[str] = ()
    ) -> list[Claimed]:
        """Up to ``limit`` due rows, each the first pending of its queue, leased to this
        caller for ``lease_seconds`` (no one else sends them meanwhile); none of the
        endpoints ``skip``, none of an endpoint held."""
        now = _now()
        params = {"now": now, "skip": list(skip)}
        # most turns find nothing: one indexed probe, without a write lock, says so
        with self.core.reading() as conn:
            if conn.execute(_ANYTHING_DUE, params).first() is None:
                return []
        due = _DUE.limit(limit)
        lease = now + timedelta(seconds=lease_seconds)
        if self.core.dialect == "postgresql":
            rows = self._claim_pg(due, lease, params)
        else:
            with self.core.writing() as conn:  # BEGIN IMMEDIATE: no one else claims meanwhile
                ids = list(conn.execute(due, params).scalars())
                if not ids:
                    return []
                conn.execute(
                    update(WebhookOutboxRow)
                    .where(WebhookOutboxRow.id.in_(ids))
                    .values(next_attempt_at=lease)
                )
                rows = conn.execute(
                    select(WebhookOutboxRow.id, WebhookOutboxRow.attempts, *_SENT)
                    .join(WebhookEndpointRow, WebhookEndpointRow.id == WebhookOutboxRow.endpoint_id)
                    .join(FeedRow, FeedRow.entry_id == WebhookOutboxRow.entry_id)
                    .where(WebhookOutboxRow.id.in_(ids))
                    .order_by(WebhookOutboxRow.id)
                ).all()
        return [
            Claimed(
                r.id,
                r.endpoint_id,
                r.url,
                r.secret,
                r.attempts,
                entry_document(r),
                r.previous_secret,
                r.previous_secret_until,
            )
            for r in rows
        ]

    def _claim_pg(self, due: Select[Any], lease: datetime, params: dict[str, Any]) -> Sequence[Any]:
        """PostgreSQL: lock the due rows (``SKIP LOCKED``: another process's claim gets
        others), lease them and read what to send, in one statement (one round trip, no
        list of ids sent back and forth)."""
        locked = due.with_for_update(of=WebhookOutboxRow, skip_locked=True).cte("due")
        leased = (
            update(WebhookOutboxRow)
            .where(WebhookOutboxRow.id == locked.c.id)
            .values(next_attempt_at=lease)
            .returning(
                WebhookOutboxRow.id,
                WebhookOutboxRow.attempts,
                WebhookOutboxRow.endpoint_id,
                WebhookOutboxRow.entry_id,
            )
            .cte("leased")
        )
        with self.core.writing() as conn:
            return conn.execute(
                select(leased.c.id, leased.c.attempts, *_SENT)
                .select_from(leased)
                .join(WebhookEndpointRow, WebhookEndpointRow.id == leased.c.endpoint_id)
                .join(FeedRow, FeedRow.entry_id == leased.c.entry_id)
                .order_by(leased.c.id),
                params,
            ).all()

    def complete(
        self, done: Sequence[tuple[Claimed, Attempt]], release: Sequence[Claimed] = ()
    ) -> Completion:
        """Record each attempt of ``done`` (one transaction) and what it leaves:
        ``delivered``, ``retry`` (at its next time), ``failed`` (given up after the
        schedule) or ``gone`` (410: the endpoint is disabled); what it leaves of each
        endpoint (held, failing, disabled). ``release``: claimed rows not sent, due again
        when their endpoint's hold ends (now, if none)."""
        now = _now()
        outcomes = []
        delivered: dict[int, list[int]] = {}  # status code -> rows (the usual case)
        for claimed, attempt in done:
            if attempt.delivered:
                delivered.setdefault(attempt.status_code or 0, []).append(claimed.outbox_id)
        held: dict[str, datetime] = {}  # endpoint -> until when
        alive: set[str] = set()  # endpoints that took a delivery
        failing: set[str] = set()
        gone: set[str] = set()
        with self.core.writing() as conn:
            for status_code, ids in delivered.items():  # one statement per status code
                conn.execute(
                    update(WebhookOutboxRow)
                    .where(WebhookOutboxRow.id.in_(ids))
                    .where(WebhookOutboxRow.status == "pending")
                    .values(
                        status="delivered",
                        attempts=WebhookOutboxRow.attempts + 1,
                        last_attempt_at=now,
                        last_status=status_code,
                        last_error=None,
                    )
                )
            for claimed, attempt in done:
                outcome, values = _after(claimed, attempt, now)
                outcomes.append(outcome)
                if outcome == "delivered":
                    alive.add(claimed.endpoint_id)
                    continue
                failing.add(claimed.endpoint_id)
                if outcome == "gone":
                    gone.add(claimed.endpoint_id)
                elif attempt.holds and "next_attempt_at" in values:
                    until = values["next_attempt_at"]
                    held[claimed.endpoint_id] = max(until, held.get(claimed.endpoint_id, until))
                conn.execute(
                    update(WebhookOutboxRow)
                    .where(WebhookOutboxRow.id == claimed.outbox_id)
                    .where(WebhookOutboxRow.status == "pending")
                    .values(**values)
                )
            for claimed in release:  # not sent: due again when the hold ends
                conn.execute(
                    update(WebhookOutboxRow)
                    .where(WebhookOutboxRow.id == claimed.outbox_id)
                    .where(WebhookOutboxRow.status == "pending")
                    .values(next_attempt_at=held.get(claimed.endpoint_id, now))
                )
            self._endpoints_after(conn, now, alive, failing - alive, held, gone)
            if done:
                conn.execute(
                    insert(WebhookAttemptRow),
                    [
                        {
                            "endpoint_id": claimed.endpoint_id,
                            "entry_id": claimed.entry["id"],
                            "at": now,
                            "status_code": attempt.status_code,
                            "error": (attempt.error or "")[:500] or None,
                            "milliseconds": attempt.milliseconds,
                        }
                        for claimed, attempt in done
                    ],
                )
        return Completion(outcomes, max(held.values()) if held else None)

    def _endpoints_after(
        self,
        conn: Connection,
        now: datetime,
        alive: set[str],
        failing: set[str],
        held: dict[str, datetime],
        gone: set[str],
    ) -> None:
        """What a batch of attempts leaves of its endpoints: a delivery clears
        ``failing_since``, a failure sets it (if unset), a hold sets ``held_until``; an
        endpoint failing since :func:`disable_after` ago, or answering 410, is disabled
        with a ``webhook.disabled`` entry."""
        endpoints = WebhookEndpointRow
        if alive:
            conn.execute(
                update(endpoints).where(endpoints.id.in_(alive)).values(failing_since=None)
            )
        if failing:
            conn.execute(
                update(endpoints)
                .where(endpoints.id.in_(failing), endpoints.failing_since.is_(None))
                .values(failing_since=now)
            )
        for endpoint_id, until in held.items():
            conn.execute(
                update(endpoints).where(endpoints.id == endpoint_id).values(held_until=until)
            )
        reasons = {e: f"The receiver answered 410 Gone at {_iso(now)}." for e in gone}
        if failing:
            for row in conn.execute(
                select(endpoints.id, endpoints.failing_since).where(
                    endpoints.id.in_(failing - gone),
                    endpoints.status != "disabled",
                    endpoints.failing_since <= now - disable_after(),
                )
            ):
                reasons[row.id] = (
                    f"Every attempt failed from {_iso(utc(row.failing_since))} to {_iso(now)} "
                    f"(disabled after {disable_after().total_seconds():g} s of failures)."
                )
        for endpoint_id, reason in sorted(reasons.items()):
            disable(conn, endpoint_id, reason, now)

    def next_due(self) -> datetime | None:
        """When the earliest pending row of an active endpoint is due (``None``: none)."""
        with self.core.reading() as conn:
            found = conn.execute(
                select(WebhookOutboxRow.next_attempt_at)
                .join(WebhookEndpointRow, WebhookEndpointRow.id == WebhookOutboxRow.endpoint_id)
                .where(WebhookOutboxRow.status == "pending", WebhookEndpointRow.status == "active")
                .order_by(WebhookOutboxRow.next_attempt_at)
                .limit(1)
            ).scalar()
        return utc(found) if found is not None else None


def _after(claimed: Claimed, attempt: Attempt, now: datetime) -> tuple[str, dict[str, Any]]:
    """What an attempt leaves of its outbox row: the outcome and the row's new values."""
    attempts = claimed.attempts + 1
    values: dict[str, Any] = {
        "attempts": attempts,
        "last_attempt_at": now,
        "last_status": attempt.status_code,
        "last_error": (attempt.error or "")[:500] or None,
    }
    if attempt.delivered:
        return "delivered", {**values, "status": "delivered"}
    if attempt.status_code == 410:
        return "gone", {**values, "status": "failed"}
    if attempts > len(RETRY_SCHEDULE):
        return "failed", {**values, "status": "failed"}
    if attempt.retry_after is not None:
        wait = attempt.retry_after  # the receiver's own word (bounded by the sender)
    else:
        wait = RETRY_SCHEDULE[attempts - 1] * retry_scale() * random.uniform(*JITTER)
    return "retry", {**values, "next_attempt_at": now + timedelta(seconds=wait)}


def disable(conn: Connection, endpoint_id: str, reason: str, now: datetime) -> bool:
    """Disable an endpoint (unless it is already) and write its ``webhook.disabled`` feed
    entry, in ``conn``'s transaction; whether it was disabled now."""
    done = conn.execute(
        update(WebhookEndpointRow)
        .where(WebhookEndpointRow.id == endpoint_id, WebhookEndpointRow.status != "disabled")
        .values(status="disabled", status_reason=reason[:500], held_until=None)
    )
    if done.rowcount != 1:
        return False
    organiser_id = conn.execute(
        select(WebhookEndpointRow.organiser_id).where(WebhookEndpointRow.id == endpoint_id)
    ).scalar()
    entry_id = uuid.uuid4().hex
    conn.execute(
        insert(FeedRow).values(
            entry_id=entry_id,
            type="webhook.disabled",
            at=now,
            data={"endpoint_id": endpoint_id, "organiser_id": organiser_id, "reason": reason},
        )
    )
    fan_out(conn, [entry_id])
    return True


def entry_document(row: Any) -> dict[str, Any]:
    """A feed row as the document a webhook carries (the feed's entry, without cursor:
    the position may not be given yet when it is sent)."""
    return {
        "id": row.entry_id,
        "type": row.type,
        "at": utc(row.at).isoformat().replace("+00:00", "Z"),
        "game_id": row.game_id,
        "round_id": row.round_id,
        "seq": row.seq,
        "data": row.data,
    }


def _now() -> datetime:
    return datetime.now(UTC)


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")

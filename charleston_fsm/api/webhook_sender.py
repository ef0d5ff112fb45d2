"""Sending webhooks: one signed POST, and the delivery worker of a process.

The URL rule (what a URL may hold, which destinations are allowed) is
``webhook_urls.py``'s, applied at registration and again before each send (at most every
``CHECKED_SECONDS`` per URL). **A send connects to the addresses that check judged**, never
to the name's answer of the moment (``webhook_connections.py``): a name rebound to a
private address after its check (DNS rebinding) cannot take a request there. The request
still names the URL's host (``Host``; for ``https`` the TLS server name and the
certificate's name).

**The worker.** Every ``serve`` process runs one :class:`DeliveryWorker`: it claims due
outbox rows (``store/platform/outbox.py``: leased, ``SKIP LOCKED`` on PostgreSQL, each the first of
its game's queue) and sends them from a pool of ``CHARLESTON_WEBHOOK_SENDERS`` threads
(default 32), at most ``CHARLESTON_WEBHOOK_PER_ENDPOINT`` (default 8) to one endpoint at
once. **Endpoints do not wait on each other**: each endpoint's claimed rows are one
:class:`_Run`, recorded when its own sends end, and the worker claims again meanwhile,
leaving out the endpoints it is still sending to (claims and records take turns on one
pooled connection, as the connection budget counts the sender). A run whose attempt
gets no answer (refused, DNS, TLS, a time-out, a URL the rule refuses) or a ``429`` /
``Retry-After`` stops: its unsent rows are released to the endpoint's hold. So a hung
receiver holds at most ``PER_ENDPOINT`` threads for one time-out per retry, and a URL
that cannot be sent fails its own rows only. A run also stops starting sends when its
lease would end before the send could (its rows are released, due at once): no row is
ever sent by two processes at the same time.

It wakes on commit notices (a burst of them makes one turn, at most one per
:data:`IDLE_GAP_SECONDS` while nothing is due) and polls besides. A receiver answering
2xx has it; anything else (or no answer within ``CHARLESTON_WEBHOOK_TIMEOUT`` seconds,
default 15) is retried on the schedule; a ``Retry-After`` (seconds, or an HTTP date) on
a 429 or 503 is honoured, bounded to :data:`RETRY_AFTER_BOUNDS`; ``410`` disables the
endpoint.
"""

from __future__ import annotations

import json
import os
import ssl
import threading
import time
from collections import deque
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from itertools import groupby
from typing import Any

from ..ledger.webhook_signatures import headers as signed_headers
from ..store.platform.deliveries import Attempt, Claimed
from ..store.platform.webhooks import InvalidWebhook
from .logs import log
from .webhook_connections import Connections, default_tls
from .webhook_urls import ALLOW_ENV, check_url, check_url_cached

__all__ = ["ALLOW_ENV", "TIMEOUT_ENV", "DeliveryWorker", "check_url"]

TIMEOUT_ENV = "CHARLESTON_WEBHOOK_TIMEOUT"
DEFAULT_TIMEOUT = 15.0
SENDERS_ENV = "CHARLESTON_WEBHOOK_SENDERS"
SENDERS = 32  # threads sending at once per process
PER_ENDPOINT_ENV = "CHARLESTON_WEBHOOK_PER_ENDPOINT"
PER_ENDPOINT = 8  # sends to one endpoint at once per process
#: the least and the most a ``Retry-After`` is honoured (seconds)
RETRY_AFTER_BOUNDS = (1.0, 3600.0)
POLL_SECONDS = 0.5  # between claims when no notice wakes the worker
#: at least this long between two turns that found nothing: under load every few
#: milliseconds bring a commit notice, and a claim for each cost a quarter of a busy
#: process's CPU with no endpoint at all (issue 25's profile); a delivery waits at most
#: this much more after an idle spell
IDLE_GAP_SECONDS = 0.05
BATCH = 500  # rows claimed at once (at most one per game and endpoint)
USER_AGENT = "charleston-fsm-webhooks/1"


def timeout_seconds() -> float:
    return _number(TIMEOUT_ENV, DEFAULT_TIMEOUT)


def _number(name: str, default: float) -> float:
    try:
        value = float(os.environ.get(name) or default)
    except ValueError:
        return default
    return value if value > 0 else default


def retry_after(value: str | None, now: float | None = None) -> float | None:
    """A ``Retry-After`` header's wait in seconds (delay-seconds or an HTTP date),
    bounded to :data:`RETRY_AFTER_BOUNDS`; ``None`` when absent or unreadable."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        seconds = float(value)
    else:
        try:
            moment = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        seconds = moment.timestamp() - (now if now is not None else time.time())
    low, high = RETRY_AFTER_BOUNDS
    return min(max(seconds, low), high)


def body_of(entry: dict[str, Any]) -> bytes:
    """The delivery's body: Standard Webhooks' ``type``, ``timestamp``, ``data`` (the entry)."""
    document = {"type": entry["type"], "timestamp": entry["at"], "data": entry}
    return json.dumps(document, separators=(",", ":"), sort_keys=True).encode()


class DeliveryWorker:
    """The webhook sender of one ``serve`` process (a daemon thread and its senders)."""

    def __init__(
        self,
        store: Any,
        poll: float = POLL_SECONDS,
        senders: int | None = None,
        per_endpoint: int | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        """``tls``: the context ``https`` sends verify with (:func:`default_tls`: the
        system's trust store); a test's receiver with its own certificate gives its own."""
        self.store = store
        self.poll = poll
        self.senders = senders or int(_number(SENDERS_ENV, SENDERS))
        self.per_endpoint = per_endpoint or int(_number(PER_ENDPOINT_ENV, PER_ENDPOINT))
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._pool: ThreadPoolExecutor | None = None
        #: each sending thread's kept-alive connections (to checked addresses only)
        self._connections = Connections(tls or default_tls())
        self._lock = threading.Lock()
        #: claims and records take turns: the sender holds one pooled connection at a
        #: time, as the connection budget counts it (store/database/connection_budget.py)
        self._store_turn = threading.Lock()
        #: the endpoints this process is sending to: the claim leaves their rows
        self._busy: dict[str, _Run] = {}
        self.sent = 0  # rows sent (attempts)
        self.delivered = 0  # of which the receiver took (2xx)
        #: where the last attempt that did not deliver went and what it met
        self.last_failure: str | None = None

    def start(self) -> None:
        if self._thread is not None:
            return
        self.store.core.notices.listen(lambda _game, _seq: self._wake.set())
        self._thread = threading.Thread(target=self._run, name="webhook-worker", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=15)
            self._thread = None
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                if self.deliver_once(wait=False):
                    continue  # more may be due at once
            except Exception:  # the database is away: the next turn tries again
                log.exception("webhook worker: a turn failed; trying again shortly")
                self._stop.wait(2.0)
            idle_since = time.monotonic()
            self._wake.wait(self.poll)
            # the notices of a burst of commits make one turn, not one each
            self._stop.wait(max(0.0, idle_since + IDLE_GAP_SECONDS - time.monotonic()))
            self._wake.clear()

    def deliver_once(self, wait: bool = True) -> int:
        """Claim what is due (not of an endpoint being sent to), start each endpoint's
        run; how many rows were claimed. ``wait``: until this turn's runs are recorded
        (tests and the bench turn it themselves, then :meth:`stop`); the worker's own
        thread does not wait (one endpoint's slow sends never hold another's)."""
        timeout = timeout_seconds()
        lease = 2 * timeout + 5
        with self._lock:
            busy = sorted(self._busy)
        with self._store_turn:
            claimed = self.store.outbox.claim(BATCH, lease_seconds=lease, skip=busy)
        if not claimed:
            return 0
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.senders, thread_name_prefix="webhook-send")
        # the last moment a send may start and end within the lease (a margin for the
        # record): past it a run releases what it has not sent
        last_start = time.monotonic() + lease - timeout - 2
        runs = []
        for endpoint_id, rows in groupby(
            sorted(claimed, key=lambda c: c.endpoint_id), key=lambda c: c.endpoint_id
        ):
            run = _Run(self, self._pool, list(rows), timeout, last_start)
            with self._lock:
                self._busy[endpoint_id] = run
            runs.append(run)
        for run in runs:
            run.start()
        if wait:
            for run in runs:
                run.finished.wait()
        return len(claimed)

    def _recorded(self, run: _Run, attempts: Sequence[tuple[Claimed, Attempt]]) -> None:
        """A run ended: record its attempts and releases (the endpoint may be claimed
        again after this), and wake the worker (its rows' queues may have more)."""
        try:
            with self._store_turn:
                completion = self.store.outbox.complete(attempts, release=list(run.unsent))
        except Exception:  # the database is away: the rows' leases end, they are sent again
            log.exception("webhook worker: recording a run's attempts failed")
            completion = None
        finally:
            with self._lock:
                self._busy.pop(run.endpoint_id, None)
            run.finished.set()
            self._wake.set()
        if completion is None:
            return
        with self._lock:
            self.sent += len(attempts)
            for (row, attempt), outcome in zip(attempts, completion.outcomes, strict=True):
                if outcome == "delivered":
                    self.delivered += 1
                else:
                    self.last_failure = (
                        f"{row.url}: {attempt.error or f'HTTP {attempt.status_code}'}"
                    )

    def send(self, claimed: Claimed, timeout: float) -> Attempt:
        """One signed POST of ``claimed``; how it went (never raises: whatever fails is
        this attempt's, and its endpoint's, alone)."""
        started = time.monotonic()
        body = body_of(claimed.entry)
        try:
            destination = check_url_cached(claimed.url)
            secrets = claimed.secrets(datetime.now(UTC))
            sent = signed_headers(
                claimed.entry["id"],
                body,
                secret=secrets[0] if secrets else None,
                previous=secrets[1] if len(secrets) > 1 else None,
                key=self.store.anchor_key,
            )
            request_headers = {
                **sent,
                "content-type": "application/json",
                "user-agent": USER_AGENT,
                "content-length": str(len(body)),
            }
            status, header = self._connections.post(destination, body, request_headers, timeout)
            # Retry-After says when to retry: read on a 429 or 503 only (a delivery is
            # not retried)
            wait = retry_after(header) if status in (429, 503) else None
            return Attempt(status, None, _ms(started), wait)
        except InvalidWebhook as refused:
            return Attempt(None, refused.message, _ms(started))
        except Exception as exc:
            return Attempt(None, f"{type(exc).__name__}: {exc}"[:500], _ms(started))


class _Run:
    """One endpoint's claimed rows in one turn: sent in the feed's order, at most
    ``per_endpoint`` at once on the worker's pool; stopped at the first attempt that
    holds the endpoint (no answer, 429, ``Retry-After``) or when its lease runs short.
    What it did not send is ``unsent`` (released when the run is recorded)."""

    def __init__(
        self,
        worker: DeliveryWorker,
        pool: ThreadPoolExecutor,
        rows: list[Claimed],
        timeout: float,
        last_start: float,
    ) -> None:
        self.worker = worker
        self.pool = pool
        self.endpoint_id = rows[0].endpoint_id
        self.unsent = deque(sorted(rows, key=lambda c: c.outbox_id))
        self.timeout = timeout
        self.last_start = last_start
        self.finished = threading.Event()
        self._lock = threading.Lock()
        self._in_flight = 0
        self._stopped = False
        self._done: list[tuple[Claimed, Attempt]] = []

    def start(self) -> None:
        with self._lock:
            ended = self._fill()
        if ended:
            self.worker._recorded(self, self._done)

    def _fill(self) -> bool:
        """Start sends up to the endpoint's limit (under the lock); whether the run has
        ended (nothing in flight, nothing more to start)."""
        limit = self.worker.per_endpoint
        while (
            self.unsent
            and not self._stopped
            and self._in_flight < limit
            and time.monotonic() < self.last_start
        ):
            row = self.unsent.popleft()
            try:
                self.pool.submit(self._send, row)
            except RuntimeError:  # the pool is shut down (the worker stops)
                self.unsent.appendleft(row)
                self._stopped = True
                break
            self._in_flight += 1
        return self._in_flight == 0

    def _send(self, row: Claimed) -> None:
        attempt = self.worker.send(row, self.timeout)
        with self._lock:
            self._done.append((row, attempt))
            self._in_flight -= 1
            if attempt.holds:
                self._stopped = True
            ended = self._fill()
        if ended:
            self.worker._recorded(self, self._done)


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)

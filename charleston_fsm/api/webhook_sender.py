"""Sending webhooks: the URL rule, one signed POST, and the delivery worker of a process.

**Which URLs (SSRF).** A webhook makes the service send requests where a client says, so
only public destinations are allowed: ``http`` or ``https``, a host whose every address
is public. Loopback, private (10/8, 172.16/12, 192.168/16, fc00::/7), link-local
(169.254/16: cloud metadata; fe80::/10), carrier-grade NAT, multicast, reserved and
unspecified addresses are refused, at registration and again before sending (a name
may resolve elsewhere later: checked again every 30 s), unless the operator lists them in
``CHARLESTON_WEBHOOK_ALLOW`` (comma-separated hosts, addresses or networks:
``127.0.0.1,10.1.0.0/16,hooks.internal``), as the tests do for their receiver.

**The worker.** Every ``serve`` process runs one :class:`DeliveryWorker`: it claims due
outbox rows (``store/outbox.py``: leased, ``SKIP LOCKED`` on PostgreSQL, each the first of
its game's queue), sends them from a few threads (kept-alive connections per host),
and records each attempt. It wakes on commit notices (a burst of them makes one turn, at
most one per :data:`IDLE_GAP_SECONDS` while nothing is due) and polls besides. A receiver
answering 2xx has it; anything else (or no answer within ``CHARLESTON_WEBHOOK_TIMEOUT``
seconds, default 10) is retried on the schedule, ``410`` disables the endpoint.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import os
import socket
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

from ..ledger.webhook_signatures import headers as signed_headers
from ..store.outbox import Attempt, Claimed
from ..store.webhooks import InvalidWebhook
from .logs import log

ALLOW_ENV = "CHARLESTON_WEBHOOK_ALLOW"
TIMEOUT_ENV = "CHARLESTON_WEBHOOK_TIMEOUT"
SENDERS = 8  # threads sending at once per process
POLL_SECONDS = 0.5  # between claims when no notice wakes the worker
#: at least this long between two turns that found nothing: under load every few
#: milliseconds bring a commit notice, and a claim for each cost a quarter of a busy
#: process's CPU with no endpoint at all (issue 25's profile); a delivery waits at most
#: this much more after an idle spell
IDLE_GAP_SECONDS = 0.05
BATCH = 500  # rows claimed at once (at most one per game and endpoint)
USER_AGENT = "charleston-fsm-webhooks/1"


def allow_list() -> list[str]:
    return [part.strip() for part in (os.environ.get(ALLOW_ENV) or "").split(",") if part.strip()]


def _allowed(host: str, address: str, allowed: Sequence[str]) -> bool:
    ip = ipaddress.ip_address(address)
    for item in allowed:
        if item.lower() == host.lower():
            return True
        try:
            if ip in ipaddress.ip_network(item, strict=False):
                return True
        except ValueError:
            continue
    return ip.is_global and not ip.is_multicast


def check_url(url: str) -> None:
    """Refuse a URL the service must not send to (see the module docstring)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidWebhook(f"A webhook URL is http:// or https:// with a host, not {url!r}.")
    host = parts.hostname
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        found = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except (OSError, ValueError) as exc:
        raise InvalidWebhook(f"The webhook host {host!r} does not resolve ({exc}).") from None
    allowed = allow_list()
    for *_, sockaddr in found:
        address = str(sockaddr[0]).split("%")[0]
        if not _allowed(host, address, allowed):
            raise InvalidWebhook(
                f"The webhook host {host!r} resolves to {address}, a private, loopback, "
                "link-local or reserved address: the service sends only to public ones "
                f"unless the operator allows it in {ALLOW_ENV}."
            )


#: how long a URL found allowed stays so before it is checked again (its name resolved)
CHECKED_SECONDS = 30.0
_checked: dict[str, float] = {}


def check_url_cached(url: str) -> None:
    """:func:`check_url`, at most once every :data:`CHECKED_SECONDS` per URL that passed
    (a send re-checks, so a name that moved to a private address is refused within it)."""
    now = time.monotonic()
    if _checked.get(url, 0.0) > now:
        return
    check_url(url)
    _checked[url] = now + CHECKED_SECONDS


def timeout_seconds() -> float:
    try:
        return float(os.environ.get(TIMEOUT_ENV) or 10.0)
    except ValueError:
        return 10.0


def body_of(entry: dict[str, Any]) -> bytes:
    """The delivery's body: Standard Webhooks' ``type``, ``timestamp``, ``data`` (the entry)."""
    document = {"type": entry["type"], "timestamp": entry["at"], "data": entry}
    return json.dumps(document, separators=(",", ":"), sort_keys=True).encode()


class _Connections(threading.local):
    """Each sending thread's kept-alive connections, by (scheme, host, port)."""

    def __init__(self) -> None:
        self.open: dict[tuple[str, str, int], http.client.HTTPConnection] = {}


class DeliveryWorker:
    """The webhook sender of one ``serve`` process (a daemon thread and its senders)."""

    def __init__(self, store: Any, poll: float = POLL_SECONDS) -> None:
        self.store = store
        self.poll = poll
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._connections = _Connections()
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
                if self.deliver_once():
                    continue  # more may be due at once
            except Exception:  # the database is away: the next turn tries again
                log.exception("webhook worker: a turn failed; trying again shortly")
                self._stop.wait(2.0)
            idle_since = time.monotonic()
            self._wake.wait(self.poll)
            # the notices of a burst of commits make one turn, not one each
            self._stop.wait(max(0.0, idle_since + IDLE_GAP_SECONDS - time.monotonic()))
            self._wake.clear()

    def deliver_once(self) -> int:
        """Claim what is due, send it, record it; how many were sent (the thread's turn,
        or a caller's own: tests and the bench turn it themselves, then :meth:`stop`)."""
        timeout = timeout_seconds()
        claimed = self.store.outbox.claim(BATCH, lease_seconds=2 * timeout + 5)
        if not claimed:
            return 0
        if self._pool is None:
            self._pool = ThreadPoolExecutor(SENDERS, thread_name_prefix="webhook-send")
        attempts = list(self._pool.map(lambda c: self.send(c, timeout), claimed))
        outcomes = self.store.outbox.complete(list(zip(claimed, attempts, strict=True)))
        self.sent += len(claimed)
        for row, attempt, outcome in zip(claimed, attempts, outcomes, strict=True):
            if outcome == "delivered":
                self.delivered += 1
            else:
                self.last_failure = f"{row.url}: {attempt.error or f'HTTP {attempt.status_code}'}"
        return len(claimed)

    def send(self, claimed: Claimed, timeout: float) -> Attempt:
        """One signed POST of ``claimed``; how it went (never raises)."""
        started = time.monotonic()
        body = body_of(claimed.entry)
        try:
            check_url_cached(claimed.url)
            sent = signed_headers(
                claimed.entry["id"], body, secret=claimed.secret, key=self.store.anchor_key
            )
            status = self._post(claimed.url, body, sent, timeout)
            return Attempt(status, None, _ms(started))
        except InvalidWebhook as refused:
            return Attempt(None, refused.message, _ms(started))
        except (OSError, http.client.HTTPException) as exc:
            return Attempt(None, f"{type(exc).__name__}: {exc}"[:500], _ms(started))

    def _post(self, url: str, body: bytes, sent: dict[str, str], timeout: float) -> int:
        parts = urlsplit(url)
        https = parts.scheme == "https"
        key = (parts.scheme, parts.hostname or "", parts.port or (443 if https else 80))
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        request_headers = {
            **sent,
            "content-type": "application/json",
            "user-agent": USER_AGENT,
            "content-length": str(len(body)),
        }
        for attempt in range(2):  # a kept-alive connection the receiver closed: once more
            conn = self._connections.open.get(key)
            if conn is None:
                kind = http.client.HTTPSConnection if https else http.client.HTTPConnection
                conn = kind(key[1], key[2], timeout=timeout)
                self._connections.open[key] = conn
            try:
                conn.request("POST", path, body=body, headers=request_headers)
                response = conn.getresponse()
                response.read()
                if response.will_close:
                    conn.close()
                    self._connections.open.pop(key, None)
                return response.status
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                conn.close()
                self._connections.open.pop(key, None)
                if attempt == 1:
                    raise
            except BaseException:
                conn.close()
                self._connections.open.pop(key, None)
                raise
        raise AssertionError("unreachable")


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)

"""Webhook endpoints: registered, listed, paused, resumed, deleted; their delivery log.

An endpoint is a URL, the entry types it wants (``*``: all) and how deliveries to it are
signed: ``v1`` (HMAC-SHA256 with its own secret, ``whsec_`` and base64 of 24 random
bytes, returned once at registration) or ``v1a`` (Ed25519 with the service's record key,
``GET /v1/anchor-key``; the endpoint keeps no secret). ``organiser_id`` says whose it is
(``None``: the platform's). The rows to send are the outbox's (``outbox.py``); the URL
rule (which destinations are allowed) is the service's (``api/webhook_urls.py``).

**Rotation** (:meth:`Webhooks.rotate`): a new secret signs from now on, and the replaced
one still signs, as a second ``v1`` signature in the same ``webhook-signature`` header,
for a grace the owner sets (:data:`DEFAULT_GRACE_SECONDS`, at most
:data:`MAX_GRACE_SECONDS`): receivers switch to the new secret at their own pace. A
rotation during a grace ends the older secret's (two secrets sign at most).

**Recover and resend** (:meth:`Webhooks.recover`, :meth:`Webhooks.resend`): the rows given
up (``failed``) of entries written in a window, or one row by its entry's id (the
``webhook-id``), are pending again with a fresh schedule, due now; the same
``webhook-id`` (a receiver that had it drops it). The log keeps every earlier attempt.
"""

from __future__ import annotations

import base64
import re
import secrets
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import delete, func, insert, select, update

from ...engine.errors import SetupError
from ...ledger.hashing import utc
from ..database.core import Part
from ..database.models import FeedRow, WebhookAttemptRow, WebhookEndpointRow, WebhookOutboxRow
from ..errors import StoreError
from .feed import ENTRY_TYPES

SIGNINGS = ("v1", "v1a")
MAX_URL = 2000
LOG_SIZE = 50  # attempts a delivery log shows
#: how long a rotated-out secret still signs, unless the owner says (24 h; at most 7 days)
DEFAULT_GRACE_SECONDS = 24 * 3600
MAX_GRACE_SECONDS = 7 * 24 * 3600
_ENDPOINT = tuple(WebhookEndpointRow.__table__.columns)


class InvalidWebhook(SetupError):
    code = "invalid_webhook"
    rule = "SVC-02"


class WebhookNotFound(StoreError):
    kind = "not_found"
    code = "webhook_not_found"
    rule = "SVC-07"


class WebhookMessageNotFound(StoreError):
    kind = "not_found"
    code = "webhook_message_not_found"
    rule = "SVC-07"


#: the shape of every feed entry id (a ``webhook-id``): 32 hex digits
_ENTRY_ID = re.compile(r"[0-9a-f]{32}")


def new_secret() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode("ascii")


def check_types(types: Sequence[str]) -> str:
    """The stored form of ``types`` (``*``, or the types between spaces)."""
    if not types or "*" in types:
        return "*"
    unknown = sorted(set(types) - ENTRY_TYPES)
    if unknown:
        raise InvalidWebhook(
            f"Unknown entry types {unknown}: use '*' or some of {sorted(ENTRY_TYPES)}."
        )
    return " " + " ".join(sorted(set(types))) + " "


def check_secret(secret: str) -> str:
    body = secret.removeprefix("whsec_")
    try:
        raw = base64.b64decode(body, validate=True)
    except ValueError:
        raw = b""
    if not secret.startswith("whsec_") or not 24 <= len(raw) <= 64:
        raise InvalidWebhook(
            "A v1 secret is 'whsec_' and the base64 of 24 to 64 random bytes; leave "
            "'secret' out and the service makes one."
        )
    return secret


#: the shape of every endpoint id this store makes (``ep_`` and 24 hex digits)
_ENDPOINT_ID = re.compile(r"ep_[0-9a-f]{24}")


def _known_shape(endpoint_id: str) -> None:
    """An id this store cannot have made names no endpoint: said before any query (text
    such as a NUL is refused by PostgreSQL itself, which would be a failure, not a 404)."""
    if not _ENDPOINT_ID.fullmatch(endpoint_id):
        raise WebhookNotFound(f"There is no webhook endpoint {endpoint_id!r}.")


class Webhooks(Part):
    """The endpoints of a platform (or an organiser: ``organiser_id``)."""

    def create(
        self,
        url: str,
        types: Sequence[str],
        signing: str = "v1",
        secret: str | None = None,
        organiser_id: str | None = None,
    ) -> dict[str, Any]:
        """A new endpoint (its secret shown in the answer, this once)."""
        if signing not in SIGNINGS:
            raise InvalidWebhook(f"'signing' is v1 (HMAC) or v1a (Ed25519), not {signing!r}.")
        if signing == "v1a" and secret is not None:
            raise InvalidWebhook("A v1a endpoint is signed with the service's key: no 'secret'.")
        if len(url) > MAX_URL:
            raise InvalidWebhook(f"A webhook URL is at most {MAX_URL} characters.")
        if signing == "v1":
            secret = check_secret(secret) if secret is not None else new_secret()
        row = {
            "id": "ep_" + uuid.uuid4().hex[:24],
            "url": url,
            "event_types": check_types(types),
            "secret": secret,
            "status": "active",
            "status_reason": None,
            "created_at": datetime.now(UTC),
            "organiser_id": organiser_id,
            "previous_secret": None,
            "previous_secret_until": None,
            "held_until": None,
            "failing_since": None,
        }
        with self.core.writing() as conn:
            conn.execute(insert(WebhookEndpointRow).values(**row))
        out = _out(row)
        if secret is not None:
            out["secret"] = secret
        return out

    def list(self, organiser_id: str | None = None) -> list[dict[str, Any]]:
        """Every endpoint (``organiser_id``: only that organiser's), oldest first."""
        query = select(*_ENDPOINT).order_by(WebhookEndpointRow.created_at)
        if organiser_id is not None:
            query = query.where(WebhookEndpointRow.organiser_id == organiser_id)
        with self.core.reading() as conn:
            return [_out(r._mapping) for r in conn.execute(query)]

    def get(self, endpoint_id: str) -> dict[str, Any]:
        _known_shape(endpoint_id)
        with self.core.reading() as conn:
            row = conn.execute(
                select(*_ENDPOINT).where(WebhookEndpointRow.id == endpoint_id)
            ).first()
        if row is None:
            raise WebhookNotFound(f"There is no webhook endpoint {endpoint_id!r}.")
        return _out(row._mapping)

    def set_status(self, endpoint_id: str, status: str) -> dict[str, Any]:
        """Pause (``paused``: entries keep collecting) or resume (``active``; also what
        re-enables a disabled endpoint: what it had pending is sent, then the entries
        written from now on; none written while it was disabled: the feed has them, from
        its ``webhook.disabled`` entry's cursor). Resuming clears a hold and the failing
        span (the owner says the receiver is fixed)."""
        assert status in ("active", "paused")
        _known_shape(endpoint_id)
        values: dict[str, Any] = {"status": status, "status_reason": None}
        if status == "active":
            values.update(held_until=None, failing_since=None)
        with self.core.writing() as conn:
            done = conn.execute(
                update(WebhookEndpointRow)
                .where(WebhookEndpointRow.id == endpoint_id)
                .values(**values)
            )
        if done.rowcount != 1:
            raise WebhookNotFound(f"There is no webhook endpoint {endpoint_id!r}.")
        return self.get(endpoint_id)

    def rotate(
        self,
        endpoint_id: str,
        secret: str | None = None,
        grace_seconds: int = DEFAULT_GRACE_SECONDS,
    ) -> dict[str, Any]:
        """A new v1 secret (``secret``, or one made here; shown in the answer, this once);
        the replaced one still signs for ``grace_seconds`` (0: not at all)."""
        if not 0 <= grace_seconds <= MAX_GRACE_SECONDS:
            raise InvalidWebhook(
                f"'grace_seconds' is 0 to {MAX_GRACE_SECONDS} (7 days), not {grace_seconds}."
            )
        endpoint = self.get(endpoint_id)
        if endpoint["signing"] != "v1":
            raise InvalidWebhook(
                "A v1a endpoint is signed with the service's key and has no secret to rotate."
            )
        fresh = check_secret(secret) if secret is not None else new_secret()
        until = datetime.now(UTC) + timedelta(seconds=grace_seconds)
        with self.core.writing() as conn:
            conn.execute(
                update(WebhookEndpointRow)
                .where(WebhookEndpointRow.id == endpoint_id)
                .values(
                    previous_secret=WebhookEndpointRow.secret if grace_seconds else None,
                    previous_secret_until=until if grace_seconds else None,
                    secret=fresh,
                )
            )
        return {**self.get(endpoint_id), "secret": fresh}

    def recover(
        self, endpoint_id: str, since: datetime, until: datetime | None = None
    ) -> dict[str, Any]:
        """Send again every row of the endpoint given up (``failed``) whose entry was
        written at or after ``since`` (and before ``until``): pending, due now, a fresh
        schedule. How many."""
        self.get(endpoint_id)
        window = [FeedRow.at >= _as_utc(since)]
        if until is not None:
            window.append(FeedRow.at < _as_utc(until))
        entries = select(FeedRow.entry_id).where(*window)
        with self.core.writing() as conn:
            done = conn.execute(
                update(WebhookOutboxRow)
                .where(
                    WebhookOutboxRow.endpoint_id == endpoint_id,
                    WebhookOutboxRow.status == "failed",
                    WebhookOutboxRow.entry_id.in_(entries),
                )
                .values(status="pending", attempts=0, next_attempt_at=datetime.now(UTC))
            )
        return {"endpoint_id": endpoint_id, "resent": done.rowcount}

    def resend(self, endpoint_id: str, entry_id: str) -> dict[str, Any]:
        """Send the entry ``entry_id`` (a ``webhook-id``) to the endpoint again, whatever
        became of it (delivered, given up, or waiting for a retry: due now)."""
        self.get(endpoint_id)
        missing = WebhookMessageNotFound(
            f"The endpoint {endpoint_id!r} was never sent the entry {entry_id!r}: resend "
            "takes the webhook-id of a delivery in its log (an entry it subscribed to, "
            "written after it was created)."
        )
        if not _ENTRY_ID.fullmatch(entry_id):
            raise missing
        with self.core.writing() as conn:
            done = conn.execute(
                update(WebhookOutboxRow)
                .where(
                    WebhookOutboxRow.endpoint_id == endpoint_id,
                    WebhookOutboxRow.entry_id == entry_id,
                )
                .values(status="pending", attempts=0, next_attempt_at=datetime.now(UTC))
            )
        if done.rowcount != 1:
            raise missing
        return {"endpoint_id": endpoint_id, "entry_id": entry_id, "resent": 1}

    def delete(self, endpoint_id: str) -> None:
        """The endpoint, its outbox rows and its log (nothing more is sent to it)."""
        _known_shape(endpoint_id)
        with self.core.writing() as conn:
            conn.execute(
                delete(WebhookOutboxRow).where(WebhookOutboxRow.endpoint_id == endpoint_id)
            )
            conn.execute(
                delete(WebhookAttemptRow).where(WebhookAttemptRow.endpoint_id == endpoint_id)
            )
            done = conn.execute(
                delete(WebhookEndpointRow).where(WebhookEndpointRow.id == endpoint_id)
            )
        if done.rowcount != 1:
            raise WebhookNotFound(f"There is no webhook endpoint {endpoint_id!r}.")

    def deliveries(self, endpoint_id: str, limit: int = LOG_SIZE) -> dict[str, Any]:
        """The endpoint's delivery log: its last attempts (newest first), how many rows
        are pending, delivered and given up, and the next retry."""
        endpoint = self.get(endpoint_id)
        with self.core.reading() as conn:
            attempts = conn.execute(
                select(*WebhookAttemptRow.__table__.columns)
                .where(WebhookAttemptRow.endpoint_id == endpoint_id)
                .order_by(WebhookAttemptRow.id.desc())
                .limit(max(1, min(limit, 500)))
            ).all()
            counts = dict(
                conn.execute(
                    select(WebhookOutboxRow.status, func.count())
                    .where(WebhookOutboxRow.endpoint_id == endpoint_id)
                    .group_by(WebhookOutboxRow.status)
                ).all()
            )
            retry = conn.execute(
                select(WebhookOutboxRow.next_attempt_at, WebhookOutboxRow.entry_id)
                .where(
                    WebhookOutboxRow.endpoint_id == endpoint_id,
                    WebhookOutboxRow.status == "pending",
                    WebhookOutboxRow.attempts > 0,
                )
                .order_by(WebhookOutboxRow.next_attempt_at)
                .limit(1)
            ).first()
        return {
            "endpoint": endpoint,
            "pending": counts.get("pending", 0),
            "delivered": counts.get("delivered", 0),
            "failed": counts.get("failed", 0),
            "next_retry": None
            if retry is None
            else {"entry_id": retry.entry_id, "at": _iso(utc(retry.next_attempt_at))},
            "attempts": [
                {
                    "entry_id": a.entry_id,
                    "at": _iso(utc(a.at)),
                    "status_code": a.status_code,
                    "error": a.error,
                    "milliseconds": a.milliseconds,
                }
                for a in attempts
            ],
        }


def _out(row: Any) -> dict[str, Any]:
    types = row["event_types"]
    now = datetime.now(UTC)
    previous_until = row["previous_secret_until"]
    held = row["held_until"]
    return {
        "id": row["id"],
        "url": row["url"],
        "event_types": ["*"] if types == "*" else types.split(),
        "signing": "v1" if row["secret"] else "v1a",
        "status": row["status"],
        "status_reason": row["status_reason"],
        "created_at": _iso(utc(row["created_at"])),
        "organiser_id": row["organiser_id"],
        # a replaced secret still signing (a second signature) until then
        "previous_secret_until": _iso(utc(previous_until))
        if previous_until is not None and row["previous_secret"] and utc(previous_until) > now
        else None,
        "held_until": _iso(utc(held)) if held is not None and utc(held) > now else None,
        "failing_since": None if row["failing_since"] is None else _iso(utc(row["failing_since"])),
    }


def _as_utc(moment: datetime) -> datetime:
    """``moment`` in UTC (a naive one is taken as UTC), as the feed's times are stored."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")

"""Standard Webhooks 1.0 signatures: what a delivery carries, and how a receiver checks it.

Every delivery has three headers: ``webhook-id`` (the feed entry's id: the same on every
retry, so a receiver drops what it already has), ``webhook-timestamp`` (Unix seconds of
this attempt) and ``webhook-signature``, over the bytes ``{id}.{timestamp}.{body}``:

- ``v1,<base64 HMAC-SHA256>`` keyed with the endpoint's secret (``whsec_<base64>``: the
  key is the decoded bytes);
- ``v1a,<base64 Ed25519 signature>`` with the service's record key, whose public half
  is ``GET /v1/anchor-key`` (``ledger/record.py``): the receiver holds no secret.

After a secret's rotation the header holds two ``v1`` signatures, space-separated (the
new secret's, then the replaced one's) until the grace ends.

:func:`verify` is the receiver's side (``charleston-fsm webhooks verify`` and the
example receiver use it): the signature, and the timestamp within a tolerance (a
captured delivery replayed later is refused).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from collections.abc import Mapping

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from ..engine.errors import SetupError
from .anchors import AnchorKey
from .record import signing_key

#: how far a delivery's timestamp may be from the receiver's clock (seconds)
TOLERANCE_SECONDS = 300


class WebhookNotVerified(SetupError):
    code = "webhook_not_verified"
    rule = "SVC-02"


def signed_content(msg_id: str, timestamp: int, body: bytes) -> bytes:
    return f"{msg_id}.{timestamp}.".encode() + body


def secret_bytes(secret: str) -> bytes:
    return base64.b64decode(secret.removeprefix("whsec_"))


def sign(
    msg_id: str, timestamp: int, body: bytes, *, secret: str | None, key: AnchorKey | None
) -> str:
    """The ``webhook-signature`` value: ``v1`` with ``secret``, else ``v1a`` with ``key``."""
    content = signed_content(msg_id, timestamp, body)
    if secret is not None:
        digest = hmac.new(secret_bytes(secret), content, hashlib.sha256).digest()
        return "v1," + base64.b64encode(digest).decode("ascii")
    assert key is not None
    return "v1a," + base64.b64encode(signing_key(key).sign(content)).decode("ascii")


def headers(
    msg_id: str,
    body: bytes,
    *,
    secret: str | None,
    key: AnchorKey | None,
    previous: str | None = None,
    now: float | None = None,
) -> dict[str, str]:
    """The three Standard Webhooks headers of one attempt. ``previous``: a rotated-out
    secret in its grace, whose ``v1`` signature follows the current one's (space-separated,
    as the standard has it: a receiver holding either secret verifies)."""
    timestamp = int(now if now is not None else time.time())
    signature = sign(msg_id, timestamp, body, secret=secret, key=key)
    if previous is not None:
        signature += " " + sign(msg_id, timestamp, body, secret=previous, key=None)
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signature,
    }


def verify(
    received: Mapping[str, str],
    body: bytes,
    *,
    secret: str | None = None,
    public_key: str | None = None,
    tolerance: float = TOLERANCE_SECONDS,
    now: float | None = None,
) -> str:
    """Check a received delivery (header names in any case); its ``webhook-id`` when one
    of its signatures holds, else :class:`WebhookNotVerified` saying what failed."""
    lower = {k.lower(): v for k, v in received.items()}
    missing = [
        h for h in ("webhook-id", "webhook-timestamp", "webhook-signature") if h not in lower
    ]
    if missing:
        raise WebhookNotVerified(f"The delivery lacks the header(s) {', '.join(missing)}.")
    if (secret is None) == (public_key is None):
        raise WebhookNotVerified("Give the endpoint's secret (v1) or the public key (v1a).")
    msg_id, stamp = lower["webhook-id"], lower["webhook-timestamp"]
    if not stamp.isdigit():
        raise WebhookNotVerified(f"webhook-timestamp {stamp!r} is not Unix seconds.")
    moment = now if now is not None else time.time()
    if abs(moment - int(stamp)) > tolerance:
        raise WebhookNotVerified(
            f"webhook-timestamp {stamp} is more than {tolerance:g} s from now: a delivery "
            "replayed later, or a clock that is off."
        )
    content = signed_content(msg_id, int(stamp), body)
    for signature in lower["webhook-signature"].split():
        version, _, value = signature.partition(",")
        try:
            raw = base64.b64decode(value, validate=True)
        except ValueError:
            continue
        if version == "v1" and secret is not None:
            expected = hmac.new(secret_bytes(secret), content, hashlib.sha256).digest()
            if hmac.compare_digest(raw, expected):
                return msg_id
        if version == "v1a" and public_key is not None:
            try:
                Ed25519PublicKey.from_public_bytes(base64.b64decode(public_key)).verify(
                    raw, content
                )
                return msg_id
            except (InvalidSignature, ValueError):
                continue
    raise WebhookNotVerified(
        "No signature of the delivery matches: check the secret or public key, and that "
        "the body is checked exactly as received (bytes, not re-encoded JSON)."
    )

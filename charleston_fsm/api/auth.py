"""Tokens: random secrets handed out once, stored only as their SHA-256.

One token per seat and one for the director are made when a game is created
(``secrets.token_urlsafe``); the store keeps ``sha256(token)`` hex digests in the game's
``credentials`` and answers ``role_for(game_id, digest)``. Creating games needs the
platform key when ``CHARLESTON_PLATFORM_KEY`` is set. Every token travels in
``Authorization: Bearer <token>``.
"""

from __future__ import annotations

import hmac
import secrets

from fastapi import Request

from ..engine.seats import SEATS, Seat
from ..ledger.hashing import hash_token
from .problems import bad_request, forbidden, unauthorized

ROLES = (*(s.value for s in SEATS), "director")
PLATFORM_RULE = "SVC-05"  # games are created by the platform, with its key when one is set


def seat_of(role: str) -> Seat | None:
    """The seat a role plays; ``None`` for the director, who plays none."""
    return None if role == "director" else Seat(role)


def new_token() -> str:
    return secrets.token_urlsafe(32)


#: a token's stored form: the store's one definition (``ledger.hashing``), named for the routes
token_hash = hash_token


def bearer_token(request: Request) -> str | None:
    """The bearer token of the request; ``None`` when there is no Authorization header."""
    sent = request.headers.getlist("authorization")
    if len(sent) > 1:  # which one is meant is the client's to say, never a guess
        raise bad_request(
            "repeated_authorization",
            f"The request has {len(sent)} Authorization headers: send exactly one, "
            "'Authorization: Bearer <token>'.",
        )
    if not sent:
        return None
    header = sent[0]
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise unauthorized(
            "malformed_authorization",
            "Send the token as 'Authorization: Bearer <token>'.",
        )
    return token.strip()


def check_platform_key(request: Request, platform_key: str | None) -> None:
    if not platform_key:
        return
    token = bearer_token(request)
    if token is None:
        raise unauthorized(
            "missing_platform_key",
            "This service is configured with a platform key: send it as "
            "'Authorization: Bearer <platform key>' to create games.",
        )
    if not hmac.compare_digest(token.encode(), platform_key.encode()):
        raise forbidden(
            "wrong_platform_key", "This is not the platform key of this service.", PLATFORM_RULE
        )

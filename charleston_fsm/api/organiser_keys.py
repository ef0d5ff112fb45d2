"""Who sends a request above a game: the platform's key, or an organiser's.

The platform's key (``CHARLESTON_PLATFORM_KEY``) does everything it did before, and
manages organisers. An organiser's key (``POST /v1/organisers``) creates games and
rounds that carry its id, lists them, and directs them (as the director's token of each
game and the round's token of each round would); it is refused anything else:

- another organiser's (or the platform's) game or round: **403** ``not_your_game`` /
  ``not_your_round``, which names why. Not a 404: the existence of a game or round is
  no secret here (an unknown one is already a 404 before any 401, for every caller;
  their ids are random), and a 404 would tell the organiser's integration "wrong id"
  when the truth is "wrong key";
- managing organisers: **403** ``platform_key_only``;
- a revoked key: **401** ``organiser_key_revoked`` (a rotated key's old value is an
  unknown token: 401 ``invalid_token`` or 403 ``wrong_platform_key``, as any other).

Each process remembers a live key's organiser (:class:`~.token_cache.TokenCache`) and
forgets it when the key is rotated or revoked, in every process within a second
(``credential_changes``, :class:`~.token_cache.CredentialWatch`).
"""

from __future__ import annotations

import hmac

from fastapi import Request

from ..store.platform.organisers import KeyHolder
from .auth import PLATFORM_RULE, bearer_token, check_platform_key, token_hash
from .problems import ApiProblem, forbidden, unauthorized
from .token_cache import TokenCache

ORGANISER_RULE = PLATFORM_RULE  # SVC-05: every request names who it is with a bearer token


def key_holder(request: Request, digest: str) -> KeyHolder | None:
    """The organiser whose key (live or revoked) ``digest`` is; ``None``: nobody's."""
    cache: TokenCache = request.app.state.roles
    remembered = cache.organiser(digest)
    if remembered is not None:
        return KeyHolder(remembered, revoked=False)
    holder: KeyHolder | None = request.app.state.store.organisers.holder(digest)
    if holder is not None and not holder.revoked:
        cache.remember_organiser(digest, holder.organiser_id)
    return holder


def live_organiser(request: Request, digest: str) -> str | None:
    """The organiser whose live key ``digest`` is; a revoked key is refused (401)."""
    holder = key_holder(request, digest)
    if holder is None:
        return None
    if holder.revoked:
        raise revoked()
    return holder.organiser_id


def revoked() -> ApiProblem:
    return unauthorized(
        "organiser_key_revoked",
        "This organiser's key was revoked by the platform: it opens nothing any more. Ask "
        "the platform for a new key (a rotation issues one).",
    )


def is_platform_key(request: Request, token: str | None) -> bool:
    platform_key = request.app.state.platform_key
    return bool(
        token and platform_key and hmac.compare_digest(token.encode(), platform_key.encode())
    )


def platform_or_organiser(request: Request) -> str | None:
    """The organiser whose key the request bears, or ``None`` for the platform (its key;
    anyone where the service has none, as before organisers). Anything else: 401/403."""
    token = bearer_token(request)
    if is_platform_key(request, token):
        return None
    if token is not None:
        organiser_id = live_organiser(request, token_hash(token))
        if organiser_id is not None:
            request.state.role = "organiser"
            return organiser_id
    if token is not None and request.app.state.platform_key:
        raise forbidden(
            "wrong_platform_key",
            "This is neither the platform key of this service nor an organiser's key.",
            PLATFORM_RULE,
        )
    check_platform_key(request, request.app.state.platform_key)
    return None


def platform_itself(request: Request) -> None:
    """The platform's own key, which alone manages organisers. A service without a
    platform key has no organisers to manage: anyone may create its games, so a key that
    limits an organiser would limit no one."""
    token = bearer_token(request)
    if is_platform_key(request, token):
        return
    if token is not None and key_holder(request, token_hash(token)) is not None:
        raise forbidden(
            "platform_key_only",
            "An organiser's key cannot create, list, rotate or revoke organisers: that takes "
            "the platform key.",
            ORGANISER_RULE,
        )
    if not request.app.state.platform_key:
        raise forbidden(
            "no_platform_key",
            "This service has no platform key, so anyone may create its games and an "
            "organiser's key would limit no one: start it with CHARLESTON_PLATFORM_KEY (or "
            "serve --platform-key) to have organisers.",
            ORGANISER_RULE,
        )
    check_platform_key(request, request.app.state.platform_key)


def refuse_other_organisers(request: Request, digest: str, what: str, code: str) -> None:
    """When ``digest`` is an organiser's key that does not open ``what`` (a game or round
    of someone else): say so (403), or that the key was revoked (401)."""
    holder = key_holder(request, digest)
    if holder is None:
        return
    if holder.revoked:
        raise revoked()
    raise forbidden(
        code,
        f"This organiser's key opens only its own organiser's games and rounds, and {what} "
        "is not one of them.",
        ORGANISER_RULE,
    )


def organiser_of_round(request: Request, round_id: str, digest: str) -> str | None:
    """The organiser whose live key ``digest`` is, when the round is one of its own."""
    holder = key_holder(request, digest)
    if holder is None or holder.revoked:
        return None
    if request.app.state.store.organisers.owns_round(round_id, holder.organiser_id):
        return holder.organiser_id
    return None

"""What the routes share: the app's store, notifier and bots, and who a token is.

The services come from ``request.app.state`` as dependencies. The guards
(:func:`authenticate`, :func:`director_only`, :func:`seat_only`; above a game,
``organiser_keys.platform_or_organiser``)
are called first thing in a route instead: FastAPI runs dependencies before it validates
a route's own query, headers and body, and a malformed request is a 400 whoever sends it,
answered without a credentials lookup. Routes that take a body name their guard with
:func:`token_first` as well: FastAPI reads and parses a body before anything else of the
route, and a body is only worth reading for a caller with a valid token.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Annotated, Any, TypeVar

from fastapi import Depends, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.routing import APIRoute
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from ..engine.seats import Seat
from ..store import GameStore
from ..store.reads import could_exist
from ..store.room import round_director_opens
from .auth import bearer_token, seat_of, token_hash
from .bodies import check_body
from .botrunner import BotRunner
from .notify import Notifier
from .organiser_keys import refuse_other_organisers
from .problems import forbidden, unauthorized
from .token_cache import TokenCache

DIRECTOR_RULE = "SVC-05"  # only the director sees every hand, the audit and the diagram
SEAT_RULE = "SVC-05"  # a seat's token acts only for that seat; the director does not play

# documents the bearer scheme in OpenAPI; the guards below read the header themselves
_bearer = HTTPBearer(auto_error=False, description="A seat, director or platform token.")
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]


# async: a lookup on app.state needs no thread
async def _store(request: Request) -> GameStore:
    return request.app.state.store


async def _notifier(request: Request) -> Notifier:
    return request.app.state.notifier


async def _bots(request: Request) -> BotRunner:
    return request.app.state.bots


StoreDep = Annotated[GameStore, Depends(_store)]
NotifierDep = Annotated[Notifier, Depends(_notifier)]
BotsDep = Annotated[BotRunner, Depends(_bots)]


def authenticate(request: Request, game_id: str) -> str:
    """The token's role in this game; an unknown game is a 404 before any 401."""
    store = request.app.state.store
    roles: TokenCache = request.app.state.roles
    token = bearer_token(request)
    if token is None:
        store.registry.last_seq(game_id)  # GameNotFound for an unknown game
        raise unauthorized(
            "missing_token",
            "Send a seat or director token of this game as 'Authorization: Bearer <token>'.",
        )
    digest = token_hash(token)
    role = roles.get((game_id, digest))
    if role is None:
        role = store.registry.role_for(game_id, digest)
        owner = None
        if role is None and could_exist(game_id):
            if round_director_opens(store, game_id, digest):
                role = "director"  # the round's token directs each of its tables
            elif (owner := store.organisers.directing(game_id, digest)) is not None:
                role = "director"  # an organiser's key directs its own games
        if role is not None:  # until its credentials change (token_cache.CredentialWatch)
            remember(request, game_id, digest, role, owner)
    if role is None:
        store.registry.last_seq(game_id)
        refuse_other_organisers(request, digest, f"game {game_id!r}", "not_your_game")
        raise unauthorized("invalid_token", "This token does not open this game.")
    request.state.role = role
    return role


def remember(
    request: Request, game_id: str, digest: str, role: str, owner: str | None = None
) -> None:
    """Keep a token's role in a game until its credentials change, or its ``owner``'s
    (an organiser's key: until it is rotated or revoked). Bounded: the
    :class:`~.token_cache.TokenCache` empties itself when full."""
    roles: TokenCache = request.app.state.roles
    roles.remember((game_id, digest), role, owner)


def role_remembered(request: Request) -> bool:
    """Whether :func:`authenticate` knows the bearer's role in the path's game without
    asking the store (so a guard can run on the event loop)."""
    token = bearer_token(request)
    game_id = request.path_params.get("game_id")
    if token is None or game_id is None:
        return False
    return (game_id, token_hash(token)) in request.app.state.roles


def director_only(request: Request, game_id: str) -> str:
    role = authenticate(request, game_id)
    if role != "director":
        raise forbidden("director_only", "Only the director's token may read this.", DIRECTOR_RULE)
    return role


def seat_only(request: Request, game_id: str, refusal: str) -> Seat:
    """The token's seat; the director's token is refused with ``refusal``."""
    seat = seat_of(authenticate(request, game_id))
    if seat is None:
        raise forbidden("director_cannot_play", refusal, SEAT_RULE)
    return seat


Endpoint = TypeVar("Endpoint", bound=Callable[..., Any])


def token_first(guard: Callable[[Request], object]) -> Callable[[Endpoint], Endpoint]:
    """Run ``guard(request)`` before FastAPI reads the route's body (:class:`TokenFirstRoute`)."""

    def mark(endpoint: Endpoint) -> Endpoint:
        endpoint.token_guard = guard  # type: ignore[attr-defined]
        return endpoint

    return mark


async def run_guard(guard: Callable[[Request], object], request: Request) -> None:
    """Run a token guard: on the event loop when the token's role is remembered (it reads
    no store then: one thread hand-off fewer per request), else in a thread. Where the
    store runs commands on the loop (PostgreSQL), a token of a game's own credentials is
    looked up there first, so its first command needs no thread either."""
    if not role_remembered(request) and request.app.state.commands_on_loop:
        await _learn_role_on_loop(request)
    if role_remembered(request):
        guard(request)
    else:
        await run_in_threadpool(guard, request)  # guards may read the store


async def _learn_role_on_loop(request: Request) -> None:
    """Remember the bearer's role in the path's game when the game's credentials name it
    (anything else, a round director's token or none, is the threaded guard's to judge)."""
    token = bearer_token(request)
    game_id = request.path_params.get("game_id")
    if token is None or game_id is None:
        return
    digest = token_hash(token)
    role = await request.app.state.store.registry.role_for_on_loop(game_id, digest)
    if role is not None:
        remember(request, game_id, digest, role)


class TokenFirstRoute(APIRoute):
    """A route whose endpoint's :func:`token_first` guard runs before its body is read,
    and whose body is checked (:func:`~.bodies.check_body`) before FastAPI parses it."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        guard = getattr(self.endpoint, "token_guard", None)
        if guard is None and self.body_field is None:
            return handler
        takes_body = self.body_field is not None

        async def guarded(request: Request) -> Response:
            if guard is not None:
                await run_guard(guard, request)
            if takes_body:
                await check_body(request)
            return await handler(request)

        return guarded

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

import inspect
from collections.abc import Callable, Coroutine
from typing import Annotated, Any, TypeVar

from fastapi import Depends, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.routing import APIRoute
from fastapi.security import HTTPBearer

from ..engine.seats import Seat
from ..store import GameStore
from ..store.games.reads import could_exist
from ..store.rounds.room import round_director_opens
from .auth import bearer_token, seat_of, token_hash
from .bodies import check_body
from .botrunner import BotRunner
from .notify import Notifier
from .organiser_keys import refuse_other_organisers
from .problems import forbidden, unauthorized
from .token_cache import TokenCache

DIRECTOR_RULE = "SVC-05"  # only the director sees every hand, the audit and the diagram
SEAT_RULE = "SVC-05"  # a seat's token acts only for that seat; the director does not play


# -- who may call a route, as the OpenAPI document says it -----------------------------------
# Every token travels as 'Authorization: Bearer <token>'; the guards below read the header
# themselves. These schemes only name, in the document, which tokens a route takes: one
# per kind of holder, so a route's ``security`` lists its alternatives truthfully.
def _scheme(name: str, description: str) -> HTTPBearer:
    return HTTPBearer(scheme_name=name, auto_error=False, description=description)


SEAT_TOKEN = _scheme(
    "SeatToken",
    "A seat's token of the game (POST /v1/games or /v1/rounds returns them; a substitute "
    "gets a new one).",
)
DIRECTOR_TOKEN = _scheme(
    "DirectorToken",
    "The game's director token; or its round's token; or the key of the organiser whose "
    "game it is.",
)
ROUND_TOKEN = _scheme(
    "RoundToken",
    "The round's token (POST /v1/rounds returns it), or the key of the organiser whose "
    "round it is.",
)
SPECTATOR_TOKEN = _scheme(
    "SpectatorToken", "A spectator link's token: the table's, or the round's (for the round)."
)
PLATFORM_KEY = _scheme(
    "PlatformKey",
    "The service's platform key (CHARLESTON_PLATFORM_KEY, serve --platform-key). A service "
    "without one takes no token where this key or an organiser's is asked: the document "
    "then lists an empty alternative ({}) there.",
)
ORGANISER_KEY = _scheme(
    "OrganiserKey",
    "An organiser's key (POST /v1/organisers): only its own organiser's games, rounds, "
    "feed entries and webhook endpoints.",
)


def taking(*schemes: HTTPBearer) -> Callable[..., Coroutine[Any, Any, None]]:
    """A dependency that declares ``schemes`` as a route's alternatives in the document
    (it reads nothing: the route's guard judges the token)."""

    async def credentials(**_: Any) -> None:
        return None

    credentials.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter(f"_{i}", inspect.Parameter.KEYWORD_ONLY, default=Depends(s))
            for i, s in enumerate(schemes)
        ]
    )
    return credentials


#: a route's token, by who holds it (the parameter is always ``_``: the hot route's)
GameCredentials = Annotated[None, Depends(taking(SEAT_TOKEN, DIRECTOR_TOKEN))]
SeatCredentials = Annotated[None, Depends(taking(SEAT_TOKEN))]
DirectorCredentials = Annotated[None, Depends(taking(DIRECTOR_TOKEN))]
RoundCredentials = Annotated[None, Depends(taking(ROUND_TOKEN))]
SpectatorCredentials = Annotated[None, Depends(taking(SPECTATOR_TOKEN))]
#: ``organiser_keys.platform_or_organiser``'s routes (anyone, without a platform key)
PLATFORM_OR_ORGANISER = taking(PLATFORM_KEY, ORGANISER_KEY)
PlatformCredentials = Annotated[None, Depends(PLATFORM_OR_ORGANISER)]
#: ``organiser_keys.platform_itself``'s routes: the platform key only
PlatformKeyCredentials = Annotated[None, Depends(taking(PLATFORM_KEY))]


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


#: where a request keeps its bearer's digest and the role judged for it (its ASGI scope):
#: a command's guard and its endpoint both ask, and the token is hashed and judged once
DIGEST_KEY = "charleston.token_digest"
JUDGED_KEY = "charleston.judged_role"


def bearer_digest(request: Request) -> str | None:
    """The stored form of the request's bearer token (``None`` without one), hashed once
    per request however many guards ask."""
    scope = request.scope
    digest = scope.get(DIGEST_KEY)
    if digest is None:
        token = bearer_token(request)
        if token is None:
            return None
        digest = scope[DIGEST_KEY] = token_hash(token)
    return digest  # type: ignore[no-any-return]


def authenticate(request: Request, game_id: str) -> str:
    """The token's role in this game; an unknown game is a 404 before any 401. Judged
    once per request: a second call (the endpoint after its guard) reads the first's."""
    judged = request.scope.get(JUDGED_KEY)
    if judged is not None and judged[0] == game_id:
        return judged[1]  # type: ignore[no-any-return]
    store = request.app.state.store
    roles: TokenCache = request.app.state.roles
    digest = bearer_digest(request)
    if digest is None:
        store.registry.last_seq(game_id)  # GameNotFound for an unknown game
        raise unauthorized(
            "missing_token",
            "Send a seat or director token of this game as 'Authorization: Bearer <token>'.",
        )
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
    request.scope[JUDGED_KEY] = (game_id, role)
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
    game_id = request.path_params.get("game_id")
    if game_id is None:
        return False
    digest = bearer_digest(request)
    return digest is not None and (game_id, digest) in request.app.state.roles


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
    no store then: one thread hand-off fewer per request), else in a thread."""
    if role_remembered(request):
        guard(request)
    else:
        await run_in_threadpool(guard, request)  # guards may read the store


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

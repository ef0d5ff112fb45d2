"""The command route without FastAPI's per-request machinery, for the hot path.

A seat's command is the request the service answers most, and FastAPI spent more CPU on
it than on any single stage of the command (docs/performance.md, "A command's CPU by
stage"): walking the nested routers of ``include_router`` to find the route, solving the
dependency graph, reading the body through ``email.message`` and ``json.loads`` and
validating ``dict[str, Any]``. :func:`hot_route` is a plain Starlette route, placed
first in the app, that does what that machinery concludes for the one body that matters
(a JSON object sent as ``application/json``): the token first, then the body parsed by
orjson, then the declared endpoint with the arguments FastAPI would give it: in a worker
thread, or on the event loop itself (its ``on_loop`` twin) when the store runs commands
there (PostgreSQL: ``app.state.commands_on_loop``). Every other body (no content type,
another type, malformed JSON, not an object, anything orjson reads differently from
``json``) goes to FastAPI's own handler of the declared route, so those refusals are
FastAPI's exactly. The declared route stays the one in the OpenAPI document, and answers
other methods (405).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import orjson
from fastapi.concurrency import run_in_threadpool
from fastapi.routing import APIRoute, request_response
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .bodies import check_body
from .deps import run_guard

JSON_TYPES = ("application/json", "application/json; charset=utf-8")

#: what the endpoint's parameters are given, by name: what FastAPI would give them
ARGUMENTS: dict[str, Callable[[Request, dict[str, Any]], Any]] = {
    "game_id": lambda request, _: request.path_params["game_id"],
    "request": lambda request, _: request,
    "store": lambda request, _: request.app.state.store,
    "notifier": lambda request, _: request.app.state.notifier,
    "_": lambda request, _: None,  # the bearer, declared for OpenAPI; the guard reads it
    "body": lambda _, body: body,
    "idempotency_key": lambda request, _: request.headers.get("idempotency-key"),
}


def hot_route(declared: APIRoute, prefix: str) -> Route:
    """A POST route at ``declared``'s path under ``prefix`` (its router's place in the
    app), running its endpoint directly for JSON-object bodies, FastAPI for the rest."""
    endpoint = declared.endpoint
    guard = getattr(endpoint, "token_guard", None)
    names = list(inspect.signature(endpoint).parameters)
    unknown = [n for n in names if n not in ARGUMENTS]
    if unknown or guard is None:
        raise TypeError(f"no hot route for {endpoint.__name__}: {unknown or 'no token guard'}")
    # FastAPI's own handler, without TokenFirstRoute's guard: the guard has run by then
    fastapi_handler = APIRoute.get_route_handler(declared)
    on_loop = getattr(endpoint, "on_loop", None)

    async def hot(request: Request) -> Response:
        await run_guard(guard, request)
        body = _json_object(request, await check_body(request))
        if body is None:  # FastAPI's handler reads the same body from the request's cache
            return await fastapi_handler(request)
        values = {name: ARGUMENTS[name](request, body) for name in names}
        if on_loop is not None and request.app.state.commands_on_loop:
            return await on_loop(**values)  # type: ignore[no-any-return]
        return await run_in_threadpool(endpoint, **values)  # type: ignore[no-any-return]

    route = Route(
        prefix + declared.path, hot, methods=["POST"], include_in_schema=False, name=declared.name
    )
    route.app = request_response(hot)  # FastAPI's: the exit stacks its handler expects
    return route


def _json_object(request: Request, raw: bytes) -> dict[str, Any] | None:
    """The body as a dict when FastAPI would read it as the same JSON object, else None."""
    if request.headers.get("content-type", "").lower() not in JSON_TYPES or not raw:
        return None
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:  # malformed, or what orjson refuses and json may take
        return None
    # orjson reads an integer past 64 bits as a float, json as an int; no command field
    # is a float, so a body holding one is left to FastAPI's reading
    return body if type(body) is dict and not _holds_float(body) else None


def _holds_float(value: Any) -> bool:
    """Whether a float is anywhere in ``value`` (a walk with a list, not recursion:
    :func:`~.bodies.check_body` bounds the depth, and this holds without it)."""
    pending = [value]
    while pending:
        item = pending.pop()
        if type(item) is float:
            return True
        if type(item) is dict:
            pending.extend(item.values())
        elif type(item) is list:
            pending.extend(item)
    return False

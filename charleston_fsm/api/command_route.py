"""The command route's class: FastAPI's declared route, reading a JSON object itself.

A seat's command is the request the service answers most, and FastAPI spent more CPU on
it than on any single stage of the command (docs/bench/history.md): solving the
dependency graph, reading the body through ``email.message`` and ``json.loads`` and
validating ``dict[str, Any]``. :class:`CommandRoute` is the route the OpenAPI document
declares (``routes_games.add_command_route`` puts it first in the app, outside the
nested routers); its handler does what that machinery concludes for the one body that
matters (a JSON object sent as ``application/json``): the token first, then the body
parsed by orjson, then the endpoint with the arguments FastAPI would give it, in a worker
thread. Every other body (no content type, another type,
malformed JSON, not an object, anything orjson reads differently from ``json``) goes to
FastAPI's own handler of the same route, so those refusals are FastAPI's exactly.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Coroutine
from typing import Any

import orjson
from fastapi.concurrency import run_in_threadpool
from fastapi.routing import APIRoute
from starlette.requests import Request
from starlette.responses import Response

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


class CommandRoute(APIRoute):
    """A POST route whose endpoint runs directly for a JSON-object body (after its
    :func:`~.deps.token_first` guard), and through FastAPI's handler for any other."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        endpoint = self.endpoint
        guard = getattr(endpoint, "token_guard", None)
        names = list(inspect.signature(endpoint).parameters)
        unknown = [n for n in names if n not in ARGUMENTS]
        if unknown or guard is None:
            raise TypeError(f"no command route for {endpoint.__name__}: {unknown or 'no guard'}")
        fastapi_handler = super().get_route_handler()  # the guard has run when it is called

        async def command(request: Request) -> Response:
            await run_guard(guard, request)
            body = _json_object(request, await check_body(request))
            if body is None:  # FastAPI's handler reads the same body from the request's cache
                return await fastapi_handler(request)
            values = {name: ARGUMENTS[name](request, body) for name in names}
            return await run_in_threadpool(endpoint, **values)  # type: ignore[no-any-return]

        return command


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

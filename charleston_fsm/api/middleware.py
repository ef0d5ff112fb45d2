"""Request context and request bounds, around every answer the service gives.

:class:`RequestContext` puts the game id and request id on every log line a request
causes, ``X-Request-ID`` on every response and ``Cache-Control: no-store`` on game data,
and turns an unexpected exception into a problem+json 500 itself, so that answer gets the
same headers and log line as any other. :class:`BodyLimit` bounds request bodies while
they stream in.
"""

from __future__ import annotations

import re
import time
import uuid

from starlette.datastructures import Headers, MutableHeaders
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .logs import game_id_var, log, request_id_var
from .problems import command_headers, problem

GAME_PATH = re.compile(r"^/v1/games/([^/]+)")
DEFAULT_MAX_BODY_BYTES = 64 * 1024
_LENGTH = re.compile(r"^[0-9]{1,18}$")


class RequestContext:
    """Pure ASGI middleware: game id and request id in every log line, one line per request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        match = GAME_PATH.match(path)
        headers = dict(scope.get("headers") or [])
        sent_id = headers.get(b"x-request-id", b"").decode("latin-1")
        request_id = _printable(sent_id)[:64] or uuid.uuid4().hex[:16]
        game_token = game_id_var.set(_printable(match.group(1))[:64] if match else None)
        request_token = request_id_var.set(request_id)
        scope.setdefault("state", {})
        start = time.perf_counter()
        started = False

        async def send_wrapper(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                out = MutableHeaders(scope=message)
                out["X-Request-ID"] = request_id
                if path.startswith("/v1/games"):
                    out["Cache-Control"] = "no-store"
                state = scope["state"]
                fields = {
                    "method": scope["method"],
                    "path": path[:200],
                    "status": message["status"],
                    "ms": round((time.perf_counter() - start) * 1000, 2),
                }
                for key in ("role", "command", "game_id"):
                    if state.get(key):
                        fields[key] = state[key]
                log.info("request", extra=fields)
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        except Exception as exc:
            # the type and frames only (logs.JsonLines): a message may quote tiles
            log.error("unhandled error", exc_info=exc)
            if not started:  # else a stream broke midway: it just ends
                # about a command, the answer names its id, so it can be sent again safely
                command_id = scope["state"].get("command_id")
                named = {"command_id": command_id} if command_id is not None else {}
                crash = problem(
                    500,
                    "internal_error",
                    "The service failed unexpectedly; a command may be sent again with "
                    "the same command id. Quote the request id when reporting it.",
                    kind="server",
                    instance=path[:200],
                    headers=command_headers(command_id) if command_id is not None else None,
                    request_id=request_id,
                    **named,
                )
                await crash(scope, receive, send_wrapper)
        finally:
            game_id_var.reset(game_token)
            request_id_var.reset(request_token)


def _printable(text: str) -> str:
    """A header or path part fit for a log line: no control characters."""
    return "".join(c for c in text if c.isprintable())


class BodyTooLarge(HTTPException):
    """FastAPI re-raises an ``HTTPException`` met while reading a body: it becomes a 413."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            413,
            f"The request body is larger than {limit} bytes, this service's limit "
            "(serve --max-body-bytes, CHARLESTON_MAX_BODY_BYTES).",
        )


class BodyLimit:
    """Refuse a body past ``max_bytes`` while it streams in, never holding more of it.

    Nothing is read until a route asks for the body, and routes check the token first
    (:func:`charleston_fsm.api.deps.token_first`): a request without a valid token is
    answered 401/403 whatever its size.
    """

    def __init__(self, app: ASGIApp, max_bytes: int = DEFAULT_MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length", "")
        too_long = bool(_LENGTH.match(declared)) and int(declared) > self.max_bytes
        received = 0

        async def limited() -> Message:
            nonlocal received
            if too_long:
                raise BodyTooLarge(self.max_bytes)
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise BodyTooLarge(self.max_bytes)
            return message

        await self.app(scope, limited, send)

"""Request context and request bounds, around every answer the service gives.

:class:`RequestContext` puts the game id and request id on every log line a request
causes, ``X-Request-ID`` on every response and ``Cache-Control: no-store`` on game data,
and turns an unexpected exception into a problem+json 500 itself, so that answer gets the
same headers and log line as any other. :class:`BodyLimit` bounds request bodies while
they stream in.
"""

from __future__ import annotations

import asyncio
import re
import time
import uuid

from starlette.datastructures import Headers, MutableHeaders
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .logs import game_id_var, log, request_id_var
from .problems import command_headers, problem

GAME_PATH = re.compile(r"^/v1/games/([^/]+)")
DEFAULT_MAX_BODY_BYTES = 64 * 1024
#: seconds a request's whole body has to arrive, from the moment its headers did
DEFAULT_BODY_SECONDS = 10.0
#: a route that asks for the body late (it checked the token first) still gets what
#: already arrived: each read waits at least this long
_LAST_LOOK = 0.05
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
        except ClientDisconnect:
            # the client left before its body arrived: nothing to answer, nothing broke
            _client_left(scope)
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
    """A header or path part fit for a log line: no control characters (checked in C
    first: nearly every one has none, and a walk by character cost more than the
    token's digest)."""
    return text if text.isprintable() else "".join(c for c in text if c.isprintable())


class BodyTooLarge(HTTPException):
    """FastAPI re-raises an ``HTTPException`` met while reading a body: it becomes a 413."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            413,
            f"The request body is larger than {limit} bytes, this service's limit "
            "(serve --max-body-bytes, CHARLESTON_MAX_BODY_BYTES).",
        )


class BodyTooSlow(HTTPException):
    """A body not arrived in time becomes a 408, and the connection is closed (what came
    of the body so far cannot be told from the next request)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(
            408,
            f"The request body did not arrive within {seconds:g} s of its headers, this "
            "service's limit (serve --body-timeout, CHARLESTON_BODY_TIMEOUT); nothing was "
            "done. Send the whole body (as long as Content-Length says, or chunked with its "
            "last chunk) and try again.",
            headers={"Connection": "close"},
        )


def _client_left(scope: Scope) -> None:
    """One info line, once per request, for a client that left before its body came."""
    state = scope.setdefault("state", {})
    if not state.get("client_left"):
        state["client_left"] = True
        log.info(
            "client left before sending its whole request",
            extra={"method": scope.get("method"), "path": str(scope.get("path", ""))[:200]},
        )


class BodyLimit:
    """Refuse a body past ``max_bytes`` while it streams in, never holding more of it,
    and one that has not arrived ``seconds`` after the request's headers.

    Nothing is read until a route asks for the body, and routes check the token first
    (:func:`charleston_fsm.api.deps.token_first`): a request without a valid token is
    answered 401/403 whatever its size. A client that leaves before its body arrived is
    logged as such (one info line), not as an error.
    """

    def __init__(
        self,
        app: ASGIApp,
        max_bytes: int = DEFAULT_MAX_BODY_BYTES,
        seconds: float = DEFAULT_BODY_SECONDS,
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.seconds = seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        declared = headers.get("content-length", "")
        too_long = bool(_LENGTH.match(declared)) and int(declared) > self.max_bytes
        received = 0
        deadline = time.monotonic() + self.seconds
        # the last part of the body arrived: later reads wait for the end. A request that
        # declares no body (no Content-Length, or 0, and no Transfer-Encoding: a GET, an
        # event stream) has none to wait for, so no deadline: its later reads only wait
        # for the client to leave, which a stream does after minutes or hours
        whole = declared in ("", "0") and "transfer-encoding" not in headers

        async def limited() -> Message:
            nonlocal received, whole
            if too_long:
                raise BodyTooLarge(self.max_bytes)
            if whole:
                return await receive()
            try:
                # asyncio.timeout, not wait_for: no task between the read and its caller,
                # so a caller's cancellation (Starlette's is_disconnected looks with an
                # already cancelled scope) cannot drop a message that arrived meanwhile
                async with asyncio.timeout(max(deadline - time.monotonic(), _LAST_LOOK)):
                    message = await receive()
            except TimeoutError:
                raise BodyTooSlow(self.seconds) from None
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise BodyTooLarge(self.max_bytes)
                whole = not message.get("more_body", False)
            elif message["type"] == "http.disconnect":
                _client_left(scope)
            return message

        await self.app(scope, limited, send)

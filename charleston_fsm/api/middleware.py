"""Request context: the game id and request id on every log line a request causes.

Also ``X-Request-ID`` on every response and ``Cache-Control: no-store`` on game data.
"""

from __future__ import annotations

import re
import time
import uuid

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .logs import game_id_var, log, request_id_var

GAME_PATH = re.compile(r"^/v1/games/([^/]+)")


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
        request_id = headers.get(b"x-request-id", b"").decode()[:64] or uuid.uuid4().hex[:16]
        game_token = game_id_var.set(match.group(1) if match else None)
        request_token = request_id_var.set(request_id)
        scope.setdefault("state", {})
        start = time.perf_counter()

        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start":
                out = MutableHeaders(scope=message)
                out["X-Request-ID"] = request_id
                if path.startswith("/v1/games"):
                    out["Cache-Control"] = "no-store"
                state = scope["state"]
                fields = {
                    "method": scope["method"],
                    "path": path,
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
        finally:
            game_id_var.reset(game_token)
            request_id_var.reset(request_token)

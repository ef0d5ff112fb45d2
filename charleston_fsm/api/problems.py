"""Every error leaves as ``application/problem+json`` (RFC 9457) with ``code`` and ``rule``.

Engine and store refusals keep their own ``code``/``kind``/``rule``/``message``; the
status comes from the kind: ``rule`` 422, ``not_now`` 409, ``setup`` 422,
``not_found`` 404. The service's own problems (tokens, malformed requests) use the same
shape. A refusal's message only names the acting seat's tiles or the ids it sent, so it
can go back to that seat as it is.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..errors import CharlestonError
from .logs import log

PROBLEM_JSON = "application/problem+json"
TYPE_PREFIX = "urn:charleston-fsm:problem:"

STATUS_OF_KIND = {"rule": 422, "not_now": 409, "setup": 422, "not_found": 404, "conflict": 409}


class ApiProblem(Exception):
    """A refusal of the HTTP layer itself (authentication, malformed request …)."""

    def __init__(
        self,
        status: int,
        code: str,
        detail: str,
        *,
        kind: str = "request",
        rule: str = "",
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.code = code
        self.detail = detail
        self.kind = kind
        self.rule = rule
        self.headers = headers or {}


def unauthorized(code: str, detail: str) -> ApiProblem:
    error = "invalid_token" if code == "invalid_token" else "invalid_request"
    return ApiProblem(
        401,
        code,
        detail,
        kind="auth",
        rule="Every request names its seat, director or platform with a bearer token.",
        headers={"WWW-Authenticate": f'Bearer realm="charleston-fsm", error="{error}"'},
    )


def forbidden(code: str, detail: str, rule: str) -> ApiProblem:
    return ApiProblem(403, code, detail, kind="auth", rule=rule)


def bad_request(code: str, detail: str) -> ApiProblem:
    return ApiProblem(
        400, code, detail, kind="request", rule="Requests follow the OpenAPI document."
    )


def _title(code: str) -> str:
    return code.replace("_", " ").capitalize()


def problem(
    status: int,
    code: str,
    detail: str,
    *,
    kind: str,
    rule: str = "",
    instance: str | None = None,
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> JSONResponse:
    body: dict[str, Any] = {
        "type": TYPE_PREFIX + code,
        "title": _title(code),
        "status": status,
        "detail": detail,
        "code": code,
        "kind": kind,
        "rule": rule,
    }
    if instance:
        body["instance"] = instance
    body.update(extra)
    return JSONResponse(body, status_code=status, media_type=PROBLEM_JSON, headers=headers)


#: store refusals that are about the service, not the command
STATUS_OF_CODE = {"store_unavailable": 503, "schema_not_current": 503}


def status_for(error: CharlestonError) -> int:
    return STATUS_OF_CODE.get(error.code) or STATUS_OF_KIND.get(error.kind, 422)


def validation_detail(errors: list[Any]) -> str:
    """Where and what, never the input (a rejected body may hold tiles)."""
    parts = []
    for e in errors:
        loc = ".".join(str(p) for p in e.get("loc", ()) if p not in ("body",))
        parts.append(f"{loc or 'body'}: {e.get('msg', 'invalid')}")
    return "; ".join(parts) or "The request is not valid."


def install(app: Any) -> None:
    @app.exception_handler(CharlestonError)
    async def _charleston(request: Request, exc: CharlestonError) -> JSONResponse:
        status = status_for(exc)
        log.info("refused", extra={"code": exc.code, "kind": exc.kind, "status": status})
        return problem(
            status,
            exc.code,
            exc.message,
            kind=exc.kind,
            rule=exc.rule,
            instance=request.url.path,
        )

    @app.exception_handler(ApiProblem)
    async def _api(request: Request, exc: ApiProblem) -> JSONResponse:
        return problem(
            exc.status,
            exc.code,
            exc.detail,
            kind=exc.kind,
            rule=exc.rule,
            instance=request.url.path,
            headers=exc.headers,
        )

    async def _invalid(request: Request, exc: Exception) -> JSONResponse:
        """A malformed body (FastAPI) or command (pydantic, parsed inside a route)."""
        assert isinstance(exc, RequestValidationError | ValidationError)
        return problem(
            400,
            "invalid_request",
            validation_detail(list(exc.errors())),
            kind="request",
            rule="Requests follow the OpenAPI document.",
            instance=request.url.path,
        )

    app.add_exception_handler(RequestValidationError, _invalid)
    app.add_exception_handler(ValidationError, _invalid)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return problem(
            exc.status_code,
            code,
            str(exc.detail),
            kind="not_found" if exc.status_code == 404 else "request",
            instance=request.url.path,
            headers=getattr(exc, "headers", None),
        )

    @app.exception_handler(Exception)
    async def _crash(request: Request, exc: Exception) -> JSONResponse:
        log.error("unhandled error", exc_info=exc)
        return problem(
            500,
            "internal_error",
            "The service failed; the request may be retried with the same command id.",
            kind="server",
            instance=request.url.path,
        )

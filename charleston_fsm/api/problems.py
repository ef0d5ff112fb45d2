"""Every error leaves as ``application/problem+json`` (RFC 9457) with ``code`` and ``rule``.

``rule`` is the id of a rule of the rule book (:mod:`charleston_fsm.rulebook`, docs/rules.md)
and ``rule_text`` its statement; a failure of the service itself names no rule.
Engine and store refusals keep their own ``code``/``kind``/``rule``/``message``; the
status comes from the kind: ``rule`` 422, ``not_now`` 409, ``setup`` 422,
``not_found`` 404. The service's own problems (tokens, malformed requests) use the same
shape. A refusal's message only names the acting seat's tiles or the ids it sent, so it
can go back to that seat as it is.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..engine.commands import INVALID_PLAYER_ID
from ..engine.errors import CharlestonError
from ..engine.field_errors import MAX_QUOTE, clip, field_errors
from ..engine.free_text import UNSTORABLE_TEXT
from ..rulebook import statement
from . import routes_web
from .logs import log

PROBLEM_JSON = "application/problem+json"
TYPE_PREFIX = "urn:charleston-fsm:problem:"

STATUS_OF_KIND = {
    "rule": 422,
    "not_now": 409,
    "setup": 422,
    "not_found": 404,
    "conflict": 409,
    "quarantined": 423,  # the game's record failed verify: locked until a director acts
}
MAX_DETAIL = 1000  # characters of a problem's detail: an error never echoes a body back

#: the response header naming the command an answer is about (see ``command_headers``)
COMMAND_ID_HEADER = "Command-ID"
#: every character a header may carry as is; anything else (and ``%``) is percent-encoded
_HEADER_SAFE = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) != "%")


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
        rule="SVC-05",
        headers={"WWW-Authenticate": f'Bearer realm="charleston-fsm", error="{error}"'},
    )


def forbidden(code: str, detail: str, rule: str) -> ApiProblem:
    return ApiProblem(403, code, detail, kind="auth", rule=rule)


def bad_request(code: str, detail: str) -> ApiProblem:
    return ApiProblem(400, code, detail, kind="request", rule="SVC-02")


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
        "detail": clip(detail, MAX_DETAIL),
        "code": code,
        "kind": kind,
        "rule": rule,
        "rule_text": statement(rule),
    }
    if instance:
        body["instance"] = clip(instance, MAX_QUOTE * 2)
    body.update(extra)
    return JSONResponse(body, status_code=status, media_type=PROBLEM_JSON, headers=headers)


def command_headers(command_id: str) -> dict[str, str]:
    """``Command-ID``: the id percent-encoded, so any id fits a header (unquote to read)."""
    return {COMMAND_ID_HEADER: quote(command_id, safe=_HEADER_SAFE)}


def _problem_for(
    request: Request,
    status: int,
    code: str,
    detail: str,
    *,
    kind: str,
    rule: str = "",
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    """A problem answering ``request``; about a command, it names the command id
    (body ``command_id``, header ``Command-ID``) so the client can retry it safely."""
    headers = dict(headers or {})
    extra: dict[str, Any] = {}
    command_id = getattr(request.state, "command_id", None)
    if command_id is not None:
        extra["command_id"] = command_id
        headers.update(command_headers(command_id))
    if code in RETRY_AFTER:
        headers["Retry-After"] = RETRY_AFTER[code]
    return problem(
        status,
        code,
        detail,
        kind=kind,
        rule=rule,
        instance=request.url.path,
        headers=headers or None,
        **extra,
    )


#: Starlette's own refusals (no route, a body past the limit, a body that is not JSON)
HTTP_CODES = {
    400: "invalid_request",
    404: "not_found",
    405: "method_not_allowed",
    408: "body_timeout",
    413: "body_too_large",
}

#: store refusals that are about the service, not the command
STATUS_OF_CODE = {"store_unavailable": 503, "outcome_unknown": 503, "schema_not_current": 503}
#: seconds a client should wait before sending the same command (same id) again
RETRY_AFTER = {"store_unavailable": "1", "outcome_unknown": "1"}


def status_for(error: CharlestonError) -> int:
    return STATUS_OF_CODE.get(error.code) or STATUS_OF_KIND.get(error.kind, 422)


#: pydantic's errors about a text's content: NUL, a lone surrogate (pydantic's own
#: ``string_unicode`` where it meets one first), too long
TEXT_ERRORS = frozenset({UNSTORABLE_TEXT, "string_unicode", "string_too_long"})


def validation_detail(errors: list[Any]) -> str:
    """Where and what, never the input (a rejected body may hold tiles), each clipped
    (:func:`~charleston_fsm.engine.field_errors.field_errors`)."""
    return field_errors(errors, unnamed="body", where=_where) or "The request is not valid."


def _where(loc: tuple[Any, ...]) -> str:
    """A field's place in a body; a round's tables are numbered from 1 ("Table 37:
    seed"), as every other answer about a round's table numbers them, never by index."""
    loc = tuple(p for p in loc if p != "body")
    if len(loc) >= 2 and loc[0] == "tables" and isinstance(loc[1], int):
        rest = ".".join(str(p) for p in loc[2:])
        return f"Table {loc[1] + 1}" + (f": {rest}" if rest else "")
    return ".".join(str(p) for p in loc)


def _allowed_methods(request: Request) -> str | None:
    """Every method the documented operations of this path take (Starlette names only
    the first route's: ``/bot`` has one route for POST and one for DELETE)."""
    path = request.url.path
    methods: set[str] = set()
    for template, operations in request.app.openapi()["paths"].items():
        pattern = re.sub(r"\\\{[^/]*?\\\}", "[^/]+", re.escape(template))
        if re.fullmatch(pattern, path):
            methods |= {m.upper() for m in operations}
    return ", ".join(sorted(methods)) or None


def install(app: Any) -> None:
    @app.exception_handler(CharlestonError)
    async def _charleston(request: Request, exc: CharlestonError) -> JSONResponse:
        status = status_for(exc)
        log.info("refused", extra={"code": exc.code, "kind": exc.kind, "status": status})
        return _problem_for(request, status, exc.code, exc.message, kind=exc.kind, rule=exc.rule)

    @app.exception_handler(ApiProblem)
    async def _api(request: Request, exc: ApiProblem) -> JSONResponse:
        return _problem_for(
            request,
            exc.status,
            exc.code,
            exc.detail,
            kind=exc.kind,
            rule=exc.rule,
            headers=exc.headers,
        )

    async def _invalid(request: Request, exc: Exception) -> JSONResponse:
        """A malformed body (FastAPI) or command (pydantic, parsed inside a route); a
        well-formed body whose only fault is a text the record cannot keep is a 422."""
        assert isinstance(exc, RequestValidationError | ValidationError)
        errors = list(exc.errors())
        # text of a body only: a query or header that is too long is a malformed request
        in_body = isinstance(exc, ValidationError) or all(
            (e.get("loc") or ("body",))[0] == "body" for e in errors
        )
        kinds = {e.get("type") for e in errors}
        if errors and in_body and kinds <= TEXT_ERRORS | {INVALID_PLAYER_ID}:
            return _problem_for(
                request,
                422,
                "invalid_player_id" if kinds == {INVALID_PLAYER_ID} else "invalid_text",
                validation_detail(errors),
                kind="request",
                rule="SVC-02",
            )
        return _problem_for(
            request,
            400,
            "invalid_request",
            validation_detail(errors),
            kind="request",
            rule="SVC-02",
        )

    app.add_exception_handler(RequestValidationError, _invalid)
    app.add_exception_handler(ValidationError, _invalid)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 404 and routes_web.wants_page(request):
            return routes_web.not_found_page()  # a person's browser: a page, not JSON
        code = HTTP_CODES.get(exc.status_code, "http_error")
        headers = getattr(exc, "headers", None)
        if exc.status_code == 405 and (allowed := _allowed_methods(request)):
            headers = {**(headers or {}), "Allow": allowed}
        return problem(
            exc.status_code,
            code,
            str(exc.detail),
            kind="not_found" if exc.status_code == 404 else "request",
            rule="SVC-02",
            instance=request.url.path,
            headers=headers,
        )

    # An unexpected exception is answered by middleware.RequestContext, inside which
    # the 500 gets the request id, headers and log line of any answer.

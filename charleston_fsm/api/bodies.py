"""What a request body must be before any route reads it: not encoded, and shallow.

The command route (its own reading of a JSON object, :mod:`.command_route`, and
FastAPI's) and every other route with a body call :func:`check_body` once the token is checked. A
body nested deeper than :data:`MAX_DEPTH` is refused with one sentence before any parser
or validator walks it: Python's own ``json`` and every recursive walk of a parsed value
run out of stack somewhere near 1,000 levels, and a 4 KB body reaches that. No request of
this service nests deeper than 6 levels (a round's tables' hands). A body sent with a
``Content-Encoding`` (gzip …) is refused rather than read as if it were plain JSON.
"""

from __future__ import annotations

import re

from starlette.requests import Request

from .problems import ApiProblem, bad_request

#: levels of JSON arrays and objects a body may nest (the deepest request needs 6)
MAX_DEPTH = 32
#: the bytes that open or close a string or a level; the rest is skipped in C
_SPECIAL = re.compile(rb'[\\"\[\]{}]')
_QUOTE, _BACKSLASH = ord('"'), ord("\\")
_OPEN = frozenset(b"[{")


def nests_too_deep(raw: bytes) -> bool:
    """Whether ``raw``'s arrays and objects nest deeper than :data:`MAX_DEPTH`, read
    from the bytes (no parser, no recursion); brackets inside strings do not count."""
    if raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH:  # most bodies: no scan at all
        return False
    # one pass over the special bytes only, linear whatever the body holds (a regular
    # expression for strings went quadratic on a body of unclosed escaped quotes)
    depth, in_string, escaped = 0, False, -1
    for match in _SPECIAL.finditer(raw):
        at = match.start()
        byte = raw[at]
        if in_string:
            if at == escaped:  # the byte after a backslash: text
                continue
            if byte == _BACKSLASH:
                escaped = at + 1
            elif byte == _QUOTE:
                in_string = False
        elif byte == _QUOTE:
            in_string = True
        elif byte in _OPEN:
            depth += 1
            if depth > MAX_DEPTH:
                return True
        else:  # a closing bracket (a backslash outside a string is not JSON: no level)
            depth -= byte != _BACKSLASH
    return False


def check_encoding(request: Request) -> None:
    """Refuse a body sent with a content encoding: the service reads bodies as they are."""
    encoding = request.headers.get("content-encoding", "").strip().lower()
    if encoding and encoding != "identity":
        raise ApiProblem(
            415,
            "unsupported_content_encoding",
            f"The body is sent with Content-Encoding {encoding[:40]!r}; this service reads "
            "bodies only as they are: send plain JSON without a Content-Encoding header.",
            kind="request",
            rule="SVC-02",
        )


async def check_body(request: Request) -> bytes:
    """The request's body, read once (routes read it again from the request's cache),
    refused when it is encoded or nests deeper than :data:`MAX_DEPTH` (whatever its
    content type says: every body this service takes is JSON)."""
    check_encoding(request)
    raw = await request.body()
    if nests_too_deep(raw):
        raise bad_request(
            "invalid_request",
            f"The body nests JSON arrays and objects more than {MAX_DEPTH} levels deep; "
            "no request of this service nests more than 6: send the documented shape.",
        )
    return raw

"""How a pydantic refusal reads, everywhere: where and what, never the input.

A rejected command or body may hold tiles, and a field's name or message may be as long
or as odd as its sender made it; every refusal built from pydantic's errors (a command,
a director's command, a ruleset's options, a clock, a request body) reads them here:
at most :data:`MAX_ERRORS` of them, each place and message clipped, a place that is
not Unicode text (a lone surrogate in a key) escaped so the answer can be encoded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .free_text import LONE_SURROGATE

MAX_ERRORS = 5  # errors a refusal names; then "and N more"
MAX_QUOTE = 120  # characters of one rejected field's name or message


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying so: what errors quote stays small."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def dotted(loc: tuple[Any, ...]) -> str:
    """A field's place as pydantic gives it, dotted (``record_ruling.text``)."""
    return ".".join(str(p) for p in loc)


def _quotable(text: str) -> str:
    """``text`` with every character that is not printable Unicode (NUL, a line break,
    a lone surrogate) written as its ``\\uXXXX`` escape: a place or a message quotes
    what was sent (a key, a tag), and the answer must stay one encodable line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in text)


def field_errors(
    errors: Sequence[Mapping[str, Any]],
    *,
    prefix: str = "",
    unnamed: str = "command",
    where: Callable[[tuple[Any, ...]], str] = dotted,
) -> str:
    """``place: what; place: what`` for pydantic's ``errors()`` (``prefix`` before each
    place; ``unnamed`` for an error of the whole value)."""
    parts = []
    for error in errors[:MAX_ERRORS]:
        place = prefix + (where(tuple(error.get("loc", ()))) or unnamed)
        # pydantic's own words for a lone surrogate, where it meets one before our check
        unicode = error.get("type") == "string_unicode"
        what = LONE_SURROGATE if unicode else str(error.get("msg", "invalid"))
        parts.append(f"{_quotable(clip(place, MAX_QUOTE))}: {_quotable(clip(what, MAX_QUOTE))}")
    if len(errors) > MAX_ERRORS:
        parts.append(f"and {len(errors) - MAX_ERRORS} more")
    return "; ".join(parts)

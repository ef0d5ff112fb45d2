"""The one check of every free text the record keeps: rulings, verdicts, reasons, names.

PostgreSQL cannot store NUL in text or JSON, SQLite can; neither can store a lone
surrogate (JSON's ``"\\ud800"`` escape names one, but no UTF-8 text holds it). Without one
check before the store, the same request was stored on one database and answered 500 on
the other, or 500 on both. Every text field of every request body takes
:data:`KEPT` (or :data:`ONE_LINE` for a name), so each refuses alike,
with the field named, before anything is stored.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator
from pydantic_core import PydanticCustomError

#: the pydantic error type of a text the record cannot keep (the API answers 422)
UNSTORABLE_TEXT = "unstorable_text"
LONE_SURROGATE = (
    "must be Unicode text: it holds a lone surrogate (\\ud800-\\udfff without its pair), "
    "which no database stores"
)


def text_refusal(text: str, *, one_line: bool = False) -> str | None:
    """Why ``text`` cannot be kept (a sentence's end, e.g. "must not contain the NUL
    character"), or None when it can. ``one_line``: a name, without control characters
    (a line break, a tab)."""
    if "\x00" in text:
        return "must not contain the NUL character"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return LONE_SURROGATE
    if one_line and not text.isprintable():
        return "must be printable text on one line, without control characters"
    return None


def kept_text(text: str) -> str:
    """A pydantic validator: ``text`` unchanged, or a ``unstorable_text`` error."""
    refusal = text_refusal(text)
    if refusal is not None:
        raise PydanticCustomError(UNSTORABLE_TEXT, refusal)
    return text


def printable_text(text: str) -> str:
    """:func:`kept_text` for a name: one printable line as well."""
    refusal = text_refusal(text, one_line=True)
    if refusal is not None:
        raise PydanticCustomError(UNSTORABLE_TEXT, refusal)
    return text


#: the check of a free text the store keeps (line breaks and any other text are its own);
#: after a field's length bounds in ``Annotated[str, Field(max_length=…), KEPT]``, so an
#: over-long text is refused by its length first, as pydantic's ``string_too_long``
KEPT = AfterValidator(kept_text)
#: the check of a name the store keeps: one printable line
ONE_LINE = AfterValidator(printable_text)
KeptText = Annotated[str, KEPT]

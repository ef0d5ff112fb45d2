"""A request's ``start``: when a new table (or every table of a round) starts.

One reading for ``POST /v1/games`` and ``POST /v1/rounds`` (rule ``SVC-12``): ``"now"``,
``"held"`` (the director starts it), a start time written as ISO 8601 with its zone
(``2030-05-01T18:00:00+02:00``, ``…Z``), and for a single game ``"all_present"`` (it
starts when every seat a person plays has opened its page). Nothing else is taken for a
time: a number or a numeric string (Unix seconds?), a date or time without its zone, a
week date: each is a 422 ``invalid_start`` that says what is accepted, so a platform
never has a table start at a moment it did not mean. A time the calendar cannot hold in
UTC, one past, or one more than :data:`MAX_AHEAD` ahead is a 422 too, never a 500.

The field is read here rather than by pydantic's lax datetime, which would take
``4102444800`` and ``"4102444800"`` as times and answers 400 for the rest.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

from pydantic import Field, WithJsonSchema

from .problems import ApiProblem

#: how far in the past a start time may be (the clocks of a platform and the service)
START_SLACK = timedelta(seconds=5)
#: how far ahead a start time may be: a tournament's schedule, not a typo's year 9999
MAX_AHEAD = timedelta(days=366)

#: the extended ISO 8601 form of a date and time with its zone (seconds and their
#: fraction optional; ``T`` or a space between date and time, as RFC 3339 allows)
_ISO_WITH_ZONE = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,6})?)?"
    r"([Zz]|[+-][0-9]{2}:[0-9]{2})"
)
_WORDS = ("now", "held", "all_present")

StartChoice = Literal["now", "held", "all_present"] | datetime

#: the request field, read by :func:`parse_start` (its JSON Schema says what is accepted)
StartField = Annotated[
    Any,
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string", "enum": list(_WORDS)},
                {"type": "string", "format": "date-time"},
            ]
        }
    ),
]


def start_field(description: str) -> Any:
    """The ``start`` field of a create request (default ``"now"``)."""
    return Field("now", description=description)


def _refused(code: str, detail: str) -> ApiProblem:
    return ApiProblem(422, code, detail, kind="setup", rule="SVC-12")


def _accepted(single: bool) -> str:
    seated = ", 'all_present' (when every player has opened their link)" if single else ""
    return (
        f"'now', 'held' (the director starts it){seated}, or a time in ISO 8601 with its "
        "zone, such as 2030-05-01T18:00:00Z or 2030-05-01T20:00:00+02:00"
    )


def parse_start(value: Any, *, single: bool = True, now: datetime | None = None) -> StartChoice:
    """The start a request asks for, or a 422 saying what is accepted.

    ``single``: a single game's (``all_present`` is a table's own choice; a round's
    tables start together). ``now``: the service's clock (a test may give it).
    """
    if value in _WORDS and (single or value != "all_present"):
        return value  # type: ignore[no-any-return]
    if value == "all_present":
        raise _refused(
            "invalid_start",
            "A round's tables start together: 'all_present' is for a single game. Give "
            f"{_accepted(False)}.",
        )
    if not isinstance(value, str):
        kind = "a number (Unix seconds are not taken)" if _is_number(value) else "not text"
        raise _refused("invalid_start", f"start is {kind}: give {_accepted(single)}.")
    if not _ISO_WITH_ZONE.fullmatch(value):
        raise _refused(
            "invalid_start",
            f"start {_quoted(value)} is not a time with its zone: give {_accepted(single)}.",
        )
    try:
        at = datetime.fromisoformat(value.upper().replace("Z", "+00:00")).astimezone(UTC)
    except (ValueError, OverflowError):
        raise _refused(
            "invalid_start",
            f"start {_quoted(value)} is no time the calendar holds (in UTC): give a date and "
            "time to come, within a year.",
        ) from None
    moment = now or datetime.now(UTC)
    if at < moment - START_SLACK:
        raise _refused(
            "start_in_the_past",
            f"The start time {at.isoformat()} has passed: give a time to come, 'held' "
            "(the director starts it) or 'now'.",
        )
    if at > moment + MAX_AHEAD:
        raise _refused(
            "start_too_far",
            f"The start time {at.isoformat()} is more than {MAX_AHEAD.days} days ahead: "
            "create the table nearer its day, or hold it ('held') and start it then.",
        )
    return at


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _quoted(value: str) -> str:
    """The sent text, clipped (an error quotes little of what was sent)."""
    shown = value if len(value) <= 40 else value[:40] + "…"
    return repr(shown)


def start_args(choice: StartChoice, bots: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The store's start gate for a parsed ``start``: held, a start time, or the seats a
    person plays to wait for (none left when bots play every seat: it starts now)."""
    if choice == "now":
        return {}
    if choice == "held":
        return {"held": True}
    if choice == "all_present":
        awaited = [s for s in ("east", "south", "west", "north") if s not in bots]
        return {"held": True, "awaiting": awaited} if awaited else {}
    assert isinstance(choice, datetime)
    return {"start_at": choice}


def start_setting(choice: StartChoice) -> str | None:
    """A round's start as its settings keep it (``None``: now)."""
    if choice == "now":
        return None
    return choice if isinstance(choice, str) else choice.isoformat()

"""What one webhook delivery is, between the outbox and the sender: the row claimed to
send (:class:`Claimed`, with the secrets that sign it now), how the send went
(:class:`Attempt`) and what the outbox made of a batch of them (:class:`Completion`).

They are plain values so that the sender (``api/webhook_sender.py``) holds no database
row while it waits on a receiver, and the outbox (``store/platform/outbox.py``) decides every
retry, hold and giving up from them alone."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ...ledger.hashing import utc


@dataclass(frozen=True)
class Claimed:
    """An outbox row to send now: where, how signed, and the entry."""

    outbox_id: int
    endpoint_id: str
    url: str
    secret: str | None
    attempts: int
    entry: dict[str, Any]
    #: the secret a rotation replaced, while it still signs (a second signature)
    previous_secret: str | None = None
    previous_secret_until: datetime | None = None

    def secrets(self, now: datetime) -> list[str]:
        """The v1 secrets signing now: the endpoint's, and the replaced one in its grace."""
        valid = [self.secret] if self.secret is not None else []
        until = self.previous_secret_until
        if self.previous_secret is not None and until is not None and utc(until) > now:
            valid.append(self.previous_secret)
        return valid


@dataclass(frozen=True)
class Attempt:
    """How one send went: the HTTP status (``None``: no answer) or what failed."""

    status_code: int | None
    error: str | None
    milliseconds: int
    #: the receiver's ``Retry-After`` in seconds (already bounded by the sender)
    retry_after: float | None = None

    @property
    def delivered(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300

    @property
    def holds(self) -> bool:
        """Whether the endpoint waits for this attempt's retry time: no answer, or it
        asked to (429, ``Retry-After``)."""
        return self.status_code is None or self.status_code == 429 or self.retry_after is not None


@dataclass(frozen=True)
class Completion:
    """What :meth:`Outbox.complete` left: each attempt's outcome, and until when the
    endpoints it held are held (``None``: none was)."""

    outcomes: list[str]
    held_until: datetime | None

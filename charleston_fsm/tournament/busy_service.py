"""Waiting out a busy service: when a ``503`` may be sent again, and how long to wait.

A ``503`` answer says the service could not do the request now (its database refused a
connection, a worker restarting) and, with ``Retry-After``, when to come back. The
clients of this package (``simulate``, ``bench``) honour that header, bounded by
:data:`MAX_WAIT` and :data:`MAX_RETRIES`, and count what they sent again.

What may be sent again without a command id: only a ``503 store_unavailable``, whose
sentence says nothing was stored. A ``503 outcome_unknown`` may have stored; only a
request carrying its command id (a seat's command) may be sent again after it.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

#: the longest one wait may be, whatever ``Retry-After`` says
MAX_WAIT = 5.0
#: how many times one request is sent again after a 503 before its answer is taken
MAX_RETRIES = 10
#: the wait when an answer names none (a lost connection, a 5xx without the header):
#: doubled at each attempt from the first, up to the last
FIRST_WAIT = 0.05
LONGEST_UNNAMED_WAIT = 1.0
#: the 503 whose sentence says nothing was stored
NOTHING_STORED = "store_unavailable"


def nothing_stored(status: int, problem: Any) -> bool:
    """Whether an answer is a 503 that stored nothing (safe to send again as is)."""
    return status == 503 and isinstance(problem, Mapping) and problem.get("code") == NOTHING_STORED


def wait_before_retry(headers: Mapping[str, str], attempt: int) -> float:
    """Seconds to wait before sending again: ``Retry-After`` (seconds or an HTTP date)
    when the answer gives it, else ``FIRST_WAIT`` doubled per attempt (up to
    ``LONGEST_UNNAMED_WAIT``); at most :data:`MAX_WAIT`, never negative."""
    given = (headers.get("Retry-After") or headers.get("retry-after") or "").strip()
    wait = min(LONGEST_UNNAMED_WAIT, FIRST_WAIT * 2 ** min(attempt, 16))
    if given:
        try:
            wait = float(given)
        except ValueError:
            with contextlib.suppress(TypeError, ValueError):  # neither: the default wait
                wait = (parsedate_to_datetime(given) - datetime.now(UTC)).total_seconds()
    return min(MAX_WAIT, max(0.0, wait))


def pause(headers: Mapping[str, str], attempt: int) -> None:
    """Sleep as :func:`wait_before_retry` says (for the threaded clients)."""
    time.sleep(wait_before_retry(headers, attempt))

"""Moments as the clock document writes them: UTC, ISO 8601 with microseconds and ``Z``.

Apart from :mod:`charleston_fsm.engine.clocks` so that the modules the clock reads
(the start gate, the seating, the calls) write times the same way without importing it.
"""

from __future__ import annotations

from datetime import datetime


def iso(moment: datetime) -> str:
    """A UTC moment as the clock document writes it (``…Z``, microseconds)."""
    return moment.isoformat(timespec="microseconds").replace("+00:00", "Z")


def parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))

"""The hash chain's written forms (``ledger/hashing.py``, whose docstring is the spec)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta, timezone

from charleston_fsm.ledger.hashing import canonical_time, row_hash

SPEC_TIME = "%Y-%m-%dT%H:%M:%S.%fZ"


def test_a_moment_is_written_as_the_spec_says() -> None:
    """UTC with microseconds and a Z, whatever zone the moment came in (SQLite's naive
    moments are UTC), the same text the spec's ``strftime`` writes, small years too."""
    assert canonical_time(datetime(2026, 11, 21, 7, 30, 27, 123456, UTC)) == (
        "2026-11-21T07:30:27.123456Z"
    )
    assert canonical_time(datetime(2026, 11, 21, 7, 30, 27)) == "2026-11-21T07:30:27.000000Z"
    east = timezone(timedelta(hours=5))
    assert canonical_time(datetime(1000, 1, 1, 2, tzinfo=east)) == "999-12-31T21:00:00.000000Z"
    draw = random.Random(34)
    zones = [UTC, east, timezone(timedelta(hours=-9, minutes=-30)), None]
    for _ in range(20_000):
        moment = datetime(
            draw.randint(1000, 9998),
            draw.randint(1, 12),
            draw.randint(1, 28),
            draw.randint(0, 23),
            draw.randint(0, 59),
            draw.randint(0, 59),
            draw.choice([0, draw.randint(0, 999_999)]),
            tzinfo=draw.choice(zones),
        )
        in_utc = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
        assert canonical_time(moment) == in_utc.strftime(SPEC_TIME), moment


def test_a_row_hash_is_pinned() -> None:
    """A row's hash for fixed fields: a change of the written form breaks every record."""
    fields = {
        "prev_hash": "0" * 64,
        "game_id": "g",
        "seq": 1,
        "type": "pass_confirmed",
        "seat": "east",
        "step": "CHARLESTON_P1_R",
        "payload": {"tiles": [3, 17, 41], "blind": 0, "name": "Zoë"},
        "command_id": "east:c1",
        "created_at": datetime(2026, 11, 21, 7, 30, 27, 123456, UTC),
    }
    assert row_hash(**fields) == EXPECTED


EXPECTED = "a6da2fd3e8b01c9f89b3bde926247b70e28a3111121eade387d2b7cfbd35cc47"

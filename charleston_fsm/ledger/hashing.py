"""The hash chain: every event row seals the one before it.

``hash = sha256(canonical JSON of [prev_hash, game_id, seq, type, seat, step, payload,
command_id, created_at])`` where canonical JSON sorts keys, uses no whitespace and
keeps non-ASCII as is, and ``created_at`` is written as UTC with microseconds
(``2026-11-21T07:30:27.123456Z``). The first row's ``prev_hash`` is 64 zeros.

An exported record (:mod:`.record`) signs the head of this chain with Ed25519; its header
only restates signed data (row 1's ruleset, options and deal, the anchor's game and
signing time) and ``record verify`` requires each field to equal it.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any

GENESIS = "0" * 64


def canonical_json(value: Any) -> str:
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def utc(moment: datetime) -> datetime:
    """The moment in UTC (SQLite hands back naive datetimes, which the store wrote in UTC)."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    if moment.tzinfo is UTC:
        return moment
    return moment.astimezone(UTC)


def canonical_time(moment: datetime) -> str:
    """``2026-11-21T07:30:27.123456Z``: ``strftime("%Y-%m-%dT%H:%M:%S.%fZ")`` of the UTC
    moment, written by ``isoformat`` (a tenth of the time) where the two agree: a year
    of four digits (``%Y`` does not pad a smaller one)."""
    moment = utc(moment)
    if moment.year < 1000:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return moment.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def row_hash(
    *,
    prev_hash: str,
    game_id: str,
    seq: int,
    type: str,
    seat: str | None,
    step: str | None,
    payload: Any,
    command_id: str | None,
    created_at: datetime,
) -> str:
    material = canonical_json(
        [
            prev_hash,
            game_id,
            seq,
            type,
            seat,
            step,
            payload,
            command_id,
            canonical_time(created_at),
        ]
    )
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


def hash_token(token: str) -> str:
    """The sha256 hex of a bearer token: what ``game_credentials`` stores."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()

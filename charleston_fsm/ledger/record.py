"""A game's record that anyone can verify: JSON Lines, Ed25519-signed, checked offline.

The HMAC anchors (:mod:`.anchors`) prove the record to whoever holds the service's
secret; a player disputing a result holds none. So an exported record carries its head
signed with an Ed25519 key derived from that secret: the public key (``GET
/v1/anchor-key``, ``charleston-fsm anchors public-key``) checks it, and proves nothing
to anyone who could forge it. The format (``docs/record.md``, schema
``docs/record.schema.json``), one JSON object a line:

1. ``{"kind": "header", "format": "charleston-fsm record v1", "game_id", "ruleset",
   "options", "deal", "exported_at"}``: what the game was dealt (as row 1 says);
2. ``{"kind": "row", ...}`` per event row, seq 1 first: every field its hash covers, and
   ``hash`` (``docs/store.md``, the hash chain);
3. ``{"kind": "anchor", "game_id", "seq", "head_hash", "finished", "replay_digest",
   "signed_at", "algorithm": "Ed25519", "public_key", "signature", "hmac_anchors"}``:
   the head, signed only after the store verified the whole record.

What the record shows is what is signed. The signature covers the anchor's message
(:func:`anchor_message`: game, head seq and hash, finished, replay digest, signed_at); the
head's hash covers every row through the chain; the header adds nothing of its own: each
of its fields restates signed data and verify requires it to equal that data
(``ruleset``, ``options``, ``deal``: row 1's payload; ``game_id``: the anchor's;
``exported_at``: the anchor's ``signed_at``, both written from one clock reading). A field
the format lacks is a finding. Only the anchor's ``hmac_anchors`` are outside the
signature (the service's secret checks them); verify lists them as unsigned. So v1
records exported before verify checked the header verify unchanged.

:func:`.record_verify.verify_record_file` needs no database: the chain, the anchor's
signature (against a public key given, else the file's own), the header, and a replay of
the rows through the chart, streamed under the limits of :mod:`.record_reading`.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
)
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from .anchors import AnchorKey, replay_digest
from .errors import RecordNotExportable
from .hashing import canonical_json, canonical_time
from .rows import StoredEvent
from .verify import fold_rows

FORMAT = "charleston-fsm record v1"
_DOMAIN = "charleston-fsm record anchor v1"
_SEED_DOMAIN = b"charleston-fsm ed25519 v1\0"


# -- the public key ---------------------------------------------------------------------------
def signing_key(key: AnchorKey) -> Ed25519PrivateKey:
    """The Ed25519 key of this anchor secret: the same secret always gives the same key."""
    return Ed25519PrivateKey.from_private_bytes(hashlib.sha256(_SEED_DOMAIN + key.secret).digest())


def public_key_text(key: AnchorKey) -> str:
    """The public key as base64 of its 32 raw bytes (what verifiers pin)."""
    raw = signing_key(key).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return base64.b64encode(raw).decode("ascii")


def anchor_key_document(key: AnchorKey) -> dict[str, str]:
    return {
        "algorithm": "Ed25519",
        "public_key": public_key_text(key),
        "key_id": key.key_id,
        "format": FORMAT,
    }


def anchor_message(anchor: dict[str, Any]) -> bytes:
    """What the Ed25519 signature covers (docs/record.md); raises KeyError on a missing field."""
    fields = [
        _DOMAIN,
        anchor["game_id"],
        anchor["seq"],
        anchor["head_hash"],
        anchor["finished"],
        anchor["replay_digest"],
        anchor["signed_at"],
    ]
    return canonical_json(fields).encode("utf-8")


# -- export -------------------------------------------------------------------------------------
def record_lines(
    rows: Sequence[StoredEvent], key: AnchorKey, hmac_anchors: Iterable[dict[str, Any]] = ()
) -> list[dict[str, Any]]:
    """The record of a verified game's ``rows``: header, rows, signed anchor."""
    setup = rows[0].payload
    table = fold_rows(rows)
    now = canonical_time(datetime.now(UTC))
    header = {
        "kind": "header",
        "format": FORMAT,
        "game_id": rows[0].game_id,
        "ruleset": setup["ruleset"],
        "options": setup["options"],
        "deal": setup["deal"],
        "exported_at": now,
    }
    body = [{"kind": "row", **r.to_dict()} for r in rows]
    anchor: dict[str, Any] = {
        "kind": "anchor",
        "game_id": rows[0].game_id,
        "seq": rows[-1].seq,
        "head_hash": rows[-1].hash,
        "finished": table.finished,
        "replay_digest": replay_digest(table.snapshot()),
        "signed_at": now,
        "algorithm": "Ed25519",
        "public_key": public_key_text(key),
    }
    signature = signing_key(key).sign(anchor_message(anchor))
    anchor["signature"] = base64.b64encode(signature).decode("ascii")
    anchor["hmac_anchors"] = list(hmac_anchors)
    return [header, *body, anchor]


def export_record(store: Any, game_id: str) -> str:
    """The game's record as JSON Lines, once the store's own verify passes."""
    verdict = store.tamper.verify(game_id)
    if not verdict.ok:
        raise RecordNotExportable(
            f"Game {game_id} does not verify ({verdict.message}); a record is signed only "
            "for a game whose stored record is whole."
        )
    rows = store.reads.events(game_id)
    anchors = [a.to_dict() for a in store.tamper.anchors(game_id)]
    lines = record_lines(rows, store.anchor_key, anchors)
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)

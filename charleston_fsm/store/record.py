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

:func:`verify_record` needs no database: the chain, the anchor's signature (against a
public key given, else the file's own), and a replay of the rows through the chart.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from .anchors import AnchorKey, replay_digest
from .errors import RecordNotExportable
from .hashing import canonical_json, canonical_time
from .rows import StoredEvent
from .verify import Finding, _chain, fold_rows

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


def _message(anchor: dict[str, Any]) -> bytes:
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
    signature = signing_key(key).sign(_message(anchor))
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


# -- verify, offline ----------------------------------------------------------------------------
@dataclass
class RecordVerdict:
    """What :func:`verify_record` found; ``ok`` only with no finding."""

    game_id: str | None = None
    rows: int = 0
    finished: bool = False
    key_pinned: bool = False
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "game_id": self.game_id,
            "rows": self.rows,
            "finished": self.finished,
            "key_pinned": self.key_pinned,
            "findings": [f.to_dict() for f in self.findings],
        }


def verify_record(text: str, public_key: str | None = None) -> RecordVerdict:
    """Every check of a record file's text; never raises on a malformed file."""
    verdict = RecordVerdict(key_pinned=public_key is not None)
    try:
        lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        verdict.findings.append(Finding("not_json", None, f"Line {exc.lineno}: not JSON."))
        return verdict
    header = lines[0] if lines and isinstance(lines[0], dict) else {}
    if header.get("kind") != "header" or header.get("format") != FORMAT:
        verdict.findings.append(
            Finding("not_a_record", None, f"The first line is not a {FORMAT!r} header.")
        )
        return verdict
    verdict.game_id = header.get("game_id")
    try:
        rows = [_row(line) for line in lines[1:] if line.get("kind") == "row"]
    except (KeyError, TypeError, ValueError) as exc:
        verdict.findings.append(Finding("bad_row", None, f"A row is malformed ({exc})."))
        return verdict
    verdict.rows = len(rows)
    anchors = [line for line in lines if line.get("kind") == "anchor"]
    verdict.findings += list(_chain(rows))
    if rows and (rows[0].type != "game_created" or rows[0].payload.get("deal") != header["deal"]):
        verdict.findings.append(
            Finding("deal_differs", 1, "The header's deal is not the deal of row 1.")
        )
    if any(r.game_id != verdict.game_id for r in rows):
        verdict.findings.append(Finding("other_game", None, "A row names another game."))
    digest = None
    try:
        table = fold_rows(rows)
        digest, verdict.finished = replay_digest(table.snapshot()), table.finished
    except Exception as exc:  # a malformed row: a finding, never a crash
        verdict.findings.append(
            Finding("replay_failed", None, f"The rows do not replay through the chart ({exc}).")
        )
    if len(anchors) != 1:
        verdict.findings.append(Finding("anchor_missing", None, "The record has no anchor line."))
        return verdict
    verdict.findings += _anchor(anchors[0], rows, digest, public_key)
    return verdict


def _row(line: dict[str, Any]) -> StoredEvent:
    fields = {k: line[k] for k in StoredEvent.__dataclass_fields__}
    fields["created_at"] = datetime.fromisoformat(line["created_at"].replace("Z", "+00:00"))
    return StoredEvent(**fields)


def _anchor(
    anchor: dict[str, Any], rows: Sequence[StoredEvent], digest: str | None, pinned: str | None
) -> list[Finding]:
    found: list[Finding] = []
    last = rows[-1] if rows else None
    if last is None or anchor.get("seq") != last.seq or anchor.get("head_hash") != last.hash:
        found.append(
            Finding(
                "head_mismatch",
                anchor.get("seq"),
                "The signed head is not the record's last row: rows were added, removed "
                "or rewritten after it was signed.",
            )
        )
    if digest is not None and anchor.get("replay_digest") != digest:
        found.append(
            Finding("replay_differs", None, "The rows replay to another table than was signed.")
        )
    key_text = pinned or anchor.get("public_key", "")
    if pinned is not None and anchor.get("public_key") != pinned:
        found.append(
            Finding("other_key", None, "The record was signed with another key than given.")
        )
    try:
        public = Ed25519PublicKey.from_public_bytes(base64.b64decode(key_text))
        public.verify(base64.b64decode(anchor.get("signature", "")), _message(anchor))
    except (InvalidSignature, ValueError, KeyError, TypeError):
        found.append(
            Finding("bad_signature", None, "The anchor's Ed25519 signature does not check.")
        )
    return found

"""Anchors: signed checkpoints of each game's chain head, with a key the database lacks.

A hash chain proves that rows were not changed one by one; whoever can write the
database can still rewrite a tail and re-hash it, or delete the last rows. An anchor
``(game id, seq, head hash, finished)`` signed with HMAC-SHA256 under a key the service
holds (never stored in the database) pins the chain at that seq: a rewrite before it
changes the anchored row's hash, and a forged anchor does not carry a valid signature.

The store writes an anchor in the transaction of the command that creates a game, that
finishes it, or whose rows cross a multiple of :data:`ANCHOR_EVERY` (so a rewrite of a live
game's tail can reach at most that many rows past its newest anchor). A director exports
the anchors to a file kept outside the database (``charleston-fsm anchors export``) and
verifies against it later (``charleston-fsm verify --anchors FILE``).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..engine.errors import SetupError
from .hashing import canonical_json, canonical_time, utc

#: A live game is anchored by each command whose rows reach or pass a multiple of this
#: many rows (about every two passes of a standard Charleston; a finished game has about
#: 70 rows): a tail rewrite goes undetected by the database's own anchors for at most
#: this many rows, and never once the game is finished.
ANCHOR_EVERY = 16
KEY_ENV = "CHARLESTON_ANCHOR_KEY"
KEY_FILE_ENV = "CHARLESTON_ANCHOR_KEY_FILE"
DEFAULT_KEY_FILE = Path("~/.config/charleston-fsm/anchor.key")
MIN_KEY_CHARS = 32
FILE_FORMAT = "charleston-fsm anchors v1"
_DOMAIN = "charleston-fsm anchor v1"


class AnchorKeyError(SetupError):
    code = "anchor_key_invalid"
    rule = "SVC-08"


class AnchorFileError(SetupError):
    code = "anchor_file_invalid"
    rule = "SVC-08"


@dataclass(frozen=True)
class AnchorKey:
    """The service's signing secret and where it came from (said once at start)."""

    secret: bytes
    source: str
    created: bool = False

    @property
    def key_id(self) -> str:
        """A public name of the key (16 hex), so a verdict can say *which* key signed."""
        return hmac.new(self.secret, b"charleston-fsm key id", hashlib.sha256).hexdigest()[:16]

    def sign(self, anchor: Anchor) -> str:
        return hmac.new(self.secret, anchor.message(), hashlib.sha256).hexdigest()

    def checks(self, anchor: Anchor) -> bool:
        return hmac.compare_digest(self.sign(anchor), anchor.signature)


def load_key(secret: str | None = None, key_file: str | Path | None = None) -> AnchorKey:
    """The anchor key: ``secret``, else ``$CHARLESTON_ANCHOR_KEY``, else the key file.

    The key file is ``key_file``, else ``$CHARLESTON_ANCHOR_KEY_FILE``, else
    ``~/.config/charleston-fsm/anchor.key``; when it does not exist it is created with a
    random key and mode 0600 (``created=True``: the caller says where).
    """
    secret = secret if secret is not None else os.environ.get(KEY_ENV) or None
    if secret is not None:
        if len(secret) < MIN_KEY_CHARS:
            raise AnchorKeyError(
                f"{KEY_ENV} holds {len(secret)} characters; an anchor key needs at least "
                f"{MIN_KEY_CHARS} (e.g. the output of 'openssl rand -hex 32')."
            )
        return AnchorKey(secret.encode("utf-8"), f"${KEY_ENV}")
    path = Path(key_file or os.environ.get(KEY_FILE_ENV) or DEFAULT_KEY_FILE).expanduser()
    created = False
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another process created it first: use theirs
            pass
        else:
            with os.fdopen(fd, "w") as out:
                out.write(secrets.token_hex(32) + "\n")
            created = True
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise AnchorKeyError(f"Cannot read the anchor key file {path}: {exc.strerror}.") from None
    if len(text) < MIN_KEY_CHARS:
        raise AnchorKeyError(
            f"The anchor key file {path} holds {len(text)} characters; it needs at least "
            f"{MIN_KEY_CHARS}. Restore it from your backup (a new key cannot check old anchors)."
        )
    return AnchorKey(text.encode("utf-8"), f"key file {path}", created)


@dataclass(frozen=True)
class Anchor:
    """A signed checkpoint: the chain of ``game_id`` had ``head_hash`` at row ``seq``."""

    game_id: str
    seq: int
    head_hash: str
    finished: bool
    created_at: datetime
    key_id: str
    signature: str = ""
    #: set on a finished game's final anchor once its rows were replayed through the
    #: chart: the digest of the replay's table (``replay_digest``); signed with the rest
    replay_digest: str | None = None

    def message(self) -> bytes:
        """What the signature covers (everything but the signature and the key's name)."""
        fields: list[Any] = [
            _DOMAIN,
            self.game_id,
            self.seq,
            self.head_hash,
            self.finished,
            canonical_time(self.created_at),
        ]
        if self.replay_digest is not None:  # anchors written before replays were sealed
            fields.append(self.replay_digest)
        return canonical_json(fields).encode("utf-8")

    @classmethod
    def signed(
        cls,
        key: AnchorKey,
        game_id: str,
        seq: int,
        head_hash: str,
        finished: bool,
        at: datetime,
        replay_digest: str | None = None,
    ) -> Anchor:
        unsigned = cls(game_id, seq, head_hash, finished, at, key.key_id, "", replay_digest)
        return replace(unsigned, signature=key.sign(unsigned))

    def sealed(self, key: AnchorKey, replay_digest: str) -> Anchor:
        """This anchor, re-signed to say its chain replays to a table of ``replay_digest``."""
        return Anchor.signed(
            key,
            self.game_id,
            self.seq,
            self.head_hash,
            self.finished,
            self.created_at,
            replay_digest,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "game_id": self.game_id,
            "seq": self.seq,
            "head_hash": self.head_hash,
            "finished": self.finished,
            "created_at": canonical_time(self.created_at),
            "key_id": self.key_id,
            "signature": self.signature,
            "replay_digest": self.replay_digest,
        }

    def row(self) -> dict[str, Any]:
        return {**self.to_dict(), "created_at": self.created_at}

    @classmethod
    def from_row(cls, row: Any) -> Anchor:
        return cls(
            row.game_id,
            row.seq,
            row.head_hash,
            bool(row.finished),
            utc(row.created_at),
            row.key_id,
            row.signature,
            row.replay_digest,
        )


def replay_digest(snapshot: Any) -> str:
    """The digest a sealed anchor signs: sha256 of the replayed table's canonical JSON."""
    return hashlib.sha256(canonical_json(snapshot).encode("utf-8")).hexdigest()


def _digest_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def needs_anchor(first_seq: int, last_seq: int, finished: bool) -> bool:
    """Whether the command that wrote rows ``first_seq..last_seq`` anchors its head."""
    return finished or first_seq == 1 or last_seq // ANCHOR_EVERY > (first_seq - 1) // ANCHOR_EVERY


# -- the file a director keeps ----------------------------------------------------------------
def write_file(path: str | Path, anchors: Iterable[Anchor], key_id: str) -> int:
    """Write ``anchors`` as the export document; returns how many."""
    items = [a.to_dict() for a in anchors]
    document = {
        "format": FILE_FORMAT,
        "exported_at": canonical_time(datetime.now(UTC)),
        "key_id": key_id,
        "anchors": items,
    }
    Path(path).write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return len(items)


def read_file(path: str | Path) -> dict[str, list[Anchor]]:
    """The anchors of an export file, per game; a malformed file is a clear error."""
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise AnchorFileError(f"Cannot read the anchors file {path}: {exc.strerror}.") from None
    except ValueError as exc:
        raise AnchorFileError(f"The anchors file {path} is not JSON ({exc}).") from None
    if not isinstance(document, dict) or document.get("format") != FILE_FORMAT:
        raise AnchorFileError(
            f"{path} is not an anchors export (its 'format' must be {FILE_FORMAT!r})."
        )
    by_game: dict[str, list[Anchor]] = {}
    for number, item in enumerate(document.get("anchors") or [], start=1):
        try:
            anchor = Anchor(
                str(item["game_id"]),
                int(item["seq"]),
                str(item["head_hash"]),
                bool(item["finished"]),
                utc(datetime.fromisoformat(str(item["created_at"]).replace("Z", "+00:00"))),
                str(item["key_id"]),
                str(item["signature"]),
                _digest_or_none(item.get("replay_digest")),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise AnchorFileError(
                f"Anchor {number} of {path} is malformed ({type(exc).__name__}: {exc})."
            ) from None
        by_game.setdefault(anchor.game_id, []).append(anchor)
    return by_game

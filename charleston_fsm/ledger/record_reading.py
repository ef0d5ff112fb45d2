"""Reading a record file's lines for ``record verify``: the size limits, JSON, each
line's fields, and the summary of what was found.

A line is read only up to :data:`MAX_LINE_BYTES` and the file only up to
:data:`MAX_FILE_BYTES` (beyond either: a finding, and what is beyond is never parsed), so
a hostile file costs bounded memory and time. Whatever a line holds becomes a line object
or a :class:`~.verify.Finding` naming the line, never an exception.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from typing import IO, Any

from .rows import StoredEvent
from .verify import Finding

#: the longest line a record may have: a row's payload is a few KB, the anchor's HMAC
#: anchors a few hundred bytes per command
MAX_LINE_BYTES = 1 << 20
#: the largest record file: a Charleston's record is tens of KB (a long, clocked game
#: with every ruling a few hundred KB)
MAX_FILE_BYTES = 64 << 20
#: findings shown per kind; the rest are counted ("and K more of the same kind")
SHOWN_PER_KIND = 10
#: changed rows searched for where they were moved from (each search hashes a row once
#: per possible seq); the rest are named plainly
EXPLAINED_ROWS = 10

_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")
_STR, _NULLABLE = (str,), (str, type(None))
_FIELDS: dict[str, dict[str, tuple[type, ...]]] = {
    "header": {
        "kind": _STR,
        "format": _STR,
        "game_id": _STR,
        "ruleset": _STR,
        "options": (dict,),
        "deal": (dict,),
        "exported_at": _STR,
    },
    "row": {
        "kind": _STR,
        "game_id": _STR,
        "seq": (int,),
        "type": _STR,
        "seat": _NULLABLE,
        "step": _NULLABLE,
        "payload": (dict,),
        "command_id": _NULLABLE,
        "created_at": _STR,
        "prev_hash": _STR,
        "hash": _STR,
    },
    "anchor": {
        "kind": _STR,
        "game_id": _STR,
        "seq": (int,),
        "head_hash": _STR,
        "finished": (bool,),
        "replay_digest": _STR,
        "signed_at": _STR,
        "algorithm": _STR,
        "public_key": _STR,
        "signature": _STR,
        "hmac_anchors": (list,),
    },
}
_TIMES = ("exported_at", "created_at", "signed_at")
_JSON_NAMES = {dict: "an object", list: "a list", str: "a string", bool: "true or false"}


class RecordUnreadable(Exception):
    """The file cannot be read as text at all (missing, a directory, not UTF-8): exit 2."""


class Findings:
    """Findings summarised: the first :data:`SHOWN_PER_KIND` of each kind are kept, the
    rest (and any repeat of one kept) only counted, so a file of a million bad lines
    holds and prints a few dozen."""

    def __init__(self, shown_per_kind: int = SHOWN_PER_KIND) -> None:
        self.shown: list[Finding] = []
        self.more: Counter[str] = Counter()
        self._kept: Counter[str] = Counter()
        self._seen: set[tuple[str, int | None, str]] = set()
        self.shown_per_kind = shown_per_kind

    def add(self, finding: Finding) -> None:
        key = (finding.kind, finding.seq, finding.message)
        if key in self._seen or self._kept[finding.kind] >= self.shown_per_kind:
            self.more[finding.kind] += 1
            return
        self._seen.add(key)
        self._kept[finding.kind] += 1
        self.shown.append(finding)

    def __len__(self) -> int:
        return len(self.shown) + sum(self.more.values())


def megabytes(size: int) -> str:
    return f"{size / (1 << 20):,.1f} MB"


def numbered_lines(
    stream: IO[bytes], findings: Findings, max_line: int, max_file: int
) -> Iterator[tuple[int, str]]:
    """(line number, text) of each non-blank line; a line past ``max_line`` bytes is
    skipped unparsed (a finding), reading stops past ``max_file`` bytes (a finding)."""
    number = total = 0
    while True:
        raw = stream.readline(max_line + 1)
        if not raw:
            return
        number += 1
        total += len(raw)
        too_long = len(raw) > max_line and not raw.endswith(b"\n")
        while too_long and raw and not raw.endswith(b"\n") and total <= max_file:  # skip it
            raw = stream.readline(1 << 20)
            total += len(raw)
        if too_long:
            findings.add(
                Finding(
                    "line_too_long",
                    None,
                    f"Line {number} is longer than {megabytes(max_line)}, the most a record's "
                    "line may hold (docs/record.md): it was not read.",
                    line=number,
                )
            )
        if total > max_file:
            findings.add(
                Finding(
                    "file_too_large",
                    None,
                    f"The record is longer than {megabytes(max_file)} (docs/record.md): it was "
                    f"read up to line {number} only.",
                    line=number,
                )
            )
            return
        if too_long:
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise RecordUnreadable(f"line {number} is not UTF-8 text") from None
        if text.strip():
            yield number, text


def json_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "a number"
    return _JSON_NAMES.get(type(value), type(value).__name__)


def read_line(number: int, text: str) -> dict[str, Any] | Finding:
    """The line's object, or a finding saying why it is not one."""
    try:
        value = json.loads(text)
    except RecursionError:
        return Finding("not_json", None, f"Line {number}: JSON nested too deep.", line=number)
    except ValueError as exc:
        where = (
            f" ({exc.msg.removesuffix(' at')} at column {exc.colno})"
            if isinstance(exc, json.JSONDecodeError)
            else ""
        )
        return Finding("not_json", None, f"Line {number}: not JSON{where}.", line=number)
    if not isinstance(value, dict):
        return Finding(
            "not_an_object",
            None,
            f"Line {number}: {json_name(value)}, but every line of a record is an object.",
            line=number,
        )
    return value


def field_problems(line: dict[str, Any], kind: str) -> tuple[list[str], list[str]]:
    """(what is wrong with the line's fields, the fields the format does not have)."""
    fields = _FIELDS[kind]
    wrong = []
    for name, types in fields.items():
        if name not in line:
            wrong.append(f"{name} is missing")
            continue
        value = line[name]
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            wrong.append(f"{name} is {json_name(value)}")
        elif name in _TIMES and not (isinstance(value, str) and _is_time(value)):
            wrong.append(f"{name} is not a UTC time like 2026-11-21T07:30:27.123456Z")
    return wrong, sorted(set(line) - set(fields))


def _is_time(value: str) -> bool:
    if not _TIME.fullmatch(value):
        return False
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def stored_row(line: dict[str, Any]) -> StoredEvent:
    fields = {k: line[k] for k in StoredEvent.__dataclass_fields__}
    fields["created_at"] = datetime.fromisoformat(line["created_at"].replace("Z", "+00:00"))
    return StoredEvent(**fields)

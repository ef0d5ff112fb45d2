"""``record verify``: a record file checked offline, streamed, never raising.

The file is read one line at a time (at most :data:`MAX_LINE_BYTES` a line, and
:data:`MAX_FILE_BYTES` in all: beyond either is a finding, and what is beyond is never
parsed), the chain checked as each row comes (:class:`~.verify.ChainCheck` holds only the
previous row's hash) and the rows replayed through the chart as they are read, so memory
does not grow with the file. Whatever a line holds (not JSON, not an object, a field of
the wrong type, JSON nested too deep, a field the format does not have) becomes a
:class:`~.verify.Finding` naming the line; findings are kept
:data:`SHOWN_PER_KIND` per kind and the rest counted (:class:`Findings`).

What the record shows is what is signed: the Ed25519 signature covers the anchor's game,
head and replay digest; the head's hash covers every row through the chain; and every
header field restates signed data, so verify requires it to equal that data (``ruleset``,
``options``, ``deal``: row 1's; ``game_id``: the anchor's and every row's;
``exported_at``: the signed ``signed_at``). The anchor's ``hmac_anchors`` are the one
part no public key checks: the verdict lists them under ``unsigned``.
"""

from __future__ import annotations

import base64
import io
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import IO, Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from ..engine.errors import ReplayMismatch
from ..engine.table import Table
from ..engine.tiles import Deal
from .anchors import replay_digest
from .record import FORMAT, anchor_message
from .record_reading import (
    EXPLAINED_ROWS,
    MAX_FILE_BYTES,
    MAX_LINE_BYTES,
    SHOWN_PER_KIND,
    Findings,
    RecordUnreadable,
    field_problems,
    json_name,
    megabytes,
    numbered_lines,
    read_line,
    stored_row,
)
from .rows import StoredEvent
from .verify import ChainCheck, Finding

__all__ = ["RecordUnreadable", "RecordVerdict", "verify_record", "verify_record_file"]


@dataclass
class RecordVerdict:
    """What :func:`verify_record_file` found; ``ok`` only with no finding at all.

    ``findings``: those shown; ``more``: per kind, how many more were found;
    ``unsigned``: what the record carries that the signature does not cover."""

    game_id: str | None = None
    rows: int = 0
    finished: bool = False
    key_pinned: bool = False
    findings: list[Finding] = field(default_factory=list)
    more: dict[str, int] = field(default_factory=dict)
    unsigned: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings and not self.more

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "game_id": self.game_id,
            "rows": self.rows,
            "finished": self.finished,
            "key_pinned": self.key_pinned,
            "findings": [f.to_dict() for f in self.findings],
            "more_findings": self.more,
            "unsigned": self.unsigned,
        }


def verify_record(text: str, public_key: str | None = None) -> RecordVerdict:
    """:func:`verify_record_file` on a record held as text."""
    data = text.encode("utf-8", "surrogatepass")
    return verify_record_stream(io.BytesIO(data), public_key, size=len(data))


def verify_record_file(path: str, public_key: str | None = None) -> RecordVerdict:
    """Every check of the record file at ``path``; raises only :class:`RecordUnreadable`."""
    try:
        with open(path, "rb") as stream:
            status = os.fstat(stream.fileno())
            size = status.st_size if stat.S_ISREG(status.st_mode) else None
            return verify_record_stream(stream, public_key, size=size)
    except OSError as exc:
        raise RecordUnreadable(exc.strerror or str(exc)) from None


def verify_record_stream(
    stream: IO[bytes],
    public_key: str | None = None,
    *,
    size: int | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
    max_file_bytes: int = MAX_FILE_BYTES,
    shown_per_kind: int = SHOWN_PER_KIND,
) -> RecordVerdict:
    """Every check of a record read from ``stream`` (``size``: its length, when known)."""
    findings = Findings(shown_per_kind)
    verdict = RecordVerdict(key_pinned=public_key is not None)
    if size is not None and size > max_file_bytes:
        findings.add(
            Finding(
                "file_too_large",
                None,
                f"The file is {megabytes(size)}; a record may be at most "
                f"{megabytes(max_file_bytes)} (docs/record.md): it was not read.",
            )
        )
    else:
        lines = numbered_lines(stream, findings, max_line_bytes, max_file_bytes)
        # a row line is 300 bytes or more: a changed row cannot have moved from further
        bound = min((size or max_file_bytes) // 300 + 2, 10_000)
        _RecordCheck(verdict, findings, public_key, bound).run(lines)
    verdict.findings, verdict.more = findings.shown, dict(findings.more)
    return verdict


class _RecordCheck:
    """One pass over a record's lines: the chain as rows come, the replay fed from them,
    the header and the anchor checked against what is signed at the end."""

    def __init__(
        self,
        verdict: RecordVerdict,
        findings: Findings,
        public_key: str | None,
        reorder_bound: int,
    ) -> None:
        self.verdict, self.findings, self.public_key = verdict, findings, public_key
        self.header: dict[str, Any] | None = None
        self.anchor: dict[str, Any] | None = None
        self.first: StoredEvent | None = None
        self.last: StoredEvent | None = None
        self.last_line = self.header_line = self.anchor_line = self.count = 0
        self.chain = ChainCheck(reorder_bound, EXPLAINED_ROWS)

    def add(self, finding: Finding) -> None:
        self.findings.add(finding)

    def run(self, lines: Iterator[tuple[int, str]]) -> None:
        first = next(lines, None)
        if first is None:
            self.add(Finding("not_a_record", None, "The file holds no line: it is no record."))
            return
        number, text = first
        header = read_line(number, text)
        if isinstance(header, Finding) or header.get("kind") != "header":
            self.add(
                header
                if isinstance(header, Finding)
                else Finding(
                    "not_a_record",
                    None,
                    f"Line {number}: not a record's header (a {FORMAT!r} record starts "
                    "with its header line).",
                    line=number,
                )
            )
            return
        self._header(number, header)
        rows = self._rows(lines)
        digest = self._replay(rows)
        for _ in rows:  # the replay stopped early: the chain is still checked to the end
            pass
        self.verdict.rows = self.count
        if self.anchor is None:
            self.add(Finding("anchor_missing", None, "The record has no anchor line."))
        else:
            self._anchor(digest)
        self._restated()

    # -- lines --------------------------------------------------------------------------
    def _header(self, number: int, header: dict[str, Any]) -> None:
        if header.get("format") != FORMAT:
            older = f"{header.get('format')!r}"[:60]
            self.add(
                Finding(
                    "unknown_format",
                    None,
                    f"Line {number}: the format is {older}; this verify reads {FORMAT!r}.",
                    line=number,
                )
            )
        if self._fields(number, header, "header"):
            self.header, self.header_line = header, number
            self.verdict.game_id = header["game_id"]

    def _fields(self, number: int, line: dict[str, Any], kind: str) -> bool:
        """Whether the line has every field of its kind, each of its type (else findings)."""
        wrong, extra = field_problems(line, kind)
        if extra:
            names = ", ".join(repr(n)[:40] for n in extra[:5])
            self.add(
                Finding(
                    "unsigned_field",
                    None,
                    f"Line {number} ({kind}): {names} {'is' if len(extra) == 1 else 'are'} no "
                    "field of the format and nothing signs it.",
                    line=number,
                )
            )
        if wrong:
            self.add(
                Finding(
                    "malformed_line", None, f"Line {number} ({kind}): {'; '.join(wrong)}.", number
                )
            )
        return not wrong

    def _rows(self, lines: Iterator[tuple[int, str]]) -> Iterator[StoredEvent]:
        """Each well-formed row before the anchor, its chain checked; every other line
        becomes a finding here (this never raises: the replay pulls from it)."""
        for number, text in lines:
            try:
                row = self._line(number, text)
            except Exception as exc:  # a safety net: a finding, never a crash
                self.add(
                    Finding(
                        "unreadable_line",
                        None,
                        f"Line {number} cannot be checked ({type(exc).__name__}).",
                        line=number,
                    )
                )
                continue
            if row is not None:
                yield row

    def _line(self, number: int, text: str) -> StoredEvent | None:
        line = read_line(number, text)
        if isinstance(line, Finding):
            self.add(line)
            self.chain.skip()
            return None
        kind = line.get("kind")
        if kind == "header":
            self.add(
                Finding(
                    "second_header",
                    None,
                    f"Line {number}: a second header; a record has one, on its first line.",
                    line=number,
                )
            )
            return None
        if kind == "anchor":
            if self.anchor is not None:
                self.add(
                    Finding(
                        "second_anchor",
                        None,
                        f"Line {number}: a second anchor; a record has one, on its last line.",
                        line=number,
                    )
                )
            elif self._fields(number, line, "anchor"):
                self.anchor, self.anchor_line = line, number
            return None
        if kind != "row":
            named = repr(kind[:40]) if isinstance(kind, str) else json_name(kind)
            self.add(
                Finding(
                    "unknown_line",
                    None,
                    f"Line {number}: its kind is {named}, not header, row or anchor.",
                    line=number,
                )
            )
            return None
        if self.anchor is not None:
            self.add(
                Finding(
                    "after_anchor",
                    None,
                    f"Line {number}: a row after the anchor (line {self.anchor_line}); the "
                    "signature covers only the rows before it.",
                    line=number,
                )
            )
            return None
        if not self._fields(number, line, "row"):
            self.chain.skip()
            return None
        row = stored_row(line)
        for finding in self.chain.check(row):
            self.add(replace(finding, line=number))
        if self.header is not None and row.game_id != self.header["game_id"]:
            self.add(
                Finding(
                    "other_game",
                    row.seq,
                    f"Line {number}: the row names another game.",
                    line=number,
                )
            )
        self.first = self.first or row
        self.count += 1
        self.last, self.last_line = row, number
        return row

    # -- the replay ---------------------------------------------------------------------
    def _replay(self, rows: Iterator[StoredEvent]) -> str | None:
        """The digest of the table the rows replay to (None, with a finding, if they do
        not); the chart takes the rows as they are read."""
        first = next(rows, None)
        if first is None:
            return None
        try:
            if first.type != "game_created":
                raise ReplayMismatch("The first row of a game must be its game_created row.")
            setup = first.payload
            table = Table.fold(
                Deal.from_dict(setup["deal"]),
                setup["ruleset"],
                setup["options"],
                (row.event for row in rows),
            )
            digest = replay_digest(table.snapshot())
            self.verdict.finished = table.finished
            return digest
        except RecordUnreadable:  # raised by the reading, through the rows: exit 2
            raise
        except Exception as exc:  # any malformed row: a finding, never a crash
            reason = str(exc).splitlines()[0][:200] if str(exc) else ""
            where = self.last.seq if self.last else None
            self.add(
                Finding(
                    "replay_failed",
                    where,
                    f"Line {self.last_line}: the rows do not replay through the chart "
                    f"({type(exc).__name__}: {reason}).",
                    self.last_line,
                )
            )
            return None

    # -- what is signed -----------------------------------------------------------------
    def _anchor(self, digest: str | None) -> None:
        anchor, number, last = self.anchor, self.anchor_line, self.last
        assert anchor is not None
        if last is None or anchor["seq"] != last.seq or anchor["head_hash"] != last.hash:
            self.add(
                Finding(
                    "head_mismatch",
                    anchor["seq"],
                    f"Line {number}: the signed head is not the record's last row: rows were "
                    "added, removed or rewritten after it was signed.",
                    number,
                )
            )
        if digest is not None and anchor["replay_digest"] != digest:
            self.add(
                Finding(
                    "replay_differs",
                    None,
                    f"Line {number}: the rows replay to another table than was signed.",
                    number,
                )
            )
        if anchor["algorithm"] != "Ed25519":
            self.add(
                Finding(
                    "bad_signature",
                    None,
                    f"Line {number}: the algorithm is {anchor['algorithm'][:40]!r}, not Ed25519.",
                    number,
                )
            )
        if self.public_key is not None and anchor["public_key"] != self.public_key:
            self.add(
                Finding(
                    "other_key",
                    None,
                    f"Line {number}: the record was signed with another key than given.",
                    number,
                )
            )
        try:
            key = Ed25519PublicKey.from_public_bytes(
                base64.b64decode(self.public_key or anchor["public_key"], validate=True)
            )
            key.verify(base64.b64decode(anchor["signature"], validate=True), anchor_message(anchor))
        except (InvalidSignature, ValueError):
            self.add(
                Finding(
                    "bad_signature",
                    None,
                    f"Line {number}: the anchor's Ed25519 signature does not check.",
                    number,
                )
            )
        if anchor["hmac_anchors"]:
            self.verdict.unsigned.append(
                f"hmac_anchors ({len(anchor['hmac_anchors'])}, line {number}): the service's "
                "own anchors, which only its secret checks"
            )

    def _restated(self) -> None:
        """Every header field against the signed data it restates (docs/record.md)."""
        header, anchor, first = self.header, self.anchor, self.first
        if header is None:
            return
        signed: dict[str, Any] = {}
        if first is not None and first.type == "game_created":
            signed |= {k: first.payload.get(k) for k in ("ruleset", "options", "deal")}
        if anchor is not None:
            signed |= {"game_id": anchor["game_id"], "exported_at": anchor["signed_at"]}
        for name, value in signed.items():
            if header[name] != value:
                source = "the anchor" if name in ("game_id", "exported_at") else "row 1"
                self.add(
                    Finding(
                        "header_differs",
                        None,
                        f"Line {self.header_line}: the header's {name} is not {source}'s: "
                        "the header was changed after it was signed.",
                        self.header_line,
                    )
                )

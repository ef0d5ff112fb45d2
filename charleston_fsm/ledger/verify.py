"""Verify one game's record: chain, head, anchors, projection; every finding named.

:func:`check_game` is a pure function of what one read transaction saw (the game's row,
every event row that exists, the projection, the anchors), so the HTTP route, the CLI
and the store's own reads all reach the same verdict. It never raises on a malformed
record: whatever a row holds becomes a :class:`Finding`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..engine.commands import COMMAND_OF
from ..engine.errors import ReplayMismatch
from ..engine.events import ANNOTATION_TYPES, DERIVED_TYPES
from ..engine.table import Table
from ..engine.tiles import Deal
from .anchors import Anchor, AnchorKey, needs_anchor, replay_digest
from .errors import EventNotFound
from .hashing import GENESIS, row_hash

if TYPE_CHECKING:
    from .rows import StoredEvent

EVENT_TYPES = frozenset({"game_created", *COMMAND_OF, *DERIVED_TYPES, *ANNOTATION_TYPES})


@dataclass(frozen=True)
class Finding:
    """One thing wrong with a game's record. ``kind`` is stable (for programs); the
    message names rows, types and hashes, never a tile."""

    kind: str
    seq: int | None
    message: str
    #: the line of a record file it concerns (``record verify``); none for a stored game
    line: int | None = None

    def to_dict(self) -> dict[str, Any]:
        found = {"kind": self.kind, "seq": self.seq, "message": self.message}
        return found if self.line is None else {**found, "line": self.line}


@dataclass(frozen=True)
class GameRecord:
    """What one read transaction saw of a game: the input of :func:`check_game`."""

    game_id: str
    last_seq: int
    status: str
    head_hash: str | None
    rows: Sequence[StoredEvent]
    projection_seq: int | None
    snapshot: Mapping[str, Any] | None
    anchors: Sequence[Anchor] = ()


@dataclass(frozen=True)
class Verification:
    """The verdict on one game. ``ok`` only when there is no finding at all."""

    game_id: str
    findings: tuple[Finding, ...]
    checked: int = 0
    head_hash: str | None = None
    recorded_seq: int = 0
    anchored_seq: int | None = None
    anchors_checked: int = 0
    against_kept_anchors: bool = False
    quarantine: dict[str, Any] | None = field(default=None, compare=False)
    #: whether the rows were replayed through the chart (else a sealed anchor vouched)
    replayed: bool = field(default=False, compare=False)
    #: the digest of the replay's table, when the rows replayed (``anchors.replay_digest``)
    replay_digest: str | None = field(default=None, compare=False)

    @property
    def ok(self) -> bool:
        return not self.findings

    @property
    def first_bad_seq(self) -> int | None:
        seqs = [f.seq for f in self.findings if f.seq is not None]
        return min(seqs) if seqs else None

    @property
    def message(self) -> str:
        if self.findings:
            more = len(self.findings) - 1
            return self.findings[0].message + (f" (and {more} more finding(s))" if more else "")
        anchored = (
            f"; anchored at seq {self.anchored_seq}" if self.anchored_seq else "; no anchor yet"
        )
        return (
            f"All {self.checked} rows match their hashes and the recorded head{anchored}; "
            "the projection equals the replay."
        )

    def with_quarantine(self, quarantine: dict[str, Any] | None) -> Verification:
        return replace(self, quarantine=quarantine)

    def to_dict(self) -> dict[str, Any]:
        return {
            "game_id": self.game_id,
            "ok": self.ok,
            "first_bad_seq": self.first_bad_seq,
            "message": self.message,
            "findings": [f.to_dict() for f in self.findings],
            "checked": self.checked,
            "recorded_seq": self.recorded_seq,
            "head_hash": self.head_hash,
            "anchored_seq": self.anchored_seq,
            "anchors_checked": self.anchors_checked,
            "against_kept_anchors": self.against_kept_anchors,
            "quarantine": self.quarantine,
        }


def check_game(
    record: GameRecord,
    key: AnchorKey,
    kept: Sequence[Anchor] | None = None,
    *,
    replay: bool = False,
) -> Verification:
    """Every check on one game; ``kept`` are the anchors of a director's export file.

    The rows are replayed through the chart unless a sealed anchor vouches for them
    (:func:`sealed_head`); ``replay`` replays them anyway.
    """
    findings = list(_chain(record.rows))
    last = record.rows[-1] if record.rows else None
    findings += _head(record, last)
    anchors = sorted(record.anchors, key=lambda a: a.seq)
    anchor_findings = list(_anchors(record, anchors, key, "stored"))
    seal = None if replay or findings or anchor_findings else sealed_head(record, anchors, key)
    digest_ = None
    if seal is None or seal.replay_digest is None:  # sealed_head's anchor always has one
        snapshot, finished, replay_findings = _replay(record)
        if snapshot is not None:
            digest_ = replay_digest(snapshot)
            replay_findings += _status(record, finished)
    else:
        finished, replay_findings = True, list(_projection(record, seal.replay_digest))
    findings += replay_findings
    findings += anchor_findings
    findings += _expected_anchors(record, anchors, finished)
    if kept is not None:
        findings += _anchors(record, sorted(kept, key=lambda a: a.seq), key, "kept")
    return Verification(
        record.game_id,
        tuple(findings),
        checked=len(record.rows),
        head_hash=last.hash if last else None,
        recorded_seq=record.last_seq,
        anchored_seq=anchors[-1].seq if anchors else None,
        anchors_checked=len(anchors) + len(kept or ()),
        against_kept_anchors=kept is not None,
        replayed=seal is None,
        replay_digest=digest_,
    )


def sealed_head(record: GameRecord, anchors: Sequence[Anchor], key: AnchorKey) -> Anchor | None:
    """The sealed anchor of the finished game's recorded head, if it has a valid one.

    Call it only once every row's hash and link, the head and every stored anchor
    checked: then rows 1 to the head are the very rows the service replayed when it
    sealed the anchor (the head's hash covers them all through the links), so their
    replay is known without running it again.
    """
    if record.status != "finished" or not anchors or not record.rows:
        return None
    newest = anchors[-1]
    if (
        newest.replay_digest is None
        or not newest.finished
        or newest.seq != record.last_seq
        or record.rows[-1].seq != record.last_seq
        or record.rows[-1].hash != newest.head_hash
        or newest.key_id != key.key_id
        or not key.checks(newest)
    ):
        return None
    return newest


# -- the chain ----------------------------------------------------------------------------------
def _chain(rows: Sequence[StoredEvent]) -> Iterator[Finding]:
    chain = ChainCheck(max((r.seq for r in rows), default=0) + 2)
    for row in rows:
        yield from chain.check(row)


class ChainCheck:
    """The chain checked one row at a time, holding only the previous row's hash.

    ``reorder_bound``: the seqs tried when a changed row may be another row moved here
    (its hash recomputed as seq 1 to the bound); ``explain``: how many changed rows get
    that search (each costs ``reorder_bound`` hashes), the rest are named plainly.
    """

    def __init__(self, reorder_bound: int, explain: int | None = None) -> None:
        self.prev, self.expected = GENESIS, 1
        self.reorder_bound = reorder_bound
        self.explain = explain
        self.broken = False

    def skip(self) -> None:
        """A row that could not be read: the link to the next one cannot be checked."""
        self.broken = True

    def check(self, row: StoredEvent) -> list[Finding]:
        found: list[Finding] = []
        if self.broken:
            self.broken = False
        elif row.seq > self.expected:
            found.append(
                Finding(
                    "missing_rows",
                    self.expected,
                    f"{_span(self.expected, row.seq - 1)} missing: the next stored row is "
                    f"{row.seq}.",
                )
            )
        elif row.seq < self.expected:
            found.append(
                Finding(
                    "out_of_order",
                    row.seq,
                    f"Row {row.seq} comes after row {self.expected - 1}: rows are repeated "
                    "or out of order.",
                )
            )
        elif row.prev_hash != self.prev:
            found.append(
                Finding(
                    "bad_link",
                    row.seq,
                    f"Row {row.seq} does not follow row {row.seq - 1}: its prev_hash is "
                    f"{row.prev_hash[:12]}…, the hash of row {row.seq - 1} is {self.prev[:12]}….",
                )
            )
        if digest(row) != row.hash:
            explain = self.explain is None or self.explain > 0
            found.append(_changed(row, self.reorder_bound if explain else 0))
            if self.explain:
                self.explain -= 1
        self.prev, self.expected = row.hash, row.seq + 1
        return found


def digest(row: StoredEvent, **override: Any) -> str:
    """The row's hash recomputed from its content (``override``: what if a field were …)."""
    try:
        return row_hash(**{**row.hashed(), **override})
    except (TypeError, ValueError, RecursionError):  # no JSON can hold it: not written so
        return ""


def _changed(row: StoredEvent, reorder_bound: int) -> Finding:
    """A row whose content no longer matches its hash; says how when it can tell
    (``reorder_bound`` 0: no search)."""
    for seq in range(1, reorder_bound):
        if seq != row.seq and digest(row, seq=seq) == row.hash:
            return Finding(
                "reordered_row",
                row.seq,
                f"Row {row.seq} holds the row written as seq {seq}: rows were reordered.",
            )
    for kind in sorted(EVENT_TYPES - {row.type}) if reorder_bound else ():
        if digest(row, type=kind) == row.hash:
            return Finding(
                "retyped_row",
                row.seq,
                f"Row {row.seq}'s type was changed from {kind} to {str(row.type)[:32]} "
                "after it was written.",
            )
    return Finding(
        "changed_row",
        row.seq,
        f"Row {row.seq} ({str(row.type)[:32]}) was changed after it was written: its "
        "content no longer matches its hash.",
    )


def _head(record: GameRecord, last: StoredEvent | None) -> Iterator[Finding]:
    """The stored chain's end against the head the game records (``games`` row)."""
    stored = last.seq if last else 0
    if stored > record.last_seq:
        beyond = [r for r in record.rows if r.seq > record.last_seq]
        kinds = ", ".join(sorted({str(r.type)[:32] for r in beyond}))
        yield Finding(
            "beyond_head",
            record.last_seq + 1,
            f"{_span(record.last_seq + 1, stored)} ({kinds}) stored beyond the game's "
            f"recorded head (seq {record.last_seq}): written outside the service.",
        )
    elif stored < record.last_seq:
        yield Finding(
            "missing_rows",
            stored + 1,
            f"The game records {record.last_seq} rows but the last stored row is {stored}: "
            f"{_span(stored + 1, record.last_seq).lower()} missing (deleted).",
        )
    if record.head_hash is not None and stored >= record.last_seq:
        at_head = next((r for r in record.rows if r.seq == record.last_seq), None)
        if at_head is not None and at_head.hash != record.head_hash:
            yield Finding(
                "head_mismatch",
                record.last_seq,
                f"Row {record.last_seq}'s hash {at_head.hash[:12]}… is not the head the game "
                f"recorded ({record.head_hash[:12]}…): the chain was rewritten up to it.",
            )


def _span(first: int, last: int) -> str:
    return f"Row {first} is" if first == last else f"Rows {first}-{last} are"


# -- replay and projection ---------------------------------------------------------------------
def fold_rows(rows: Sequence[StoredEvent], at: int | None = None, *, warm: bool = False) -> Table:
    """The table after row ``at`` (default: the last), folded through the chart.

    A seq inside a command's rows gives the table after that whole command. ``warm``:
    on this thread's warm table (see ``Table.fold``), valid until the next warm fold.
    """
    if not rows or rows[0].type != "game_created":
        raise ReplayMismatch("The first row of a game must be its game_created row.")
    if at is None:
        end = len(rows)
    else:
        if not 1 <= at <= len(rows):
            raise EventNotFound(f"Game {rows[0].game_id!r} has events 1 to {len(rows)}, not {at}.")
        end = at
        command_id = rows[at - 1].command_id
        while command_id is not None and end < len(rows) and rows[end].command_id == command_id:
            end += 1
    setup = rows[0].payload
    return Table.fold(
        Deal.from_dict(setup["deal"]),
        setup["ruleset"],
        setup["options"],
        [r.event for r in rows[1:end]],
        warm=warm,
    )


def _replay(record: GameRecord) -> tuple[dict[str, Any] | None, bool, list[Finding]]:
    """Fold the rows up to the recorded head (on this thread's warm table); compare the
    replay's table with the projection. Returns (the replay's snapshot, finished, findings)."""
    rows = [r for r in record.rows if r.seq <= record.last_seq]
    try:
        table = fold_rows(rows, warm=True)
        snapshot, finished = table.snapshot(), table.finished
    except Exception as exc:  # any malformed row: a finding, never a crash
        reason = str(exc).splitlines()[0][:200] if str(exc) else ""
        return (
            None,
            record.status == "finished",
            [
                Finding(
                    "replay_failed",
                    None,
                    f"The rows do not replay through the chart ({type(exc).__name__}: {reason}).",
                )
            ],
        )
    return snapshot, finished, list(_projection(record, snapshot))


def _projection(record: GameRecord, replayed: Mapping[str, Any] | str) -> Iterator[Finding]:
    """The projection against the replay's table (or a sealed anchor's digest of it)."""
    if record.snapshot is None:
        yield Finding("projection_missing", None, "The game has no projection.")
    elif record.projection_seq != record.last_seq:
        yield Finding(
            "projection_differs",
            None,
            f"The projection is at seq {record.projection_seq}, the game at {record.last_seq}.",
        )
    elif (
        replay_digest(record.snapshot) != replayed
        if isinstance(replayed, str)
        else record.snapshot != replayed
    ):
        yield Finding(
            "projection_differs",
            None,
            "The projection differs from the replay of the rows through the chart: "
            "it was edited outside the service.",
        )


def _status(record: GameRecord, finished: bool) -> Iterator[Finding]:
    """The game's status against the replay: ``finished`` exactly when the chart ended.

    A finished game set back to ``active`` would take commands again (and lose its
    sealed anchor's shortcut), so the status is part of what verify proves.
    """
    expected = "finished" if finished else "active"
    if record.status != expected:
        yield Finding(
            "status_differs",
            None,
            f"The game's status is {str(record.status)[:20]!r} but its rows replay to "
            f"{'a finished' if finished else 'an unfinished'} Charleston ({expected!r}): "
            "the status was edited outside the service.",
        )


# -- anchors ----------------------------------------------------------------------------------
def _anchors(
    record: GameRecord, anchors: Sequence[Anchor], key: AnchorKey, where: str
) -> Iterator[Finding]:
    """Each anchor against the key and the chain; ``where``: stored or kept (a file)."""
    by_seq = {r.seq: r for r in record.rows}
    for anchor in anchors:
        name = f"The {where} anchor at seq {anchor.seq}"
        if anchor.key_id != key.key_id:
            yield Finding(
                "anchor_foreign_key",
                anchor.seq,
                f"{name} names key {anchor.key_id[:16]!r}, this service holds key "
                f"{key.key_id!r}: verify with the key that signed it.",
            )
        elif not key.checks(anchor):
            yield Finding(
                "anchor_bad_signature",
                anchor.seq,
                f"{name} does not carry a valid signature: it was written or changed "
                "outside the service.",
            )
            continue
        row = by_seq.get(anchor.seq)
        if row is None:
            yield Finding(
                "anchor_row_gone",
                anchor.seq,
                f"{name} pins row {anchor.seq}, which is gone: rows were deleted.",
            )
        elif row.hash != anchor.head_hash:
            yield Finding(
                "anchor_differs",
                anchor.seq,
                f"Row {anchor.seq} differs from {name.lower()[4:]} (anchored "
                f"{anchor.head_hash[:12]}…, stored {row.hash[:12]}…): the chain was "
                f"rewritten at or before seq {anchor.seq}.",
            )


def _expected_anchors(
    record: GameRecord, anchors: Sequence[Anchor], finished: bool
) -> Iterator[Finding]:
    """The anchors the service wrote for this chain (see ``anchors.needs_anchor``)."""
    have = {a.seq for a in anchors}
    rows = [r for r in record.rows if r.seq <= record.last_seq]
    commands = list(_commands(rows))
    for index, (first, last) in enumerate(commands):
        final = index == len(commands) - 1
        if needs_anchor(first, last, finished and final) and last not in have:
            what = (
                "a finished game with no anchor of its final head"
                if finished and final
                else "no anchor where the service writes one"
            )
            yield Finding(
                "anchor_missing",
                last,
                f"Seq {last}: {what}; the anchor was deleted or never written.",
            )
    if finished and not any(a.finished for a in anchors) and commands:
        last = commands[-1][1]
        if last in have:  # an anchor at the head that does not say finished
            yield Finding(
                "anchor_missing",
                last,
                f"Seq {last}: the game is finished but its anchor there does not say so.",
            )


def _commands(rows: Sequence[StoredEvent]) -> Iterator[tuple[int, int]]:
    """(first seq, last seq) of each command's rows: row 1 alone, then runs of one id."""
    start = 0
    for index in range(1, len(rows) + 1):
        if (
            index == len(rows)
            or index == 1
            or rows[index].command_id is None
            or rows[index].command_id != rows[start].command_id
        ):
            yield rows[start].seq, rows[index - 1].seq
            start = index

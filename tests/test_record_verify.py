"""``record verify`` on hostile files: every malformed line a finding naming that line
(exit 1), never a traceback; a file that cannot be read exits 2; a header changed after
signing fails with the pinned key; a long or repeated record is summarised, bounded by the
documented limits."""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from api_helpers import cli
from typer.testing import CliRunner

from charleston_fsm.cli import app
from charleston_fsm.ledger.record import export_record, public_key_text
from charleston_fsm.ledger.record_reading import MAX_FILE_BYTES, MAX_LINE_BYTES
from charleston_fsm.ledger.record_verify import verify_record, verify_record_stream
from charleston_fsm.store import GameStore, NewGame, load_key, play_bots

KEY = "k" * 40
MARKUP_ID = "[bold red]x[/][/bold]"


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory, _sqlite_template: Path) -> dict[str, str]:
    """Two finished games' records (one whose id holds Rich markup) and the public key."""
    path = tmp_path_factory.mktemp("record") / "games.sqlite3"
    shutil.copyfile(_sqlite_template, path)
    store = GameStore(f"sqlite:///{path}", anchor_key=load_key(KEY))
    try:
        plain = store.registry.create_game(NewGame(seed=11))
        marked = store.registry.create_game(NewGame(seed=12, game_id=MARKUP_ID))
        for game_id, seed in ((plain, 11), (marked, 12)):
            play_bots(store, game_id, seed)
        return {
            "text": export_record(store, plain),
            "markup": export_record(store, marked),
            "key": public_key_text(store.anchor_key),
        }
    finally:
        store.dispose()


def _edit(text: str, index: int, change: Callable[[dict], object]) -> str:
    lines = [json.loads(line) for line in text.splitlines()]
    change(lines[index])
    return "".join(json.dumps(line) + "\n" for line in lines)


def _replace(text: str, index: int, by: str) -> str:
    lines = text.splitlines()
    lines[index] = by
    return "".join(line + "\n" for line in lines)


# (what, the file from the record's text, the line named, the finding's kind)
MALFORMED: list[tuple[str, Callable[[str], str], Callable[[str], int], str]] = [
    ("a line that is []", lambda t: _replace(t, 5, "[]"), lambda t: 6, "not_an_object"),
    ("a line that is a number", lambda t: _replace(t, 5, "42"), lambda t: 6, "not_an_object"),
    (
        "the last line broken",
        lambda t: t[:-20] + "\n",
        lambda t: len(t.splitlines()),
        "not_json",
    ),
    (
        "a header without deal",
        lambda t: _edit(t, 0, lambda h: h.pop("deal")),
        lambda t: 1,
        "malformed_line",
    ),
    (
        "a payload that is a list",
        lambda t: _edit(t, 3, lambda r: r.update(payload=[1, 2])),
        lambda t: 4,
        "malformed_line",
    ),
    (
        "a numeric created_at",
        lambda t: _edit(t, 3, lambda r: r.update(created_at=1764121200)),
        lambda t: 4,
        "malformed_line",
    ),
    (
        "a string seq",
        lambda t: _edit(t, 3, lambda r: r.update(seq="3")),
        lambda t: 4,
        "malformed_line",
    ),
    (
        "a line nested 100,000 deep",
        lambda t: _replace(t, 5, "[" * 100_000 + "]" * 100_000),
        lambda t: 6,
        "not_json",
    ),
    (
        "a row payload nested 500 deep",
        lambda t: _edit(
            t, 4, lambda r: r.update(payload=json.loads('{"a":' * 500 + "1" + "}" * 500))
        ),
        lambda t: 5,
        "changed_row",
    ),
    (
        "a line of another kind",
        lambda t: _edit(t, 4, lambda r: r.update(kind="[red]row")),
        lambda t: 5,
        "unknown_line",
    ),
]


@pytest.mark.parametrize(
    ("make", "line", "kind"),
    [pytest.param(make, line, kind, id=what) for what, make, line, kind in MALFORMED],
)
def test_a_malformed_record_gets_a_finding_naming_its_line(
    exported: dict[str, str],
    tmp_path: Path,
    make: Callable[[str], str],
    line: Callable[[str], int],
    kind: str,
) -> None:
    text = make(exported["text"])
    verdict = verify_record(text, exported["key"])
    assert not verdict.ok
    first = verdict.findings[0]
    assert (first.kind, first.line) == (kind, line(text)), verdict.findings
    assert f"Line {line(text)}" in first.message or f"Row {first.seq}" in first.message

    path = tmp_path / "bad.jsonl"
    path.write_text(text)
    done = CliRunner().invoke(app, ["record", "verify", str(path), "--public-key", exported["key"]])
    assert done.exit_code == 1, done.output
    assert done.exception is None or isinstance(done.exception, SystemExit), done.exception
    assert "FAILED" in done.output and "Traceback" not in done.output
    assert f"Line {line(text)}" in done.output or f"seq {first.seq}" in done.output


def test_the_first_broken_line_is_named_not_line_one(exported: dict[str, str]) -> None:
    lines = exported["text"].splitlines()
    text = "".join(line + "\n" for line in lines[:-1]) + lines[-1][: len(lines[-1]) // 2]
    [finding, *_] = verify_record(text, exported["key"]).findings
    assert finding.message.startswith(f"Line {len(lines)}: not JSON")


def test_dropped_and_repeated_rows_are_named_exactly(exported: dict[str, str]) -> None:
    lines = exported["text"].splitlines()
    dropped = "".join(line + "\n" for i, line in enumerate(lines) if i not in (5, 6))
    messages = [f.message for f in verify_record(dropped, exported["key"]).findings]
    assert messages[0] == "Rows 5-6 are missing: the next stored row is 7."
    repeated = "".join(line + "\n" for line in [*lines[:8], *lines[3:5], *lines[8:]])
    found = verify_record(repeated, exported["key"]).findings
    assert found[0].kind == "out_of_order" and found[0].line == 9
    assert found[0].message == "Row 3 comes after row 7: rows are repeated or out of order."
    assert not any("-0 " in f.message or "Rows 8-" in f.message for f in found)


@pytest.mark.parametrize(
    ("field", "value", "kind"),
    [
        ("ruleset", "house", "header_differs"),
        ("options", {"blind_pass": False}, "header_differs"),
        ("exported_at", "2020-01-01T00:00:00.000000Z", "header_differs"),
        ("deal", None, "malformed_line"),
        ("players", ["Ann", "Bo", "Cy", "Di"], "unsigned_field"),
    ],
)
def test_a_header_changed_after_signing_fails_with_the_pinned_key(
    exported: dict[str, str], field: str, value: object, kind: str
) -> None:
    """Every header field restates what is signed; one that differs, or one the format
    does not have, is a finding even though the signature itself still checks."""
    assert verify_record(exported["text"], exported["key"]).ok
    changed = _edit(exported["text"], 0, lambda h: h.update({field: value}))
    verdict = verify_record(changed, exported["key"])
    assert [f.kind for f in verdict.findings] == [kind], verdict.findings
    assert verdict.findings[0].line == 1 and field in verdict.findings[0].message


def test_the_game_id_is_printed_literally(exported: dict[str, str], tmp_path: Path) -> None:
    path = tmp_path / "markup.jsonl"
    path.write_text(exported["markup"])
    done = cli("record", "verify", str(path), "--public-key", exported["key"])
    assert f"ok: game {MARKUP_ID}, " in done.stdout
    assert "not signed: hmac_anchors" in done.stdout
    as_json = json.loads(cli("record", "verify", str(path), "--json").stdout)
    assert as_json["ok"] and as_json["game_id"] == MARKUP_ID and as_json["unsigned"]


def test_a_file_that_cannot_be_read_exits_2(exported: dict[str, str], tmp_path: Path) -> None:
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(_replace(exported["text"], 9, "x").encode().replace(b"\nx\n", b"\n\xff\n"))
    for path, why in (
        (tmp_path / "absent.jsonl", "No such file or directory"),
        (tmp_path, "Is a directory"),
        (binary, "line 10 is not UTF-8 text"),
    ):
        done = cli("record", "verify", str(path), check=False)
        assert done.returncode == 2, done.stdout + done.stderr
        assert f"Cannot read {path}: {why}." in done.stdout
        assert "Traceback" not in done.stdout + done.stderr


def test_a_repeated_record_is_summarised_not_repeated(
    exported: dict[str, str], tmp_path: Path
) -> None:
    """A record written 100 times over (3 MB): each kind of finding shown at most ten
    times, then counted; the first copy's rows still check."""
    path = tmp_path / "repeated.jsonl"
    path.write_text(exported["text"] * 100)
    rows = exported["text"].count('"kind": "row"')
    done = cli("record", "verify", str(path), "--public-key", exported["key"], check=False)
    assert done.returncode == 1
    out = done.stdout.splitlines()
    assert len(out) < 40, done.stdout
    assert len(set(out)) == len(out)
    assert f"and {99 * rows - 10:,} more of the same kind (after_anchor)" in done.stdout
    assert "more of the same kind (second_header)" in done.stdout
    verdict = verify_record(exported["text"] * 100, exported["key"])
    assert verdict.rows == rows and verdict.more["after_anchor"] == 99 * rows - 10


def test_lines_and_files_beyond_the_limits_are_refused_unread(
    exported: dict[str, str], tmp_path: Path
) -> None:
    huge = _replace(exported["text"], 5, "[" * (MAX_LINE_BYTES + 10))
    found = verify_record(huge, exported["key"]).findings
    assert (found[0].kind, found[0].line) == ("line_too_long", 6)
    assert not any(f.kind == "not_json" for f in found), found  # its end is skipped too

    data = exported["text"].encode()
    small = verify_record_stream(io.BytesIO(data), exported["key"], max_file_bytes=len(data) // 2)
    assert "file_too_large" in [f.kind for f in small.findings]

    sparse = tmp_path / "sparse.jsonl"
    with sparse.open("wb") as out:
        out.truncate(MAX_FILE_BYTES + 1)
    done = cli("record", "verify", str(sparse), check=False)
    assert done.returncode == 1 and "a record may be at most 64.0 MB" in done.stdout

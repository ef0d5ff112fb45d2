"""A record anyone can verify: exported from the store, checked offline (no database),
refused after any change; the CLI's exit codes; the published schema."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from api_helpers import cli

from charleston_fsm.engine.commands import JudgeDeclaration
from charleston_fsm.ledger.record import export_record, public_key_text
from charleston_fsm.ledger.record_verify import verify_record
from charleston_fsm.store import GameStore, NewGame, load_key, play_bots

SCHEMA = json.loads((Path(__file__).parents[1] / "docs" / "record.schema.json").read_text())
KEY = "k" * 40


def _tamper(text: str, change) -> str:  # type: ignore[no-untyped-def]
    lines = [json.loads(line) for line in text.splitlines()]
    for line in lines:
        if change(line):
            break
    return "".join(json.dumps(line) + "\n" for line in lines)


def _bump_tile(line: dict) -> bool:
    if line.get("type") == "tiles_transferred":
        line["payload"]["from_hand"][0] += 1
        return True
    return False


def _swap_wall(line: dict) -> bool:
    if line["kind"] == "header":
        line["deal"]["wall"][:2] = line["deal"]["wall"][1::-1]
        return True
    return False


@pytest.mark.rule("SVC-08", "NMJL-21")
def test_an_exported_record_verifies_offline_and_fails_after_any_change(
    sqlite_url: str,
) -> None:
    store = GameStore(sqlite_url, anchor_key=load_key(KEY))
    try:
        game_id = store.registry.create_game(NewGame(seed=11))
        store.writes.execute(game_id, {"type": "declare_mah_jongg", "seat": "east"})
        store.writes.execute(game_id, JudgeDeclaration(verdict="invalid", text="not on the card"))
        play_bots(store, game_id, 11)
        text = export_record(store, game_id)
        public = public_key_text(store.anchor_key)
    finally:
        store.dispose()
    for line in text.splitlines():
        jsonschema.validate(json.loads(line), SCHEMA)

    verdict = verify_record(text, public)
    assert verdict.ok, verdict.findings
    assert verdict.finished and verdict.key_pinned
    assert '"declaration_judged"' in text  # the verdict is part of the fold

    kinds = {
        "a tile id": _tamper(text, _bump_tile),
        "the deal": _tamper(text, _swap_wall),
        "a dropped row": "".join(line + "\n" for i, line in enumerate(text.splitlines()) if i != 5),
        "a verdict": text.replace('"verdict": "invalid"', '"verdict": "valid"', 1),
    }
    for what, changed in kinds.items():
        assert not verify_record(changed, public).ok, what
    # the signature with another key, or a file re-signed by someone else
    other = public_key_text(load_key("x" * 40))
    assert [f.kind for f in verify_record(text, other).findings] == [
        "other_key",
        "bad_signature",
    ]


def test_record_cli_exports_verifies_and_exits_non_zero(sqlite_url: str, tmp_path: Path) -> None:
    store = GameStore(sqlite_url, anchor_key=load_key(KEY))
    try:
        game_id = store.registry.create_game(NewGame(seed=3))
        play_bots(store, game_id, 3)
    finally:
        store.dispose()
    env = {"CHARLESTON_ANCHOR_KEY": KEY}
    out = tmp_path / "game.jsonl"
    cli("record", "export", game_id, "-o", str(out), "--database-url", sqlite_url, env=env)
    public = cli("anchors", "public-key", env=env).stdout.strip()
    done = cli("record", "verify", str(out), "--public-key", public)
    assert "ok" in done.stdout
    bad = tmp_path / "bad.jsonl"
    bad.write_text(_tamper(out.read_text(), _bump_tile))
    failed = cli("record", "verify", str(bad), check=False)
    assert failed.returncode == 1 and "changed after it was written" in failed.stdout
    missing = cli("record", "verify", str(tmp_path / "nope.jsonl"), check=False)
    assert missing.returncode == 2 and "Cannot read" in missing.stdout
    assert "Traceback" not in missing.stdout + missing.stderr
    unknown = cli(
        "record", "export", "no-such-game", "--database-url", sqlite_url, env=env, check=False
    )
    assert unknown.returncode == 1 and "no-such-game" in unknown.stdout

"""Tampering with a stored game, as a database editor would, on both backends.

Each kind of edit must be named precisely by verify, the same by the store, the HTTP
route and the CLI; the game must then be quarantined (no seat gets a payload built
from the broken record), and lifted only once the record is repaired.
"""

from __future__ import annotations

import json
import re
import stat
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from api_helpers import Game, Server, cli, running, tile_ids
from sqlalchemy import delete, insert, select, text, update

from charleston_fsm.ledger.hashing import row_hash
from charleston_fsm.ledger.verify import fold_rows
from charleston_fsm.store import GameStore, NewGame, QuarantineNotLifted, StoredEvent, play_bots
from charleston_fsm.store.database.models import AnchorRow, EventRow, GameRow, ProjectionRow

SEED = 6  # the bots of this seed place their last tiles after the Charleston is over
Expected = set[tuple[str, int | None]]


# -- what an editor with write access does ----------------------------------------------------
def stored_rows(store: GameStore, game_id: str) -> list[StoredEvent]:
    """The rows as they are in the database (the store's own reads would refuse them)."""
    with store.engine.connect() as conn:
        rows = conn.execute(
            select(EventRow).where(EventRow.game_id == game_id).order_by(EventRow.seq)
        ).all()
    return [StoredEvent.from_row(r) for r in rows]


def rewrite_tail(
    store: GameStore, game_id: str, start: int, change: Callable[[dict[str, Any]], None]
) -> dict[int, str]:
    """Change every row from ``start`` on and re-hash the chain (and the recorded head) as
    a careful editor would; returns the new hash per seq."""
    rows = stored_rows(store, game_id)
    prev = rows[start - 2].hash
    hashes: dict[int, str] = {}
    with store.engine.begin() as conn:
        for row in rows[start - 1 :]:
            fields = row.hashed()
            change(fields)
            fields["prev_hash"] = prev
            prev = hashes[row.seq] = row_hash(**fields)
            conn.execute(
                update(EventRow)
                .where(EventRow.game_id == game_id, EventRow.seq == row.seq)
                .values(**fields, hash=prev)
            )
        conn.execute(update(GameRow).where(GameRow.id == game_id).values(head_hash=prev))
    return hashes


def anchor_seqs(store: GameStore, game_id: str) -> list[int]:
    return [a.seq for a in store.tamper.anchors(game_id)]


def last_command(rows: list[StoredEvent]) -> int:
    """The first seq of the last command's rows."""
    first = len(rows)
    while first > 1 and rows[first - 2].command_id == rows[-1].command_id:
        first -= 1
    return first


# -- the kinds of tampering: each edits a finished game and returns the exact findings ---------
def appended(store: GameStore, game_id: str) -> Expected:
    """A forged vote after the recorded head, correctly chained and hashed."""
    last = stored_rows(store, game_id)[-1]
    fields = {
        **last.hashed(),
        "seq": last.seq + 1,
        "type": "vote_cast",
        "seat": "south",
        "step": None,
        "payload": {"choice": "stop"},
        "command_id": "forged",
        "prev_hash": last.hash,
    }
    with store.engine.begin() as conn:
        conn.execute(insert(EventRow).values(**fields, hash=row_hash(**fields)))
    return {("beyond_head", last.seq + 1)}


def deleted_rows(store: GameStore, game_id: str) -> Expected:
    """The last command's rows deleted, nothing else touched."""
    rows = stored_rows(store, game_id)
    first, last = last_command(rows), rows[-1].seq
    with store.engine.begin() as conn:
        conn.execute(delete(EventRow).where(EventRow.game_id == game_id, EventRow.seq >= first))
    return {("missing_rows", first), ("anchor_row_gone", last), ("projection_differs", None)}


def deleted_rows_hidden(store: GameStore, game_id: str) -> Expected:
    """The last command deleted, and the game's head and projection moved back to match:
    only the anchor of the deleted head can tell."""
    rows = stored_rows(store, game_id)
    first, last = last_command(rows), rows[-1].seq
    kept = rows[: first - 1]
    table = fold_rows(kept)
    with store.engine.begin() as conn:
        conn.execute(delete(EventRow).where(EventRow.game_id == game_id, EventRow.seq >= first))
        conn.execute(
            update(GameRow)
            .where(GameRow.id == game_id)
            .values(last_seq=first - 1, head_hash=kept[-1].hash)
        )
        conn.execute(
            update(ProjectionRow)
            .where(ProjectionRow.game_id == game_id)
            .values(seq=first - 1, snapshot=table.snapshot())
        )
    return {("anchor_row_gone", last)}


def reordered(store: GameStore, game_id: str) -> Expected:
    """Rows 10 and 11 (two transfers of one pass) swap places."""
    with store.engine.begin() as conn:
        for old, new in ((10, -1), (11, 10), (-1, 11)):
            conn.execute(
                update(EventRow)
                .where(EventRow.game_id == game_id, EventRow.seq == old)
                .values(seq=new)
            )
    return {
        ("reordered_row", 10),
        ("reordered_row", 11),
        ("bad_link", 10),
        ("bad_link", 11),
        ("bad_link", 12),
        ("replay_failed", None),
    }


def retyped(store: GameStore, game_id: str) -> Expected:
    """A transfer relabelled pass_resolved, whose redaction would show its tiles."""
    target = next(r for r in stored_rows(store, game_id) if r.type == "tiles_transferred")
    with store.engine.begin() as conn:
        conn.execute(
            update(EventRow)
            .where(EventRow.game_id == game_id, EventRow.seq == target.seq)
            .values(type="pass_resolved")
        )
    return {("retyped_row", target.seq), ("replay_failed", None)}


def _moved_times(fields: dict[str, Any]) -> None:
    fields["created_at"] = fields["created_at"] - timedelta(minutes=5)


def rehashed_tail(store: GameStore, game_id: str) -> Expected:
    """The last four rows' times moved and the chain re-hashed from there: every hash and
    link holds, the replay is the same; only the anchors know."""
    start = stored_rows(store, game_id)[-1].seq - 3
    rewrite_tail(store, game_id, start, _moved_times)
    return {("anchor_differs", seq) for seq in anchor_seqs(store, game_id) if seq >= start}


def forged_anchor(store: GameStore, game_id: str) -> Expected:
    """The same rewrite, and the anchors moved to the new hashes without the key."""
    start = stored_rows(store, game_id)[-1].seq - 3
    hashes = rewrite_tail(store, game_id, start, _moved_times)
    moved = [seq for seq in anchor_seqs(store, game_id) if seq >= start]
    with store.engine.begin() as conn:
        for seq in moved:
            conn.execute(
                update(AnchorRow)
                .where(AnchorRow.game_id == game_id, AnchorRow.seq == seq)
                .values(head_hash=hashes[seq])
            )
    return {("anchor_bad_signature", seq) for seq in moved}


def missing_anchor(store: GameStore, game_id: str) -> Expected:
    """The finished game's final anchor deleted."""
    last = stored_rows(store, game_id)[-1].seq
    with store.engine.begin() as conn:
        conn.execute(delete(AnchorRow).where(AnchorRow.game_id == game_id, AnchorRow.seq == last))
    return {("anchor_missing", last)}


def edited_projection(store: GameStore, game_id: str) -> Expected:
    """East's first tile given to South in the projection (the rows untouched)."""
    with store.engine.begin() as conn:
        snapshot = conn.execute(
            select(ProjectionRow.snapshot).where(ProjectionRow.game_id == game_id)
        ).scalar_one()
        racks = snapshot["racks"]
        racks["south"].append(racks["east"].pop(0))
        conn.execute(
            update(ProjectionRow).where(ProjectionRow.game_id == game_id).values(snapshot=snapshot)
        )
    return {("projection_differs", None)}


def reopened(store: GameStore, game_id: str) -> Expected:
    """The finished, sealed game set back to ``active`` (it would take commands again)."""
    with store.engine.begin() as conn:
        conn.execute(update(GameRow).where(GameRow.id == game_id).values(status="active"))
    return {("status_differs", None)}


#: kind -> (tamper, whether a seat's read of the events finds it by itself)
TAMPERING: dict[str, tuple[Callable[[GameStore, str], Expected], bool]] = {
    "appended": (appended, True),
    "deleted_rows": (deleted_rows, False),
    "deleted_rows_hidden": (deleted_rows_hidden, False),
    "reordered": (reordered, True),
    "retyped": (retyped, True),
    "rehashed_tail": (rehashed_tail, False),
    "forged_anchor": (forged_anchor, False),
    "missing_anchor": (missing_anchor, False),
    "edited_projection": (edited_projection, False),
    "reopened": (reopened, False),
}

_FINDING_LINE = re.compile(r"^  (?:seq (\d+)|game) (\w+): ", re.MULTILINE)


def cli_findings(stdout: str) -> Expected:
    return {(kind, int(seq) if seq else None) for seq, kind in _FINDING_LINE.findall(stdout)}


def findings(verdict: dict[str, Any]) -> Expected:
    return {(f["kind"], f["seq"]) for f in verdict["findings"]}


def assert_quarantined_for_seats(game: Game) -> None:
    """Every read and command of a seat is refused with 423 game_quarantined, no tile in it."""
    east = game.clients["east"]
    answers = [
        east.get(game.path()),
        east.get(game.path("/events")),
        east.get(game.path("/replay")),
        east.get(game.path("/stream")),
        east.post(game.path("/commands"), json={"type": "place_tiles"}),
        east.post(game.path("/bot")),
        game.clients["director"].get(game.path()),
    ]
    for answer in answers:
        assert answer.status_code == 423, (answer.request.url, answer.text)
        body = answer.json()
        assert body["code"] == "game_quarantined" and "director" in body["detail"]
        assert answer.headers["content-type"].startswith("application/problem+json")
        assert tile_ids(body) == set()


# -- one serve per backend for the HTTP cases (a start cost more than a case) ----------------
#: every table, the ones that refer to games first
EMPTIED = ("quarantines", "anchors", "game_credentials", "projections", "commands", "events")
EMPTIED += ("games", "rounds")


@pytest.fixture(scope="module")
def shared_server(
    module_db_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Server]]:
    """This module's ``serve`` and its database URL, per backend."""
    with running(module_db_url, tmp_path_factory.mktemp("tamper-serve")) as server:
        yield module_db_url, server


@pytest.fixture
def served(shared_server: tuple[str, Server]) -> Iterator[tuple[GameStore, str, Server]]:
    """A store on the shared server's database, emptied for this case (its verify counts
    every game), with the URL and the server."""
    url, server = shared_server
    store = GameStore(url)
    with store.engine.begin() as conn:
        for table in EMPTIED:
            conn.execute(text(f"DELETE FROM {table}"))
    try:
        yield store, url, server
    finally:
        store.dispose()


@pytest.mark.rule("SVC-08")
@pytest.mark.parametrize("kind", list(TAMPERING))
def test_tampering_is_named_quarantined_and_reported_alike(
    kind: str, served: tuple[GameStore, str, Server]
) -> None:
    tamper, reads_find_it = TAMPERING[kind]
    store, db_url, server = served
    game = Game.create(server, seed=SEED)
    untouched = Game.create(server, seed=SEED + 1)
    play_bots(store, game.game_id, SEED)
    play_bots(store, untouched.game_id, SEED + 1)
    assert store.tamper.verify(game.game_id).ok
    # the finishing commands' seals write anchors from a background thread; the tamperer's
    # own transaction (read, then write) must not race them (SQLite: a busy snapshot)
    store.writes.wait_for_seals()
    expected = tamper(store, game.game_id)

    # a seat's read checks the rows it serves: it finds what a plain read can
    first_read = game.clients["east"].get(game.path("/events"))
    assert first_read.status_code == (423 if reads_find_it else 200), first_read.text
    assert bool(store.tamper.quarantines(game.game_id)) is reads_find_it

    over_http = game.clients["director"].get(game.path("/verify"))
    assert over_http.status_code == 200, over_http.text
    verdict = over_http.json()
    assert verdict["ok"] is False
    assert findings(verdict) == expected, verdict["findings"]
    assert verdict["quarantine"]["active"] is True
    assert findings(verdict["quarantine"]) == expected

    by_cli = cli("verify", "--database-url", db_url, check=False)
    assert by_cli.returncode == 1, by_cli.stdout + by_cli.stderr
    assert f"{game.game_id}: FAILED, quarantined" in by_cli.stdout
    assert untouched.game_id not in by_cli.stdout  # the other game verifies
    assert cli_findings(by_cli.stdout) == expected, by_cli.stdout
    assert "2 game(s) verified: 1 ok, 1 failed (quarantined)" in by_cli.stdout
    assert store.tamper.verify(game.game_id).to_dict()["findings"] == verdict["findings"]

    assert_quarantined_for_seats(game)
    audit = game.clients["director"].get(game.path("/audit"))
    assert audit.status_code in (200, 423), audit.text
    listed = game.clients["director"].get(game.path("/quarantine")).json()
    assert [q["active"] for q in listed["quarantines"]] == [True]
    assert untouched.view("east")["rack"]  # the other game is served as before
    game.close()
    untouched.close()


@pytest.mark.rule("SVC-08")
def test_a_forged_row_is_removed_and_the_quarantine_lifted(
    served: tuple[GameStore, str, Server],
) -> None:
    store, _, server = served
    game = Game.create(server, seed=SEED)
    play_bots(store, game.game_id, SEED)
    (_, forged), *_ = appended(store, game.game_id)
    director = game.clients["director"]
    assert director.get(game.path("/verify")).json()["ok"] is False

    refused = director.post(game.path("/quarantine/lift"), json={"note": "looked"})
    assert refused.status_code == 409, refused.text
    assert refused.json()["code"] == "quarantine_not_lifted"
    assert f"Rows {forged}" in refused.json()["detail"] or f"Row {forged}" in refused.text
    seat = game.clients["east"].post(game.path("/quarantine/lift"), json={"note": "x"})
    assert seat.status_code == 403

    with store.engine.begin() as conn:  # the repair: the forged row goes
        conn.execute(
            delete(EventRow).where(EventRow.game_id == game.game_id, EventRow.seq == forged)
        )
    lifted = director.post(game.path("/quarantine/lift"), json={"note": "forged vote removed"})
    assert lifted.status_code == 200, lifted.text
    assert lifted.json()["lifted_by"] == "director (HTTP)"
    assert game.clients["east"].get(game.path("/events")).status_code == 200
    history = director.get(game.path("/quarantine")).json()["quarantines"]
    assert [(q["active"], q["lift_note"]) for q in history] == [(False, "forged vote removed")]
    again = director.post(game.path("/quarantine/lift"), json={"note": "again"})
    assert again.status_code == 409
    game.close()


def altered_anchor(store: GameStore, game_id: str) -> Expected:
    """The final anchor's head hash overwritten (the rows untouched)."""
    last = stored_rows(store, game_id)[-1].seq
    with store.engine.begin() as conn:
        conn.execute(
            update(AnchorRow)
            .where(AnchorRow.game_id == game_id, AnchorRow.seq == last)
            .values(head_hash="f" * 64)
        )
    return {("anchor_bad_signature", last)}


@pytest.mark.rule("SVC-08")
@pytest.mark.parametrize(
    ("tamper", "repair"),
    [
        (missing_anchor, ["anchors", "restore", "{kept}"]),
        (altered_anchor, ["anchors", "restore", "{kept}"]),
        (edited_projection, ["quarantine", "rebuild-projection", "{game}"]),
    ],
)
def test_a_director_repairs_then_lifts_from_the_cli(
    tamper: Callable[[GameStore, str], Expected],
    repair: list[str],
    store: GameStore,
    db_url: str,
    tmp_path: Path,
) -> None:
    game_id = store.registry.create_game(NewGame(seed=SEED))
    play_bots(store, game_id, SEED)
    kept = tmp_path / "anchors.json"
    cli("anchors", "export", str(kept), "--database-url", db_url)
    expected = tamper(store, game_id)
    assert findings(store.tamper.verify(game_id).to_dict()) == expected
    lift = ["quarantine", "lift", game_id, "--note", "repaired", "--database-url", db_url]
    early = cli(*lift, check=False)
    assert early.returncode == 1 and "still fails verify" in early.stdout

    cli(*[part.format(kept=kept, game=game_id) for part in repair], "--database-url", db_url)
    assert store.tamper.verify(game_id, quarantine=False).ok
    assert "lifted by" in cli(*lift).stdout
    assert store.reads.view(game_id, "east")["rack"]
    listed = cli("quarantine", "list", "--all", "--database-url", db_url).stdout
    assert "note: repaired" in listed and "ACTIVE" not in listed


def test_verify_reports_each_bad_game_and_goes_on(store: GameStore, db_url: str) -> None:
    games = [store.registry.create_game(NewGame(seed=seed)) for seed in (1, 2, 3)]
    for seed, game_id in enumerate(games, start=1):
        play_bots(store, game_id, seed)
    bad = games[1]
    confirm = next(r for r in stored_rows(store, bad) if r.type == "pass_confirmed")

    def malformed(fields: dict[str, Any]) -> None:  # a payload no command validates
        if fields["seq"] == confirm.seq:
            fields["payload"] = {"tiles": "three of them", "blind": -1}

    rewrite_tail(store, bad, confirm.seq, malformed)
    done = cli("verify", "--database-url", db_url, check=False)
    assert done.returncode == 1
    assert f"{bad}: FAILED, quarantined" in done.stdout
    assert "replay_failed: The rows do not replay through the chart (ValidationError" in (
        done.stdout
    )
    assert "3 game(s) verified: 2 ok, 1 failed (quarantined)" in done.stdout
    assert [q["game_id"] for q in store.tamper.quarantines()] == [bad]
    assert store.tamper.verify(games[2]).ok


@pytest.mark.rule("SVC-08")
def test_an_exported_anchor_file_catches_what_the_database_no_longer_can(
    store: GameStore, db_url: str, tmp_path: Path
) -> None:
    game_id = store.registry.create_game(NewGame(seed=SEED))
    play_bots(store, game_id, SEED)
    kept = tmp_path / "anchors.json"
    exported = cli("anchors", "export", str(kept), "--database-url", db_url).stdout
    assert f"of 1 game(s) written to {kept}" in exported
    rows = stored_rows(store, game_id)
    first, last = last_command(rows), rows[-1].seq
    deleted_rows_hidden(store, game_id)
    with store.engine.begin() as conn:  # the editor also deletes the anchors of those rows
        conn.execute(delete(AnchorRow).where(AnchorRow.game_id == game_id, AnchorRow.seq >= first))

    assert store.tamper.verify(game_id).ok  # the database alone is consistent again
    done = cli("verify", "--anchors", str(kept), "--database-url", db_url, check=False)
    assert done.returncode == 1
    assert ("anchor_row_gone", last) in cli_findings(done.stdout)
    assert f"The kept anchor at seq {last} pins row {last}, which is gone" in done.stdout
    assert store.tamper.quarantines(game_id)[0]["active"]
    with pytest.raises(QuarantineNotLifted, match="lift it with the same file"):
        store.tamper.lift_quarantine(game_id, by="test", note="the database looks fine")

    document = json.loads(kept.read_text())
    document["anchors"][0]["seq"] = "not a number"
    kept.write_text(json.dumps(document))
    broken = cli("verify", "--anchors", str(kept), "--database-url", db_url, check=False)
    assert broken.returncode == 2 and "Anchor 1 of" in broken.stdout


def test_anchors_are_written_with_their_commands_and_signed(store: GameStore) -> None:
    from charleston_fsm.ledger.anchors import needs_anchor
    from charleston_fsm.store import ANCHOR_EVERY

    game_id = store.registry.create_game(NewGame(seed=SEED))
    play_bots(store, game_id, SEED)
    rows = stored_rows(store, game_id)
    anchors = store.tamper.anchors(game_id)
    assert all(store.anchor_key.checks(a) for a in anchors)
    by_seq = {a.seq: a for a in anchors}
    assert by_seq[1].head_hash == rows[0].hash
    assert by_seq[rows[-1].seq].finished and by_seq[rows[-1].seq].head_hash == rows[-1].hash
    for multiple in range(ANCHOR_EVERY, rows[-1].seq + 1, ANCHOR_EVERY):
        # the command whose rows reach each multiple is anchored at its last row
        end = multiple
        while end < rows[-1].seq and rows[end].command_id == rows[multiple - 1].command_id:
            end += 1
        assert by_seq[end].head_hash == rows[end - 1].hash
    assert needs_anchor(ANCHOR_EVERY - 1, ANCHOR_EVERY + 2, False)
    assert not needs_anchor(ANCHOR_EVERY + 1, ANCHOR_EVERY + 3, False)


def test_the_key_file_is_created_private_and_named(tmp_path: Path, sqlite_url: str) -> None:
    key_file = tmp_path / "keys" / "anchor.key"
    done = cli(
        "verify", "--database-url", sqlite_url, env={"CHARLESTON_ANCHOR_KEY_FILE": str(key_file)}
    )
    assert f"created a new anchor key: key file {key_file} (mode 0600)" in done.stdout
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    again = cli(
        "verify", "--database-url", sqlite_url, env={"CHARLESTON_ANCHOR_KEY_FILE": str(key_file)}
    )
    assert "created" not in again.stdout
    short = cli(
        "verify", "--database-url", sqlite_url, env={"CHARLESTON_ANCHOR_KEY": "x"}, check=False
    )
    assert short.returncode == 2 and "at least 32" in short.stdout


def test_readers_finding_it_at_once_open_one_quarantine(store: GameStore) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from charleston_fsm.store import GameQuarantined

    game_id = store.registry.create_game(NewGame(seed=SEED))
    play_bots(store, game_id, SEED)
    appended(store, game_id)

    def read(_: int) -> str:
        try:
            store.reads.events(game_id)
        except GameQuarantined as exc:
            return exc.code
        return "served"

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(read, range(16)))
    assert set(answers) == {"game_quarantined"}
    assert [q["number"] for q in store.tamper.quarantines(game_id)] == [1]


@pytest.mark.rule("SVC-08")
def test_a_command_colliding_with_a_forged_row_is_told_the_game_is_quarantined(
    store: GameStore,
) -> None:
    from charleston_fsm.engine.commands import ConfirmPass
    from charleston_fsm.engine.seats import Seat
    from charleston_fsm.engine.tiles import is_joker
    from charleston_fsm.store import GameQuarantined

    game_id = store.registry.create_game(NewGame(seed=SEED))  # live: the forged row takes seq 2
    appended(store, game_id)
    rack = store.reads.table(game_id).racks[Seat.EAST]
    tiles = [t for t in rack if not is_joker(t)][:3]
    with pytest.raises(GameQuarantined):  # not a Conflict to retry forever
        store.writes.execute(game_id, ConfirmPass(seat=Seat.EAST, tiles=tiles), command_id="e-1")
    assert findings(store.tamper.verify(game_id).to_dict()) == {("beyond_head", 2)}


@pytest.mark.rule("SVC-08")
def test_an_unfinished_game_marked_finished_fails_verify(store: GameStore) -> None:
    game_id = store.registry.create_game(NewGame(seed=SEED))
    assert store.tamper.verify(game_id).ok
    with store.engine.begin() as conn:
        conn.execute(update(GameRow).where(GameRow.id == game_id).values(status="finished"))
    verdict = store.tamper.verify(game_id, quarantine=False)
    assert findings(verdict.to_dict()) == {("status_differs", None)}
    assert "status" in verdict.message and "'active'" in verdict.message

"""The director's routes take bad input as the seats' routes do (issue 17, N1-N4).

The token before the body (401 without one, 403 with a seat's, whatever the body), a
command whose type is not a string is 400 ``not_a_director_command`` naming the command
id, and a NUL in a ruling's text or a lift's note is 422 naming the field on both
databases (PostgreSQL cannot store NUL, SQLite can: they must not disagree).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from api_helpers import Game, ok, running
from sqlalchemy import select, update
from test_api_errors import problem

from charleston_fsm.store import GameStore
from charleston_fsm.store.database.models import ProjectionRow

JSON = {"Content-Type": "application/json"}
MALFORMED = b'{"type": "record_ruling", '


@pytest.mark.rule("SVC-05")
def test_director_routes_check_the_token_before_the_body(db_url: str, tmp_path: Path) -> None:
    with running(db_url, tmp_path) as server, server.client() as anonymous:
        game = Game.create(server, seed=3)
        seat = {**JSON, "Authorization": f"Bearer {game.tokens['east']}"}
        for tail in ("/director/commands", "/quarantine/lift"):
            path = game.path(tail)
            problem(anonymous.post(path, content=MALFORMED, headers=JSON), 401, "missing_token")
            problem(anonymous.post(path, content=MALFORMED, headers=seat), 403, "director_only")
            director = game.clients["director"].post(path, content=MALFORMED, headers=JSON)
            assert director.status_code in (400, 422), director.text  # then the body
        game.close()


@pytest.mark.rule("SVC-01")
def test_a_director_command_whose_type_is_not_a_string_is_400(db_url: str, tmp_path: Path) -> None:
    with running(db_url, tmp_path) as server:
        game = Game.create(server, seed=3)
        director = game.clients["director"]
        before = ok(director.get(game.path("/events")))["events"]
        for kind in (["record_ruling"], {"a": 1}, 5, None, True):
            refused = director.post(
                game.path("/director/commands"), json={"type": kind, "command_id": "odd-1"}
            )
            body = problem(refused, 400, "not_a_director_command")
            assert body["command_id"] == "odd-1"
            assert refused.headers["Command-ID"] == "odd-1"
        keyed = director.post(
            game.path("/director/commands"),
            json={"type": ["close_ding_dong"]},
            headers={"Idempotency-Key": "odd-2"},
        )
        assert problem(keyed, 400, "not_a_director_command")["command_id"] == "odd-2"
        assert ok(director.get(game.path("/events")))["events"] == before  # nothing stored
        game.close()


@pytest.mark.rule("SVC-11", "SVC-08")
def test_nul_in_a_ruling_or_a_lift_note_is_422_naming_the_field(
    store: GameStore, db_url: str, tmp_path: Path
) -> None:
    with running(db_url, tmp_path) as server:
        game = Game.create(server, seed=3)
        director = game.clients["director"]
        ruling = {"type": "record_ruling", "kind": "note", "text": "bad\x00text"}
        refused = director.post(game.path("/director/commands"), json=ruling)
        body = problem(refused, 422, "invalid_command")
        assert "text" in body["detail"] and "NUL" in body["detail"]
        assert "ruling_recorded" not in [
            e["type"] for e in ok(director.get(game.path("/events")))["events"]
        ]
        ruling["text"] = "a line\nand another"  # text, line breaks and all, is kept
        ok(director.post(game.path("/director/commands"), json=ruling))

        # a quarantined game whose record was repaired: the lift's note is checked too
        with store.engine.begin() as conn:
            kept = conn.scalar(
                select(ProjectionRow.snapshot).where(ProjectionRow.game_id == game.game_id)
            )
            edited = {**kept, "passes_resolved": 7}
            conn.execute(
                update(ProjectionRow)
                .where(ProjectionRow.game_id == game.game_id)
                .values(snapshot=edited)
            )
        assert ok(director.get(game.path("/verify")))["ok"] is False
        with store.engine.begin() as conn:
            conn.execute(
                update(ProjectionRow)
                .where(ProjectionRow.game_id == game.game_id)
                .values(snapshot=kept)
            )
        lift = game.path("/quarantine/lift")
        body = problem(director.post(lift, json={"note": "fixed\x00"}), 422, "invalid_text")
        assert "note" in body["detail"] and "NUL" in body["detail"]
        assert game.clients["east"].get(game.path()).status_code == 423  # still quarantined
        lifted = ok(director.post(lift, json={"note": "projection put back"}))
        assert lifted["lift_note"] == "projection put back"
        game.close()

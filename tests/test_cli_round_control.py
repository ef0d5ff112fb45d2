"""A round run as a round through the command line: every director's act and a seat's
call go through ``--url`` to a real ``serve`` (each command is a process of its own, so
one database shows it: the CLI speaks HTTP), each a row of the table's chain."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_helpers import Server, cli, ok, running

from charleston_fsm.engine.events import ANNOTATION_TYPES


@pytest.fixture
def server(sqlite_url: str, tmp_path: Path) -> Iterator[Server]:
    with running(sqlite_url, tmp_path) as served:
        yield served


def ok_created(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 201, response.text
    return response.json()  # type: ignore[no-any-return]


@pytest.mark.rule("SVC-12", "SVC-13", "SVC-14", "SVC-15", "SVC-16")
def test_the_cli_runs_a_round_through_the_service(server: Server) -> None:
    """Every item through ``--url``."""
    url = server.base_url
    with server.client() as client:
        created = ok_created(
            client.post(
                "/v1/rounds",
                json={"tables": [{"seed": 50, "clock": {"confirm_pass": 120}}], "start": "held"},
            )
        )
    round_id, table = created["round_id"], created["tables"][0]
    game_id, tokens = table["game_id"], table["tokens"]
    director = ["--url", url, "--token", tokens["director"]]
    by_round = ["--url", url, "--token", created["token"]]

    started = cli("director", "round", "start", round_id, *by_round)
    assert "start: 1 of 1 tables" in started.stdout
    paused = cli("director", "round", "pause", round_id, *by_round)
    assert "pause: 1 of 1 tables" in paused.stdout
    cli("director", "round", "resume", round_id, *by_round)
    refused = cli("director", "start", game_id, *director, check=False)
    assert refused.returncode == 1 and "already started" in refused.stdout
    extended = cli(
        "director",
        "extend",
        game_id,
        "--seconds",
        "30",
        "--seat",
        "east",
        "--reason",
        "a spill",
        *director,
    )
    assert "East now has until" in extended.stdout
    cli("director", "bot", game_id, "--seat", "north", *director)
    cli("director", "hand-back", game_id, "--seat", "north", "--label", "Nell", *director)
    substitute = cli(
        "director", "substitute", game_id, "--seat", "south", "--label", "substitute: Bo", *director
    )
    assert f"{url}/table/{game_id}#token=" in substitute.stdout
    new_south = substitute.stdout.split("#token=")[1].split()[0]
    cli("seat", "call", game_id, "--reason", "a question", "--url", url, "--token", new_south)
    answered = cli(
        "director",
        "answer",
        game_id,
        "--seat",
        "south",
        "--ruling",
        "note",
        "--text",
        "asked and answered",
        *director,
    )
    assert "answer to south recorded" in answered.stdout
    link = cli("director", "spectator", game_id, "--delay", "10", *director)
    assert f"{url}/watch/{game_id}#token=" in link.stdout
    cli("director", "spectator", game_id, "--revoke", *director)
    round_link = cli("director", "round", "spectator", round_id, "--delay", "0", *by_round)
    assert f"{url}/watch/round/{round_id}#token=" in round_link.stdout
    revoked = cli("director", "round", "spectator", round_id, "--revoke", *by_round)
    assert "is revoked" in revoked.stdout
    round_watch = round_link.stdout.split("#token=")[1].split()[0]
    with server.client(round_watch) as watch:
        assert watch.get(f"/v1/rounds/{round_id}/spectate").status_code == 401
    old_south = cli("seat", "call", game_id, "--url", url, "--token", tokens["south"], check=False)
    assert old_south.returncode == 1 and "does not open this game" in old_south.stdout
    with server.client(tokens["director"]) as desk:
        rows = ok(desk.get(f"/v1/games/{game_id}/events"))["events"]
    kinds = [e["type"] for e in rows if e["type"] in ANNOTATION_TYPES]  # the bot's pass aside
    assert kinds == [
        "game_started",
        "clock_paused",
        "clock_resumed",
        "time_extended",
        "seat_taken",
        "seat_taken",
        "seat_taken",
        "director_called",
        "ruling_recorded",
        "call_answered",
        "spectator_link",
        "spectator_link",
    ]

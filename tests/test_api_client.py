"""A typed client generated from ``/openapi.json`` drives a whole round (issue 36, item 5).

``openapi-python-client`` (a maintained generator, as a platform's developers would use
it) writes a Python package from the document a real ``serve`` publishes, into a
temporary directory; the test imports it and plays the parts of a platform, a round's
director, a table's director and its seats with nothing but that package: create a
round, start it, a declaration and its verdict, extend a deadline, hand a seat to the bot
and back, a substitute's new token, a pass, the results, the feed and a webhook endpoint
delivering to a real receiver. Every answer also goes through the document's own schema
(``Contract``), and each is parsed into the generated types, so a route the document
leaves out, a body it does not name or an answer it describes wrongly fails here.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
from api_helpers import running
from feed_helpers import receiver
from test_api_schema import Contract

from charleston_fsm.engine.tiles import is_joker

PLATFORM_KEY = "platform-key-of-the-client-test"
#: the generator's own venv (scripts/ensure-client-generator.sh: it pins typer below what
#: the service's CLI runs on, so it stays out of .venv)
GENERATOR = Path(__file__).resolve().parent.parent / ".cache" / "client-generator" / "bin"
PACKAGE = "charleston_client"
#: the generator's settings: the package's name, and the record (JSON Lines, a media
#: type it does not know) read as text
CONFIG = f"""\
project_name_override: {PACKAGE}
package_name_override: {PACKAGE}
content_type_overrides:
  application/jsonl: text/plain
"""


def generate(spec: dict[str, Any], where: Path) -> None:
    """The client package for ``spec`` under ``where`` (``--meta none``: the bare package)."""
    (where / "openapi.json").write_text(json.dumps(spec))
    (where / "config.yaml").write_text(CONFIG)
    tool = GENERATOR
    if not (tool / "openapi-python-client").exists():
        reason = "openapi-python-client missing: run scripts/ensure-client-generator.sh"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason} (CI=true: the typed-client test must run)", pytrace=False)
        pytest.skip(reason)
    done = subprocess.run(
        [
            str(tool / "openapi-python-client"),
            "generate",
            "--path",
            "openapi.json",
            "--output-path",
            PACKAGE,
            "--meta",
            "none",
            "--config",
            "config.yaml",
        ],
        cwd=where,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": str(tool), "HOME": str(where)},  # its ruff pass: its own venv's
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    # a warning means a piece of the document was left out of the client
    assert "Warning" not in output and "WARNING" not in output, output


@contextmanager
def imported(where: Path) -> Iterator[ModuleType]:
    """The generated package, importable for the test's length only."""
    sys.path.insert(0, str(where))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(where))
        for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
            del sys.modules[name]


def test_a_generated_client_drives_a_round(sqlite_url: str, tmp_path: Path) -> None:
    env = {"CHARLESTON_PLATFORM_KEY": PLATFORM_KEY, "CHARLESTON_WEBHOOK_ALLOW": "127.0.0.1"}
    with (
        running(sqlite_url, tmp_path, env=env) as server,
        receiver() as hook,
    ):
        spec = httpx.get(f"{server.base_url}/openapi.json").json()
        generate(spec, tmp_path)
        with imported(tmp_path) as client:
            play_a_round(client, server.base_url, Contract(spec), hook)


def play_a_round(client: ModuleType, base_url: str, contract: Contract, hook: Any) -> None:
    models = importlib.import_module(f"{PACKAGE}.models")

    def op(name: str) -> Any:
        """The generated module of one operation (tag.operation_id)."""
        return importlib.import_module(f"{PACKAGE}.api.{name}")

    def as_(token: str) -> Any:
        hooks = {"event_hooks": {"response": [contract]}}
        return client.AuthenticatedClient(base_url=base_url, token=token, httpx_args=hooks)

    def call(operation: Any, *args: Any, status: int = 200, **kwargs: Any) -> Any:
        """The operation's parsed answer, after its status is the one expected."""
        answer = operation.sync_detailed(*args, **kwargs)
        assert answer.status_code == status, answer.content
        return answer.parsed

    platform = as_(PLATFORM_KEY)
    endpoint = call(
        op("platform.create_webhook"),
        client=platform,
        body=models.CreateWebhook(url=hook.url),
        status=201,
    )
    assert isinstance(endpoint, models.CreatedWebhook) and endpoint.secret

    # a round of one held table, with a clock (time to extend) and names for the seats
    clock = models.ClockSettings(confirm_pass=600, vote=600, courtesy=600, place_tiles=600)
    players = models.RoundTableSpecPlayersType0.from_dict({"east": "Ann", "south": "Bea"})
    spec = models.RoundTableSpec(seed=5, clock=clock, players=players, label="Table A")
    created = call(
        op("rounds.create_round"),
        client=platform,
        body=models.CreateRound(
            name="Round 1", tables=[spec], start=models.CreateRoundStartType0.HELD
        ),
        status=201,
    )
    assert isinstance(created, models.CreatedRound)
    round_id, table = created.round_id, created.tables[0]
    game_id = table.game_id
    room = as_(created.token)
    director, east = as_(table.tokens.director), as_(table.tokens.east)

    started = call(op("rounds.post_round_start"), round_id, client=room)
    assert isinstance(started, models.RoundActResult) and started.done == 1

    def direct(body: Any) -> Any:
        answer = call(op("director.post_director_command"), game_id, client=director, body=body)
        assert isinstance(answer, models.DirectorCommandResult)
        return answer

    # East declares a Heavenly Hand; the director rules it invalid: the Charleston plays
    declared = call(
        op("games.post_command"),
        game_id,
        client=east,
        body=models.DeclareMahJonggCommand(type_="declare_mah_jongg", command_id="east-1"),
    )
    assert isinstance(declared, models.CommandResult)
    assert declared.events[0].type_ == "mah_jongg_declared"
    verdict = models.JudgeDeclarationCommandVerdict.INVALID
    judged = direct(
        models.JudgeDeclarationCommand(
            type_="judge_declaration", verdict=verdict, text="not a hand of the card"
        )
    )
    assert judged.events[0].type_ == "declaration_judged"

    # the director's own commands, each as its generated type
    extended = direct(
        models.ExtendTimeCommand(
            type_="extend_time", seconds=120, seat=models.Seat.EAST, reason="a slow card"
        )
    )
    assert [e.type_ for e in extended.events] == ["time_extended"]
    to_bot = direct(models.HandToBotCommand(type_="hand_to_bot", seat=models.Seat.WEST))
    assert to_bot.events[0].type_ == "seat_taken"
    back = direct(
        models.HandBackCommand(type_="hand_back", seat=models.Seat.WEST, label="West again")
    )
    assert back.events[0].type_ == "seat_taken"
    substitute = call(
        op("seats.post_seat_token"),
        game_id,
        models.Seat.SOUTH,
        client=director,
        body=models.SubstituteBody(label="substitute: R. Chen"),
    )
    assert isinstance(substitute, models.NewSeatToken)
    south = as_(substitute.token)
    seen = call(op("games.get_game"), game_id, client=south)
    assert isinstance(seen, models.SeatGameView) and seen.view.seat == models.Seat.SOUTH

    # East passes: its rack from its own view, the pass as the generated command
    mine = call(op("games.get_game"), game_id, client=east)
    assert isinstance(mine, models.SeatGameView)
    tiles = [t.id for t in mine.view.rack if not is_joker(t.id)][:3]
    passed = call(
        op("games.post_command"),
        game_id,
        client=east,
        body=models.ConfirmPassCommand(type_="confirm_pass", tiles=tiles),
    )
    assert passed.events[0].type_ == "pass_confirmed"
    room_view = call(op("rounds.get_round"), round_id, client=room)
    assert isinstance(room_view, models.RoundView) and room_view.counts.tables == 1

    # the results: the verdict, the bot's turn and the substitute, per seat
    results = call(op("record.get_round_results"), round_id, client=room)
    assert isinstance(results, models.RoundResults)
    result = results.tables[0]
    assert [v.verdict for v in result.verdicts][-1] == "invalid"
    sitters = result.seats.additional_properties
    assert [s.by for s in sitters["west"]][-2:] == ["bot", "human"]
    assert sitters["south"][-1].label == "substitute: R. Chen"

    # the feed, read on from the start until the verdict is positioned
    def feed_types() -> set[str]:
        page = call(op("platform.read_feed"), client=platform, limit=1000)
        assert isinstance(page, models.FeedPage)
        return {str(e.type_) for e in page.entries if e.game_id in (game_id, None)}

    wait_until(lambda: {"round.created", "game.verdict"} <= feed_types())

    # the webhook endpoint: its receiver gets entries, and its log says so
    hook.wait_for(lambda: bool(hook.accepted()))
    log = call(op("platform.get_webhook"), endpoint.id, client=platform)
    assert isinstance(log, models.WebhookLog) and log.endpoint.id == endpoint.id
    wait_until(
        lambda: call(op("platform.get_webhook"), endpoint.id, client=platform).delivered >= 1
    )

    # every answer matched the document (Contract), operations of every role among them
    checked = {key.split(" -> ")[0] for key in contract.checked}
    assert {
        "POST /v1/games/{game_id}/commands",
        "POST /v1/games/{game_id}/director/commands",
        "POST /v1/rounds/{round_id}/start",
        "GET /v1/rounds/{round_id}/results",
        "GET /v1/feed",
        "POST /v1/webhooks",
    } <= checked, checked


def wait_until(check: Any, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "not there in time"
        time.sleep(0.1)

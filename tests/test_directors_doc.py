"""docs/directors.md's round, from creation to results, run as printed (bash, with the
clone's ``./dev cli``) against a real ``serve``: a held round started, paused and resumed
as one act, time added, a seat to the bot and back, a substitute, a call answered, a
spectator link, and the results saying who sat each seat."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from api_helpers import running

ROOT = Path(__file__).resolve().parent.parent


def walkthrough() -> str:
    text = (ROOT / "docs" / "directors.md").read_text()
    [block] = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    return block


def test_the_directors_round_runs_as_printed(sqlite_url: str, tmp_path: Path) -> None:
    with running(sqlite_url, tmp_path) as server:
        script = tmp_path / "round.sh"
        script.write_text(walkthrough().replace("./dev ", f"{ROOT}/dev "))
        env = {k: v for k, v in os.environ.items() if not k.startswith("CHARLESTON_")}
        env["CHARLESTON_ANCHOR_KEY_FILE"] = os.environ["CHARLESTON_ANCHOR_KEY_FILE"]
        done = subprocess.run(
            ["bash", str(script)],
            cwd=tmp_path,
            env={**env, "BASE": server.base_url, "COLUMNS": "400"},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        said = done.stdout
        assert "start: 12 of 12 tables" in said and "pause: 12 of 12 tables" in said
        assert "South now has until" in said
        assert f"{server.base_url}/table/" in said  # the substitute's link, shown once
        assert f"{server.base_url}/watch/" in said  # the featured table's spectator link
        # the results (the CSV, last): table 1 says who sits East now (the substitute, by
        # name and player id) and who sat East and North when
        table_1 = next(line for line in said.splitlines() if line.startswith("1,"))
        assert ",East R. Chen,East p-2203," in table_1
        assert "east: player, then R. Chen [p-2203] from seq" in table_1 and "Nell" in table_1
        created = json.loads((tmp_path / "round.json").read_text())
        with server.client(created["token"]) as room:
            audit = room.get(f"/v1/games/{created['tables'][0]['game_id']}/audit?format=text")
        assert audit.status_code == 200, audit.text
    for line in (  # every act is a line of table 1's audit
        "The table starts by the director (the whole round)",
        "The director pauses the clock (the whole round)",
        "The director adds 60 s for South: a spill",
        "North is played by the service's bot",
        "North is played by Nell",
        "East is played by R. Chen with a new token [player id p-2203]",
        "West calls the director: a tile came back",
        "The director answers West's call: ruling",
        "A live spectator link is issued (a featured table: no delay)",
    ):
        assert line in audit.text, line

"""The director's console over real HTTP: page links in the answers, the verdict on a
declaration, the round's room listing and its token at each desk."""

from __future__ import annotations

from pathlib import Path

import pytest
from api_helpers import Game, cli, ok, running

from charleston_fsm.bench.server import free_port
from charleston_fsm.ledger.record_verify import verify_record


@pytest.mark.rule("NMJL-21", "SVC-05")
def test_links_judge_and_room_over_http(db_url: str, tmp_path: Path) -> None:
    with running(db_url, tmp_path) as server:
        game = Game.create(server, ruleset="nmjl", seed=7)
        try:
            with server.client() as client:
                created = client.post("/v1/games", json={"seed": 8}).json()
            links, tokens, gid = created["links"], created["tokens"], created["game_id"]
            for seat in ("east", "south", "west", "north"):
                assert links[seat] == f"/table/{gid}#token={tokens[seat]}"
            assert links["director"] == f"/desk/{gid}#token={tokens['director']}"
            with server.client() as client:  # each page is served as it is linked
                assert client.get(links["east"].split("#")[0]).status_code == 200
                assert client.get(links["director"].split("#")[0]).status_code == 200

            # a Heavenly Hand judged invalid: the table is back in the First Right
            ok(game.command("east", {"type": "declare_mah_jongg"}))
            director = game.clients["director"]
            refused = game.command("east", {"type": "judge_declaration", "verdict": "valid"})
            assert refused.status_code in (400, 403, 422), refused.text
            judged = director.post(
                game.path("/director/commands"),
                json={"type": "judge_declaration", "verdict": "invalid", "text": "no hand"},
            )
            assert judged.status_code == 200, judged.text
            view = game.view("south")
            assert view["game"]["state"] == ["CHARLESTON_P1_R"]
            assert "confirm_pass" in view["allowed_commands"]
            assert view["game"]["declaration"]["verdict"] == "invalid"
            again = director.post(
                game.path("/director/commands"),
                json={"type": "judge_declaration", "verdict": "valid", "text": "x"},
            )
            assert again.status_code == 409, again.text
            assert again.json()["code"] == "declaration_already_judged"  # set aside, judged
            ok(game.command("south", {"type": "confirm_pass", "tiles": game.plain("south")}))
            assert ok(director.get(game.path("/verify")))["ok"]
            audit = ok(director.get(game.path("/audit")))
            # the signed record, and the public key that checks it (no token needed)
            with server.client() as client:
                key = ok(client.get("/v1/anchor-key"))
            assert key["algorithm"] == "Ed25519"
            record = director.get(game.path("/record"))
            assert record.status_code == 200, record.text
            assert verify_record(record.text, key["public_key"]).ok
            assert game.clients["east"].get(game.path("/record")).status_code == 403
            judged_rows = [d for d in audit["declarations"] if d.get("judged")]
            assert [(d["kind"], d["verdict"]) for d in judged_rows] == [("heavenly", "invalid")]
            text = director.get(game.path("/audit"), params={"format": "text"}).text
            assert "The director judges the heavenly hand invalid: no hand" in text
        finally:
            game.close()

        # a 3-table round: the room's link, each table's links, the listing at a glance
        with server.client() as client:
            body = {"name": "R1", "table": {"seed": 1, "clock": {"confirm_pass": 600}}}
            round_ = client.post("/v1/rounds", json={**body, "count": 3}).json()
        rid, rtoken = round_["round_id"], round_["token"]
        assert round_["links"]["room"] == f"/room/{rid}#token={rtoken}"
        assert all("director" in t["links"] for t in round_["tables"])
        with server.client(rtoken) as client:
            listing = ok(client.get(f"/v1/rounds/{rid}"))
            assert len(listing["tables"]) == 3
            row = listing["tables"][0]
            assert row["moved_at"] and row["clock"]["paused"] is False
            assert set(row["clock"]["deadlines"]) == {"east", "south", "west", "north"}
            # the round token directs a table: it pauses it, and never plays a seat
            first = round_["tables"][0]["game_id"]
            paused = client.post(
                f"/v1/games/{first}/director/commands", json={"type": "pause_clock"}
            )
            assert paused.status_code == 200, paused.text
            assert ok(client.get(f"/v1/rounds/{rid}"))["tables"][0]["clock"]["paused"] is True
            played = client.post(
                f"/v1/games/{first}/commands", json={"type": "confirm_pass", "tiles": [1, 2, 3]}
            )
            assert played.status_code == 403
            ok(
                client.post(
                    f"/v1/games/{first}/director/commands",
                    json={
                        "type": "record_ruling",
                        "kind": "warning",
                        "seat": "west",
                        "text": "slow",
                    },
                )
            )
            # the CLI's director commands go through the service, authorised like the page
            url = ["--url", server.base_url]
            out = cli("director", "resume", first, *url, "--token", rtoken).stdout
            assert "resume recorded at seq" in out
            cli("director", "ruling", first, *url, "--token", rtoken, "--kind", "note",
                "--text", "by the CLI")  # fmt: skip
            refused = cli("director", "pause", first, *url, "--token", "nope", check=False)
            assert refused.returncode == 1 and "does not open this game" in refused.stdout
            gone = ["--url", f"http://127.0.0.1:{free_port()}"]
            stopped = cli("director", "pause", first, *gone, "--token", rtoken, check=False)
            assert stopped.returncode == 2 and "Is it running?" in stopped.stdout
            assert "Traceback" not in refused.stdout + refused.stderr + stopped.stderr
            results = ok(client.get(f"/v1/rounds/{rid}/results"))
            assert [r["text"] for r in results["tables"][0]["rulings"]] == ["slow", "by the CLI"]
            csv_text = client.get(f"/v1/rounds/{rid}/results", params={"format": "csv"}).text
            header = csv_text.splitlines()[0]
            assert header.startswith("table,game_id,label,players,player_ids,finished")
            assert "warning west: slow" in csv_text and len(csv_text.splitlines()) == 4
        with server.client(round_["tables"][0]["tokens"]["director"]) as client:
            assert client.get(f"/v1/rounds/{rid}/results").status_code == 401
            other = round_["tables"][1]["game_id"]
            assert client.get(f"/v1/games/{other}").status_code == 401

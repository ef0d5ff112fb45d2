"""No spectator ever sees a tile: whole games over real HTTP (every ruleset, blind passes,
Ding Dong, a clock that plays an absent seat, a seat handed to the bot and back, a
substitute's new token, a call whose reason names a tile), and every payload a
spectator's link gets (the view after each command, the events, both streams, errors)
walked for tile ids. Behind a delay, no message is sent before the delay has passed, and
no view nor list of events, read all through the game, shows a moment newer than it."""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_helpers import StreamReader, command_body, ok, running, tile_ids
from budget import backends_by

from charleston_fsm.engine.bots import bots_for, play
from charleston_fsm.engine.commands import Command
from charleston_fsm.engine.events import Event
from charleston_fsm.engine.moments import parse_time
from charleston_fsm.engine.seats import Seat

DELAY = 2  # seconds the round's spectator link lags behind
CLOCK = {"confirm_pass": 1, "vote": 1, "courtesy": 1, "place_tiles": 1}
SECRET_REASON = "East passed 5B#17 and J#148 back"  # tile ids a spectator must not read


class Table:
    """One table of the round, its clients per role, and everything a spectator got."""

    def __init__(self, base: str, table: dict[str, Any]) -> None:
        self.base = base
        self.game_id = table["game_id"]
        self.tokens = dict(table["tokens"])
        self.clients = {
            r: httpx.Client(base_url=base, headers=_auth(t), timeout=30)
            for r, t in self.tokens.items()
        }
        self.seen: list[tuple[str, Any]] = []  # (where, payload) of every spectator answer
        self.sent = 0
        self.behind: httpx.Client | None = None  # the round's link, DELAY seconds behind
        # the table's own link is live: the round names it a featured table
        self.shown_behind: list[tuple[int, str]] = []  # (seq, at) of each delayed view

    def watch_behind(self, token: str) -> None:
        self.behind = httpx.Client(base_url=self.base, headers=_auth(token), timeout=30)

    def path(self, tail: str = "") -> str:
        return f"/v1/games/{self.game_id}{tail}"

    def look(self) -> None:
        """What the table's own (live) link shows now, and the round's link behind it."""
        answer = self.clients["spectator"].get(self.path("/spectate"))
        assert answer.status_code == 200, answer.text
        self.seen.append(("view", answer.json()))
        if self.behind is not None:
            self.look_behind(self.behind)

    def look_behind(self, behind: httpx.Client) -> None:
        """The view and the events behind the delay: nothing in them is newer than the
        delay at the moment the answers arrived (the service cut them before that), and
        while nothing is that old the view is a 409 that says when to look again."""
        view = behind.get(self.path("/spectate"))
        listed = behind.get(self.path("/spectate/events"))
        newest = datetime.now(UTC) - timedelta(seconds=DELAY)  # after both answers came
        assert listed.status_code == 200, listed.text
        self.seen += [("delayed events", listed.json()), ("delayed view", view.json())]
        for row in listed.json()["events"]:
            assert parse_time(row["created_at"]) <= newest, ("newer than the delay", row)
        if view.status_code == 409:
            assert view.json()["code"] == "behind_delay", view.text
            assert int(view.headers["Retry-After"]) >= 1
            return
        assert view.status_code == 200, view.text
        as_of = view.json()["view"]["as_of"]
        assert as_of["delay"] == DELAY and parse_time(as_of["at"]) <= newest, as_of
        self.shown_behind.append((as_of["seq"], as_of["at"]))

    def director(self, body: dict[str, Any]) -> dict[str, Any]:
        return ok(self.clients["director"].post(self.path("/director/commands"), json=body))

    def execute(self, command: Command) -> list[Event]:
        """A bot's command through its seat's token; the clock or the bot may have taken
        the decision meanwhile (409): that is the game going on, not a failure."""
        self.sent += 1
        body = {**command_body(command), "command_id": f"c-{self.sent}"}
        answer = self.clients[command.seat.value].post(self.path("/commands"), json=body)
        assert answer.status_code in (200, 409), answer.text
        if answer.status_code == 200:
            self.look()
        return []

    def view(self, seat: Seat) -> dict[str, Any]:
        return ok(self.clients[seat.value].get(self.path()))["view"]  # type: ignore[no-any-return]

    def finished(self) -> bool:
        return bool(ok(self.clients["director"].get(self.path()))["view"]["game"]["finished"])

    def close(self) -> None:
        for client in self.clients.values():
            client.close()
        if self.behind is not None:
            self.behind.close()


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def play_with_everything(table: Table, seed: int, ruleset: str) -> None:
    """Three seats played by the package's bots, North by nobody in the first pass (the
    clock plays it when its time runs out); West is handed to the service's bot and back,
    South to a substitute with a new token, and West calls the director with a tile in
    its reason.

    Four Winds: East asks for every Ding Dong the rules allow and nobody else declares
    Ready, and the director pauses the clock once it has acted (West's service bot then
    waits for the hand back): otherwise a clock that ran out on East's decision would
    declare Ready for it on a slow machine, and the game would have no Ding Dong."""
    # blind passes, both Charlestons
    bots = bots_for(seed, blind_rate=0.9, continue_rate=1.0, ready_rate=0.0)
    bots[Seat.EAST].ding_dong_rate = 1.0
    playing = {s: bots[s] for s in (Seat.EAST, Seat.SOUTH, Seat.WEST)}
    rng = random.Random(seed)
    rounds = 0
    deadline = time.monotonic() + 240
    while not table.finished():
        assert time.monotonic() < deadline, "the game did not finish"
        play(table.execute, table.view, playing, rng=rng)
        rounds += 1
        if rounds == 1:  # North's clock acts for it in the first pass; then its bot plays
            until_the_clock_acted(table)
            if ruleset == "four_winds":
                table.director({"type": "pause_clock"})
            playing[Seat.NORTH] = bots[Seat.NORTH]
            table.director({"type": "hand_to_bot", "seat": "west"})
            del playing[Seat.WEST]
            ok(table.clients["west"].post(table.path("/call"), json={"reason": SECRET_REASON}))
        elif rounds == 2:
            table.director({"type": "hand_back", "seat": "west", "label": "West again"})
            playing[Seat.WEST] = bots[Seat.WEST]
            answer = ok(
                table.clients["director"].post(
                    table.path("/seats/south/token"), json={"label": "substitute: Bo"}
                )
            )
            table.clients["south"].close()
            table.clients["south"] = httpx.Client(
                base_url=table.base, headers=_auth(answer["token"]), timeout=30
            )
            table.director({"type": "answer_call", "seat": "west", "answer": "cleared"})
        table.look()
        time.sleep(0.3)  # North's clock (1 s) plays it; the bots look again


def until_the_clock_acted(table: Table) -> None:
    """Poll (a generous deadline) until the clock has acted for a seat."""
    deadline = time.monotonic() + 60
    while True:
        rows = ok(table.clients["director"].get(table.path("/events")))["events"]
        if any(r["type"] == "clock_expired" for r in rows):
            return
        assert time.monotonic() < deadline, "the clock never acted"
        time.sleep(0.1)


@pytest.mark.rule("SVC-16")
@pytest.mark.parametrize(
    ("db_url", "ruleset"), backends_by(["nmjl", "house", "four_winds"]), indirect=["db_url"]
)
def test_no_spectator_payload_or_message_carries_a_tile(
    db_url: str, ruleset: str, tmp_path: Path
) -> None:
    seed = {"nmjl": 7, "house": 8, "four_winds": 9}[ruleset]
    with running(db_url, tmp_path) as server, server.client() as client:
        created = client.post(
            "/v1/rounds",
            json={
                "tables": [{"ruleset": ruleset, "seed": seed, "clock": CLOCK}],
                "start": "held",
                "spectator_delay": DELAY,
                "live_tables": [1],  # the featured table's own link is live, by choice
            },
        ).json()
        table = Table(server.base_url, created["tables"][0])
        table.watch_behind(created["spectator_token"])
        stream = f"{server.base_url}{table.path('/spectate/stream')}"
        live = StreamReader(stream, table.tokens["spectator"], after=0)
        delayed = StreamReader(stream, created["spectator_token"], after=0)
        wall = time.time() - time.perf_counter()  # the readers stamp with perf_counter
        try:
            table.look()  # held: the racks are dealt, nothing is shown of them
            with server.client(created["token"]) as room:
                ok(room.post(f"/v1/rounds/{created['round_id']}/start"))
            play_with_everything(table, seed, ruleset)
            events = ok(table.clients["director"].get(table.path("/events")))["events"]
            last = events[-1]["seq"]
            kinds = {e["type"] for e in events}
            assert {"clock_expired", "seat_taken", "director_called"} <= kinds
            if ruleset == "four_winds":
                assert "ding_dong_given" in kinds
            else:
                blind = [
                    e for e in events if e["type"] == "pass_confirmed" and e["payload"]["blind"]
                ]
                assert blind or ruleset == "house"  # house has no blind pass
            assert live.wait_for_seq(last, timeout=30)
            assert delayed.wait_for_seq(last, timeout=30 + DELAY)
            assert table.behind is not None
            table.look_behind(table.behind)  # the whole game is older than the delay now
            # each delayed view was the table at one of its rows, at that row's moment
            at_of = {e["seq"]: parse_time(e["created_at"]) for e in events}
            assert table.shown_behind and table.shown_behind[-1][0] == last
            for seq, at in table.shown_behind:
                assert at_of[seq] == parse_time(at), (seq, at)

            with server.client(created["spectator_token"]) as behind:
                view = ok(behind.get(table.path("/spectate")))
                listed = ok(behind.get(f"/v1/rounds/{created['round_id']}/spectate"))
                listed_events = ok(behind.get(table.path("/spectate/events")))
            shown_at = parse_time(view["view"]["as_of"]["at"])
            assert (datetime.now(UTC) - shown_at).total_seconds() >= DELAY
            table.seen += [("delayed view", view), ("round", listed), ("events", listed_events)]
            table.seen.append(
                ("events", ok(table.clients["spectator"].get(table.path("/spectate/events"))))
            )
            table.seen += [("live stream", m[2]) for m in live.messages]
            table.seen += [("delayed stream", m[2]) for m in delayed.messages]
            for where, payload in table.seen:
                assert tile_ids(payload) == set(), (where, payload)
                assert SECRET_REASON not in str(payload), where
            # behind the delay: no row was sent before it was DELAY seconds old
            for event, _, data, received in delayed.messages:
                if event == "subscribed":
                    continue
                age = wall + received - parse_time(data["created_at"]).timestamp()
                assert age >= DELAY - 0.05, (data["seq"], age)  # 50 ms: the two clocks' reads
            # a revoked link opens nothing, and says so without a tile
            ok(table.clients["director"].delete(table.path("/spectator")))
            refused = table.clients["spectator"].get(table.path("/spectate"))
            assert refused.status_code == 401 and tile_ids(refused.json()) == set()
            assert SECRET_REASON not in server.log_path.read_text()
        finally:
            live.close()
            delayed.close()
            table.close()

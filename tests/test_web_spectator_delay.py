"""A round 20 s behind, watched in Chromium at desktop and phone width: every table's own
spectator link (the links the round's creation hands out) and the round's page show
nothing newer than 20 s. Nothing here is a sleep taken as a proof: at each look the test
reads the table's stored rows first, then what each page shows (the last row its view
shows, every row of its history, each table's step on the round's page), then the time;
each row shown must be at least 20 s older than that time (the service cut it before the
page had it), and each page's words must be the table as the director's replay has it at
that row. The round must also have been seen behind: a look where a page showed less than
the store already held."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from api_helpers import Server, ok
from playwright.sync_api import Browser, Page, expect
from web_helpers import DESKTOP, PHONE, Shots, assert_axe_clean, doc_shot

from charleston_fsm.engine.moments import parse_time

DELAY = 20
TABLES = 2
BOTS = ["east", "south", "west", "north"]


@pytest.fixture
def browser(web_browser: Browser) -> Browser:
    return web_browser


@pytest.fixture
def server(web_server: Server) -> Server:
    return web_server


def words_of_a_table(game: dict[str, Any]) -> str:
    """The step in words, as a table's spectator page heads it (watch.js ``progress``)."""
    label = game["steps"][0]["label"] if game["steps"] else ""
    if game["finished"]:
        return "The Charleston is over"
    if game["phase"] in ("pass", "courtesy"):
        return f"Pass {game['pass_number']} of {game['pass_total']} · {label}"
    if game["phase"] == "vote":
        return "The vote: go on to the Second Charleston?"
    return label or " · ".join(game["state_labels"]) or "The table"


def words_in_the_round(game: dict[str, Any]) -> str:
    """A table's line on the round's page: its step, or how it ended."""
    if game["finished"]:
        ending = (game["ending"] or {}).get("text")
        return "The Charleston is over." + (f" {ending}" if ending else "")
    return words_of_a_table(game)


class Record:
    """The tables' stored rows (the director's) and their replays, for the checks."""

    def __init__(self, server: Server, created: dict[str, Any]) -> None:
        self.server = server
        self.directors = {t["game_id"]: t["tokens"]["director"] for t in created["tables"]}
        self.rows: dict[str, list[dict[str, Any]]] = {}
        self.replays: dict[tuple[str, int], dict[str, Any]] = {}

    def read(self) -> None:
        for game_id, token in self.directors.items():
            with self.server.client(token) as desk:
                self.rows[game_id] = ok(desk.get(f"/v1/games/{game_id}/events"))["events"]

    def moment(self, game_id: str, seq: int) -> datetime:
        if seq > len(self.rows[game_id]):
            self.read()  # written after the look began: newer than anything checked
        return parse_time(self.rows[game_id][seq - 1]["created_at"])

    def game(self, game_id: str, seq: int) -> dict[str, Any]:
        if (game_id, seq) not in self.replays:
            with self.server.client(self.directors[game_id]) as desk:
                view = ok(desk.get(f"/v1/games/{game_id}/replay?seq={seq}"))["view"]
            self.replays[game_id, seq] = view["game"]
        return self.replays[game_id, seq]


class Look:
    """What one page showed at one look: the rows it named, and whether the store held
    more than it showed (the delay seen holding)."""

    def __init__(self) -> None:
        self.behind = False
        self.shown = 0


def look_at_a_table(page: Page, game_id: str, record: Record, look: Look) -> bool:
    """One look at a table's page; ``True`` once it shows the table's end."""
    held = len(record.rows[game_id])  # read before the page
    seq, heading, history = page.evaluate(  # one look: the page cannot change within it
        """() => [document.getElementById('as-of').dataset.seq ?? null,
                  document.getElementById('progress').textContent,
                  [...document.querySelectorAll('#history li')].map((i) => i.value)]"""
    )
    newest = datetime.now(UTC) - timedelta(seconds=DELAY)  # after the page was read
    if not seq:
        assert not history, history  # nothing old enough yet, and nothing shown
        return False
    shown = int(seq)
    assert record.moment(game_id, shown) <= newest, (game_id, shown)
    for row in history:
        assert record.moment(game_id, row) <= newest, (game_id, row)
    assert heading == words_of_a_table(record.game(game_id, shown)), (heading, shown)
    look.shown += 1
    look.behind = look.behind or max([shown, *history]) < held
    return record.game(game_id, shown)["finished"]


def look_at_the_round(page: Page, record: Record, look: Look) -> tuple[bool, int]:
    """One look at the round's page: whether every table shows its end, and how many
    tables it shows."""
    held = {g: len(rows) for g, rows in record.rows.items()}
    lines = page.locator("#round-tables li").evaluate_all(
        """items => items.map((i) => {
            const where = i.querySelector('p.where');
            return {game: i.querySelector('a').href.split('/watch/')[1].split('#')[0],
                    seq: where?.dataset.seq ?? null, text: where?.textContent ?? ''};
        })"""
    )
    newest = datetime.now(UTC) - timedelta(seconds=DELAY)
    ended, shown = bool(lines), 0
    for line in lines:
        if line["seq"] is None:
            ended = False
            continue
        seq = int(line["seq"])
        assert record.moment(line["game"], seq) <= newest, line
        game = record.game(line["game"], seq)
        words, _, when = line["text"].partition(" (as it was at ")
        assert words == words_in_the_round(game) and when, line
        look.shown += 1
        shown += 1
        look.behind = look.behind or seq < held[line["game"]]
        ended = ended and game["finished"]
    return ended, shown


def test_a_round_20_s_behind_shows_nothing_newer_on_any_link(
    server: Server, browser: Browser
) -> None:
    shots = Shots("watch-round-delay")
    with server.client() as client:
        answer = client.post(
            "/v1/rounds",
            json={
                "name": "Round 20",
                "table": {"seed": 120, "bots": BOTS, "bot_pace": 1.0,
                          "players": {"east": "Eve", "south": "Sol"}},
                "count": TABLES,
                "spectator_delay": DELAY,
            },
        )  # fmt: skip
    assert answer.status_code == 201, answer.text
    created = answer.json()
    tables = created["tables"]
    assert [t["spectator"] for t in tables] == [{"delay": DELAY, "live": False}] * TABLES
    record = Record(server, created)
    pages: list[tuple[str, str | None, Page]] = []  # (width, game or None: the round's, page)
    for width, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        context = browser.new_context(viewport=viewport)
        for t in tables:
            page = context.new_page()
            page.goto(server.base_url + t["links"]["spectator"])
            pages.append((width, t["game_id"], page))
        page = context.new_page()
        page.goto(server.base_url + created["links"]["spectator"])
        pages.append((width, None, page))
    looks = {(width, game): Look() for width, game, _ in pages}
    for _width, game, page in pages:
        if game is None:
            expect(page.locator("#as-of")).to_contain_text("Every table is shown 20 s behind")
    shot = False
    deadline = time.monotonic() + 240
    while True:
        record.read()
        done, on_the_round = [], 0
        for width, game, page in pages:
            look = looks[width, game]
            if game is None:
                ended, shown = look_at_the_round(page, record, look)
                done.append(ended)
                on_the_round = shown if width == "desktop" else on_the_round
            else:
                done.append(look_at_a_table(page, game, record, look))
        if not shot and on_the_round == TABLES and not all(done):
            round_page = pages[TABLES][2]
            shots(round_page, "round-desktop")
            doc_shot(round_page, "watch-round-delay", full_page=True)
            shots(pages[TABLES + 1][2], "table-phone")
            doc_shot(pages[TABLES + 1][2], "watch-table-delay-phone", full_page=True)
            shot = True
        if all(done):
            break
        assert time.monotonic() < deadline, "the pages never showed every table's end"
        time.sleep(1)
    for key, look in looks.items():
        assert look.shown, f"{key}: the page never showed anything"
    # the delay was seen holding: some look found the store ahead of what a page showed
    assert any(look.behind for look in looks.values()), "no page was ever seen behind"
    for width, game, page in pages:
        assert_axe_clean(page, f"{'the round' if game is None else 'a table'} at {width} width")
    for context in {page.context for _, _, page in pages}:
        context.close()


def test_the_links_page_states_each_links_delay_and_labels_the_live_one(
    server: Server, browser: Browser
) -> None:
    """A round created from its page, 20 s behind with table 2 featured: every spectator
    link says how far behind it is, and the featured table's says live; the service holds
    each link to what its label says."""
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    page.goto(f"{server.base_url}/rounds/new")
    page.fill("#count", "2")
    page.fill("#spectator-delay", str(DELAY))
    page.fill("#live-tables", "2")
    page.get_by_role("button", name="Create the round").click()
    every = page.get_by_role("link", name=re.compile("^Spectators: every table"))
    expect(every).to_contain_text("20 s behind")
    first = page.get_by_role("link", name="Spectators (20 s behind)", exact=True)
    featured = page.get_by_role("link", name="Spectators (live: a featured table)", exact=True)
    expect(first).to_be_visible()
    expect(featured).to_be_visible()
    assert_axe_clean(page, "the new round's links, one live (phone)")
    for link, delay in ((first, DELAY), (featured, 0)):
        href = link.get_attribute("href") or ""
        game_id, token = href.split("/watch/")[1].split("#token=")
        with server.client(token) as watch:
            answer = watch.get(f"/v1/games/{game_id}/spectate/events")
        assert answer.status_code == 200, answer.text
        assert (answer.json()["delay"], answer.json()["live"]) == (delay, delay == 0)
    context.close()

"""The director's console in a real browser: the round room (a 3-table round, live,
sorted, one table paused), the desk (a ruling and a pause that land in the audit, a
Heavenly Hand judged invalid, the slider lighting the diagram at a seq, the timeline by
keyboard, a tile's route), a round created from its page, plain sentences for wrong
links and a stopped server, axe at desktop and phone widths."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from api_helpers import Server, running
from playwright.sync_api import Browser, Page, expect
from web_helpers import DESKTOP, PHONE, Shots, assert_axe_clean, doc_shot

expect.set_options(timeout=15_000)
CLOCK = {"confirm_pass": 600, "vote": 600, "courtesy": 600, "place_tiles": 600}


@pytest.fixture
def browser(web_browser: Browser) -> Browser:
    return web_browser


@pytest.fixture
def server(web_server: Server) -> Server:
    return web_server


def post(server: Server, path: str, body: dict[str, Any], token: str | None = None) -> Any:
    with server.client(token) as client:
        answer = client.post(path, json=body)
    assert answer.status_code in (200, 201), answer.text
    return answer.json()


def confirm_dialog(page: Page, button: str) -> None:
    dialog = page.get_by_role("dialog")
    expect(dialog).to_be_visible()
    dialog.get_by_role("button", name=button).click()
    expect(dialog).to_be_hidden()


def test_room_shows_a_three_table_round_and_pauses_a_table(
    server: Server, browser: Browser
) -> None:
    shots = Shots("room")
    names = {"east": "Ann", "south": "Bea", "west": "Cy", "north": "Di"}
    tables = [
        {
            "seed": 21,
            "label": "Oak",
            "clock": {**CLOCK, "on_expiry": "flag_late"},
            "players": names,
        },
        {"seed": 22, "label": "Elm", "clock": {"confirm_pass": 1, "on_expiry": "flag_late"}},
        {"seed": 23, "label": "Table 3", "bots": ["east", "south", "west", "north"]},
    ]
    round_ = post(server, "/v1/rounds", {"name": "Round 2", "tables": tables})
    for viewport, name in ((DESKTOP, "desktop"), (PHONE, "phone")):
        context = browser.new_context(viewport=viewport)
        page = context.new_page()
        page.goto(server.base_url + round_["links"]["room"])
        rows = page.locator("#tables tr")
        expect(rows).to_have_count(3)
        expect(page.locator("#counts")).to_contain_text("3 tables")
        # Elm's one-second clock flags every seat late; Ash's bots finish
        expect(page.locator('#tables tr[data-table="2"]')).to_have_attribute("data-late", "yes")
        expect(page.locator('#tables tr[data-table="3"]')).to_contain_text("finished")
        first = page.locator('#tables tr[data-table="1"]')
        expect(first).to_contain_text("Ann (East), Bea (South), Cy (West), Di (North)")
        # a label that only repeats the number is not said twice
        expect(page.locator('#tables tr[data-table="3"] a')).to_have_text("Table 3")
        if name == "desktop":
            page.select_option("#sort", "late")
            expect(rows.first).to_have_attribute("data-table", "2")
            page.check("#only-open")
            expect(rows).to_have_count(2)
            page.uncheck("#only-open")
            page.get_by_role("button", name="Pause the clock of table 1").click()
            confirm_dialog(page, "Pause it")
            expect(page.locator('#tables tr[data-table="1"]')).to_contain_text("paused")
            doc_shot(page, "room")
        shots(page, f"room-{name}")
        assert_axe_clean(page, f"the room ({name})")
        if name == "desktop":
            finished = page.locator('#tables tr[data-table="3"]').inner_text()
            page.locator('#tables tr[data-table="1"] a').click()
            # the desk's address is enough: what it shows is awaited below (its "load" can
            # take long on a busy machine, and says nothing the page's content does not)
            page.wait_for_url(re.compile(r"/desk/"), wait_until="commit")
            expect(page.locator("#audit")).to_contain_text("The director paused the clock.")
            # the desk's header: the round, the table's number and label, the players
            expect(page.locator("#where")).to_have_text(
                "Table 1 (Oak) of Round 2 · National Mah Jongg League"
            )
            expect(page.locator("#players")).to_have_text(
                "Players: Ann (East), Bea (South), Cy (West) and Di (North)"
            )
            assert_axe_clean(page, "the desk of a round's table")
        context.close()
    # the round's results carry the players' names and each finished table's ending
    with server.client(round_["token"]) as client:
        results = client.get(f"/v1/rounds/{round_['round_id']}/results")
        as_csv = client.get(f"/v1/rounds/{round_['round_id']}/results", params={"format": "csv"})
    assert results.status_code == 200, results.text
    by_table = {t["table"]: t for t in results.json()["tables"]}
    assert by_table[1]["players"] == names
    assert by_table[1]["ending"] is None  # still playing
    ending = by_table[3]["ending"]
    assert ending and ending in finished  # the words the room shows
    assert "East Ann; South Bea; West Cy; North Di" in as_csv.text
    assert ending in as_csv.text


def test_desk_rules_judges_and_reads_the_record(server: Server, browser: Browser) -> None:
    shots = Shots("desk-console")
    game = post(server, "/v1/games", {"seed": 31, "clock": {**CLOCK, "on_expiry": "flag_late"}})
    gid, tokens = game["game_id"], game["tokens"]
    context = browser.new_context(viewport=DESKTOP, accept_downloads=True)
    page = context.new_page()
    page.goto(server.base_url + game["links"]["director"])
    expect(page.locator("#live")).to_have_text("● live")
    expect(page.locator('#seats [data-seat="east"] .seat-clock')).to_contain_text("due in")

    # a ruling and a pause from the desk land in the audit
    page.select_option("#ruling-kind", "warning")
    page.select_option("#ruling-seat", "west")
    page.fill("#ruling-text", "Talking about tiles")
    page.get_by_role("button", name="Record the ruling").click()
    confirm_dialog(page, "Record it")
    expect(page.locator("#audit")).to_contain_text(
        "The director recorded a warning about West: “Talking about tiles”."
    )
    page.get_by_role("button", name="Pause the clock").click()
    page.get_by_role("dialog").get_by_role("button", name="Cancel").click()  # one click: nothing
    expect(page.locator("#audit")).not_to_contain_text("paused the clock")
    page.get_by_role("button", name="Pause the clock").click()
    confirm_dialog(page, "Pause the clock")
    expect(page.locator("#audit")).to_contain_text("The director paused the clock.")
    expect(page.locator('#seats [data-seat="east"] .seat-clock')).to_contain_text("clock paused")

    # East declares a Heavenly Hand; the desk judges it invalid: the First Right again
    post(server, f"/v1/games/{gid}/commands", {"type": "declare_mah_jongg"}, tokens["east"])
    expect(page.locator("#judge-form")).to_be_visible()
    page.get_by_label("invalid").check()
    page.fill("#judge-text", "Not a hand of this year's card")
    page.get_by_role("button", name="Judge the declaration").click()
    confirm_dialog(page, "Judge it invalid")
    expect(page.locator("#facts")).to_contain_text("First Charleston: pass Right")
    expect(page.locator("#judge-form")).to_be_hidden()
    with server.client(tokens["south"]) as client:
        seat = client.get(f"/v1/games/{gid}").json()["view"]
    assert "confirm_pass" in seat["allowed_commands"]
    assert seat["game"]["declaration"]["verdict"] == "invalid"

    # one pass, so there is a route to read; rows carry time, seat, tiles and markers
    for s in ("east", "south", "west", "north"):
        with server.client(tokens[s]) as client:
            view = client.get(f"/v1/games/{gid}").json()["view"]
            chosen = [t["id"] for t in view["rack"] if t["face"] != "J"][:3]
            post(server, f"/v1/games/{gid}/commands", {"type": "confirm_pass", "tiles": chosen},
                 tokens[s])  # fmt: skip
    expect(page.locator("#transfers table tr")).to_have_count(5)
    page.locator("#transfers .tile-chip").first.click()
    expect(page.locator("#route")).to_contain_text("First Charleston: pass Right")
    # the audit reads as sentences with tile names; seq and ids on a details line
    gave = page.locator('#audit li[data-kind="transfer"]').first
    expect(gave.locator(".s-text")).to_have_text(
        re.compile(r"^East gave [^#]+ to South\.$")  # "East gave 3 Bam, 9 Crak and Flower …"
    )
    expect(gave.locator(".s-detail")).to_have_text(re.compile(r"^seq \d+ · [\d:]+ · \w+#\d+"))
    expect(page.locator("#audit")).to_contain_text(
        "The director judged the Heavenly Hand invalid: “Not a hand of this year's card”."
    )
    # the statechart says where the table is in words, and zooms
    expect(page.locator("#diagram-now")).to_have_text("Now: First Charleston: pass Across")
    svg = page.locator("#diagram svg")
    width = svg.evaluate("e => e.getBoundingClientRect().width")
    page.get_by_role("button", name="Zoom the statechart in").click()
    expect(page.locator("#zoom-level")).to_have_text("125%")
    # the zoom redraws the chart: wait for the drawn one to be wider, not for one look
    page.wait_for_function(
        """w => { const e = document.querySelector('#diagram svg');
                 return e !== null && e.getBoundingClientRect().width > w * 1.1; }""",
        arg=width,
    )
    page.get_by_role("button", name="Fit the width").click()
    expect(page.locator("#zoom-level")).to_have_text("fitted to the width")
    # a tile's route through a blind pass reads in the order it travelled, though the
    # resolution records the forward before the hand-over
    route = page.evaluate(
        """async () => {
            const { routeOf } = await import('/static/desk_audit.js');
            const pass = {label: 'First Charleston: pass Left',
              blind_routes: {'7': ['north', 'west', 'south']},
              transfers: [
                {seq: 40, giver: 'west', receiver: 'south', from_hand: [], forwarded: [7]},
                {seq: 41, giver: 'north', receiver: 'west', from_hand: [7], forwarded: []}]};
            return routeOf(7, [pass]);
        }"""
    )
    assert route == [
        "North → West (First Charleston: pass Left, seq 41)",
        "West → South (First Charleston: pass Left, forwarded unseen, seq 40)",
    ]
    ruling_row = page.locator('#timeline li[data-type="ruling_recorded"] button')
    expect(ruling_row).to_contain_text("WARNING: Talking about tiles")
    expect(page.locator('#timeline li[data-type="clock_paused"] .mark-clock')).to_have_count(1)
    page.select_option("#filter-seat", "west")
    expect(page.locator("#timeline li").first).to_contain_text("West")
    page.select_option("#filter-seat", "")

    # the timeline by keyboard: a row replays the table and lights the diagram at its seq
    row = page.locator('#timeline li[data-type="mah_jongg_declared"] button')
    seq = row.locator("..").get_attribute("data-seq")
    row.focus()
    page.keyboard.press("Enter")
    expect(page.locator("body")).to_have_attribute("data-replay-seq", str(seq))
    expect(page.locator("#diagram")).to_have_attribute("data-seq", str(seq))
    expect(page.locator("#diagram-at")).to_have_text(f"(at seq {seq})")
    with server.client(tokens["director"]) as client:
        svg = client.get(f"/v1/games/{gid}/replay/diagram", params={"seq": seq}).text
    assert "CHARLESTON_DONE" in svg
    page.locator("#follow").check()
    expect(page.locator("#diagram")).to_have_attribute("data-seq", "live")

    with page.expect_download() as download:
        page.get_by_role("button", name="Download the signed record").click()
    lines = Path(download.value.path()).read_text().splitlines()
    assert json.loads(lines[-1])["kind"] == "anchor"
    doc_shot(page, "desk")
    shots(page, "desk-desktop")
    assert_axe_clean(page, "the desk (desktop)")
    page.emulate_media(media="print")
    expect(page.locator(".desk-side")).to_be_hidden()
    expect(page.locator("#audit")).to_be_visible()
    context.close()

    phone = browser.new_context(viewport=PHONE)
    small = phone.new_page()
    small.goto(server.base_url + game["links"]["director"])
    expect(small.locator("#live")).to_have_text("● live")
    shots(small, "desk-phone")
    assert_axe_clean(small, "the desk (phone)")
    phone.close()


def test_wrong_links_and_a_stopped_server_get_plain_sentences(
    browser: Browser, tmp_path: Path
) -> None:
    with running(f"sqlite:///{tmp_path / 'gone.sqlite3'}", tmp_path) as server:
        game = post(server, "/v1/games", {"seed": 5})
        gid, tokens = game["game_id"], game["tokens"]
        context = browser.new_context(viewport=PHONE)
        page = context.new_page()
        page.goto(f"{server.base_url}/desk/{gid}#token={tokens['east']}")
        expect(page.locator("#message")).to_contain_text("This is East's link")
        expect(page.get_by_role("link", name="Open East's table instead")).to_be_visible()
        expect(page.locator(".desk-layout")).to_be_hidden()  # no dead buttons under it
        assert_axe_clean(page, "a seat's link opened as a desk (phone)")
        page.get_by_role("link", name="Open East's table instead").click()  # the way out
        expect(page.locator("#who")).to_have_text("You are East")
        page.goto(f"{server.base_url}/desk/{gid}x#token={tokens['director']}")
        expect(page.locator("#message")).to_contain_text("There is no such game")
        expect(page.locator(".desk-layout")).to_be_hidden()
        page.goto(f"{server.base_url}/desk/{gid}#token=not-the-secret")
        expect(page.locator("#message")).to_contain_text("This link's secret does not open")
        expect(page.locator(".desk-layout")).to_be_hidden()
        page.goto(f"{server.base_url}/room/{gid}#token={tokens['director']}")
        expect(page.locator("#message")).to_contain_text("no such round on this server")
        expect(page.locator("#tables-card")).to_be_hidden()
        expect(page.locator(".room-controls")).to_have_count(2)
        for controls in page.locator(".room-controls").all():  # no dead buttons either
            expect(controls).to_be_hidden()
        assert_axe_clean(page, "a wrong round link (phone)")
        # a round created from its page shows every link; then the server stops
        page.goto(f"{server.base_url}/rounds/new")
        page.fill("#count", "2")
        page.fill("#names", "Ann, Bea, Cy, Di")
        page.get_by_role("button", name="Create the round").click()
        expect(page.locator("#links > li")).to_have_count(4)  # the room, spectators, 2 tables
        expect(page.locator("#links")).to_contain_text("/room/")
        expect(page.locator("#links")).to_contain_text("/watch/round/")
        expect(page.get_by_role("link", name="East: Ann", exact=True)).to_be_visible()
        assert_axe_clean(page, "the new round's links (phone)")
        page.get_by_role("link", name=re.compile("The room of")).click()
        expect(page.locator("#tables tr")).to_have_count(2)
        desk = context.new_page()
        desk.goto(f"{server.base_url}/desk/{gid}#token={tokens['director']}")
        expect(desk.locator("#live")).to_have_text("● live")
        port = server.port
        server.stop()
        for gone in (page, desk):
            expect(gone.locator("#message")).to_contain_text("The server does not answer")
            assert "Error" not in gone.locator("#message").inner_text()
            assert "./dev" not in gone.locator("#message").inner_text()
    # the server comes back on its address: the sentence goes, no reload needed
    back = Server(f"sqlite:///{tmp_path / 'gone.sqlite3'}", tmp_path / "back.log", port=port)
    try:
        expect(desk.locator("#message")).to_have_text("The server answers again.", timeout=30_000)
        expect(page.locator("#message")).to_have_text("The server answers again.")
    finally:
        context.close()
        back.stop()

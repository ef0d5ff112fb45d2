"""A round run as a round in a real browser, at desktop and phone widths, axe clean: the
room starts a held round, shows a table calling the director (flagged, sorted by how
long it waits), pauses and resumes the round as one act and issues its spectator link;
the desk starts a table, adds time, hands a seat to the bot and back, gives a seat a
substitute's link, answers a call and issues a spectator link; a seat sees the gate, the
time added and the bot, calls the director, and learns its seat was handed over (the
whole hand-over: test_web_handover.py); a
spectator's page shows the table without a tile, waits for its delay and stops when its
link is revoked."""

from __future__ import annotations

import re
from typing import Any

import pytest
from api_helpers import Server
from playwright.sync_api import Browser, Page, expect
from web_helpers import DESKTOP, PHONE, Shots, assert_axe_clean, doc_shot

expect.set_options(timeout=20_000)
CLOCK = {"confirm_pass": 600, "vote": 600, "courtesy": 600, "place_tiles": 600}
TILE_CODE = re.compile(r"\b[1-9][BCD]#\d+|\b[ESWN]W#\d+|\b[RGW]D#\d+|\bF#\d+|\bJ#\d+")


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


def confirm(page: Page, button: str) -> None:
    dialog = page.get_by_role("dialog")
    expect(dialog).to_be_visible()
    dialog.get_by_role("button", name=button).click()
    expect(dialog).to_be_hidden()


def open_page(browser: Browser, url: str, viewport: dict[str, int]) -> Page:
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    page.goto(url)
    return page


def test_the_room_starts_pauses_and_resumes_the_round_and_flags_a_call(
    server: Server, browser: Browser
) -> None:
    shots = Shots("round-room")
    tables = [
        {"seed": 71, "label": "Oak", "clock": CLOCK, "players": {"west": "Wu"}},
        {"seed": 72, "label": "Elm", "clock": CLOCK},
    ]
    round_ = post(server, "/v1/rounds", {"name": "Round 5", "tables": tables, "start": "held"})
    oak = round_["tables"][0]
    for viewport, name in ((DESKTOP, "desktop"), (PHONE, "phone")):
        page = open_page(browser, server.base_url + round_["links"]["room"], viewport)
        expect(page.locator("#tables tr")).to_have_count(2)
        if name == "desktop":
            expect(page.locator("#round-gate")).to_contain_text("2 table(s) not started")
            shots(page, "held")
            page.get_by_role("button", name="Start every table").click()
            confirm(page, "Start them")
            expect(page.locator("#message")).to_contain_text("Started 2 table(s)")
            expect(page.get_by_role("button", name="Start every table")).to_be_hidden()
            post(
                server,
                f"/v1/games/{oak['game_id']}/call",
                {"reason": "a dispute at Oak"},
                oak["tokens"]["west"],
            )
            flagged = page.locator('#tables tr[data-table="1"]')
            expect(flagged).to_have_attribute("data-calling", "yes")
            expect(flagged).to_contain_text("Wu · ")
            expect(flagged).to_contain_text("a dispute at Oak")
            page.select_option("#sort", "calls")
            expect(page.locator("#tables tr").first).to_have_attribute("data-table", "1")
            page.check("#only-calls")
            expect(page.locator("#tables tr")).to_have_count(1)
            page.uncheck("#only-calls")
            page.get_by_role("button", name="Pause the round").click()
            confirm(page, "Pause the round")
            expect(page.locator("#message")).to_contain_text("Paused 2 table(s)")
            expect(page.locator("#counts")).to_contain_text("2 paused")
            shots(page, "paused")
            doc_shot(page, "room-round-control")
            page.get_by_role("button", name="Resume the round").click()
            expect(page.locator("#message")).to_contain_text("Resumed 2 table(s)")
            # past an hour: the form says so (the browser's own words) and sends nothing
            page.fill("#round-spectator-delay", "3601")
            page.get_by_role("button", name="Issue a new link").click()
            delay = page.locator("#round-spectator-delay")
            assert delay.evaluate("e => e.validity.rangeOverflow && e.validationMessage !== ''")
            expect(page.get_by_role("dialog")).to_be_hidden()
            expect(page.locator("#round-spectator-link")).to_be_hidden()
            page.fill("#round-spectator-delay", "30")
            page.get_by_role("button", name="Issue a new link").click()
            confirm(page, "Issue it")
            expect(page.locator("#round-spectator-link")).to_contain_text("/watch/round/")
            issued = page.locator("#round-spectator-link code").inner_text()
            listing = f"/v1/rounds/{round_['round_id']}/spectate"
            with server.client(issued.split("#token=")[1]) as watch:
                assert watch.get(listing).json()["delay"] == 30
                page.get_by_role("button", name="Revoke it").click()
                confirm(page, "Revoke it")
                expect(page.locator("#message")).to_contain_text("spectator link is revoked")
                assert watch.get(listing).status_code == 401
        else:
            expect(page.locator('#tables tr[data-table="1"]')).to_contain_text("a dispute at Oak")
            shots(page, "phone")
        assert_axe_clean(page, f"the round room ({name})")
        page.context.close()


def test_the_desk_runs_a_table_and_a_seat_sees_it(server: Server, browser: Browser) -> None:
    shots = Shots("desk-round-control")
    game = post(
        server,
        "/v1/games",
        {"seed": 73, "clock": CLOCK, "start": "held", "players": {"south": "Sal"}},
    )
    links, gid = game["links"], game["game_id"]
    desk = open_page(browser, server.base_url + links["director"], DESKTOP)
    seat = open_page(browser, server.base_url + links["south"], PHONE)
    expect(seat.locator("#gate-note")).to_contain_text("has not started")
    expect(seat.locator("#actions")).to_contain_text("you pass once the director starts it")
    # a held seat lifts its tiles meanwhile; the pass waits for the start
    liftable = seat.locator('#rack .tile:not([data-face="J"]):not(.lifted)')
    for _ in range(3):
        liftable.first.click()
    expect(seat.locator("#rack .tile.lifted")).to_have_count(3)
    expect(seat.get_by_role("button", name="Pass 3 Right")).to_be_disabled()
    assert_axe_clean(seat, "a held seat (phone)")
    shots(seat, "seat-held")

    expect(desk.locator("#gate-state")).to_contain_text("Held")
    desk.get_by_role("button", name="Start the table").click()
    confirm(desk, "Start it")
    expect(desk.locator("#gate-state")).to_contain_text("Started at")
    expect(seat.locator("#gate-note")).to_be_hidden()

    seat.fill("#call-reason", "North showed a tile")
    seat.get_by_role("button", name="Call the director").click()
    expect(seat.locator("#call-state")).to_contain_text("You called the director")
    expect(seat.get_by_role("button", name="Call the director")).to_be_disabled()
    call = desk.locator('#calls li[data-seat="south"]')
    expect(call).to_contain_text("North showed a tile")
    shots(desk, "desk-call")

    desk.select_option("#extend-seat", "south")
    desk.fill("#extend-seconds", "45")
    desk.fill("#extend-reason", "a spill")
    desk.get_by_role("button", name="Add time").click()
    expect(desk.locator("#message")).to_contain_text("45 s added for Sal (South)")
    expect(seat.locator("#countdown")).to_contain_text("the director added 45 s: a spill")

    desk.get_by_role("button", name="All clear").click()
    expect(desk.locator("#calls-none")).to_be_visible()
    expect(seat.locator("#call-state")).to_contain_text("Call the director to your table")

    desk.get_by_role("button", name="Hand to the bot: Sal (South)").click()
    confirm(desk, "Hand it to the bot")
    expect(seat.locator("#gate-note")).to_contain_text("bot plays your seat")
    expect(seat.locator("#history-list")).to_contain_text("handed your seat to the service's bot")
    desk.get_by_role("button", name="Hand back to a person: Sal (South)").click()
    expect(seat.locator("#gate-note")).to_be_hidden()

    desk.fill("#spectator-delay", "0")
    desk.get_by_role("button", name="Issue a new link").click()
    confirm(desk, "Issue it")
    expect(desk.locator("#spectator-link")).to_contain_text(f"/watch/{gid}#token=")
    desk.fill("#substitute-label", "substitute: R. Chen")
    desk.select_option("#substitute-seat", "south")
    desk.get_by_role("button", name="Give a new link").click()
    confirm(desk, "Give a new link")
    expect(desk.locator("#substitute-link")).to_contain_text(f"/table/{gid}#token=")
    expect(desk.locator("#audit")).to_contain_text("substitute: R. Chen plays Sal (South) now")
    # the old link stops: its stream is closed and the seat's page is one sentence
    expect(seat.locator("#problem")).to_contain_text("handed this seat to someone else")
    expect(seat.locator("button:visible")).to_have_count(0)
    shots(desk, "desk-after")
    doc_shot(desk, "desk-round-control", full_page=True)
    assert_axe_clean(desk, "the desk (desktop)")
    desk.set_viewport_size(PHONE)
    assert_axe_clean(desk, "the desk (phone)")
    for page in (desk, seat):
        page.context.close()


def test_a_spectator_sees_the_table_and_never_a_tile(server: Server, browser: Browser) -> None:
    shots = Shots("watch")
    round_ = post(
        server,
        "/v1/rounds",
        {
            "tables": [
                {"seed": 74, "bots": ["east", "south", "west", "north"], "players": {"east": "Eve"}}
            ],
        },
    )
    table = round_["tables"][0]
    for viewport, name in ((DESKTOP, "desktop"), (PHONE, "phone")):
        page = open_page(browser, server.base_url + table["links"]["spectator"], viewport)
        expect(page.locator("#seats li")).to_have_count(4)
        expect(page.locator("#seats")).to_contain_text("Eve (East)")
        expect(page.locator("#ended")).to_contain_text("The Charleston is over", timeout=90_000)
        # the history's last line says how it ended, in the same words (the record's reason
        # alone said "all passes complete" after a stop)
        words = page.locator("#ended").inner_text()
        end = page.locator('#history li[data-kind="charleston_ended"]').first
        expect(end).to_contain_text(words)
        expect(page.locator("#history")).to_contain_text(
            re.compile(r"passed 3 tiles (right|left|across) to")
        )
        # each row once, newest first, however the bots' stream events bunched up
        seqs = page.locator("#history li").evaluate_all("items => items.map((i) => i.value)")
        assert seqs == sorted(set(seqs), reverse=True), seqs
        content = page.content()
        assert not TILE_CODE.search(content), TILE_CODE.search(content)
        assert "data-id=" not in content
        shots(page, name)
        if name == "desktop":
            doc_shot(page, "watch-table", full_page=True)
        assert_axe_clean(page, f"the spectator's page ({name})")
        page.context.close()
    page = open_page(browser, server.base_url + round_["links"]["spectator"], PHONE)
    expect(page.locator("#round-tables li")).to_have_count(1)
    page.get_by_role("link", name="Table 1").click()
    expect(page.locator("#seats li")).to_have_count(4)
    assert_axe_clean(page, "the round's spectator page (phone)")
    page.context.close()


def test_a_spectators_page_waits_for_its_delay_and_stops_when_revoked(
    server: Server, browser: Browser
) -> None:
    shots = Shots("watch-delay")
    # an hour behind: nothing of a new table is that old yet, and the page says so
    hour = post(server, "/v1/games", {"seed": 75, "spectator_delay": 3600})
    page = open_page(browser, server.base_url + hour["links"]["spectator"], PHONE)
    expect(page.locator("#message")).to_contain_text("behind a delay: it appears in")
    expect(page.locator("#table-card")).to_be_hidden()
    shots(page, "waiting")
    assert_axe_clean(page, "a spectator's page waiting for its delay (phone)")
    page.context.close()

    # two seconds behind: the table as it stood then; a ruling shows once that old
    game = post(server, "/v1/games", {"seed": 76, "spectator_delay": 2, "players": {"west": "Wu"}})
    page = open_page(browser, server.base_url + game["links"]["spectator"], DESKTOP)
    expect(page.locator("#as-of")).to_contain_text("behind the table: as it was at")
    expect(page.locator("#seats")).to_contain_text("Wu (West)")
    ruling = {"type": "record_ruling", "kind": "note", "text": "Tables 1-4 start late"}
    director = game["tokens"]["director"]
    post(server, f"/v1/games/{game['game_id']}/director/commands", ruling, director)
    expect(page.locator("#history")).to_contain_text("Tables 1-4 start late")
    shots(page, "behind")
    assert_axe_clean(page, "a spectator's page behind a delay (desktop)")
    with server.client(director) as desk:
        assert desk.delete(f"/v1/games/{game['game_id']}/spectator").status_code == 200
    expect(page.locator("#message")).to_contain_text("This spectator link was revoked")
    expect(page.locator("#live")).to_contain_text("stopped")
    shots(page, "revoked")
    assert_axe_clean(page, "a revoked spectator's page (desktop)")
    page.context.close()

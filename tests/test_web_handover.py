"""A seat handed to a substitute, in a real browser at desktop and phone widths, axe clean.

The director gives South a substitute from the desk (a name, a player id, the step's
whole time). The replaced player's open page becomes one sentence (what happened, who to
ask) with no control and no countdown left, and nothing it could press; the substitute's
page greets them as taking the seat over, under their own name, with a fresh deadline;
another seat's page, the round's room, the desk and the spectator's page name the
substitute, and so do the round's results (JSON and CSV).
"""

from __future__ import annotations

import csv
import io
import re
from typing import Any

import pytest
from api_helpers import Server
from playwright.sync_api import Browser, Page, expect
from web_helpers import DESKTOP, PHONE, Shots, assert_axe_clean, doc_shot

expect.set_options(timeout=20_000)
CLOCK = {"confirm_pass": 600, "vote": 600, "courtesy": 600, "place_tiles": 600}
NAMES = {"east": "Ann", "south": "Bea", "west": "Cy", "north": "Di"}
IDS = {"east": "p-1", "south": "p-2", "west": "p-3", "north": "p-4"}


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


def open_page(browser: Browser, url: str, viewport: dict[str, int]) -> Page:
    page = browser.new_context(viewport=viewport).new_page()
    page.goto(url)
    return page


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_a_seat_handed_to_a_substitute_changes_hands_on_every_page(
    server: Server, browser: Browser, width: str
) -> None:
    viewport = DESKTOP if width == "desktop" else PHONE
    shots = Shots(f"handover-{width}")
    table = {"seed": 81, "label": "Oak", "clock": CLOCK, "players": NAMES, "player_ids": IDS}
    round_ = post(server, "/v1/rounds", {"name": "Round 8", "tables": [table]})
    links = round_["tables"][0]["links"]
    base = server.base_url
    old = open_page(browser, base + links["south"], viewport)
    expect(old.locator("#who")).to_have_text("You are Bea, South")
    expect(old.locator("#countdown")).to_contain_text("s left to pass")
    east = open_page(browser, base + links["east"], viewport)
    room = open_page(browser, base + round_["links"]["room"], viewport)
    watch = open_page(browser, base + links["spectator"], viewport)
    desk = open_page(browser, base + links["director"], viewport)
    expect(desk.locator("#players")).to_contain_text("Bea (South)")

    desk.select_option("#substitute-seat", "south")
    desk.fill("#substitute-name", "Rae Chen")
    desk.fill("#substitute-player-id", "p-22")
    desk.fill("#substitute-label", "substitute")
    desk.get_by_role("button", name="Give a new link").click()
    dialog = desk.get_by_role("dialog")
    expect(dialog).to_contain_text("Give Bea (South) a new link for Rae Chen?")
    dialog.get_by_role("button", name="Give a new link").click()
    expect(desk.locator("#substitute-link")).to_contain_text("hand it to Rae Chen")
    shown = desk.locator("#substitute-link code").inner_text()
    link = re.fullmatch(rf"{re.escape(base)}(/table/\S+#token=\S+)", shown)
    assert link, shown

    # the replaced player's page: one sentence, the director to ask, nothing to press
    expect(old.locator("#problem")).to_have_text(
        "The director handed this seat to someone else, so this link no longer opens it: "
        "ask the director if you think you should still be playing."
    )
    expect(old.locator("#who")).to_have_text("This seat is no longer yours")
    expect(old.locator("#countdown")).to_be_hidden()
    expect(old.locator("button:visible, input:visible, select:visible")).to_have_count(0)
    expect(old.locator("#rack")).to_be_hidden()
    old.keyboard.press("Tab")
    old.keyboard.press("Enter")  # whatever focus finds, nothing is sent from this page
    assert "Not sent" not in old.locator("body").inner_text()
    assert_axe_clean(old, f"a replaced seat ({width})")
    shots(old, "replaced")
    if width == "phone":
        doc_shot(old, "seat-handed-over")

    # the substitute: greeted as taking the seat over, under their name, with fresh time
    sub = open_page(browser, base + link.group(1), viewport)
    expect(sub.locator("#who")).to_have_text("You are Rae Chen, South")
    greeting = (
        "You take over South, Rae Chen: the director gave you this seat, and you play it "
        "from here on."
    )
    expect(sub.locator("#message")).to_have_text(greeting)
    expect(sub.locator("#history-list")).to_contain_text(greeting)
    expect(sub.locator("#countdown")).to_contain_text("s left to pass")
    left = int(sub.locator("#countdown").inner_text().split(" s left")[0])
    assert left > 300, left  # the step's whole 600 s from the act, not what Bea had left
    assert "Bea" not in sub.locator("header").inner_text()
    assert_axe_clean(sub, f"a substitute's seat ({width})")
    shots(sub, "substitute")
    if width == "desktop":
        doc_shot(sub, "seat-substitute")

    # everyone else names the substitute
    expect(east.locator('#others .seat-box[data-seat="south"] h2')).to_contain_text("Rae Chen")
    expect(east.locator("#history-list")).to_contain_text("South is now played by Rae Chen.")
    expect(room.locator("#tables")).to_contain_text("Rae Chen (South)")
    expect(desk.locator("#players")).to_contain_text("Rae Chen (South)")
    expect(desk.locator("#audit")).to_contain_text("Rae Chen plays Bea (South) now")
    expect(watch.locator("#where")).to_contain_text("Rae Chen (South)")
    for page in (east, room, desk, watch):
        assert "Bea" not in page.locator("header").inner_text()
    shots(east, "other-seat")
    shots(room, "room")
    shots(watch, "spectator")
    shots(desk, "desk")

    # the results: who sits the seat now, and who sat it when
    with server.client(round_["token"]) as director:
        path = f"/v1/rounds/{round_['round_id']}/results"
        result = director.get(path).json()["tables"][0]
        text = director.get(path, params={"format": "csv"}).text
    assert result["players"]["south"] == "Rae Chen"
    assert result["player_ids"]["south"] == "p-22"
    assert [e["name"] for e in result["seats"]["south"]] == ["Bea", "Rae Chen"]
    row = next(csv.DictReader(io.StringIO(text)))
    assert "South Rae Chen" in row["players"] and "Bea" not in row["players"]
    assert "south: Bea [p-2], then Rae Chen [p-22] from seq" in row["seats"]
    for page in (old, sub, east, room, watch, desk):
        page.context.close()

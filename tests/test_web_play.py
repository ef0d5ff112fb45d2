"""A player's table against the service's bots, the way people meet it: East declares a
Heavenly Hand by keyboard while the bots think, and hears the director's verdict; on a
phone by touch the vote comes in seat by seat, with a first-time guide at the blind pass,
the vote and the Courtesy Pass, tiles that move to the seat they go to, names everywhere
and the ending in words; with reduced motion nothing moves; a path that names nothing
gets a page. axe-core on every state reached; the README's screenshots come from here
(CHARLESTON_DOC_SHOTS=1)."""

from __future__ import annotations

import re
import time
from typing import Any

import httpx
import pytest
from api_helpers import Server
from playwright.sync_api import Browser, BrowserContext, Page, expect
from web_helpers import DESKTOP, PHONE, Shots, assert_axe_clean, doc_shot, offered, press

expect.set_options(timeout=20_000)
BOTS = ["south", "west", "north"]
NAMES = {"east": "Ann", "south": "Bea", "west": "Cy", "north": "Di"}
#: counts the tiles that fly to their receiver (motion.js adds a .flight copy per tile)
#: and the received tiles that come in moving (an animation started on a tile above the rack)
COUNT_FLIGHTS = """
window.__flights = 0;
window.__arrivals = 0;
new MutationObserver((records) => {
  for (const r of records) for (const n of r.addedNodes)
    if (n.classList && n.classList.contains('flight')) window.__flights += 1;
}).observe(document, {childList: true, subtree: true});
const animate = Element.prototype.animate;
Element.prototype.animate = function (...args) {
  if (this.closest && this.closest('#received')) window.__arrivals += 1;
  return animate.apply(this, args);
};
"""


@pytest.fixture
def browser(web_browser: Browser) -> Browser:
    return web_browser


@pytest.fixture
def server(web_server: Server) -> Server:
    return web_server


def create(server: Server, **body: Any) -> dict[str, Any]:
    with server.client() as c:
        created = c.post("/v1/games", json=body)
    assert created.status_code == 201, created.text
    return created.json()


def open_seat(context: BrowserContext, server: Server, game: dict[str, Any], seat: str) -> Page:
    page = context.new_page()
    page.goto(f"{server.base_url}/table/{game['game_id']}#token={game['tokens'][seat]}")
    expect(page.locator("#live")).to_have_text("● live")
    return page


def focused_key(page: Page) -> str | None:
    return page.evaluate("document.activeElement?.dataset?.key ?? null")  # type: ignore[no-any-return]


def test_east_declares_heavenly_by_keyboard_while_three_bots_think(
    server: Server, browser: Browser
) -> None:
    """East, by keys alone, declares before any bot has confirmed its first pass (they
    take a first look at their racks); the desk judges the hand invalid, and every seat's
    history says so with the director's reason; the table starts again at pass 1 of 7."""
    shots = Shots("play_heavenly")
    game = create(server, ruleset="nmjl", seed=12, bots=BOTS, bot_pace=6, players=NAMES)
    context = browser.new_context(viewport=DESKTOP)
    director = browser.new_context(viewport=DESKTOP)
    try:
        east = open_seat(context, server, game, "east")
        expect(east.locator("#who")).to_have_text("You are Ann, East")
        expect(east.locator("#progress")).to_have_text("Pass 1 of 7 · First Charleston: pass Right")
        expect(east.locator('#others [data-seat="south"] h2')).to_contain_text("Bea")
        for _ in range(40):  # Tab through the page to the declaration
            east.keyboard.press("Tab")
            if focused_key(east) == "declare":
                break
        assert focused_key(east) == "declare"
        east.keyboard.press("Enter")
        dialog = east.locator("dialog#ask")
        expect(dialog).to_be_visible()
        east.keyboard.press("Tab")  # from Cancel, the safe choice, to the act
        east.keyboard.press("Enter")
        ended = east.locator("#ended")
        expect(ended).to_contain_text(
            "Ann (East) declared a Heavenly Hand before the first pass: no tile was passed."
        )
        expect(ended).to_contain_text("The director has still to judge the hand.")
        expect(east.locator("#history-list")).to_contain_text(
            "You declared Mah Jongg: a Heavenly Hand."
        )
        with server.client(game["tokens"]["director"]) as c:
            events = c.get(f"/v1/games/{game['game_id']}/events").json()["events"]
        assert not [e for e in events if e["type"] == "pass_confirmed"]  # no bot was done
        assert_axe_clean(east, "the table after a Heavenly Hand")
        shots(east, "declared")
        doc_shot(east, "table-heavenly")

        desk = director.new_page()
        desk.goto(f"{server.base_url}/desk/{game['game_id']}#token={game['tokens']['director']}")
        expect(desk.locator("#players")).to_contain_text("Ann (East), Bea (South)")
        expect(desk.locator("#audit")).to_contain_text(  # the audit names the players too
            "Ann (East) declared Mah Jongg: a Heavenly Hand (pending)."
        )
        expect(desk.locator("#judge-form")).to_be_visible()
        desk.get_by_label("invalid").check()
        desk.fill("#judge-text", "Not a hand of this year's card")
        desk.get_by_role("button", name="Judge the declaration").click()
        desk.get_by_role("dialog").get_by_role("button", name="Judge it invalid").click()
        history = east.locator("#history-list")
        expect(history).to_contain_text(
            "The director judged your Heavenly Hand invalid: “Not a hand of this year's card”. "
            "It is set aside: the Charleston is played from the First Right."
        )
        expect(ended).to_be_hidden()
        expect(east.locator("#progress")).to_have_text("Pass 1 of 7 · First Charleston: pass Right")
        expect(east.locator("#phase")).to_contain_text(
            "Your Heavenly Hand was judged invalid and set aside"
        )
        south = open_seat(context, server, game, "south")  # a bot's seat, watched
        expect(south.locator("#history-list")).to_contain_text(
            "The director judged Ann's Heavenly Hand invalid: “Not a hand of this year's card”."
        )
        assert_axe_clean(east, "the table after the verdict")
        shots(east, "verdict")
    finally:
        context.close()
        director.close()


def play_keeping_fourteen(page: Page, limit: float = 120) -> None:
    """East's Charleston by clicks against bots that act at once: place, pass three from
    the hand, continue, and offer no courtesy tile (so East ends holding 14)."""
    deadline = time.monotonic() + limit
    ended = page.locator("#ended")
    while not ended.is_visible():
        assert time.monotonic() < deadline, page.locator("body").inner_text()
        place = page.get_by_role("button", name="Place all")
        carry_on = page.locator('button[data-key="continue"]:enabled')
        offer = page.locator('button[data-key="offer-0"]:enabled')
        button = page.locator("button.pass")
        if offered(place):
            press(place)
        elif offered(carry_on):
            press(carry_on)
        elif offered(offer):
            press(offer)
        elif button.count():  # lift up to three (some may be up already), then pass
            tiles = page.locator('#rack .tile:not([data-face="J"]):not(.lifted)')
            for _ in range(3 - page.locator("#rack .tile.lifted").count()):
                tiles.first.click()
            if offered(button):
                press(button)
        page.wait_for_timeout(150)
    # a Charleston that ends on a pass (no Courtesy Pass) leaves its tiles to place
    place = page.get_by_role("button", name="Place all")
    if place.count():
        place.click()
    expect(page.locator("#received-zone")).to_be_hidden()


def test_east_declares_an_earthly_hand_and_every_seat_hears_the_verdict(
    server: Server, browser: Browser
) -> None:
    """After a whole Charleston against three bots (East offers no courtesy tile and keeps
    14), East declares an Earthly Hand from the page; the desk judges it valid with a
    reason; East's ending and every seat's history say so, with the director's reason."""
    shots = Shots("play_earthly")
    game = create(server, ruleset="nmjl", seed=8, bots=BOTS, bot_pace=0, players=NAMES)
    context = browser.new_context(viewport=DESKTOP)
    director = browser.new_context(viewport=DESKTOP)
    reason = "Checked against this year's card"
    try:
        east = open_seat(context, server, game, "east")
        play_keeping_fourteen(east)
        history = east.locator("#history-list")
        expect(history.locator('li[data-kind="end"]').first).to_have_text(
            re.compile(r"^The Charleston is over\. (All passes|Stopped by a vote|Every pass)")
        )
        east.get_by_role("button", name="Declare Mah Jongg (Earthly hand)").click()
        east.locator("dialog#ask").get_by_role("button", name="Declare Mah Jongg").click()
        expect(history).to_contain_text("You declared Mah Jongg: an Earthly Hand.")
        expect(east.locator("#ended")).to_contain_text(
            "Ann (East) declared an Earthly Hand once the Charleston was complete; "
            "the director has still to judge it."
        )
        desk = director.new_page()
        desk.goto(f"{server.base_url}/desk/{game['game_id']}#token={game['tokens']['director']}")
        expect(desk.locator("#judge-what")).to_have_text(
            "Ann (East) declared an Earthly Hand: judge it against the card."
        )
        desk.get_by_label("valid: the game ends").check()
        desk.fill("#judge-text", reason)
        desk.get_by_role("button", name="Judge the declaration").click()
        desk.get_by_role("dialog").get_by_role("button", name="Judge it valid").click()
        expect(history).to_contain_text(
            f"The director judged your Earthly Hand valid: “{reason}”. "
            "The game ends with this hand."
        )
        ended = east.locator("#ended")
        expect(ended).to_contain_text("the director judged it valid: the game ends with this hand.")
        expect(ended).to_contain_text(f"The director's reason: “{reason}”")
        assert_axe_clean(east, "the table after an Earthly Hand judged valid")
        shots(east, "earthly-valid")
        doc_shot(east, "table-earthly", full_page=True)
        for seat in BOTS:  # every seat's history says what the director decided
            watched = open_seat(context, server, game, seat)
            expect(watched.locator("#history-list")).to_contain_text(
                f"The director judged Ann's Earthly Hand valid: “{reason}”."
            )
            expect(watched.locator("#ended")).to_contain_text(f"“{reason}”")
            watched.close()
    finally:
        context.close()
        director.close()


def tap_pass(page: Page, count: int) -> None:
    """Tap `count` liftable tiles (never a joker), then the Pass button."""
    tiles = page.locator('#rack .tile:not([data-face="J"]):not(.lifted)')
    for _ in range(count):
        tiles.first.tap()
    page.locator("button.pass").tap()


def test_the_vote_comes_in_seat_by_seat_on_a_phone(server: Server, browser: Browser) -> None:
    """At 390x844 by touch against three bots with a short pace: three passes, with the
    tiles flying to their receivers and a guide at the blind pass; the vote with who
    voted what, by name; East stops it (unless a bot did first); the Courtesy Pass with
    its own guide; the ending names who stopped the Charleston."""
    shots = Shots("play_vote_phone")
    game = create(server, ruleset="nmjl", seed=8, bots=BOTS, bot_pace=0.4, players=NAMES)
    context = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
    context.add_init_script(COUNT_FLIGHTS)
    try:
        page = open_seat(context, server, game, "east")
        progress = page.locator("#progress")
        guide = page.locator("#guide")
        for number, direction in ((1, "Right"), (2, "Across"), (3, "Left")):
            expect(progress).to_contain_text(f"Pass {number} of 7")
            place = page.get_by_role("button", name="Place all")
            if place.count():
                place.tap()
                expect(page.locator("#received-zone")).to_be_hidden()
            if number == 3:  # the first blind pass: a guide in the rule book's words
                expect(guide).to_contain_text("A blind pass")
                expect(guide).to_contain_text("A blind pass is allowed on the last pass")
                assert_axe_clean(page, "the blind pass with its guide, phone")
                shots(page, "blind-guide")
                doc_shot(page, "table-guide-phone", full_page=True)
                page.get_by_role("button", name=re.compile("^Got it")).tap()
                expect(guide).to_be_hidden()
            expect(page.locator("button.pass")).to_have_text(f"Pass 3 {direction}")
            tap_pass(page, 3)
            expect(page.locator("#received .tile.floating")).to_have_count(3)
            if number == 1:
                assert page.evaluate("window.__flights") == 3  # each tile flew to Bea
                assert page.evaluate("window.__arrivals") == 3  # and came in from Di's side
                expect(page.locator('#others [data-seat="south"]')).to_contain_text("Bea")
                expect(page.locator("#last-pass")).to_contain_text("to Bea (Right)")
                doc_shot(page, "table-phone", full_page=True)
        page.get_by_role("button", name="Place all").tap()
        expect(progress).to_contain_text(re.compile("The vote|Courtesy Pass"))
        stop = page.get_by_role("button", name="Stop the Charleston")
        history = page.locator("#history-list")
        # the vote's buttons render, then enable once "Place all" is answered: wait for an
        # enabled Stop, or for a bot's stop that ended the vote first (deciding on a glance
        # saw a disabled button, and East never voted)
        can_stop = page.locator('button[data-key="stop"]:enabled')
        a_bot_stopped = history.get_by_text(re.compile(r"(Bea|Cy|Di) voted to stop"))
        expect(can_stop.or_(a_bot_stopped).first).to_be_visible()
        if can_stop.count():
            # the vote's guide, read in one look: a bot's stop may end the vote at any
            # moment, and the Courtesy Pass's guide takes its place (CI, loaded: two looks
            # found the vote's guide, then the Courtesy Pass's)
            vote_guide = page.locator('#guide[data-topic="vote"]')
            expect(vote_guide.or_(a_bot_stopped).first).to_be_visible()
            words = vote_guide.all_inner_texts()
            if words:
                assert "The vote" in words[0], words
                assert "a single stop skips the Second Charleston" in words[0], words
                assert_axe_clean(page, "the vote, phone")
                shots(page, "vote")
                press(vote_guide.get_by_role("button", name=re.compile("^Got it")))
            # a bot may have stopped while East read the guide: its stop ends the vote
            expect(can_stop.or_(a_bot_stopped).first).to_be_visible()
            if can_stop.count():
                press(stop)
                press(page.get_by_role("button", name="Vote to stop"))
        expect(history).to_contain_text(re.compile(r"(You|Bea|Cy|Di) voted to stop"))
        stopper = "Ann (East)" if "You voted to stop" in history.inner_text() else None
        # the Courtesy Pass: its guide, then an offer of one tile and, if agreed, the pass
        expect(progress).to_have_text("Pass 4 of 4 · the Courtesy Pass")
        expect(guide).to_contain_text("The Courtesy Pass")
        expect(page.locator("#how summary")).to_have_text("How does the Courtesy Pass work?")
        assert_axe_clean(page, "the Courtesy Pass, phone")
        page.get_by_role("button", name=re.compile("^Got it")).tap()
        page.get_by_role("button", name="Offer 1").tap()
        ended = page.locator("#ended")
        deadline = time.monotonic() + 30
        while not ended.is_visible():
            assert time.monotonic() < deadline, page.locator("body").inner_text()
            button = page.locator("button.pass")
            if (
                button.count()
                and button.is_enabled() is False
                and not page.locator("#rack .tile.lifted").count()
            ):
                tap_pass(page, 1)
            page.wait_for_timeout(200)
        words = ended.inner_text()
        assert "Stopped by a vote:" in words and "the Second Charleston was not played" in words
        if stopper:
            assert f"{stopper} voted to stop" in words
        # the history ends with the same words, on this seat's page and on a bot's
        end = history.locator('li[data-kind="end"]').first
        expect(end).to_have_text(words)
        watched = open_seat(context, server, game, "west")
        expect(watched.locator('#history-list li[data-kind="end"]').first).to_have_text(words)
        watched.close()
        for name in ("Bea", "Cy", "Di"):
            expect(history).to_contain_text(re.compile(f"{name} (voted|offered)"))
        page.locator("#rack .tile").first.tap()  # nothing is lifted after the end
        expect(page.locator("#rack .tile.lifted")).to_have_count(0)
        expect(page.locator("#message")).to_contain_text("no tile is passed now")
        assert_axe_clean(page, "the table at the end, phone")
        shots(page, "over")
    finally:
        context.close()


def test_reduced_motion_moves_nothing_and_the_pass_explains_itself(
    server: Server, browser: Browser
) -> None:
    """With prefers-reduced-motion no tile flies; "How does this pass work?" opens by
    keyboard on the rule book's words; a guide dismissed stays dismissed."""
    named = {"east": "Ann", "west": "Cy", "north": "Di"}  # South keeps its wind
    game = create(server, ruleset="nmjl", seed=4, bots=BOTS, bot_pace=0, players=named)
    context = browser.new_context(viewport=DESKTOP, reduced_motion="reduce")
    context.add_init_script(COUNT_FLIGHTS)
    try:
        page = open_seat(context, server, game, "east")
        how = page.locator("#how")
        expect(how.locator("summary")).to_have_text("How does this pass work?")
        how.locator("summary").focus()
        page.keyboard.press("Enter")
        expect(how).to_contain_text("The First Charleston is mandatory")
        expect(how).to_contain_text("(NMJL-01)")
        expect(how).to_contain_text("Nothing moves until every player who must act has confirmed")
        tiles = page.locator('#rack .tile:not([data-face="J"])')
        for i in range(3):
            tiles.nth(i).click()
        page.locator("button.pass").click()
        expect(page.locator("#received .tile.floating")).to_have_count(3)
        assert page.evaluate("window.__flights") == 0
        assert page.evaluate("window.__arrivals") == 0
        moving = "document.getAnimations().filter(a => a.constructor === Animation).length"
        assert page.evaluate(moving) == 0  # no tile arrived moving either
        # the seat cards name the seats: a seat without a name keeps its wind
        expect(page.locator('#others [data-seat="south"] h2')).to_have_text("South · on your right")
        assert_axe_clean(page, "the pass explained, reduced motion")
        doc_shot(page, "table-desktop", full_page=True)
    finally:
        context.close()


def test_a_path_that_names_nothing_gets_a_page_or_a_problem(
    server: Server, browser: Browser
) -> None:
    context = browser.new_context(viewport=PHONE)
    try:
        page = context.new_page()
        answer = page.goto(f"{server.base_url}/tabel/abc")
        assert answer is not None and answer.status == 404
        expect(page.get_by_role("heading", level=1)).to_have_text("No such page")
        expect(page.get_by_role("link", name="the front door")).to_be_visible()
        assert_axe_clean(page, "the page for an unknown path, phone")
        doc_shot(page, "not-found")
    finally:
        context.close()
    for path, accept in (("/tabel/abc", "application/json"), ("/v1/nothing", "text/html")):
        answer = httpx.get(server.base_url + path, headers={"Accept": accept})
        assert answer.status_code == 404
        assert answer.headers["content-type"] == "application/problem+json", path
        assert answer.json()["code"] == "not_found"

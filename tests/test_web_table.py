"""The player's table in a real browser, the way people meet it: on a phone by touch, by
keyboard alone, under a short clock, and with a question before anything irreversible.
Each page is checked with axe-core in the states the test reaches. The API is called only
to create games, to pause a clock as a director would, and to check what was (not) sent."""

from __future__ import annotations

import re
from typing import Any

import pytest
from api_helpers import Game, Server, ok
from playwright.sync_api import Browser, BrowserContext, Page, expect
from web_helpers import DESKTOP, PHONE, Shots, assert_axe_clean

expect.set_options(timeout=15_000)
BOTS = ["south", "west", "north"]
SEATS = ["east", *BOTS]
FACE_WORDS = re.compile(r"^(\d (Bam|Crak|Dot)|\w+ Wind|\w+ Dragon|White Dragon \(Soap\)|Flower)$")


@pytest.fixture
def browser(web_browser: Browser) -> Browser:
    return web_browser


@pytest.fixture
def server(web_server: Server) -> Server:
    return web_server


def create(server: Server, **body: Any) -> dict[str, Any]:
    """A game over HTTP; its bots act at once unless the test gives them a pace."""
    with server.client() as c:
        created = c.post("/v1/games", json={"bot_pace": 0, **body})
    assert created.status_code == 201, created.text
    return created.json()


def open_seat(
    context: BrowserContext, server: Server, game: dict[str, Any], seat: str = "east"
) -> Page:
    page = context.new_page()
    page.goto(f"{server.base_url}/table/{game['game_id']}#token={game['tokens'][seat]}")
    expect(page.locator("#live")).to_have_text("● live")
    return page


def events(server: Server, game: dict[str, Any]) -> list[dict[str, Any]]:
    with server.client(game["tokens"]["director"]) as c:
        return c.get(f"/v1/games/{game['game_id']}/events").json()["events"]


def no_horizontal_overflow(page: Page) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the page is {width} px wide at {PHONE['width']} px"


def _box(page: Page, locator: Any) -> dict[str, float]:
    """The element's box once it is laid out: the bots' passes re-render the rack while the
    test runs, and between a render and the next layout there is briefly no box."""
    expect(locator).to_be_visible()
    for _ in range(50):
        box = locator.bounding_box()
        if box is not None:
            return box  # type: ignore[no-any-return]
        page.wait_for_timeout(100)
    raise AssertionError(f"{locator} has no box on the page")


def notes_apart(page: Page) -> None:
    """Each floating tile's note ("from North") lies inside the received zone and over no
    other tile's note (they ran into each other when a name was wider than a tile)."""
    for _ in range(50):  # the arriving tiles' motion and the bots' redraws: laid out first
        boxes = page.locator("#received .tile.floating .note").evaluate_all(
            "ns => ns.map(n => { const r = n.getBoundingClientRect();"
            " return [r.left, r.top, r.right, r.bottom]; })"
        )
        if boxes and all(b[2] > b[0] for b in boxes):
            break
        page.wait_for_timeout(100)
    zone = page.locator("#received").evaluate(
        "e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }"
    )
    assert boxes
    for i, a in enumerate(boxes):
        assert a[0] >= zone[0] and a[1] >= zone[1] and a[2] <= zone[2], (a, zone)
        for b in boxes[i + 1 :]:
            assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1], (a, b)


def touch_drag(context: BrowserContext, page: Page, source: Any, target: Any) -> None:
    """A finger drag from the middle of source to the left edge of target (real touch input
    through the DevTools protocol: Chromium turns it into pointer events of type touch)."""
    cdp = context.new_cdp_session(page)
    a, b = _box(page, source), _box(page, target)
    x0, y0 = a["x"] + a["width"] / 2, a["y"] + a["height"] / 2
    x1, y1 = b["x"] + 4, b["y"] + b["height"] / 2

    def touch(kind: str, *points: tuple[float, float]) -> None:
        at = [{"x": x, "y": y} for x, y in points]
        cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": at})

    touch("touchStart", (x0, y0))
    for i in range(1, 9):
        touch("touchMove", (x0 + (x1 - x0) * i / 8, y0 + (y1 - y0) * i / 8))
    touch("touchEnd")
    cdp.detach()


def test_phone_by_touch(server: Server, browser: Browser) -> None:
    """At 390x844 with touch: no sideways scrolling, axe clean, taps lift and pass, and a
    finger drags a floating tile into the rack where it is dropped."""
    shots = Shots("table_phone")
    game = create(server, ruleset="nmjl", seed=7, bots=BOTS)
    context = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
    try:
        front = context.new_page()
        front.goto(f"{server.base_url}/")
        expect(front.locator("#ruleset")).to_have_value("nmjl")
        expect(front.locator("#option-courtesy_mode")).to_contain_text(
            "each pair exchanges the smaller offer"
        )
        no_horizontal_overflow(front)
        assert_axe_clean(front, "front page, phone")
        # names, a deal number and a clock, set in words, reach the service as given
        front.get_by_label("East's name").fill("Ann")
        front.get_by_label("Deal number").fill("42")
        front.get_by_label("Seconds to choose each pass").fill("30")
        front.get_by_role("button", name="Create the game").click()
        expect(front.locator("#links").get_by_role("link", name="East (Ann)")).to_be_visible()
        desk = front.locator("#links").get_by_role("link", name="Director's desk")
        director = (desk.get_attribute("href") or "").split("#token=")[1]
        made = (desk.get_attribute("href") or "").split("/desk/")[1].split("#")[0]
        with server.client(director) as c:
            view = c.get(f"/v1/games/{made}").json()["view"]
        assert view["clock"]["options"]["confirm_pass"] == 30
        no_horizontal_overflow(front)
        page = open_seat(context, server, game)
        expect(page.locator("#rack .tile")).to_have_count(14)
        expect(page.locator("#rack-hint")).to_contain_text("Tap a tile")
        no_horizontal_overflow(page)
        assert_axe_clean(page, "table at the deal, phone")
        # every caption on a tile reads at 12 px at least (names, "from North" notes)
        smallest = page.evaluate(
            """() => Math.min(...[...document.querySelectorAll('.tile .small, .tile .note')]
                .map(e => parseFloat(getComputedStyle(e).fontSize)))"""
        )
        assert smallest >= 12, smallest
        # every tile and button is at least 44 px for a finger
        small = page.evaluate(
            """() => [...document.querySelectorAll('#rack .tile, #actions button, #sort')]
                .map(e => e.getBoundingClientRect())
                .filter(r => r.width < 44 || r.height < 44).length"""
        )
        assert small == 0
        tiles = page.locator('#rack .tile:not([data-face="J"])')
        for i in range(3):
            tiles.nth(i).tap()
        expect(page.locator("#rack .tile.lifted")).to_have_count(3)
        page.locator("button.pass").tap()
        floating = page.locator("#received .tile.floating")
        expect(floating).to_have_count(3)
        expect(floating.first).to_contain_text("from North")
        expect(page.locator("#last-pass")).to_contain_text("to South (Right)")
        notes_apart(page)
        no_horizontal_overflow(page)
        assert_axe_clean(page, "table with floating tiles, phone")
        shots(page, "floating")
        moved = floating.first.get_attribute("data-id")
        target = page.locator("#rack .tile").nth(2)
        before = target.get_attribute("data-id")
        # the drag is aimed where the tiles are when it starts: a page still drawing what
        # arrived (the bots' passes) can move them under the finger, and the tile then
        # drops nowhere and floats again, as for a person, who drags it once more
        for attempt in range(3):
            touch_drag(context, page, page.locator(f'#received .tile[data-id="{moved}"]'), target)
            try:
                expect(floating).to_have_count(2)
                break
            except AssertionError:
                expect(page.locator(f'#received .tile[data-id="{moved}"]')).to_have_count(1)
                if attempt == 2:
                    raise
        rack = page.locator("#rack .tile")
        expect(rack.nth(2)).to_have_attribute("data-id", moved)  # dropped before the target
        expect(rack.nth(3)).to_have_attribute("data-id", before)
    finally:
        context.close()


def test_keyboard_only_pass_then_history(server: Server, browser: Browser) -> None:
    """The rack is one Tab stop: arrows move, Enter lifts; the pass goes by keys too; then
    the page says what was given, to South, and what came from North; floating tiles are
    placed one at a time at the focused place."""
    shots = Shots("table_keyboard")
    game = create(server, ruleset="nmjl", seed=7, bots=BOTS)
    context = browser.new_context(viewport=DESKTOP)
    try:
        page = open_seat(context, server, game)
        expect(page.locator("#rack .tile")).to_have_count(14)
        focused = lambda: page.evaluate(  # noqa: E731
            "(() => { const e = document.activeElement; return e && (e.closest('#rack') ? 'rack'"
            " : e.classList.contains('pass') ? 'pass' : e.id || e.tagName); })()"
        )
        for _ in range(6):  # Tab from the top reaches the rack
            page.keyboard.press("Tab")
            if focused() == "rack":
                break
        assert focused() == "rack"
        assert page.locator('#rack .tile[tabindex="0"]').count() == 1  # one Tab stop
        # a tile's accessible name is its visible words ("5 Bam", "Red Dragon")
        face = page.locator("#rack .tile:focus").get_attribute("data-face")
        suits = {"B": "Bam", "C": "Crak", "D": "Dot"}
        if face[0].isdigit():
            name = f"{face[0]} {suits[face[1]]}"
            expect(page.get_by_role("button", name=name, exact=True).first).to_be_visible()
        given = []
        while len(given) < 3:
            tile = page.locator("#rack .tile:focus")
            if tile.get_attribute("data-face") != "J":
                given.append(tile.get_attribute("data-id"))
                page.keyboard.press("Enter" if len(given) % 2 else "Space")
            page.keyboard.press("ArrowRight")
        expect(page.locator("#rack .tile.lifted")).to_have_count(3)
        words = [
            page.locator(f'#rack .tile[data-id="{i}"]').evaluate(
                "e => [...e.querySelectorAll('.small, .big, .sr-only')].filter(s => "
                "!s.getAttribute('aria-hidden')).map(s => s.textContent).join('')"
                ".replace('White Dragon, Soap', 'White Dragon (Soap)').trim()"
            )
            for i in given
        ]
        # Shift with an arrow moves the focused tile, up/down as well as left/right
        rack_ids = lambda: page.locator("#rack .tile").evaluate_all(  # noqa: E731
            "ts => ts.map(t => t.dataset.id)"
        )
        moving = page.locator("#rack .tile:focus").get_attribute("data-id")
        at = rack_ids().index(moving)
        page.keyboard.press("Shift+ArrowUp")
        assert rack_ids().index(moving) == at - 1 and focused() == "rack"
        page.keyboard.press("Shift+ArrowDown")
        assert rack_ids().index(moving) == at
        assert page.locator("#rack .tile:focus").get_attribute("data-id") == moving
        for _ in range(8):
            page.keyboard.press("Tab")
            if focused() == "pass":
                break
        assert focused() == "pass"
        page.keyboard.press("Enter")
        last = page.locator("#last-pass")
        expect(last).to_contain_text("You gave")
        expect(last).to_contain_text("to South (Right)")
        expect(last).to_contain_text("From North:")
        for word in words:
            expect(last).to_contain_text(word)
        expect(page.locator("#history-list")).to_contain_text("From North:")
        expect(page.locator("#announce")).to_contain_text("From North:")  # said politely
        expect(page.locator("#rack .tile.lifted")).to_have_count(0)
        assert page.evaluate("document.activeElement !== document.body")  # focus kept
        floating = page.locator("#received .tile.floating")
        expect(floating).to_have_count(3)
        expect(floating.first).to_contain_text("from North")
        notes_apart(page)
        assert_axe_clean(page, "table after a pass, desktop")
        shots(page, "after-pass")
        # place one floating tile after the rack's focused tile, by keys
        page.locator('#rack .tile[tabindex="0"]').focus()
        page.keyboard.press("Home")
        page.keyboard.press("ArrowRight")
        anchor = page.locator("#rack .tile:focus").get_attribute("data-id")
        first = floating.first.get_attribute("data-id")
        page.keyboard.press("Shift+Tab")  # the floating tiles are the stop before the rack
        assert page.evaluate("!!document.activeElement.closest('#received')")
        page.keyboard.press("Enter")
        expect(floating).to_have_count(2)
        rack = page.locator("#rack .tile")
        ids = [rack.nth(i).get_attribute("data-id") for i in range(rack.count())]
        assert ids[ids.index(anchor) + 1] == first
        assert page.evaluate("!!document.activeElement.closest('#received')")  # the next one
        page.keyboard.press("Enter")
        page.keyboard.press("Enter")
        expect(floating).to_have_count(0)
        expect(page.locator("#received-zone")).to_be_hidden()
        expect(page.locator("#message")).to_have_text("Tiles placed.")
    finally:
        context.close()


def test_the_clock_says_what_it_did(server: Server, browser: Browser) -> None:
    """A 2-second clock: with 2 tiles lifted, the clock passes 3 for East; the page names
    them and their receiver, and nothing stays lifted. Contrast is clean throughout."""
    shots = Shots("table_clock")
    clock = {"confirm_pass": 2, "on_expiry": "auto_play"}
    game = create(server, ruleset="nmjl", seed=7, bots=BOTS, clock=clock)
    context = browser.new_context(viewport=DESKTOP)
    try:
        page = open_seat(context, server, game)
        history = page.locator("#history-list")
        # the first pass: East does nothing, the clock passes for it (South is to its right)
        expect(history).to_contain_text("the clock passed", timeout=30_000)
        expect(history).to_contain_text("for you to South")
        floating = page.locator("#received .tile.floating")
        expect(floating).to_have_count(3)
        # received tiles must be placed first: no pass deadline runs until they are
        lifted = page.locator("#rack .tile.lifted")
        tiles = page.locator('#rack .tile:not([data-face="J"])')
        tiles.nth(0).click()
        tiles.nth(1).click()
        expect(lifted).to_have_count(2)
        page.get_by_role("button", name="Place all").click()
        # the clock now runs 2 s for the Across pass, then passes 3 tiles in East's name
        entry = history.locator("li", has_text="for you to West")
        expect(entry).to_contain_text("the clock passed", timeout=30_000)
        text = entry.inner_text()
        named = text.split("the clock passed ")[1].split(" for you to West")[0]
        tiles_named = re.split(r", | and ", named)  # "3 Bam, 7 Dot and 9 Crak"
        assert len(tiles_named) == 3 and all(FACE_WORDS.match(t) for t in tiles_named), text
        expect(lifted).to_have_count(0)
        expect(page.locator("#message")).to_contain_text("the clock acted for you")
        assert_axe_clean(page, "table after the clock acted")
        shots(page, "clock-acted")
    finally:
        context.close()


def test_a_late_seat_keeps_its_next_countdown(server: Server, browser: Browser) -> None:
    """Flagged late once (a 1-second pass), the seat still gets its next deadline as a
    countdown; the late mark becomes a quiet note beside it, never in its place."""
    clock = {"confirm_pass": 1, "place_tiles": 600, "on_expiry": "flag_late"}
    game = create(server, ruleset="nmjl", seed=7, bots=BOTS, clock=clock)
    context = browser.new_context(viewport=DESKTOP)
    try:
        page = open_seat(context, server, game)
        countdown = page.locator("#countdown")
        expect(countdown).to_have_attribute("data-state", "late", timeout=30_000)
        expect(countdown).to_contain_text("Late: your time ran out")
        tiles = page.locator('#rack .tile:not([data-face="J"])')
        for i in range(3):
            tiles.nth(i).click()
        page.locator("button.pass").click()
        expect(page.locator("#received .tile.floating")).to_have_count(3)
        expect(countdown).to_have_attribute("data-state", "running")
        expect(countdown).to_contain_text(re.compile(r"\d+ s left to place your tiles"))
        expect(page.locator("#late-note")).to_have_text(
            "You ran out of time earlier in this game; the director sees it."
        )
        assert_axe_clean(page, "a late seat's next countdown")
    finally:
        context.close()


def test_countdown_paused_and_urgent_are_readable(server: Server, browser: Browser) -> None:
    """The countdown and its paused, urgent and late looks all pass axe's contrast check."""
    game = create(server, ruleset="house", seed=3, bots=BOTS, clock={"confirm_pass": 600})
    context = browser.new_context(viewport=PHONE)
    try:
        page = open_seat(context, server, game)
        countdown = page.locator("#countdown")
        expect(countdown).to_contain_text(re.compile(r"\d+ s left to pass"))
        expect(countdown).to_have_attribute("data-state", "running")
        with server.client(game["tokens"]["director"]) as c:
            paused = c.post(
                f"/v1/games/{game['game_id']}/director/commands", json={"type": "pause_clock"}
            )
        assert paused.status_code == 200, paused.text
        expect(countdown).to_contain_text("paused by the director")
        expect(page.locator("#history-list")).to_contain_text("The director paused the clock.")
        # the urgent and late looks, drawn beside the live one, as the page draws them
        page.evaluate(
            """() => { for (const state of ['urgent', 'late']) {
                const copy = document.getElementById('countdown').cloneNode(true);
                copy.removeAttribute('id'); copy.dataset.state = state; copy.textContent = state;
                document.querySelector('.centre').append(copy); } }"""
        )
        assert_axe_clean(page, "countdown paused, urgent and late")
    finally:
        context.close()


def test_declare_asks_first(server: Server, browser: Browser) -> None:
    """Declaring Mah Jongg opens a question; dismissed, nothing is sent; confirmed, it is."""
    game = create(server, ruleset="nmjl", seed=11)
    context = browser.new_context(viewport=DESKTOP)
    try:
        page = open_seat(context, server, game)
        declare = page.get_by_role("button", name="Declare Mah Jongg (Heavenly hand)")
        dialog = page.locator("dialog#ask")
        declare.click()
        expect(dialog).to_be_visible()
        expect(dialog).to_contain_text("ends the Charleston for all four players")
        assert_axe_clean(page, "the question before declaring")
        page.keyboard.press("Escape")
        expect(dialog).to_be_hidden()
        declare.click()
        page.get_by_role("button", name="Cancel").click()
        expect(dialog).to_be_hidden()
        expect(page.locator("#message")).to_have_text("Nothing was sent.")
        expect(declare).to_be_focused()  # focus back where the player was
        assert not [e for e in events(server, game) if e["type"] == "mah_jongg_declared"]
        declare.click()
        page.get_by_role("button", name="Declare Mah Jongg", exact=True).click()
        expect(page.locator("#history-list")).to_contain_text("You declared Mah Jongg")
        assert [e for e in events(server, game) if e["type"] == "mah_jongg_declared"]
    finally:
        context.close()


def test_plain_errors_for_wrong_links(server: Server, browser: Browser) -> None:
    """A director's link opened as a table, and a wrong link: a sentence and what to do."""
    game = create(server, ruleset="nmjl", seed=5)
    context = browser.new_context(viewport=PHONE)
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    try:
        page = context.new_page()
        base = f"{server.base_url}/table/{game['game_id']}"
        page.goto(f"{base}#token={game['tokens']['director']}")
        problem = page.locator("#problem")
        expect(problem).to_contain_text("director's link")
        expect(page.get_by_role("link", name="Open the director's desk")).to_be_visible()
        expect(page.locator(".layout")).to_be_hidden()  # the sentence and the way out only
        page.goto(f"{base}#token=not-a-token")
        page.reload()
        expect(problem).to_contain_text("does not open a seat")
        expect(page.locator(".layout")).to_be_hidden()
        expect(page.get_by_role("link", name="Go to the front door")).to_be_visible()
        body = page.locator("body").inner_text()
        assert "TypeError" not in body and not re.search(r"[A-Z]+-\d+:", body)
        no_horizontal_overflow(page)
        assert_axe_clean(page, "table with a wrong link")
        # a seat's link keeps its secret in the fragment, so a copied link still works
        seat = open_seat(context, server, game, "south")
        assert seat.url.endswith(f"#token={game['tokens']['south']}")
        seat.get_by_role("button", name="Copy my link").click()
        expect(seat.locator("#message")).to_contain_text("Your link is copied")
        copied = seat.evaluate("navigator.clipboard.readText()")
        assert copied == seat.url
    finally:
        context.close()


def test_a_late_objection_tells_whose_pass_it_dropped(server: Server, browser: Browser) -> None:
    """East confirms the Second Left; South's late objection drops it: East's page says so,
    in words, and nothing stays lifted."""
    game = Game.create(server, ruleset="nmjl", seed=9)
    try:
        for _ in range(3):  # the First Charleston, over HTTP, then four continues
            for seat in SEATS:
                tiles = game.plain(seat, place=True)
                ok(game.command(seat, {"type": "confirm_pass", "tiles": tiles, "blind": 0}))
        for seat in SEATS:
            game.plain(seat, place=True)
            ok(game.command(seat, {"type": "vote", "choice": "continue"}))
        context = browser.new_context(viewport=DESKTOP)
        page = open_seat(context, server, {"game_id": game.game_id, "tokens": game.tokens})
        expect(page.locator("#history-list")).to_contain_text("West voted to continue.")
        tiles = page.locator('#rack .tile:not([data-face="J"])')
        for i in range(3):
            tiles.nth(i).click()
        page.locator("button.pass").click()
        expect(page.locator(".locked-note")).to_be_visible()
        ok(game.command("south", {"type": "vote", "choice": "stop"}))
        expect(page.locator("#message")).to_contain_text(
            "South's late objection stopped the Charleston: your confirmed pass was dropped"
        )
        expect(page.locator("#history-list")).to_contain_text(
            "South objected late and stopped the Charleston."
        )
        expect(page.locator("#rack .tile.lifted")).to_have_count(0)
        assert_axe_clean(page, "table after a late objection")
        context.close()
    finally:
        game.close()

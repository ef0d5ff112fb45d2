"""A duplicate round's comparison page in a real browser, at desktop and phone widths,
axe clean: the room links it; while tables play it says why no tile is shown; once every
table has ended it shows each seat's passes table under table, the very tiles of the
comparison JSON (which the API test checks against each table's audit and record), and
the deal number as the round's text (it exceeds 2^53: read as a JavaScript number it
would name another deal). A duplicate round's spectator page shows no tile either."""

from __future__ import annotations

import re
from typing import Any

import pytest
from api_helpers import Server, ok
from playwright.sync_api import Browser, Page, expect
from web_helpers import DESKTOP, PHONE, Shots, assert_axe_clean, doc_shot

expect.set_options(timeout=20_000)
SEED = 2**62 - 99  # past 2^53
BOTS = ["east", "south", "west", "north"]
TILE_CODE = re.compile(r"\b[1-9][BCD]#\d+|\b[ESWN]W#\d+|\b[RGW]D#\d+|\bF#\d+|\bJ#\d+")


@pytest.fixture
def browser(web_browser: Browser) -> Browser:
    return web_browser


@pytest.fixture
def server(web_server: Server) -> Server:
    return web_server


def open_page(browser: Browser, url: str, viewport: dict[str, int]) -> Page:
    page = browser.new_context(viewport=viewport).new_page()
    page.goto(url)
    return page


def shown_passes(page: Page, seat: str) -> dict[int, dict[str, list[int]]]:
    """Per table, per step: the tile ids the page shows in that seat's comparison."""
    found = page.locator(f'table[data-seat="{seat}"] tbody tr').evaluate_all(
        """rows => rows.map((r) => [Number(r.dataset.table), Object.fromEntries(
            [...r.querySelectorAll('[data-step]')].map((line) => [line.dataset.step,
              [...line.querySelectorAll('[data-id]')].map((t) => Number(t.dataset.id))]))])"""
    )
    return {table: steps for table, steps in found}


def expected_passes(comparison: dict[str, Any], seat: str) -> dict[int, dict[str, list[int]]]:
    expected: dict[int, dict[str, list[int]]] = {}
    for t in comparison["tables"]:
        steps = expected.setdefault(t["table"], {})
        for p in t["seats"][seat]["passes"]:
            steps.setdefault(p["step"], []).extend([*p["tiles"], *p["unseen"]])
    return expected


def test_the_comparison_page_shows_each_seats_passes_table_under_table(
    server: Server, browser: Browser
) -> None:
    shots = Shots("duplicate")
    tables = [
        {"bots": BOTS, "label": label, "players": {"east": east, "west": west}}
        for label, east, west in (
            ("Oak", "Ann", "Wu"),
            ("Elm", "Bea", "Xi"),
            ("Ash", "Cy", "Yo"),
            ("Yew", "Di", "Zed"),
        )
    ]
    body = {"name": "Duplicate 2", "deal": "duplicate", "deal_seed": str(SEED)}
    with server.client() as client:
        answer = client.post("/v1/rounds", json={**body, "tables": tables, "start": "held"})
    assert answer.status_code == 201, answer.text
    round_ = answer.json()
    base = server.base_url

    page = open_page(browser, base + round_["links"]["room"], DESKTOP)
    link = page.get_by_role("link", name="Duplicate comparison (one deal, every table)")
    expect(link).to_be_visible()
    link.click()
    expect(page).to_have_url(re.compile(r"/compare/"))
    expect(page.locator("#stops tr")).to_have_count(4)
    expect(page.locator("#message")).to_contain_text("once every table's Charleston has ended")
    expect(page.locator("#stops")).to_contain_text("not started")
    assert page.locator("[data-id]").count() == 0
    shots(page, "held")
    assert_axe_clean(page, "the comparison while the tables play (desktop)")

    with server.client(round_["token"]) as director:
        ok(director.post(f"/v1/rounds/{round_['round_id']}/start", json={}))
    expect(page.locator("#seats section")).to_have_count(4, timeout=120_000)
    with server.client(round_["token"]) as director:
        path = f"/v1/rounds/{round_['round_id']}/comparison"
        comparison = ok(director.get(path))
    assert comparison["complete"]
    # the deal number as the round gave it, to the last digit
    expect(page.locator("#counts")).to_contain_text(f"deal number {SEED}")
    for seat in BOTS:
        assert shown_passes(page, seat) == expected_passes(comparison, seat), seat
        dealt = page.locator(f"#seat-{seat} + p [data-id]").evaluate_all(
            "ts => ts.map((t) => Number(t.dataset.id))"
        )
        assert dealt == comparison["hands"][seat]
    for t in comparison["tables"]:
        row = page.locator(f'#stops tr[data-table="{t["table"]}"]')
        expect(row).to_contain_text(t["ending"])
        expect(row).to_contain_text(t["stopped_after"]["label"])
    expect(page.locator("#seats")).to_contain_text("Ann")
    shots(page, "desktop")
    doc_shot(page, "compare-desktop")
    assert_axe_clean(page, "the comparison (desktop)")
    page.context.close()

    phone = open_page(browser, base + round_["links"]["comparison"], PHONE)
    expect(phone.locator("#seats section")).to_have_count(4)
    for seat in BOTS:
        assert shown_passes(phone, seat) == expected_passes(comparison, seat), seat
    shots(phone, "phone")
    phone.locator("#seat-east").scroll_into_view_if_needed()
    doc_shot(phone, "compare-phone")
    assert_axe_clean(phone, "the comparison (phone)")
    phone.context.close()

    # the round's spectators: every table, no tile, no deal number
    watch = open_page(browser, base + round_["links"]["spectator"], PHONE)
    expect(watch.locator("#round-tables li")).to_have_count(4)
    watch.get_by_role("link", name="Table 2").click()
    expect(watch.locator("#seats li")).to_have_count(4)
    expect(watch.locator("#ended")).to_contain_text("The Charleston is over")
    content = watch.content()
    assert not TILE_CODE.search(content) and "data-id=" not in content
    assert str(SEED) not in content
    watch.context.close()


def test_a_duplicate_round_is_chosen_on_the_new_round_page(
    server: Server, browser: Browser
) -> None:
    """The new round's page offers one deal for every table with a deal number as text
    (digits only: anything else is held back by the form, in the browser's words); the
    round it creates links its comparison and deals every table from that number."""
    page = open_page(browser, server.base_url + "/rounds/new", PHONE)
    expect(page.locator("#deal-seed")).to_be_hidden()
    page.select_option("#deal", "duplicate")
    expect(page.locator("#seed")).to_be_hidden()
    page.fill("#count", "2")
    page.fill("#deal-seed", "12x")
    page.get_by_role("button", name="Create the round").click()
    assert page.locator("#deal-seed").evaluate(
        "e => e.validity.patternMismatch && e.validationMessage !== ''"
    )
    expect(page.locator("#created")).to_be_hidden()
    page.fill("#deal-seed", str(SEED))
    assert_axe_clean(page, "the new round's page, one deal for every table (phone)")
    page.get_by_role("button", name="Create the round").click()
    expect(page.locator("#message")).to_contain_text(f"dealt from deal number {SEED}")
    link = page.get_by_role("link", name="The tables compared on their one deal (director)")
    expect(link).to_be_visible()
    href = link.get_attribute("href") or ""
    round_id, token = re.fullmatch(r".*/compare/(\w+)#token=(.+)", href).groups()  # type: ignore[union-attr]
    with server.client(token) as director:
        listing = ok(director.get(f"/v1/rounds/{round_id}"))
        deals = [
            ok(director.get(f"/v1/games/{t['game_id']}/audit"))["deal"] for t in listing["tables"]
        ]
    assert listing["settings"]["deal_seed"] == str(SEED)
    assert len(deals) == 2 and deals[0] == deals[1]
    assert_axe_clean(page, "the duplicate round's links (phone)")
    page.context.close()

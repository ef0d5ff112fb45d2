"""Browser helpers for the web client's tests: Debian's Chromium driven by Playwright.

A seat's page is driven only the way a person drives it (clicks, drags, keys); the API is
read only to check what the pages show (secrecy, the replay slider), never to play.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Locator
from playwright.sync_api import TimeoutError as PlaywrightTimeout

CHROMIUM = os.environ.get("CHARLESTON_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(os.environ.get("CHARLESTON_WEB_ARTIFACTS", "tests/artifacts"))
DESKTOP = {"width": 1280, "height": 860}
PHONE = {"width": 390, "height": 844}
TILE_ID = re.compile(r'data-id="(\d+)"')


def browser_or_skip() -> Iterator[Any]:
    """One Chromium for the module; missing, it skips, or fails under CI=true."""
    from playwright.sync_api import sync_playwright  # the test extra installs it

    if not Path(CHROMIUM).exists():
        _unavailable(f"no Chromium at {CHROMIUM} (scripts/ensure-chromium.sh installs it)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM)
        try:
            yield browser
        finally:
            browser.close()


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true: the browser tests must run)", pytrace=False)
    pytest.skip(reason)


class Shots:
    """Screenshots of each step, numbered in the order taken (not committed)."""

    def __init__(self, name: str) -> None:
        self.dir = ARTIFACTS / name
        shutil.rmtree(self.dir, ignore_errors=True)  # this run's steps only
        self.dir.mkdir(parents=True)
        self.n = 0

    def __call__(self, page: Any, what: str) -> Path:
        settle(page)
        self.n += 1
        path = self.dir / f"{self.n:02d}-{re.sub(r'[^A-Za-z0-9-]+', '-', what)}.png"
        page.screenshot(path=str(path), full_page=True)
        return path


def dom_tile_ids(page: Any) -> set[int]:
    """Every tile id anywhere in the page's document."""
    return {int(x) for x in TILE_ID.findall(page.content())}


def held(director_view: dict[str, Any], seat: str) -> set[int]:
    """The ids a seat holds or has chosen, by the director's view."""
    s = director_view["seats"][seat]
    tiles = [*s["rack"], *s["received"], *((s["selection"] or {}).get("tiles") or [])]
    return {t["id"] for t in tiles}


IMG = Path(__file__).parents[1] / "docs" / "img"


def doc_shot(page: Any, name: str, *, full_page: bool = False) -> None:
    """A screenshot for the README and docs (docs/img/NAME.png), refreshed only when asked
    (CHARLESTON_DOC_SHOTS=1), so that a test run leaves the working tree as it was."""
    if os.environ.get("CHARLESTON_DOC_SHOTS"):
        settle(page)
        page.screenshot(path=str(IMG / f"{name}.png"), full_page=full_page)


def settle(page: Any) -> None:
    """Wait (a little) for the tiles' motion to end, so a picture shows where they are."""
    page.wait_for_function(
        "document.getAnimations().every(a => a.constructor !== Animation"
        " || a.playState !== 'running')",
        timeout=5_000,
    )


AXE = Path(os.environ.get("CHARLESTON_AXE", ".cache/axe/node_modules/axe-core/axe.min.js"))
SERIOUS = {"serious", "critical"}
#: every impact axe-core reports: the pages are held to "axe reports nothing"
EVERY = {"minor", "moderate", *SERIOUS}


def axe_violations(page: Any, impacts: set[str] = SERIOUS) -> list[dict[str, Any]]:
    """axe-core's violations of the page as it stands, of the given impacts.

    axe-core comes from the npm package (scripts/ensure-axe.sh); it is injected into the
    page by the test, never served by the service. Each violation keeps its rule id, its
    impact, help text and the selectors of the offending nodes, so a failure names them.
    """
    if not AXE.exists():
        _unavailable(f"no axe-core at {AXE} (scripts/ensure-axe.sh installs it)")
    page.add_script_tag(content=AXE.read_text())
    found = page.evaluate(
        """async () => {
            const r = await axe.run(document, {resultTypes: ['violations']});
            return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                nodes: v.nodes.map(n => n.target.join(' '))}));
        }"""
    )
    return [v for v in found if v["impact"] in impacts]


def assert_axe_clean(page: Any, where: str) -> None:
    """No axe violation of any impact on the page (a moderate one, such as a region
    without a unique name, counts too); the message lists each one."""
    bad = axe_violations(page, EVERY)
    assert not bad, f"axe on {where}: " + "; ".join(
        f"{v['id']} ({v['impact']}): {v['help']} at {v['nodes'][:3]}" for v in bad
    )


def offered(button: Locator) -> bool:
    """Whether the page shows ``button`` and it can be pressed, in one look that never
    waits. Two looks (``count()`` then ``is_enabled()``) race the game: a button taken away
    between them makes the second wait 30 s for it and fail (CI: "Place all" went with the
    answer to the click before)."""
    return button.evaluate_all("els => els.some((e) => !e.disabled && e.checkVisibility())")


def press(button: Locator) -> None:
    """Click what the page offered, unless the game moved on first. On a loaded machine a
    button can go between a loop seeing it and the click landing: a bot's stop vote takes
    the vote's buttons away, the answer to the last click takes "Place all" away. A loop
    that plays whatever the page offers then looks again; a button still offered and
    still not clickable after 30 s is a failure."""
    for attempt in range(6):
        try:
            button.click(timeout=5000)
            return
        except PlaywrightTimeout:
            if not offered(button):
                return  # taken away meanwhile: the caller looks at the page again
            if attempt == 5:
                raise

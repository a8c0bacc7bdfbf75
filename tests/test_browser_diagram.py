"""The state diagram on the live page, in a real browser (Debian's chromium through Playwright).

Replays the bundled Kayak Chaos rules session (looping, in real time) and checks that the
river appears as an SVG diagram (tile polygons, kayak discs, the last turn's arrows), that it
changes as turns are played, that it is built without inline style (a strict CSP holds), and
that it fits a 390 px wide phone. Then the same for the Kang session's board (squares, both
start zones, whose turn, the last move's path). Screenshots go to tests/artifacts/.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_browser_live import _need_browser, launch_chromium, serve_replay

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[1]
SESSION = REPO / "samples" / "sessions" / "kayak-rules"
KANG_SESSION = REPO / "samples" / "sessions" / "kang-game"
ARTIFACTS = REPO / "tests" / "artifacts"
SVG = "#state svg.dg-svg"


def _serve(session: Path):
    yield from serve_replay(session)


@pytest.fixture(scope="module")
def kayak_server():
    yield from _serve(SESSION)


@pytest.fixture(scope="module")
def kang_server():
    yield from _serve(KANG_SESSION)


@pytest.fixture(scope="module")
def chromium():
    _need_browser()
    yield from launch_chromium()


def _open_desktop(chromium, server: str):
    """The page of `server` in a desktop-sized tab, and the list its script errors land in."""
    page = chromium.new_page(viewport={"width": 1400, "height": 950})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(server + "/")
    return page, errors


def _count(page, selector: str) -> int:
    return page.locator(selector).count()


def test_river_diagram_appears_and_follows_the_turns(chromium, kayak_server):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page, errors = _open_desktop(chromium, kayak_server)
    page.wait_for_selector(f"{SVG} polygon.role-water", timeout=45000)
    assert page.locator("#game-title").inner_text() == "Kayak Chaos"
    assert _count(page, f"{SVG} polygon.role-water") >= 2  # the Start tile and at least one more
    assert _count(page, f"{SVG} polygon.role-start") == 5  # the Start row: one space per lane
    assert _count(page, f"{SVG} polygon.role-rock") >= 1
    assert _count(page, f"{SVG} polyline.role-grid") >= 7
    page.wait_for_selector(f"{SVG} circle[class*='role-player-']", timeout=30000)
    # the diagram is redrawn as turns are ruled on: its caption moves on and arrows appear
    first = page.locator("#state .dg-caption").inner_text()
    page.wait_for_function(
        "([svg, first]) => { const c = document.querySelector('#state .dg-caption');"
        " return c && c.innerText !== first && document.querySelector(svg + ' polyline.dg-arrow[marker-end]'); }",
        arg=[SVG, first], timeout=60000)
    caption = page.locator("#state .dg-caption").inner_text()
    assert caption.startswith("turn ")
    assert _count(page, f"{SVG} circle[class*='role-player-']") >= 1
    assert _count(page, f"{SVG} marker path.dg-head") >= 1
    assert page.locator("#state .dg-legend").inner_text().count("kayak") >= 1
    # the table below no longer shows the diagram's JSON
    assert '"shapes"' not in page.locator("#state table").first.inner_text()
    # built with DOM calls only: nothing inline for a strict Content-Security-Policy to refuse
    assert page.evaluate("document.querySelectorAll('#state .dg-figure [style]').length") == 0
    # the drawing is scaled by its viewBox into the panel and has its colours from diagram.css
    box = page.locator(SVG).bounding_box()
    assert box["width"] > 200 and box["height"] > 50
    fill = page.evaluate(f"getComputedStyle(document.querySelector('{SVG} polygon.role-water')).fill")
    assert fill not in ("none", "rgb(0, 0, 0)"), fill
    page.locator("#state").screenshot(path=str(ARTIFACTS / "diagram-kayak-state.png"))
    page.screenshot(path=str(ARTIFACTS / "diagram-kayak-page.png"), full_page=True)
    assert not errors, errors
    page.close()


def test_river_diagram_fits_a_phone(chromium, kayak_server):
    phone = chromium.new_page(viewport={"width": 390, "height": 844}, device_scale_factor=2)
    phone.goto(kayak_server + "/")
    phone.wait_for_selector(f"{SVG} polygon.role-water", timeout=45000)
    assert phone.evaluate("document.documentElement.scrollWidth") <= 390
    box = phone.locator(SVG).bounding_box()
    assert 250 <= box["width"] <= 390
    # lettering stays legible: a tile's name is at least 7 px tall on the phone
    label = phone.locator(f"{SVG} text").first.bounding_box()
    assert label["height"] >= 7, label
    phone.locator("#state").screenshot(path=str(ARTIFACTS / "diagram-kayak-phone.png"))
    phone.close()


def test_kang_board_diagram_appears_with_zones_turn_and_the_last_move(chromium, kang_server):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page, errors = _open_desktop(chromium, kang_server)
    page.wait_for_selector(f"{SVG} polygon.role-surface", timeout=45000)
    assert page.locator("#game-title").inner_text() == "Kang"
    assert _count(page, f"{SVG} polygon.role-surface") == 36
    assert _count(page, f"{SVG} polygon.role-zone-1") == 1 and _count(page, f"{SVG} polygon.role-zone-2") == 1
    texts = page.evaluate(f"Array.from(document.querySelectorAll('{SVG} text'), t => t.textContent)")
    assert all(name in texts for name in "abcdef123456")
    # a move is ruled: its path is drawn as an arrow through the squares and whose turn is shown
    page.wait_for_selector(f"{SVG} polyline.role-path[marker-end]", timeout=60000)
    assert _count(page, f"{SVG} circle.role-piece") >= 1
    caption = page.locator("#state .dg-caption").inner_text()
    assert "last move:" in caption and "alfalfa:" in caption
    assert _count(page, f"{SVG} polygon.role-highlight") == 1  # the start zone of the coach to move
    assert page.evaluate("document.querySelectorAll('#state .dg-figure [style]').length") == 0
    page.locator("#state").screenshot(path=str(ARTIFACTS / "diagram-kang-state.png"))
    assert not errors, errors
    page.close()
    phone = chromium.new_page(viewport={"width": 390, "height": 844}, device_scale_factor=2)
    phone.goto(kang_server + "/")
    phone.wait_for_selector(f"{SVG} polygon.role-surface", timeout=45000)
    assert phone.evaluate("document.documentElement.scrollWidth") <= 390
    phone.locator("#state").screenshot(path=str(ARTIFACTS / "diagram-kang-phone.png"))
    phone.close()

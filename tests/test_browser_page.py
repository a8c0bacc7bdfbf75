"""The live page as a player at the table reads it (issue 12), in Debian's chromium at
1280×800 and 390×844, on the bundled sessions: the ruling card, the one status, the end
of a replay, the full-screen photo finish, the state table, phones and the access token.
Screenshots go to tests/artifacts/.
"""

from __future__ import annotations

import json
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from tests.test_browser_live import ARTIFACTS, REPO, _need_browser, launch_chromium, start_serve, stop_serve

pytestmark = pytest.mark.browser

SESSIONS = REPO / "samples" / "sessions"
VIEWPORTS = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}


def _serve(*args: str) -> tuple[subprocess.Popen, str]:
    """Start `refcam serve` and return it with the address it printed for this computer."""
    proc, port, line = start_serve(*args)
    return proc, next(w for w in line.split() if w.startswith(f"http://127.0.0.1:{port}/"))


def _stop(proc: subprocess.Popen, name: str) -> None:
    stop_serve(proc, f"page-serve-{name}-stderr.txt")


@pytest.fixture(scope="module")
def lan_server():
    """The Tornado session, looping, reachable beyond loopback: its printed address carries the token."""
    _need_browser()
    proc, url = _serve("--replay", str(SESSIONS / "tornado"), "--loop", "--host", "0.0.0.0")
    yield url
    _stop(proc, "lan")


@pytest.fixture(scope="module")
def browser(lan_server):
    yield from launch_chromium()


def _open(browser, url: str, viewport: str):
    page = browser.new_page(viewport=VIEWPORTS[viewport], bypass_csp=True)  # wait_for_function evals; the CSP itself: test_browser_live
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    page.wait_for_function("window.refcam.connectedAt !== null", timeout=15000)
    return page, errors


def _base(url: str) -> str:
    return url.split("/?")[0]


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_ruling_card_is_in_view_and_shows_the_newest_ruling_within_a_second(browser, lan_server, viewport):
    page, errors = _open(browser, lan_server, viewport)
    # a ruling made while the page is open (not the backlog sent on connecting)
    # (rankings have their own panel; a held violation keeps the same turn's routine news off the card)
    carded = "window.refcam.rulings.filter(r => window.refcamUi.levelOf(r) >= 2 && r.kind !== 'warning')"
    page.wait_for_function(f"{carded}.some(r => r.sent_ms >= window.refcam.connectedAt)", timeout=60000)
    time.sleep(0.3)
    newest = page.evaluate(f"{carded}.slice(-1)[0]")
    card = page.evaluate("window.refcam.card")
    if card["seq"] < newest["seq"] and card["level"] < 3:  # a newer one arrived meanwhile: it must show within a second too
        page.wait_for_function(f"window.refcam.card.seq >= {newest['seq']} || window.refcam.card.level === 3", timeout=1000)
        card = page.evaluate("window.refcam.card")
    if card["seq"] == newest["seq"]:
        assert card["shown_ms"] - newest["arrival_ms"] < 1000
    else:
        assert card["level"] == 3 and card["seq"] < newest["seq"], (card, newest)  # a violation held
    assert page.locator("#card").get_attribute("data-seq") == str(card["seq"])
    text = page.locator("#card-text").inner_text()
    assert text and "/" not in text.split()[0]  # short piece names
    box = page.locator("#card").bounding_box()
    assert box["y"] >= 0 and box["y"] + box["height"] <= VIEWPORTS[viewport]["height"], box  # no scrolling
    assert page.locator("#card-time").inner_text().count(":") == 1  # game time, mm:ss
    assert not page.locator("#speak").is_checked()  # spoken rulings: off unless chosen
    assert page.evaluate("document.documentElement.scrollWidth") <= VIEWPORTS[viewport]["width"]
    page.screenshot(path=str(ARTIFACTS / f"page-{viewport}.png"))
    assert not errors
    page.close()


def test_one_status_and_it_is_the_servers(browser, lan_server):
    page, _ = _open(browser, lan_server, "desktop")
    assert page.locator("[role=status]").count() == 1
    agreed = False
    for _ in range(20):  # the status changes as the replay plays: they must agree at some instant
        shown = page.locator("#status").inner_text().lower()
        server = json.loads(urllib.request.urlopen(_base(lan_server) + "/api/state", timeout=5).read())["status"]
        if shown == server["shown"] == page.locator("#status").inner_text().lower():
            agreed = True
            break
        time.sleep(0.2)
    assert agreed, (shown, server)
    assert page.locator("#status").get_attribute("data-status") in ("in play", "stable")
    page.close()


def test_the_end_of_a_replay_is_shown(browser):
    proc, url = _serve("--replay", str(SESSIONS / "kayak"), "--fast")
    try:
        for viewport in VIEWPORTS:
            page, errors = _open(browser, url, viewport)
            page.wait_for_function("document.getElementById('status').dataset.status === 'source ended'", timeout=60000)
            assert "ended" in page.locator("#alert").inner_text()
            assert "fps" not in page.locator("#source-line").inner_text()
            assert not errors
            page.close()
    finally:
        _stop(proc, "ended")


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_photo_finish_opens_full_screen_and_zooms_on_a_tap(browser, lan_server, viewport):
    page, errors = _open(browser, lan_server, viewport)
    page.wait_for_function("window.refcam.rulings.some(r => r.kind === 'ranking')", timeout=60000)
    for _ in range(3):  # a replay starting its next pass has no stable state for a moment: settle again
        page.wait_for_function("window.refcam.status === 'stable'", timeout=30000)
        page.click("#settle")
        try:
            page.wait_for_function("document.getElementById('photo-img').naturalWidth > 0", timeout=15000)
            break
        except Exception:
            continue
    size = VIEWPORTS[viewport]
    box = page.locator("#photo").bounding_box()
    assert box["width"] >= size["width"] - 1 and box["height"] >= size["height"] - 1
    frame = page.locator("#photo-frame").bounding_box()
    assert frame["width"] >= size["width"] - 1
    assert "/" not in page.locator("#photo-text").inner_text().split("\n")[0].split()[1]  # "boat-1", short
    page.screenshot(path=str(ARTIFACTS / f"page-photo-{viewport}.png"))
    page.click("#photo-img")
    assert "zoomed" in page.get_attribute("#photo", "class")
    assert page.evaluate("document.getElementById('photo-img').clientWidth") > size["width"]
    page.click("#photo-close")
    assert page.locator("#photo").is_hidden()
    assert not errors
    page.close()


def test_state_table_reads_at_phone_width(browser, lan_server):
    page, _ = _open(browser, lan_server, "phone")
    page.wait_for_function("document.querySelectorAll('#state table tr').length > 2", timeout=60000)
    text = page.locator("#state").inner_text()
    assert "= boat" not in text and "turn order" not in text
    assert "tornado/" not in page.locator("#state table").inner_text()
    widths = page.evaluate("[document.querySelector('#state table').scrollWidth, document.getElementById('state').clientWidth]")
    assert widths[0] <= widths[1], widths  # no clipped column
    names = page.evaluate("[...document.querySelectorAll('#state td.name')].map(td => td.getClientRects().length"
                          " && td.offsetHeight)")
    line = page.evaluate("parseFloat(getComputedStyle(document.querySelector('#state td.name')).lineHeight)")
    assert all(h <= 2 * line for h in names)  # a name on one line (plus padding)
    if page.locator("#state .pair").count():
        assert "σΔ" in page.locator("#state .pairs").inner_text()
    page.close()


def test_phones_panel_shows_a_qr_code_of_the_lan_address(browser, lan_server):
    from webui.phone import lan_addresses

    if not lan_addresses():
        pytest.skip("this computer has no network address besides loopback")
    page, _ = _open(browser, lan_server, "phone")
    page.wait_for_selector("#phones:not([hidden])", timeout=10000)
    page.click("#phones summary")
    page.wait_for_function("document.getElementById('phone-qr').naturalWidth > 0", timeout=10000)
    assert "token=" in page.locator("#phone-urls").inner_text()  # this page has the token: so does the code
    watcher = urllib.request.urlopen(_base(lan_server) + "/api/phone", timeout=5).read()
    assert b"token" not in watcher  # a page opened without it does not learn it
    page.close()


def _post(url: str, body: dict, token: str | None) -> int:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["X-Refcam-Token"] = token
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        return urllib.request.urlopen(req, timeout=10).status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_changes_without_the_token_are_refused_beyond_loopback(browser, lan_server):
    base, token = _base(lan_server), lan_server.split("token=")[1]
    assert _post(base + "/api/settle", {}, None) in (401, 403)
    assert _post(base + "/api/config", {"game": "tornado"}, None) in (401, 403)
    assert _post(base + "/api/config", {"game": "tornado"}, "not-" + token) in (401, 403)
    # the page opened with the printed address sends the token itself
    page, _ = _open(browser, lan_server, "desktop")
    page.click("details.settings summary")
    page.click("#config-form button[type=submit]")
    time.sleep(1.0)
    assert page.locator("#config-error").is_hidden()
    page.close()
    # without it the same form is refused, and says why
    page, _ = _open(browser, base + "/", "desktop")
    page.click("details.settings summary")
    page.click("#config-form button[type=submit]")
    page.wait_for_selector("#config-error:not([hidden])", timeout=10000)
    assert "token" in page.locator("#config-error").inner_text()
    page.close()


def test_switching_games_says_so_instead_of_an_empty_table(browser):
    proc, url = _serve("--replay", str(SESSIONS / "tornado"), "--loop")
    try:
        page, errors = _open(browser, url, "desktop")
        page.wait_for_function("window.refcam.config !== null", timeout=15000)
        page.click("details.settings summary")
        page.select_option("#game", "kang")
        page.click("#config-form button[type=submit]")
        page.wait_for_function("document.getElementById('game-title').textContent === 'Kang'", timeout=10000)
        page.wait_for_selector("#state .notice", timeout=10000)
        assert "Kang" in page.locator("#state .notice").inner_text()
        assert not errors
        page.close()
    finally:
        _stop(proc, "switch")


def test_a_view_kind_without_its_own_table_reads_generically(browser, lan_server):
    page, errors = _open(browser, lan_server, "phone")
    river = {"kind": "river", "title": "a river", "data": {
        "lanes": 3, "turns": 4, "winner": None, "advanced": False, "text": "~ ~ A\n~ B ~",
        "kayaks": [{"name": "kayak/pawn-1", "row": 2, "lane": 1}, {"name": "kayak/pawn-2", "row": 0, "lane": 3}],
        "last_turn": {"pawn": "kayak/pawn-1", "legal": True}}}
    # render and read in one script: a live state event cannot land in between
    seen = page.evaluate("""(v) => {
        window.refcamViews.renderState(v);
        const box = document.getElementById('state');
        const pre = box.querySelector('pre.view-text');
        return {text: box.innerText, pre: pre ? pre.textContent : null,
                pawn2: [...box.querySelectorAll('td.name')].filter(td => td.textContent.includes('pawn-2')).length,
                widths: [...box.querySelectorAll('table')].map(t => t.scrollWidth <= box.clientWidth)};
    }""", river)
    text = seen["text"]
    assert "[object Object]" not in text and "kayak/" not in text.split("all details")[0]
    assert seen["pre"] == "~ ~ A\n~ B ~"
    assert seen["pawn2"] == 1  # the list of records as a table
    assert "last turn" in text and "pawn pawn-1" in text
    assert all(seen["widths"])
    assert not errors
    page.close()


def test_an_offer_of_the_view_is_one_button_that_applies_its_settings(browser, lan_server):
    """A view's offer (e.g. the next Grand Prix race) is a button; pressing it posts the
    offer's settings for the game being played (intercepted here: the server keeps its game)."""
    page, errors = _open(browser, lan_server, "phone")
    # the game being played comes with the page's config event, which may follow the connection
    page.wait_for_function("window.refcam.config && window.refcam.config.game", timeout=15000)
    posted: list[dict] = []

    def answer(route):
        posted.append(json.loads(route.request.post_data or "{}"))
        route.fulfill(status=200, content_type="application/json", body='{"changed": true}')

    page.route("**/api/config", answer)
    view = {"kind": "ranking", "title": "a race", "data": {"ranking": []},
            "offers": [{"label": "Start race 2 (totals kept)", "settings": {"grand_prix": "boat-2=1,boat-1=2"},
                        "hint": "this race is scored"}]}
    page.evaluate("(v) => { window.refcamViews.renderState(v); document.querySelector('#state .offer-button').click(); }",
                  view)
    page.wait_for_function("document.querySelector('#state .offer-button') === null "
                           "|| !document.querySelector('#state .offer-button').disabled", timeout=5000)
    page.wait_for_timeout(200)
    assert posted and posted[0]["grand_prix"] == "boat-2=1,boat-1=2"
    assert posted[0]["game"] == page.evaluate("window.refcam.config.game")
    assert not errors
    page.close()

"""``bobshat serve`` in a real browser: headless Chromium driven by Playwright plays whole games.

The browser is the system's Chromium (Debian's ``chromium`` package, which
``.ci/run`` installs); Playwright's own browser download is never used. Where
no Chromium can be found the tests are skipped with the reason, and in CI
(``BOBSHAT_CI=1``) that skip is a failure: CI must run them.

Each game is started from a ``/play`` link, then every human move is made by
clicking the button whose accessible name is the move's notation, chosen
among the legal moves the server lists; the test checks that the page offers
exactly those as buttons. At the end the final totals on the page must be the
saved record's, and the record must replay without a fault.
"""

from __future__ import annotations

import io
import os
import random
import shutil

import pytest

pytest.importorskip("starlette", reason="the web extra is not installed: pip install -e '.[web]'")
playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (the dev extra has it)")

from bobshat.web.app import create_app  # noqa: E402
from bobshat_env.records import read_jsonl, replay_main  # noqa: E402

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.fixture(scope="module")
def browser_page(tmp_path_factory):
    exe = _chromium()
    if exe is None:
        reason = (
            "NO BROWSER: the browser tests of bobshat serve did not run, because no Chromium is on PATH "
            "(apt-get install chromium; .ci/run does it)"
        )
        if os.environ.get("BOBSHAT_CI", "") not in ("", "0"):
            pytest.fail(reason)
        pytest.skip(reason)
    profile = tmp_path_factory.mktemp("chromium-profile")  # a fresh user-data-dir
    with playwright_api.sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile),
            executable_path=exe,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1400, "height": 950},
        )
        page = context.new_page()
        page.set_default_timeout(30_000)
        errors: list[str] = []
        page.on("pageerror", lambda err: errors.append(str(err)))
        yield page, errors
        context.close()


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    from web_server import LiveServer

    records = tmp_path_factory.mktemp("records")
    app = create_app(records)
    with LiveServer(app) as server:
        yield server.url, records, app


def _api_view(page, url: str) -> dict:
    game_id = page.evaluate("location.hash").removeprefix("#game=")
    return page.request.get(f"{url}/api/games/{game_id}").json()


def play_in_browser(page, url: str, link: str, seed: int, shot: str | None = None) -> tuple[list[int], int]:
    """Open ``link`` and play it to the end by clicking legal moves; the totals shown and the clicks made."""
    gen = random.Random(seed)
    page.goto(url + link)
    clicks = 0
    turn = -1
    while True:
        page.wait_for_function(
            "t => document.body.dataset.state && document.body.dataset.state !== 'waiting' && "
            "Number(document.body.dataset.turn) !== t",
            arg=turn,
        )
        if page.evaluate("document.body.dataset.state") == "done":
            break
        turn = int(page.evaluate("document.body.dataset.turn"))
        view = _api_view(page, url)
        assert view["your_turn"] and view["turn"] == turn
        legal = sorted(m["name"] for m in view["moves"])
        shown = page.locator("#you button.move:not(.renege), #hand button")
        buttons = [shown.nth(i) for i in range(shown.count())]
        names = sorted(b.get_attribute("aria-label") or b.inner_text() for b in buttons)
        assert names == legal, "the page offers exactly the legal moves, as buttons named by their notation"
        if shot and clicks == 4:
            page.screenshot(path=shot, full_page=True)
        page.get_by_role("button", name=gen.choice(legal), exact=True).click()
        clicks += 1
    rows = page.get_by_role("table", name="Final totals").locator("tbody tr")
    totals = {}
    for i in range(rows.count()):
        row = rows.nth(i)
        totals[int(row.get_attribute("data-seat"))] = int(row.locator("td.total").inner_text())
    return [totals[p] for p in sorted(totals)], clicks


@pytest.mark.parametrize(
    "link, seat, clicks",
    [
        ("/play?game=bobs_hat&players=4&opponents=random,random,random&hands=1&seat=0&speed=0", 0, 7),
        # Oh Hell has no one-hand game: its shortest is 7 players dealt 1 to 7 cards (7 bids and 28 cards to play)
        ("/play?game=oh_hell&players=7&opponents=random&deal_style=short_high&seat=3&speed=0", 3, 35),
    ],
    ids=["bobs_hat", "oh_hell"],
)
def test_a_whole_game_played_by_clicks_is_saved_and_replays(browser_page, live, tmp_path, link, seat, clicks):
    page, errors = browser_page
    url, records, _ = live
    before = len(list(read_jsonl(records / "games.jsonl"))) if (records / "games.jsonl").exists() else 0
    shot = tmp_path / "table.png"
    totals, made = play_in_browser(page, url, link, seed=seat, shot=str(shot))
    assert made == clicks
    assert shot.stat().st_size > 10_000 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"  # a mid-game screenshot
    assert page.get_by_text("Saved to games.jsonl").is_visible()
    # the last hand's scoring is a table: one row per seat with bid, taken, made or missed, points, total
    scoring = page.locator("#summaries table.scoring").first
    cells = scoring.locator("tbody tr").nth(seat).locator("th, td").all_inner_texts()
    assert (
        scoring.locator("tbody tr").count() == len(totals)
        and cells[0].endswith("(you)")
        and int(cells[-1]) == totals[seat]
    )
    assert cells[3] in ("made", "missed", "-") or cells[3].startswith("made ")
    panel = tmp_path / "scoring.png"
    page.locator("section[aria-label=Scoring]").screenshot(path=str(panel))
    assert panel.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    if os.environ.get("BOBSHAT_SHOTS"):  # keep them to look at (docs/ takes only good ones)
        game = link.split("&")[0].split("=")[1]
        for png in (shot, panel):
            shutil.copy(png, os.path.join(os.environ["BOBSHAT_SHOTS"], f"{game}_{png.name}"))
    assert page.locator("#table .seat-cards .back").count() == 0  # every hand played out: no card back for 0 cards
    if "players=7" in link:  # 7 seats sit around the table: yours below the trick, the far ones above it
        trick = page.locator("#table .seats.ring-7 .centre").bounding_box()
        mine = page.locator(f"#table section.seat[data-seat='{seat}']").bounding_box()
        far = page.locator("#table section.seat.at-3").bounding_box()
        assert mine["y"] >= trick["y"] + trick["height"] - 1 and far["y"] + far["height"] <= trick["y"] + 1
        assert page.locator("#table section.seat.at-1").bounding_box()["x"] < trick["x"]  # the next seat: left
    lines = list(read_jsonl(records / "games.jsonl"))
    assert len(lines) == before + 1
    record = lines[-1][1]
    assert record["totals"] == totals and record["agents"][seat] == "human"
    assert replay_main(str(records / "games.jsonl"), out=io.StringIO()) == 0
    # the replay page steps through it and ends on the same totals
    page.get_by_role("link", name="Replay this game").click()
    for button in ("Next move", "Next hand", "Start", "End"):  # (with one hand, "Next hand" goes to the end)
        page.get_by_role("button", name=button).click()
    shown = page.locator("section.seat dd.total").all_inner_texts()
    assert [int(t) for t in shown] == record["totals"]
    # the records page numbers games from 1, as `bobshat replay` does; its link opens that record
    page.goto(url + "/records")
    rows = page.locator("section.file", has_text="games.jsonl").locator("tbody tr")
    first = rows.nth(rows.count() - 1)  # (newest first)
    assert first.locator("td").first.inner_text() == "1"
    assert first.get_by_role("link", name="Replay").get_attribute("href").endswith("record=0")
    assert errors == []


EVIL_PAGE = """<!doctype html><html><body>
<a id="go" href="{play}">a great card game</a>
<form id="form" method="post" action="{url}/api/uploads" enctype="text/plain"><input name="{{}}" value=""></form>
<script>
window.attempts = Promise.all([
  fetch("{url}/api/uploads", {{method: "POST", mode: "no-cors", body: "{{}}\\n".repeat(1000)}}),
  fetch("{url}/api/games", {{method: "POST", mode: "no-cors", headers: {{"Content-Type": "text/plain"}},
    body: JSON.stringify({{seat: "none", agents: "pimc:worlds=200"}})}}),
  fetch("{url}/api/uploads", {{method: "POST", headers: {{"X-Bobshat": "1"}}, body: "{{}}"}}),
].map((p) => p.then(() => "sent", () => "blocked")));
</script></body></html>"""


def test_a_page_of_another_site_cannot_start_games_or_upload(browser_page, live):
    """A page on another site (served here as http://evil.test) links to a costly /play and posts what it can.

    Its no-cors posts are refused by the server (nothing held), the one with
    the custom header dies in the preflight, and the link opens the play page
    in a state that starts nothing until the visitor clicks Start.
    """
    page, errors = browser_page
    url, _records, app = live
    store, sources = app.state.store, app.state.sources
    games, uploads = len(store), len(sources._uploads)
    play = f"{url}/play?game=bobs_hat&players=4&hands=1&seat=none&agents=pimc:worlds=4&speed=0"
    html = EVIL_PAGE.format(url=url, play=play)
    page.route("http://evil.test/**", lambda route: route.fulfill(status=200, content_type="text/html", body=html))
    page.goto("http://evil.test/")
    page.evaluate("window.attempts")  # (Chromium may block some itself: Private Network Access; the server must too)
    with page.expect_navigation():
        page.evaluate("document.getElementById('form').submit()")  # a form post: the server answers 403
    assert "another site" in page.content(), page.content()
    assert (len(store), len(sources._uploads)) == (games, uploads)
    page.goto("http://evil.test/")
    page.click("#go")
    page.wait_for_function("() => document.body.dataset.state === 'confirm'")
    assert page.get_by_role("heading", name="Start this game?").is_visible()
    assert "pimc:worlds=4" in page.locator("#confirm").inner_text()
    assert (len(store), len(sources._uploads)) == (games, uploads)
    # the visitor's own click starts it
    page.get_by_role("button", name="Start this game").click()
    page.wait_for_function("() => location.hash.startsWith('#game=')")
    assert len(store) == games + 1
    page.unroute("http://evil.test/**")
    assert errors == []

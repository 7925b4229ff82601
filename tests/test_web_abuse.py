"""``bobshat serve`` against a hostile web page and hostile input (issue 24, section 1).

A page on another origin can make the visitor's browser send requests to a
server on 127.0.0.1 (links, forms, ``no-cors`` fetches). These tests send
what such a page could send (the browser's own ``Origin`` and
``Sec-Fetch-Site`` headers, content types that need no CORS preflight) and
check that nothing changes; then the caps on agent specs, the one allow-list
for files, the bounds on uploads, and the ``serve`` command's flags and real
configuration. The same attacks from a real Chromium are in
tests/test_web_browser.py.
"""

from __future__ import annotations

import asyncio
import io
import json
import socket
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the web extra is not installed: pip install -e '.[web]'")
pytest.importorskip("httpx", reason="httpx is not installed (the dev extra has it)")

from starlette.testclient import TestClient

from bobshat.web.app import create_app, without_folders

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "checkpoints"
BH_1HAND = {"game": "bobs_hat", "players": "4", "hands": "1", "opponents": "random", "seat": "0"}
UPLOAD = {"Content-Type": "application/x-ndjson", "X-Bobshat": "1"}
EVIL = [
    {"Origin": "http://evil.example"},
    {"Origin": "null"},
    {"Origin": "http://127.0.0.1:9999"},  # another port is another origin
    {"Sec-Fetch-Site": "cross-site"},
    {"Sec-Fetch-Site": "same-site"},  # another port on the same machine is the same site, not the same origin
]
needs_shipped = pytest.mark.skipif(not (SHIPPED / "bobs_hat_4p.pt").exists(), reason="no shipped policies here")


@pytest.fixture
def server(tmp_path):
    app = create_app(tmp_path, idle_timeout=60, max_upload=20_000, sweep_every=3600)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        yield client, tmp_path, app


def _game(client, **params):
    r = client.post("/api/games", json={**BH_1HAND, **params})
    assert r.status_code == 201, r.text
    return r.json()


def _records(folder: Path) -> bytes:
    from agents import make_agent
    from agents.arena import play_games
    from bobshat_env.games import make_game
    from bobshat_env.records import Recorder, write_jsonl

    game = make_game("bobs_hat", players=3, hands=1)
    bots = [make_agent("random", game, seed=p) for p in range(3)]
    res = play_games(game, bots, 2, seed=0, recorder_factory=lambda g, s, ids: Recorder(g, s, ids))
    write_jsonl(folder / "old.jsonl", res.records)
    return (folder / "old.jsonl").read_bytes()


# --------------------------------------------------------------------------
# 1. Requests a page of another origin could send
@pytest.mark.parametrize("headers", EVIL, ids=[next(iter(h.items()))[1] for h in EVIL])
def test_every_state_changing_request_from_another_origin_is_refused(server, headers):
    client, records, app = server
    view = _game(client)
    gid, before = view["id"], view["turn"]
    good = _records(records)
    attempts = [
        ("POST", "/api/games", {"json": BH_1HAND}),
        ("POST", f"/api/games/{gid}/move", {"json": {"move": view["moves"][0]["name"], "turn": before}}),
        ("POST", f"/api/games/{gid}/advance", {"json": {"steps": 5}}),
        ("POST", "/api/uploads", {"content": good, "headers": UPLOAD}),
        ("DELETE", f"/api/games/{gid}", {}),
        ("GET", "/api/records", {}),  # the API answers this server's own pages only
    ]
    for method, url, kw in attempts:
        r = client.request(method, url, **{**kw, "headers": {**kw.get("headers", {}), **headers}})
        assert r.status_code == 403, (method, url, r.text)
        assert "another site" in r.json()["error"]
    assert len(app.state.store) == 1 and app.state.sources._uploads == {}
    assert client.get(f"/api/games/{gid}").json()["turn"] == before
    # this server's own pages send Origin = its own address and Sec-Fetch-Site: same-origin: accepted
    own = {"Origin": "http://127.0.0.1", "Sec-Fetch-Site": "same-origin"}
    r = client.post(f"/api/games/{gid}/move", json={"move": view["moves"][0]["name"], "turn": before}, headers=own)
    assert r.status_code == 200 and r.json()["turn"] > before
    assert client.post("/api/uploads", content=good, headers={**UPLOAD, **own}).status_code == 201
    assert client.get("/api/records", headers={"Sec-Fetch-Site": "none"}).status_code == 200  # typed in the bar


def test_uploads_need_a_header_no_cross_site_page_can_send_without_a_preflight(server):
    client, records, app = server
    good = _records(records)
    simple = [  # what an HTML form or a no-cors fetch sends, with no Origin (as an old browser might)
        {"content": good, "headers": {"Content-Type": "text/plain"}},
        {"content": good, "headers": {"Content-Type": "application/x-ndjson"}},
        {"files": {"file": ("g.jsonl", good, "application/x-ndjson")}},
    ]
    for kw in simple:
        r = client.post("/api/uploads", **kw)
        assert r.status_code == 403 and "X-Bobshat: 1" in r.json()["error"], r.text
    assert app.state.sources._uploads == {}
    r = client.post(
        "/api/uploads", files={"file": ("g.jsonl", good, "application/x-ndjson")}, headers={"X-Bobshat": "1"}
    )
    assert r.status_code == 201 and r.json()["name"] == "g.jsonl"


def test_a_cors_preflight_is_never_approved(server):
    client, *_ = server
    for url in ("/api/games", "/api/uploads"):
        r = client.options(
            url,
            headers={
                "Origin": "http://evil.example",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "content-type, x-bobshat",
            },
        )
        assert r.status_code >= 400 and "access-control-allow-origin" not in r.headers


@pytest.mark.parametrize(
    "headers, confirm",
    [
        ({"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"}, True),
        ({"Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "navigate"}, True),
        ({"Referer": "http://evil.example/page"}, True),  # a browser without Sec-Fetch-*: its Referer says it
        ({"Sec-Fetch-Site": "none", "Sec-Fetch-Mode": "navigate"}, False),  # typed, bookmarked
        ({"Sec-Fetch-Site": "same-origin"}, False),  # the start page's Start button
        ({"Referer": "http://127.0.0.1/"}, False),
        ({}, False),
    ],
)
def test_a_play_link_from_another_site_starts_nothing_until_a_click(server, headers, confirm):
    client, _, app = server
    r = client.get("/play?seat=none&agents=pimc:worlds=200&speed=0&game=bobs_hat", headers=headers)
    assert r.status_code == 200 and ('data-confirm="link"' in r.text) == confirm
    assert len(app.state.store) == 0  # the page itself starts nothing; play.js waits for the click when told to
    js = client.get("/static/play.js").text
    assert 'document.body.dataset.confirm === "link"' in js and "await confirmLink(body)" in js


# --------------------------------------------------------------------------
# 2. Caps on what a request may ask of an agent
@pytest.mark.parametrize(
    "agents, words",
    [
        ("pimc:worlds=100000", "worlds must be an integer from 1 to 256"),
        ("pimc:worlds=100000000", "worlds must be an integer from 1 to 256"),
        ("pimc:max_rows=1", "max_rows must be an integer from 1024 to 40000"),
        ("pimc:max_rows=10000000", "max_rows must be an integer from 1024 to 40000"),
        ("pimc:worlds=1e9", "worlds must be an integer"),
        ("bid=pimc:worlds=5000+play=random", "worlds must be an integer from 1 to 256"),
        ("bid=random+play=pimc:worlds=16,max_rows=99999999", "max_rows must be an integer from 1024"),
        ("search:policy=bobs_hat_4p,worlds=10000", "worlds must be an integer from 1 to 64"),
        ("search:policy=bobs_hat_4p,top_k=40", "top_k must be an integer from 1 to 4"),
        ("search:policy=bobs_hat_4p,worlds=64,top_k=3", "worlds x top_k is 64 x 3 = 192"),
        ("search:policy=bobs_hat_4p,oversample=1000", "oversample must be an integer from 1 to 4"),
        ("pimc:sneaky=1", "option 'sneaky' cannot be set over the web"),
        ("strong:seed=5", "option 'seed' cannot be set over the web"),
        ("ppo:bobs_hat_4p.pt,device=cuda", "option 'device' cannot be set over the web"),
        ("ismcts:sims=100000", "sims must be an integer from 1 to 1000"),
        ("ismcts:batch=4096", "option 'batch' cannot be set over the web"),
        ("puct:policy=bobs_hat_4p,sims=5000", "sims must be an integer from 1 to 256"),
        ("puct:policy=bobs_hat_4p,parallel=64", "parallel must be an integer from 1 to 16"),
        ("puct:policy=bobs_hat_4p,ms=60000", "option 'ms' cannot be set over the web"),
    ],
)
def test_costly_agent_options_are_capped_for_requests(server, agents, words):
    client, _, app = server
    r = client.post("/api/games", json={**BH_1HAND, "seat": "none", "agents": agents})
    assert r.status_code == 400 and words in r.json()["error"], r.text
    assert len(app.state.store) == 0


def test_agents_within_the_caps_are_built(server):
    client, *_ = server
    view = _game(client, seat="none", agents="pimc:worlds=256,max_rows=1024,playout=strong")
    assert view["seats"][0]["agent"] == "pimc:worlds=256,max_rows=1024,playout=strong"
    view = _game(client, seat="none", agents="ismcts:sims=20,uct_c=0.5")  # the searches may be asked for too
    assert view["seats"][0]["agent"] == "ismcts:sims=20,uct_c=0.5"


@pytest.mark.parametrize(
    "spec, words",
    [
        ("pimc:max_rows=0", "max_rows must be a positive integer, got 0"),
        ("pimc:max_rows=-1", "max_rows must be a positive integer, got -1"),
        ("pimc:worlds=0", "worlds must be a positive integer, got 0"),
        ("strong:seed=5", "agent 'strong': seed is not an agent option"),
        ("simple:speed=3", "agent 'simple' has no option 'speed'"),
        ("search:policy=nowhere.pt,z=nan", "search option z must be a number >= 0 and finite, got nan"),
        ("search:policy=nowhere.pt,z=inf", "search option z must be a number >= 0 and finite, got inf"),
        ("search:policy=nowhere.pt,value_scale=nan", "value_scale must be a finite number"),
    ],
)
def test_agent_options_are_checked_everywhere_with_the_option_named(spec, words):
    """The command line builds agents with the same checks (no web caps there): a bad value names its option."""
    from agents import make_agent
    from bobshat_env.games import make_game

    with pytest.raises(ValueError) as err:
        make_agent(spec, make_game("bobs_hat"), seed=0)
    assert words in str(err.value)
    assert "factory" not in str(err.value) and "__init__" not in str(err.value)  # no internal Python names


def test_a_wrong_number_of_agents_is_worded_for_one():
    from agents.registry import count_error

    assert count_error("--agents", 1, 4) == "--agents names 1 agent but the game has 4 players (one spec per seat)"
    assert count_error("--agents", 2, 4).startswith("--agents names 2 agents but")


# --------------------------------------------------------------------------
# 3. One allow-list for every spec that names a file
def _refusal(client, spec: str) -> str:
    r = client.post("/api/games", json={**BH_1HAND, "seat": "none", "agents": spec})
    assert r.status_code == 400, (spec, r.text)
    return r.json()["error"].replace(repr(spec), "SPEC")


def test_a_file_outside_the_allow_list_gets_one_message_whether_or_not_it_exists(server, tmp_path):
    client, *_ = server
    exists = ROOT / "README.md"
    specs = []
    for path in (str(exists), "README.md", str(tmp_path / "none.pt"), "nosuch", "/etc/passwd", "../../etc/passwd"):
        specs += [
            f"ppo:{path}",
            f"search:policy={path}",
            f"bid=ppo:{path}+play=random",
            f"bid=strong+play=search:policy={path},worlds=2",
        ]
    messages = {_refusal(client, spec) for spec in specs}
    assert len(messages) == 1, messages  # no oracle: the same words for a file that exists and one that does not
    assert "does not offer" in messages.pop()


@needs_shipped
def test_every_spec_kind_naming_a_shipped_policy_plays_through_the_web(server):
    client, records, _ = server
    specs = [
        "ppo:bobs_hat_4p",
        "search:policy=bobs_hat_4p,worlds=2,top_k=2",
        f"search:policy={SHIPPED / 'bobs_hat_4p.pt'},worlds=2,top_k=2",
        "bid=ppo:bobs_hat_4p+play=search:policy=bobs_hat_4p,worlds=2,top_k=2",
    ]
    view = _game(client, seat="none", agents=",".join(specs))
    while not view["done"]:
        r = client.post(f"/api/games/{view['id']}/advance", json={"steps": 1000})
        assert r.status_code == 200, r.text
        view = r.json()
    from bobshat_env.records import read_jsonl, replay_report

    ((_, record),) = read_jsonl(records / "games.jsonl")
    assert record["agents"] == specs and replay_report(record).ok  # the record names what was asked for


@needs_shipped
@pytest.mark.parametrize("spec", ["ppo:bobs_hat_4p", "search:policy=bobs_hat_4p,worlds=2"])
def test_a_shipped_policy_at_other_rules_is_refused_without_the_servers_paths(server, spec):
    """The refusal names the option and the file, not where the server keeps it (it showed the absolute path)."""
    client, _, app = server
    r = client.post("/api/games", json={**BH_1HAND, "negative_scoring": "true", "opponents": spec})
    error = r.json()["error"]
    assert r.status_code == 400 and "negative_scoring" in error and "bobs_hat_4p.pt" in error, r.text
    assert str(ROOT) not in error and str(SHIPPED) not in error, error
    assert len(app.state.store) == 0


@needs_shipped
def test_a_checkpoint_given_with_agents_is_offered_at_its_own_table_and_allowed_by_path(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    spec = "ppo:checkpoints/oh_hell_5p.pt"
    app = create_app(tmp_path, agents=[spec])
    with TestClient(app, base_url="http://127.0.0.1") as client:
        meta = {g["name"]: g for g in client.get("/api/meta").json()["games"]}
        tables = [(g, n) for g, m in meta.items() for n, a in m["agents"].items() if spec in [x["spec"] for x in a]]
        assert tables == [("oh_hell", "5")]
        oh5 = {"game": "oh_hell", "players": "5", "seat": "none"}
        r = client.post(
            "/api/games",
            json={**oh5, "agents": f"{spec},search:policy=checkpoints/oh_hell_5p.pt,worlds=2,random,random,random"},
        )
        assert r.status_code == 201, r.text
        copy = tmp_path / "copy.pt"  # the same policy, at a path the server was not given
        copy.write_bytes((SHIPPED / "oh_hell_5p.pt").read_bytes())
        r = client.post("/api/games", json={**oh5, "agents": f"search:policy={copy},worlds=2"})
        assert r.status_code == 400 and "does not offer" in r.json()["error"]


# --------------------------------------------------------------------------
# 4. Uploads, errors, records folder, seeds
def test_an_upload_of_tiny_lines_costs_a_bounded_listing(server):
    client, _, app = server
    body = b"{}\n" * (20_000 // 3)  # at the upload limit: 6,666 records of two bytes each
    r = client.post("/api/uploads", content=body, headers=UPLOAD)
    assert r.status_code == 201
    assert len(r.content) < 3 * 20_000  # unbounded, this response was 1.3 MB (70 times the upload)
    items = r.json()["records"]
    assert items[-1]["unchecked"] and "not checked" in items[-1]["faults"][0] and len(items) < 500
    assert items[0]["faults"] == ["unknown game None: expected one of bobs_hat, oh_hell"]


def test_a_chunked_upload_is_refused_while_it_arrives_not_after(tmp_path):
    """An upload with no Content-Length is counted chunk by chunk: reading stops once it is over the limit."""
    app = create_app(tmp_path, max_upload=20_000)
    given = 0

    async def receive() -> dict:
        nonlocal given
        given += 1
        return {"type": "http.request", "body": b"x" * 10_000, "more_body": given < 1000}  # 10 MB in all

    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/api/uploads",
        "raw_path": b"/api/uploads",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1"), (b"x-bobshat", b"1"), (b"transfer-encoding", b"chunked")],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 80),
    }
    asyncio.run(app(scope, receive, send))
    assert sent[0]["status"] == 413
    assert given <= 3  # 20 kB of 10 MB: read whole before the check, all 1,000 chunks were taken


def test_errors_are_json_and_a_failure_does_not_close_the_connection(tmp_path, monkeypatch):
    from web_server import LiveServer

    app = create_app(tmp_path)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        for r in (
            client.post(
                "/api/uploads",
                content=b"--x\r\nbroken",
                headers={"X-Bobshat": "1", "Content-Type": "multipart/form-data; boundary=x"},
            ),
            client.post("/api/uploads", content=b"", headers={"X-Bobshat": "1", "Content-Type": "multipart/form-data"}),
            client.get("/api/nothing"),
            client.put("/api/games"),
            client.get("/api/games/x", headers={"Host": "evil.example"}),
        ):
            assert 400 <= r.status_code < 500 and isinstance(r.json()["error"], str), r.text

    def boom() -> list:
        raise RuntimeError("the disk caught fire")

    def full_disk() -> list:  # an error's text can carry the server's own paths: the page gets file names only
        raise OSError(28, "No space left on device", "/srv/bob/records/games.jsonl", None, "C:\\Users\\bob\\b.tmp")

    monkeypatch.setattr(app.state.sources, "listing", boom)
    with LiveServer(app) as live, socket.create_connection(("127.0.0.1", int(live.url.rsplit(":", 1)[1]))) as s:
        f = s.makefile("rb")

        def ask(path: str) -> tuple[int, dict]:
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
            status = int(f.readline().split()[1])
            length = 0
            while (line := f.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            return status, json.loads(f.read(length))

        status, body = ask("/api/records")
        assert status == 500 and "the disk caught fire" in body["error"]
        monkeypatch.setattr(app.state.sources, "listing", full_disk)
        status, body = ask("/api/records")  # the text stays, the server's folders go
        assert status == 500 and "No space left on device" in body["error"] and "games.jsonl" in body["error"]
        assert "/srv/" not in body["error"] and "bob" not in body["error"] and "C:" not in body["error"], body
        status, body = ask("/api/meta")  # the same connection: before, uvicorn had closed it after the 500
        assert status == 200 and body["games"]


@pytest.mark.parametrize(
    "text, shown",
    [
        ("cannot write '/srv/bob/runs/x.json': full", "cannot write 'x.json': full"),
        ("[Errno 2] No such file: /home/bob/a.pt, /b/", "[Errno 2] No such file: a.pt, b"),
        ("C:\\Users\\bob\\x.pt -> D:/y/z.pt", "x.pt -> z.pt"),
        # a quoted path (as OSError writes its file names) is cut whole, spaces included
        ("[Errno 28] No space: '/home/my user/runs/x y.json'", "[Errno 28] No space: 'x y.json'"),
        ("write \"C:\\My Files\\a b.pt\" and '/srv/one two/'", "write \"a b.pt\" and 'one two'"),
        # nothing absolute: kept as it is (a relative path, a URL, a ratio, a home-relative name)
        ("records/games.jsonl at http://host/a/b, 3 / 4, ~/x", "records/games.jsonl at http://host/a/b, 3 / 4, ~/x"),
    ],
)
def test_an_error_shown_to_a_page_names_files_not_the_servers_folders(text, shown):
    assert without_folders(text) == shown


def test_records_listing_names_the_folder_not_its_path_and_a_relative_folder_replays(tmp_path, monkeypatch):
    (tmp_path / "recs").mkdir()
    recs = _records(tmp_path / "recs")
    monkeypatch.chdir(tmp_path)
    app = create_app("recs")
    monkeypatch.chdir(ROOT)  # the server's working folder may change later: the folder is the one named at start
    with TestClient(app, base_url="http://127.0.0.1") as client:
        data = client.get("/api/records").json()
        assert data["folder"] == "recs" and str(tmp_path) not in json.dumps(data)
        assert [r["ok"] for r in data["files"][0]["records"]] == [True, True]
        r = client.get("/api/replay?file=old.jsonl&record=1")
        assert r.status_code == 200 and r.json()["ok"], r.text
        view = client.post("/api/games", json={**BH_1HAND, "seat": "none"}).json()
        while not view["done"]:
            view = client.post(f"/api/games/{view['id']}/advance", json={"steps": 1000}).json()
        assert view["result"]["saved"] == {"file": "games.jsonl"}
    assert (tmp_path / "recs" / "games.jsonl").exists() and recs


@pytest.mark.parametrize("seed", [2**63, 2**64, 10**30, -1, "9223372036854775808", "99999999999999999999"])
def test_a_seed_past_the_documented_range_is_refused_in_json_and_in_the_url_form(server, seed):
    client, _, app = server
    r = client.post("/api/games", json={**BH_1HAND, "seed": seed})
    assert r.status_code == 400 and "seed must be an integer from 0 to 9223372036854775807" in r.json()["error"]
    assert len(app.state.store) == 0


def test_the_largest_seed_is_accepted(server):
    client, *_ = server
    assert _game(client, seed=2**63 - 1)["seed"] == 2**63 - 1
    assert _game(client, seed=str(2**63 - 1))["seed"] == 2**63 - 1


def test_a_huge_integer_in_a_record_is_reported_on_its_line(server):
    client, records, _ = server
    good = _records(records)
    huge = b'{"game": "bobs_hat", "seed": ' + b"9" * 5000 + b"}\n"
    r = client.post("/api/uploads", content=good + huge, headers=UPLOAD)
    assert r.status_code == 201, r.text
    items = r.json()["records"]
    assert [i["ok"] for i in items] == [True, True, False] and items[2]["line"] == 3
    assert "line 3 holds a number too long to read" in items[2]["faults"][0]
    (records / "old.jsonl").write_bytes(good + huge)
    listed = client.get("/api/records")
    assert listed.status_code == 200 and [i["ok"] for i in listed.json()["files"][0]["records"]] == [True, True, False]


def test_a_record_escaping_half_a_character_is_listed_not_a_server_error(server):
    """JSON's ``"\\udcff"`` parses to a lone surrogate, which UTF-8 cannot encode (found by tests/test_fuzz_web.py)."""
    client, records, _ = server
    good = _records(records)
    first = json.loads(good.splitlines()[0])
    first["agents"][0] = "\udcff"
    bad = json.dumps(first).encode() + b"\n"  # ASCII text: the surrogate is written as an escape
    r = client.post("/api/uploads", content=bad, headers=UPLOAD)
    assert r.status_code == 201, r.text
    assert r.json()["records"][0]["agents"][0] == "\udcff"
    uid = r.json()["id"]
    shown = client.get(f"/api/replay?upload={uid}&record=0")
    assert shown.status_code == 200, shown.text
    (records / "old.jsonl").write_bytes(bad)
    listed = client.get("/api/records")
    assert listed.status_code == 200 and listed.json()["files"][0]["records"][0]["agents"][0] == "\udcff"


# --------------------------------------------------------------------------
# 5. Finished games do not count against max_games
def test_finished_games_do_not_count_against_max_games(tmp_path):
    app = create_app(tmp_path, max_games=2)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        for _ in range(4):  # four games in turn, each finished before the next
            view = _game(client, seat="none")
            while not view["done"]:
                view = client.post(f"/api/games/{view['id']}/advance", json={"steps": 1000}).json()
        assert len(app.state.store) == 4  # all kept (their records, replays) until the idle timeout
        for _ in range(2):  # two under way (one that never got a move would make room)
            gid = _game(client)["id"]
            assert client.post(f"/api/games/{gid}/move", json={"move": "hat+10"}).status_code == 200
        r = client.post("/api/games", json=BH_1HAND)
        assert r.status_code == 503 and "2 games in play" in r.json()["error"]


def test_finished_games_kept_are_bounded_oldest_first(tmp_path):
    from bobshat.web.session import FINISHED_PER_GAME

    app = create_app(tmp_path, max_games=1)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        ids = []
        for _ in range(FINISHED_PER_GAME + 3):
            view = _game(client, seat="none")
            while not view["done"]:
                view = client.post(f"/api/games/{view['id']}/advance", json={"steps": 1000}).json()
            ids.append(view["id"])
        assert len(app.state.store) == FINISHED_PER_GAME  # memory stays bounded however many games end
        assert client.get(f"/api/games/{ids[0]}").status_code == 404  # the oldest made room
        assert client.get(f"/api/games/{ids[-1]}/record").status_code == 200


# --------------------------------------------------------------------------
# 6. The command's flags and its real configuration
@pytest.mark.parametrize(
    "args, words",
    [
        (["--max-upload-mb", "inf"], "argument --max-upload-mb: must be 0.001 to 1024"),
        (["--max-upload-mb", "nan"], "argument --max-upload-mb: must be 0.001 to 1024"),
        (["--max-upload-mb", "1e300"], "argument --max-upload-mb: must be 0.001 to 1024"),
        (["--max-upload-mb", "0"], "argument --max-upload-mb: must be 0.001 to 1024"),
        (["--idle-timeout", "nan"], "argument --idle-timeout: must be 1 to 604800"),
        (["--idle-timeout", "1e-9"], "argument --idle-timeout: must be 1 to 604800"),
        (["--max-games", "0"], "argument --max-games: must be 1 to 10,000"),
        (["--port", "70000"], "argument --port: must be 0 to 65,535"),
        (["--host", ""], "argument --host: expected an address"),
        (["--host", " "], "argument --host: expected an address"),
    ],
)
def test_serve_refuses_bad_flags_in_one_line_naming_the_flag(tmp_path, capsys, args, words):
    from bobshat.cli import main

    with pytest.raises(SystemExit) as stop:
        main(["serve", "--records-dir", str(tmp_path / "recs"), *args])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err
    assert not (tmp_path / "recs").exists()  # nothing made


@pytest.mark.parametrize("why", ["agents", "port"])
def test_serve_refused_for_its_agents_or_port_makes_no_records_folder(tmp_path, capsys, why):
    """Everything is checked before the records folder is made (found by tests/test_fuzz_cli.py)."""
    from bobshat.cli import main

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1]) if why == "port" else "0"
        args = ["--agents", "pimc:max_rows=-1"] if why == "agents" else []
        code = main(["serve", "--records-dir", str(tmp_path / "recs"), "--port", port, *args])
    err = capsys.readouterr().err.strip()
    assert code == 2 and ("--agents" if why == "agents" else f"127.0.0.1:{port}") in err, err
    assert not (tmp_path / "recs").exists()  # nothing made


def test_serve_says_which_part_of_the_records_folder_is_not_a_folder(tmp_path, capsys):
    from bobshat.cli import main

    (tmp_path / "passwd").write_text("root:x:0:0\n")
    assert main(["serve", "--records-dir", str(tmp_path / "passwd" / "sub" / "deeper"), "--port", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(f"--records-dir: {tmp_path / 'passwd'} is not a folder") and "\n" not in err
    assert main(["serve", "--records-dir", str(tmp_path / "passwd"), "--port", "0"]) == 2
    assert f"{tmp_path / 'passwd'} is not a folder" in capsys.readouterr().err


def _served(monkeypatch, **kw):
    """The app and uvicorn config the real ``serve()`` would run (the server itself is not started)."""
    import uvicorn

    from bobshat.web import serve

    started = []
    monkeypatch.setattr(uvicorn.Server, "run", lambda self: started.append(self.config))
    assert serve(port=0, out=io.StringIO(), **kw) == 0
    return started[-1]


def test_the_default_server_answers_only_to_loopback_names(tmp_path, monkeypatch):
    config = _served(monkeypatch, records_dir=str(tmp_path))
    assert config.host == "127.0.0.1"
    with TestClient(config.app, base_url="http://127.0.0.1:8000") as client:
        for host in ("127.0.0.1:8000", "localhost:8000", "[::1]:8000", "127.0.0.1"):
            assert client.get("/api/meta", headers={"Host": host}).status_code == 200, host
        for host in ("evil.example", "evil.example:8000", "127.0.0.1.evil.example", "0.0.0.0:8000", ""):
            r = client.get("/api/meta", headers={"Host": host})
            assert r.status_code == 400 and "own address" in r.json()["error"], host  # no DNS rebinding
    # off loopback (the operator's choice, with the warning) any name is answered
    config = _served(monkeypatch, host="0.0.0.0", records_dir=str(tmp_path))
    with TestClient(config.app, base_url="http://192.0.2.1") as client:
        assert client.get("/api/meta", headers={"Host": "my-machine.lan:8000"}).status_code == 200


@needs_shipped
def test_serve_offers_a_checkpoint_of_another_table_instead_of_refusing_it(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    config = _served(monkeypatch, records_dir=str(tmp_path), agents=["ppo:checkpoints/oh_hell_5p.pt"])
    with TestClient(config.app, base_url="http://127.0.0.1") as client:
        games = {g["name"]: g for g in client.get("/api/meta").json()["games"]}
        assert "ppo:checkpoints/oh_hell_5p.pt" in [a["spec"] for a in games["oh_hell"]["agents"]["5"]]
        assert "ppo:checkpoints/oh_hell_5p.pt" not in [a["spec"] for a in games["oh_hell"]["agents"]["4"]]

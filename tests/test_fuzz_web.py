"""Property-based fuzzing of ``bobshat serve``'s endpoints with hostile parameters and headers (issue 24).

Every route of the app, every query parameter and JSON field, uploads as
raw bodies and as forms, with hostile values (tests/fuzz_hostile.py), wrong
content types and foreign ``Origin`` / ``Sec-Fetch-Site`` headers, through
Starlette's TestClient (server exceptions become responses, as for a real
client). The contract, for any request:

- never a 5xx but the one for a full server (503); every refused API
  request answers JSON ``{"error": "..."}``;
- refused (4xx): nothing changed (the games held and where each stands, the
  uploads held, the records folder);
- a state-changing request (POST, DELETE) that a page of another origin
  could send (a foreign ``Origin``, ``Sec-Fetch-Site`` other than
  same-origin) is refused;
- no response shows the records folder's absolute path;
- an agent that a request names costs what a request may cost: a search
  option past ``AGENT_CAPS`` (``pimc:worlds=100000`` takes about a minute a
  move) or a non-finite number is refused; so is a seed past 2^63 - 1, as
  the URL form refuses it;
- an upload's response is at most a small multiple of the upload limit;
- a spec naming a file answers the same whether that file exists or not.

Hypothesis runs derandomized with no database (the same examples in CI);
``BOBSHAT_FUZZ_EXAMPLES`` scales the number of examples.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("hypothesis", reason="the fuzz suite needs hypothesis (the dev extra has it)")
pytest.importorskip("starlette", reason="the web extra is not installed: pip install -e '.[web]'")
pytest.importorskip("httpx", reason="httpx is not installed (the dev extra has it)")

import fuzz_hostile as H
from fuzz_hostile import fuzz_settings
from hypothesis import given
from hypothesis import strategies as st
from starlette.testclient import TestClient

from bobshat.web.app import create_app

MAX_UPLOAD = 20_000
MAX_SEED = 2**63 - 1
HUGE_INT = "9" * 5000  # a JSON integer past Python's 4,300-digit limit (written into the body text as is)
# Agent options a request may not push past (a move must cost what a request may cost); others: ANY_CAP.
AGENT_CAPS = {"worlds": 100_000, "top_k": 100_000, "oversample": 100_000, "horizon": 100_000, "max_rows": 10**7}
ANY_CAP = 10**9
BH_1HAND = {"game": "bobs_hat", "players": "4", "hands": "1", "opponents": "random", "seat": "0"}
# what the server's own pages send with a request (a browser names the page's origin; common.js and
# records.js add X-Bobshat, which the server requires of an upload: no other origin can send it without
# a preflight)
PAGE = {"Origin": "http://127.0.0.1", "Sec-Fetch-Site": "same-origin", "X-Bobshat": "1"}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Server:
    """One app for a test's examples, with a game in progress and a finished one always at hand."""

    def __init__(self, records: Path) -> None:
        self.records = records
        (records / "other.jsonl").write_text('{"not": "a record"}\n')
        self.app = create_app(
            records, idle_timeout=60, max_games=10_000, max_upload=MAX_UPLOAD, clock=Clock(), sweep_every=3600
        )
        self.client = TestClient(self.app, base_url="http://127.0.0.1", raise_server_exceptions=False)
        self.client.__enter__()
        self.live = self.finished = self.upload = ""
        self.refresh()

    def refresh(self) -> None:
        """A game waiting for its human (seat 0), a finished game and an upload; made again when used up."""
        store = self.app.state.store
        live = store._games.get(self.live)
        if live is None or live.done:
            r = self.client.post("/api/games", json={**BH_1HAND, "seed": 1}, headers=PAGE)
            assert r.status_code == 201, r.text
            self.live = r.json()["id"]
        if self.finished not in store._games:
            body = {**BH_1HAND, "seat": "none", "agents": "random", "seed": 2}
            r = self.client.post("/api/games", json=body, headers=PAGE)
            assert r.status_code == 201, r.text
            self.finished = r.json()["id"]
            url = f"/api/games/{self.finished}/advance"
            while not self.client.post(url, json={"steps": 1000}, headers=PAGE).json()["done"]:
                pass
        if self.upload not in self.app.state.sources._uploads:
            rec = json.dumps(store._games[self.finished].record)
            kind = {**PAGE, "Content-Type": "application/x-ndjson"}
            r = self.client.post("/api/uploads?name=u.jsonl", content=rec + "\n", headers=kind)
            assert r.status_code == 201, r.text
            self.upload = r.json()["id"]

    def state(self) -> dict[str, Any]:
        """What a refused request must leave as it was."""
        store, sources = self.app.state.store, self.app.state.sources
        return {
            "games": {gid: (s.turn, len(s.log), s.done, s.record is not None) for gid, s in store._games.items()},
            "uploads": sorted(sources._uploads),
            "files": H.snapshot(self.records),
        }

    def close(self) -> None:
        self.client.__exit__(None, None, None)


@pytest.fixture
def server(tmp_path):
    records = tmp_path / "records"
    records.mkdir()
    s = Server(records)
    yield s
    s.close()


# --------------------------------------------------------------------------
# Hostile values
JSON_VALUES = st.one_of(
    st.sampled_from([None, True, False, 0, -1, 1, 2**31, 2**63, 2**64, 10**30, 1e300, -0.0, 0.5, "", " "]),
    st.sampled_from(H.TEXT_VALUES + H.INT_VALUES + H.SPECS),
    st.sampled_from([[], {}, ["random"], {"a": 1}, [[[[]]]], "\u0000"]),
    st.just(float("nan")),
    st.just(float("inf")),
    st.just("HUGE_INT"),
    st.integers(),
    st.text(max_size=20),
)
# fmt: off
GAME_KEYS = ["game", "players", "hands", "seat", "opponents", "agents", "seed", "first_dealer", "double_fewest",
             "no_bid", "secret_bidding", "negative_scoring", "renege_mode", "deal_style", "scoring", "speed", "x"]
MOVE_KEYS = ["move", "action", "turn", "renege", "since", "steps", "x"]
QUERY_KEYS = ["since", "file", "record", "upload", "game", "name", "seat", "agents", "x"]
CONTENT_TYPES = ["application/json", "application/json; charset=utf-8", "APPLICATION/JSON", "text/plain",
                 "application/x-www-form-urlencoded", "multipart/form-data; boundary=xyz", "application/x-ndjson",
                 "", "application/json, text/plain"]
# fmt: on
FOREIGN_ORIGINS = ["http://evil.example", "null", "http://127.0.0.1:9999", "http://localhost", "https://127.0.0.1"]
SEC_FETCH_SITES = ["cross-site", "same-site"]


def dumps(value: Any) -> str:
    """JSON text as a client would send it, the 5000-digit integer (``"HUGE_INT"``) written in as a number."""
    return json.dumps(value).replace('"HUGE_INT"', HUGE_INT)


@st.composite
def json_bodies(draw: Any, keys: list[str]) -> str:
    body = draw(st.dictionaries(st.sampled_from(keys), JSON_VALUES, max_size=4))
    shape = draw(st.sampled_from(["object", "object", "object", "list", "text", "deep"]))
    if shape == "list":
        return dumps([body])
    if shape == "text":
        return draw(st.sampled_from(["", "{", "null", "1", '"x"', "{}" * 1000, "\ufeff{}", "{'a': 1}"]))
    if shape == "deep":
        return "[" * 100_000 + "]" * 100_000
    return dumps(body)


@st.composite
def upload_bodies(draw: Any, record: str) -> bytes:
    """Records files: the real one cut, edited, repeated, with hostile numbers and bytes."""
    pick = draw(st.sampled_from(["cut", "huge_int", "nan", "empty_lines", "binary", "many", "edited", "deep"]))
    if pick == "cut":
        return record.encode()[: draw(st.integers(0, len(record)))]
    if pick == "huge_int":
        return re.sub(r'"seed":\s*\d+', f'"seed": {HUGE_INT}', record, count=1).encode()
    if pick == "nan":
        return record.replace('"seed": ', '"seed": NaN, "x": ', 1).encode()
    if pick == "empty_lines":
        return b"\n" * draw(st.integers(0, 5000)) + b"{}\n" * draw(st.integers(0, 5000))
    if pick == "binary":
        return draw(st.binary(max_size=3000))
    if pick == "many":
        return b"{}\n" * (MAX_UPLOAD // 3)  # just under the limit, thousands of (bad) records
    if pick == "deep":
        return b"[" * 10_000 + b"]" * 10_000
    rec = json.loads(record)
    key = draw(st.sampled_from(sorted(rec)))
    rec[key] = draw(JSON_VALUES)
    return dumps(rec).encode()


@st.composite
def requests(draw: Any, server: Server, methods: tuple[str, ...] = ("GET", "POST", "DELETE", "PUT")) -> dict[str, Any]:
    """One request to any route, with hostile parameters, body, content type and origin headers."""
    gid = draw(st.sampled_from([server.live, server.finished, "", "x", "../x", "%2e%2e", "a" * 300]))
    # fmt: off
    routes = [
        ("GET", "/api/meta"), ("POST", "/api/games"), ("GET", f"/api/games/{gid}"),
        ("POST", f"/api/games/{gid}/move"), ("POST", f"/api/games/{gid}/advance"), ("DELETE", f"/api/games/{gid}"),
        ("GET", f"/api/games/{gid}/record"), ("GET", "/api/records"), ("GET", "/api/replay"),
        ("POST", "/api/uploads"), ("GET", "/"), ("GET", "/play"), ("GET", "/replay"), ("GET", "/records"),
        ("GET", "/static/../app.py"), ("PUT", "/api/games"), ("POST", "/api/meta"),
    ]
    # fmt: on
    route = draw(st.sampled_from([r for r in routes if r[0] in methods and (r[1] != "/api/meta" or "GET" in methods)]))
    method, path = route
    query = draw(
        st.dictionaries(
            st.sampled_from(QUERY_KEYS),
            st.sampled_from(
                [
                    server.upload,
                    server.finished,
                    "games.jsonl",
                    "other.jsonl",
                    "../x.jsonl",
                    "/etc/passwd",
                    *H.INT_VALUES,
                    *H.TEXT_VALUES[:8],
                ]
            ),
            max_size=3,
        )
    )
    headers = {}
    if draw(st.booleans()):
        headers["Content-Type"] = draw(st.sampled_from(CONTENT_TYPES))
    if draw(st.integers(0, 3)) == 0:
        headers["Origin"] = draw(st.sampled_from([*FOREIGN_ORIGINS, "http://127.0.0.1"]))
    if draw(st.integers(0, 3)) == 0:
        headers["Sec-Fetch-Site"] = draw(st.sampled_from([*SEC_FETCH_SITES, "same-origin", "none"]))
    if draw(st.integers(0, 3)) != 0:  # mostly as the pages send it (uploads need it), sometimes not or wrong
        headers["X-Bobshat"] = "1"
    elif draw(st.booleans()):
        headers["X-Bobshat"] = draw(st.sampled_from(["0", "", "yes", "1 1"]))
    if path == "/api/uploads":
        record = json.dumps(server.app.state.store._games[server.finished].record) + "\n"
        body: str | bytes = draw(upload_bodies(record))
    elif path == "/api/games":
        body = draw(json_bodies(GAME_KEYS))
    else:
        body = draw(json_bodies(MOVE_KEYS)) if method in ("POST", "PUT") else ""
    return {"method": method, "url": path, "params": query, "headers": headers, "content": body or None}


SIMPLE_TYPES = ("", "text/plain", "multipart/form-data", "application/x-www-form-urlencoded")


def cross_origin_simple(req: dict[str, Any]) -> bool:
    """Whether a page of another origin could make a browser send this request without a CORS preflight.

    A browser names the page's origin (``Origin``, ``Sec-Fetch-Site``) and sends a POST without asking
    first only with a form's content types (or none); a DELETE, a PUT or a JSON POST needs a preflight,
    which this server never grants.
    """
    headers = req["headers"]
    foreign = headers.get("Origin", "http://127.0.0.1") != "http://127.0.0.1" or headers.get(
        "Sec-Fetch-Site", "same-origin"
    ) not in ("same-origin", "none")
    kind = headers.get("Content-Type", "").split(";")[0].strip()
    return foreign and req["method"] == "POST" and kind in SIMPLE_TYPES


def _short(value: Any, n: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= n else f"{text[:n]}... ({len(text)} chars)"


def shown(req: dict[str, Any]) -> str:
    params = {k: _short(v, 40) for k, v in req["params"].items()}
    body = _short(req["content"], 200)
    return f"{req['method']} {req['url'][:80]} params={params} headers={req['headers']} body={body}"


def check_response(server: Server, req: dict[str, Any], r: Any, before: dict[str, Any]) -> None:
    what = shown(req)
    assert r.status_code < 500 or r.status_code == 503, f"{what}: {r.status_code} {r.text[:500]}"
    if req["url"].startswith("/api/") and r.status_code >= 400 and req["method"] != "HEAD":
        kind = r.headers.get("content-type", "")
        assert kind.startswith("application/json"), f"{what}: error {r.status_code} as {kind!r}: {r.text[:300]}"
        data = r.json()
        assert isinstance(data, dict) and isinstance(data.get("error"), str), f"{what}: error body {r.text[:300]}"
    assert str(server.records.resolve()) not in r.text, f"{what}: the response shows the records folder's path"
    after = server.state()
    if r.status_code >= 400:
        assert after == before, f"{what}: refused ({r.status_code} {r.text[:200]}), but changed the server's state"
    if cross_origin_simple(req):
        assert r.status_code >= 400 and after == before, (
            f"{what}: a request another origin's page could send was obeyed ({r.status_code} {r.text[:200]})"
        )


# --------------------------------------------------------------------------
# Properties
def test_any_request_is_answered_without_a_server_error_and_refusals_change_nothing(server):
    @fuzz_settings(120)
    @given(data=st.data())
    def prop(data: Any) -> None:
        server.refresh()
        req = data.draw(requests(server))
        before = server.state()
        r = server.client.request(**req)
        check_response(server, req, r, before)

    prop()


def test_requests_from_another_origin_change_nothing(server):
    @fuzz_settings(40)
    @given(
        data=st.data(),
        origin=st.sampled_from(FOREIGN_ORIGINS),
        site=st.sampled_from([None, *SEC_FETCH_SITES]),
        kind=st.sampled_from(SIMPLE_TYPES),
    )
    def prop(data: Any, origin: str, site: str | None, kind: str) -> None:
        server.refresh()
        req = data.draw(requests(server, methods=("POST",)))
        req["headers"] = {"Origin": origin} | ({"Sec-Fetch-Site": site} if site else {})
        if kind:
            req["headers"]["Content-Type"] = kind + ("; boundary=xyz" if kind.startswith("multipart") else "")
        before = server.state()
        check_response(server, req, server.client.request(**req), before)

    prop()


def test_an_upload_without_the_page_header_is_refused_and_changes_nothing(server):
    """``X-Bobshat: 1`` is what a page of another origin cannot send without a preflight: without it, no upload."""
    record = json.dumps(server.app.state.store._games[server.finished].record) + "\n"

    @fuzz_settings(12)
    @given(
        body=st.one_of(st.just(record.encode()), upload_bodies(record)),
        form=st.booleans(),
        header=st.sampled_from([None, "", "0", "true", "yes", "11", "1 1"]),
    )
    def prop(body: bytes, form: bool, header: str | None) -> None:
        server.refresh()
        headers = {k: v for k, v in PAGE.items() if k != "X-Bobshat"}
        if header is not None:
            headers["X-Bobshat"] = header
        req: dict[str, Any] = {"method": "POST", "url": "/api/uploads", "params": {"name": "g.jsonl"}}
        if form:
            req |= {"headers": headers, "content": None, "files": {"file": ("g.jsonl", body, "application/x-ndjson")}}
        else:
            req |= {"headers": {**headers, "Content-Type": "application/x-ndjson"}, "content": body}
        before = server.state()
        r = server.client.request(**req)
        check_response(server, {**req, "content": body}, r, before)
        assert r.status_code == 403 and "X-Bobshat" in r.json()["error"], f"{shown(req)}: {r.status_code} {r.text}"

    prop()


def _costly(spec: str) -> str | None:
    """Why a spec's options cost more than a request may ask for (None if they do not)."""
    for key, value in re.findall(r"(\w+)=([^,+:]*)", spec):
        try:
            number = float(value)
        except ValueError:
            continue
        if not math.isfinite(number):
            return f"{key}={value} is not a finite number"
        if number >= AGENT_CAPS.get(key, ANY_CAP):
            return f"{key}={value} is past {AGENT_CAPS.get(key, ANY_CAP):,}"
    return None


AGENT_OPTIONS = ["worlds", "max_rows", "top_k", "oversample", "horizon", "z", "certain", "value_scale", "playout"]


@st.composite
def agent_specs(draw: Any) -> str:
    name = draw(st.sampled_from(["pimc", "search", "random", "strong"]))
    opts = draw(
        st.dictionaries(
            st.sampled_from(AGENT_OPTIONS),
            st.sampled_from(["1", "2", "16", "100000", "100000000", "1e300", "nan", "inf", "-1", "0", str(2**64)]),
            max_size=2,
        )
    )
    if name == "search":
        opts["policy"] = "ppo:bobs_hat_4p" if draw(st.booleans()) else "bobs_hat_4p"
    spec = name + (":" + ",".join(f"{k}={v}" for k, v in opts.items()) if opts else "")
    return f"bid=random+play={spec}" if draw(st.integers(0, 3)) == 0 else spec


def test_agents_a_request_names_cost_what_a_request_may_cost(server):
    @fuzz_settings(30)
    @given(spec=agent_specs(), watch=st.booleans(), seed=st.sampled_from([None, 0, MAX_SEED, MAX_SEED + 1, 2**64]))
    def prop(spec: str, watch: bool, seed: int | None) -> None:
        body: dict[str, Any] = {**BH_1HAND, ("agents" if watch else "opponents"): spec}
        if watch:
            body["seat"] = "none"
        if seed is not None:
            body["seed"] = seed
        before = server.state()
        req = {
            "method": "POST",
            "url": "/api/games",
            "params": {},
            "headers": {**PAGE, "Content-Type": "application/json"},
            "content": json.dumps(body),
        }
        r = server.client.request(**req)
        check_response(server, req, r, before)
        why = _costly(spec) or (f"seed {seed} is past 2^63 - 1" if seed is not None and seed > MAX_SEED else None)
        if why:
            assert r.status_code == 400, f"{shown(req)}: {why}, yet the game was made ({r.status_code})"
        if r.status_code == 201:
            # never advanced: a costly bot stays idle
            server.client.delete(f"/api/games/{r.json()['id']}", headers=PAGE)

    prop()


def test_uploads_answer_in_proportion_to_the_limit(server):
    record = json.dumps(server.app.state.store._games[server.finished].record) + "\n"

    @fuzz_settings(30)
    @given(body=upload_bodies(record), form=st.booleans())
    def prop(body: bytes, form: bool) -> None:
        server.refresh()
        before = server.state()
        if form:
            req = {
                "method": "POST",
                "url": "/api/uploads",
                "params": {},
                "headers": PAGE,
                "content": None,
                "files": {"file": ("g.jsonl", body, "application/x-ndjson")},
            }
        else:
            req = {
                "method": "POST",
                "url": "/api/uploads",
                "params": {"name": "g.jsonl"},
                "headers": {**PAGE, "Content-Type": "application/x-ndjson"},
                "content": body,
            }
        r = server.client.request(**req)
        check_response(server, {**req, "content": body}, r, before)
        assert len(r.content) <= 10 * MAX_UPLOAD + 65_536, (
            f"an upload of {len(body):,} bytes answered {len(r.content):,} bytes (limit {MAX_UPLOAD:,})"
        )

    prop()


@pytest.mark.parametrize(
    "template",
    [
        "search:policy={}",
        "ppo:{}",
        "bid=random+play=search:policy={}",
        "search:policy={},worlds=2",
        "bid=ppo:{}+play=random",
    ],
)
def test_a_spec_naming_a_file_answers_the_same_whether_it_exists(server, tmp_path, monkeypatch, template):
    (tmp_path / "secret.pt").write_bytes(b"not a checkpoint")
    (tmp_path / "notes").write_text("a file with no extension\n")
    monkeypatch.chdir(tmp_path)
    answers = {}
    names = ("secret.pt", "missing.pt", "notes", "missing", str(tmp_path / "secret.pt"), "/nonexistent/x.pt")
    for name in names:
        spec = template.format(name)
        before = server.state()
        req = {
            "method": "POST",
            "url": "/api/games",
            "params": {},
            "headers": {**PAGE, "Content-Type": "application/json"},
            "content": json.dumps({**BH_1HAND, "opponents": spec}),
        }
        r = server.client.request(**req)
        check_response(server, req, r, before)
        assert r.status_code == 400, f"{spec}: a file the server was not started with was read ({r.status_code})"
        answers[name] = r.json()["error"].replace(name, "NAME")
    assert len(set(answers.values())) == 1, f"the answers tell which files exist: {answers}"

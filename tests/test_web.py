"""``bobshat serve`` over HTTP: the API, bad moves, path traversal, upload limits, isolation, clean-up, load.

Most tests use Starlette's TestClient (no socket); the load test plays 50
games at once against a real uvicorn server on loopback. The browser test is
tests/test_web_browser.py.
"""

from __future__ import annotations

import asyncio
import io
import json
import random
import signal
import socket
import threading
import time
from pathlib import Path

import numpy as np
import pytest

starlette = pytest.importorskip("starlette", reason="the web extra is not installed: pip install -e '.[web]'")
pytest.importorskip("httpx", reason="httpx is not installed (the dev extra has it)")

from starlette.testclient import TestClient  # noqa: E402

from bobshat.web.app import create_app  # noqa: E402
from bobshat_env.games import make_game  # noqa: E402
from bobshat_env.records import read_jsonl, replay_file, replay_main, replay_report  # noqa: E402
from bobshat_env.text import MoveError  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SENT_BY_PAGE = {"X-Bobshat": "1"}  # what the records page adds to an upload (no cross-site page can)
UPLOAD = {"Content-Type": "application/x-ndjson", **SENT_BY_PAGE}
BH_1HAND = {"game": "bobs_hat", "players": "4", "hands": "1", "opponents": "random,random,random", "seat": "0"}


class Clock:
    """A clock the test moves by hand (the idle timeout)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def server(tmp_path):
    """A TestClient on a fresh app, its records folder and its clock."""
    clock = Clock()
    app = create_app(tmp_path, idle_timeout=60, max_upload=20_000, clock=clock, sweep_every=3600)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        yield client, tmp_path, clock, app


def new_game(client, base=BH_1HAND, **params):
    r = client.post("/api/games", json={**base, **params})
    assert r.status_code == 201, r.text
    return r.json()


def play_out(client, view, gen):
    """Play the human seat by random legal moves (by notation) and let the bots move, to the end."""
    gid = view["id"]
    while not view["done"]:
        if view["your_turn"]:
            names = [m["name"] for m in view["moves"]]
            r = client.post(f"/api/games/{gid}/move", json={"move": gen.choice(names), "turn": view["turn"]})
        else:
            r = client.post(f"/api/games/{gid}/advance", json={"steps": 1000})
        assert r.status_code == 200, r.text
        view = r.json()
    return view


def snapshot(view):
    """The parts of a view a refused move must leave unchanged."""
    return {k: view[k] for k in ("turn", "seats", "trick", "phase", "to_act", "moves", "log_size", "info")}


# --------------------------------------------------------------------------
# The API, whole games
@pytest.mark.parametrize(
    "params",
    [
        BH_1HAND,
        {
            **BH_1HAND,
            "players": "3",
            "double_fewest": "1",
            "no_bid": "true",
            "secret_bidding": "on",
            "seat": "2",
            "opponents": "random",
        },
        {"game": "oh_hell", "players": "7", "deal_style": "short_high", "opponents": "random", "seat": "3"},
    ],
    ids=["bobs_hat", "bobs_hat_options", "oh_hell"],
)
def test_a_whole_game_through_the_api_is_saved_as_a_record_replay_accepts(server, params):
    client, records, _, _ = server
    view = new_game(client, base=params)
    assert view["seat"] == int(params["seat"]) and view["deck"] and view["log"][0]["kind"] == "header"
    final = play_out(client, view, random.Random(1))
    result = final["result"]
    assert result["saved"] == {"file": "games.jsonl"} and result["save_error"] is None
    (line, record), *rest = list(read_jsonl(records / "games.jsonl"))
    assert rest == []
    assert record["totals"] == result["totals"] == [s["total"] for s in final["seats"]]
    assert record["agents"][int(params["seat"])] == "human"
    assert replay_main(str(records / "games.jsonl"), out=io.StringIO()) == 0
    # every hand was scored with its reasons, as the terminal does
    game = make_game(params["game"], **{k: v for k, v in record["config"].items()})
    assert len(final["summaries"]) == game.config.hands
    assert all(s["lines"][0].startswith("Hand scoring (") for s in final["summaries"])
    # plain text from the game's text module: the rules around headings (=== Hand 1 ... ===) are the terminal's
    header = view["log"][0]["lines"]
    assert header == final["log"][0]["lines"] and header[0].startswith("Hand 1 of ")
    told = [x for entry in final["log"] for x in entry["lines"]] + [x for s in final["summaries"] for x in s["lines"]]
    assert told and not [x for x in told if x.strip().startswith(("===", "---")) or x.endswith(("===", "---"))]
    # ... and as a table: seat, bid, taken, made or missed, points, total (the core's numbers)
    P = game.players
    for s in final["summaries"]:
        assert [r["seat"] for r in s["rows"]] == list(range(P))
        if params["game"] == "oh_hell":  # an Oh Hell bid is made when the tricks taken equal it
            assert all(r["result"] == ("made" if r["bid"] == r["taken"] else "missed") for r in s["rows"])
        else:
            assert all(r["result"] in ("made", "missed", "-") or r["result"].startswith("made ") for r in s["rows"])
    assert [r["total"] for r in final["summaries"][-1]["rows"]] == result["totals"]
    assert [sum(s["rows"][p]["points"] for s in final["summaries"]) for p in range(P)] == result["totals"]
    assert max(e["n"] for e in final["log"]) == final["log_size"] - 1
    # the finished game's record can be downloaded and replayed from memory
    r = client.get(f"/api/games/{view['id']}/record")
    assert r.status_code == 200 and json.loads(r.text) == record
    replay = client.get(f"/api/replay?game={view['id']}").json()
    assert replay["ok"] and replay["frames"][-1]["seats"][0]["total"] == record["totals"][0]
    scored = [f["scoring"] for f in replay["frames"] if f["summary"]]
    unlabelled = [[{k: v for k, v in r.items() if k != "label"} for r in rows] for rows in scored]
    assert unlabelled == [[{k: v for k, v in r.items() if k != "label"} for r in s["rows"]] for s in final["summaries"]]
    assert [r["total"] for r in scored[-1]] == record["totals"] and len(scored) == len(final["summaries"])


def test_meta_lists_both_games_their_options_and_the_bots(server):
    client, *_ = server
    meta = client.get("/api/meta").json()
    games = {g["name"]: g for g in meta["games"]}
    assert set(games) == {"bobs_hat", "oh_hell"}
    assert games["bobs_hat"]["players"] == [3, 4, 5] and games["oh_hell"]["players"] == [3, 4, 5, 6, 7]
    options = {o["name"]: o for o in games["oh_hell"]["options"]}
    assert options["deal_style"]["kind"] == "choice" and "short_high" in options["deal_style"]["choices"]
    assert {o["name"]: o["kind"] for o in games["bobs_hat"]["options"]}["no_bid"] == "bool"
    specs = [a["spec"] for a in games["bobs_hat"]["agents"]["4"]]
    assert specs[:4] == ["random", "simple", "strong", "pimc"]
    if (ROOT / "checkpoints" / "bobs_hat_4p.pt").exists():
        assert "ppo:bobs_hat_4p" in specs  # the shipped policy, for the player count it was trained for
        assert "ppo:bobs_hat_4p" not in [a["spec"] for a in games["bobs_hat"]["agents"]["3"]]


def test_moves_are_named_by_notation_and_read_back_by_the_same_parser():
    """Every legal move's button name (blue14, hat+10, blue+fewest, none, QS, 3) parses back to that move."""
    seen = {}
    for name, options in (("bobs_hat", {"players": 4, "double_fewest": True, "no_bid": True}), ("oh_hell", {})):
        game = make_game(name, **options)
        text = game.play_text()
        gen = np.random.default_rng(0)
        from bobshat_env.core import rng

        state = game.init(rng.game_keys(3, np.zeros(1, dtype=np.int64), 0))
        names = seen[name] = set()
        for _ in range(300):
            if game.done(state)[0]:
                break
            legal = game.legal_action_mask(state)[0]
            seat = int(state.cur[0])
            for a in np.flatnonzero(legal):
                names.add(text.move_name(int(a)))
                assert text.parse(text.move_name(int(a)), state, seat, legal) == a
            game.step(state, np.array([gen.choice(np.flatnonzero(legal))]))
        assert names, name
    assert {"hat+10", "hat-10", "none", "blue+fewest", "fewest+fewest"} <= seen["bobs_hat"], seen["bobs_hat"]
    assert {"0", "1"} <= seen["oh_hell"] and any(len(n) == 2 and n[-1] in "CDHS" for n in seen["oh_hell"])


# --------------------------------------------------------------------------
# Bad moves: a clear error, nothing changed
def _card_not_following(view):
    """A card the human holds that breaks follow suit now, if any."""
    legal = {m["name"] for m in view["moves"]}
    return next((c for c in view["seats"][view["seat"]]["cards"] if c not in legal), None)


def test_bad_moves_get_a_clear_error_and_change_nothing(server):
    client, records, _, _ = server
    gen = random.Random(7)
    view = new_game(client, seed="11")
    gid = view["id"]
    seen = set()
    while not view["done"]:
        if not view["your_turn"]:
            view = client.post(f"/api/games/{gid}/advance", json={"steps": 1000}).json()
            continue
        before = snapshot(view)
        cases = [
            ({"move": "purple7", "turn": view["turn"]}, 400, None),
            ({"move": "", "turn": view["turn"]}, 400, "send"),
            ({"action": 999, "turn": view["turn"]}, 400, "action must be an id"),
            ({"move": view["moves"][0]["name"], "turn": view["turn"] + 1}, 409, "turn"),
            ({"move": view["moves"][0]["name"], "turn": "x"}, 400, "turn must be an integer"),
            ({"move": view["moves"][0]["name"], "colour": 1}, 400, "unknown key"),
        ]
        if view["phase"] == "play":
            cases.append(({"move": "hat+10", "turn": view["turn"]}, 400, "Bob's Hat was chosen"))
            held = set(view["seats"][0]["cards"])
            absent = next(f"blue{r}" for r in range(1, 21) if f"blue{r}" not in held)
            cases.append(({"move": absent, "turn": view["turn"]}, 400, "you do not hold"))
            off = _card_not_following(view)
            if off:
                cases.append(({"move": off, "turn": view["turn"]}, 400, "must follow the suit led"))
                seen.add("follow")
        elif view["phase"] == "bid":
            cases.append(({"move": "blue14", "turn": view["turn"]}, 400, "it is the bidding"))
            cases.append(({"move": "none", "turn": view["turn"]}, 400, "no-bid option"))
            seen.add("bid")
        for body, status, words in cases:
            r = client.post(f"/api/games/{gid}/move", json=body)
            assert r.status_code == status, (body, r.text)
            assert isinstance(r.json()["error"], str) and r.json()["error"]
            if words:
                assert words in r.json()["error"], (body, r.json())
            assert snapshot(client.get(f"/api/games/{gid}").json()) == before, body
        view = client.post(
            f"/api/games/{gid}/move", json={"move": gen.choice(view["moves"])["name"], "turn": view["turn"]}
        ).json()
    assert {"follow", "bid"} <= seen  # the game met both kinds of mistake
    # after the end: moves and bot steps are refused, the record is whole
    for url, body in ((f"/api/games/{gid}/move", {"move": "blue1"}), (f"/api/games/{gid}/advance", {})):
        r = client.post(url, json=body)
        assert r.status_code == 409 and "over" in r.json()["error"]
    assert replay_file(records / "games.jsonl")[1] == []


def test_a_move_during_a_bots_turn_and_bot_steps_during_yours_are_refused(server):
    client, *_ = server
    view = new_game(client, seat="2", seed="5")  # the dealer is seat 0: a bot acts first
    assert not view["your_turn"] and view["to_act"] == 0
    r = client.post(f"/api/games/{view['id']}/move", json={"move": "hat+10", "turn": 0})
    assert r.status_code == 409 and "player_0's turn (a bot)" in r.json()["error"]
    view = client.post(f"/api/games/{view['id']}/advance", json={"steps": 1000}).json()
    assert view["your_turn"] and view["turn"] >= 1 and view["phase"] == "bid"  # the bots stopped at the human's bid
    r = client.post(f"/api/games/{view['id']}/advance", json={"steps": 1})
    assert r.status_code == 409 and "your turn" in r.json()["error"]
    for steps in (0, -1, "3", True):
        assert client.post(f"/api/games/{view['id']}/advance", json={"steps": steps}).status_code == 400


def test_renege_mode_offers_the_renege_and_asks_to_confirm_it(server):
    client, records, _, _ = server
    gen = random.Random(0)
    for seed in range(40):
        view = new_game(client, renege_mode="1", seed=str(seed))
        while not view["done"]:
            if view["your_turn"] and view["reneges"]:
                break
            if view["your_turn"]:
                names = [m["name"] for m in view["moves"]]
                view = client.post(
                    f"/api/games/{view['id']}/move", json={"move": gen.choice(names), "turn": view["turn"]}
                ).json()
            else:
                view = client.post(f"/api/games/{view['id']}/advance", json={"steps": 1000}).json()
        if not view["done"]:
            break
    else:
        pytest.fail("no renege chance in 40 games")
    card = view["reneges"][0]["name"]
    before = snapshot(view)
    r = client.post(f"/api/games/{view['id']}/move", json={"move": card, "turn": view["turn"]})
    assert r.status_code == 400 and "renege: true" in r.json()["error"]
    assert snapshot(client.get(f"/api/games/{view['id']}").json()) == before
    confirmed = {"move": card, "turn": view["turn"], "renege": True}
    view = client.post(f"/api/games/{view['id']}/move", json=confirmed).json()
    assert any("reneged with" in line for e in view["log"] for line in e["lines"])
    assert view["seats"][0]["total"] == -15
    final = play_out(client, view, gen)
    assert final["done"] and replay_file(records / "games.jsonl")[1] == []


@pytest.mark.parametrize(
    "params, words",
    [
        ({"game": "chess"}, "unknown game"),
        ({"players": "9"}, "players must be 3, 4 or 5"),
        ({"hands": "x"}, "hands must be an integer"),
        ({"deal_style": "long"}, "unknown option 'deal_style'"),
        ({"no_bid": "maybe"}, "no_bid is a switch"),
        ({"seat": "4"}, "seat must be 0-3"),
        ({"opponents": "random,random"}, "need 3 opponents"),
        ({"opponents": "random,dragon,random"}, "unknown agent 'dragon'"),
        ({"opponents": "ppo:/etc/passwd"}, "names a file this server does not offer"),
        ({"opponents": "bid=strong+play=ppo:x.pt"}, "names a file this server does not offer"),
        ({"opponents": "human"}, "the seat you play"),
        ({"seed": "-3"}, "seed must be an integer from 0 to"),
    ],
)
def test_a_bad_game_request_is_refused_with_a_reason(server, params, words):
    client, *_ = server
    r = client.post("/api/games", json={**BH_1HAND, **params})
    assert r.status_code == 400 and words in r.json()["error"], r.text
    assert len(client.app.state.store) == 0


def test_the_api_takes_json_only_and_bounded(server):
    client, *_ = server
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    r = client.post("/api/games", content="game=bobs_hat", headers=form)
    assert r.status_code == 415  # a cross-site form cannot post here without a CORS preflight
    r = client.post("/api/games", content="{nope", headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and "not valid JSON" in r.json()["error"]
    r = client.post("/api/games", content="[1]", headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and "JSON object" in r.json()["error"]
    r = client.post("/api/games", content=b"{" + b" " * 70_000 + b"}", headers={"Content-Type": "application/json"})
    assert r.status_code == 413
    assert client.get("/api/games/nope").status_code == 404
    assert client.get("/api/games/nope", headers={"Host": "evil.example"}).status_code == 400  # no DNS rebinding


def test_pages_and_static_files_are_served_with_a_strict_policy(server):
    client, *_ = server
    for path in ("/", "/play", "/replay", "/records", "/static/play.js", "/static/style.css"):
        r = client.get(path)
        assert r.status_code == 200, path
        assert "script-src 'self'" in r.headers["content-security-policy"]
        assert r.headers["x-content-type-options"] == "nosniff"
    assert client.get("/static/%2e%2e/app.py").status_code == 404


# --------------------------------------------------------------------------
# Records: only from the folder; uploads bounded and checked
def _seed_records(folder, n=2, bad=False):
    from agents import make_agent
    from agents.arena import play_games
    from bobshat_env.records import Recorder, write_jsonl

    game = make_game("bobs_hat", players=3, hands=2)
    bots = [make_agent("random", game, seed=p) for p in range(3)]
    res = play_games(game, bots, n, seed=0, recorder_factory=lambda g, s, ids: Recorder(g, s, ids))
    records = res.records
    if bad:
        records[0]["totals"][0] += 1
    write_jsonl(folder / "old.jsonl", records)
    return records


def test_replays_list_the_folder_and_step_through_a_record(server):
    client, records, _, _ = server
    recs = _seed_records(records, bad=True)
    listing = client.get("/api/records").json()
    (entry,) = listing["files"]
    assert entry["file"] == "old.jsonl" and [r["ok"] for r in entry["records"]] == [False, True]
    assert "totals" in entry["records"][0]["faults"][0]
    bad = client.get("/api/replay?file=old.jsonl&record=0").json()
    assert not bad["ok"] and "frames" not in bad and "totals" in bad["faults"][0]
    good = client.get("/api/replay?file=old.jsonl&record=1").json()
    assert good["ok"] and good["totals"] == recs[1]["totals"]
    actions = sum(1 + 3 + sum(len(t["cards"]) for t in h["tricks"]) for h in recs[1]["hands"])  # hat, bids, cards
    assert len(good["frames"]) == actions + len(recs[1]["hands"])  # and one frame per deal
    assert [h["number"] for h in good["hand_list"]] == [1, 2]
    assert all(all(s["cards"] is not None for s in f["seats"]) for f in good["frames"])  # every hand face up
    ends = [f for f in good["frames"] if f["summary"]]
    assert len(ends) == 2 and ends[-1]["seats"][2]["total"] == recs[1]["totals"][2]
    # a hand's last frame shows that hand (the core has already moved to the next hand's number and dealer)
    shown = [(f["hand"]["number"], f["hand"]["dealer"], f["phase"]) for f in ends]
    assert shown == [(1, 0, "hand over"), (2, 1, "done")]
    assert ends[0]["last_trick"]["hand"] == 1 and ends[0]["info"][0] == ["Trump", recs[1]["hands"][0]["trump"]]
    assert client.get("/api/replay?file=old.jsonl&record=5").status_code == 404


def test_a_grown_records_file_replays_only_its_new_records(server, monkeypatch):
    import bobshat.web.replay as web_replay
    from bobshat_env.records import write_jsonl

    client, records, _, _ = server
    recs = _seed_records(records, n=3)
    calls = []
    real = web_replay.replay_report
    monkeypatch.setattr(web_replay, "replay_report", lambda rec, *a: calls.append(1) or real(rec, *a))
    assert len(client.get("/api/records").json()["files"][0]["records"]) == 3 and len(calls) == 3
    write_jsonl(records / "old.jsonl", recs[:1], append=True)  # one more game (the same one again)
    (records / "new.jsonl").write_text(json.dumps({**recs[0], "totals": [0, 0, 0]}) + "\n")
    files = {f["file"]: f["records"] for f in client.get("/api/records").json()["files"]}
    assert len(files["old.jsonl"]) == 4 and [r["ok"] for r in files["new.jsonl"]] == [False]
    assert len(calls) == 4  # the new file's record; the appended one was known


@pytest.mark.parametrize(
    "name",
    ["../secret.jsonl", "..%2Fsecret.jsonl", "/etc/passwd", "sub/old.jsonl", ".hidden.jsonl", "old.json", "a\\b.jsonl"],
)
def test_records_are_read_only_from_the_records_folder(server, name):
    client, records, _, _ = server
    _seed_records(records)  # valid records: a leak would come back as a replay
    (records / "sub").mkdir()
    (records / "old.jsonl").rename(records.parent / "secret.jsonl")
    (records / "sub" / "old.jsonl").write_bytes((records.parent / "secret.jsonl").read_bytes())
    r = client.get("/api/replay", params={"file": name, "record": "0"})
    assert r.status_code in (400, 404) and set(r.json()) == {"error"}, r.text


def test_a_link_out_of_the_records_folder_is_refused(server):
    client, records, _, _ = server
    outside = records.parent / "outside.jsonl"
    _seed_records(records)
    outside.write_bytes((records / "old.jsonl").read_bytes())
    (records / "link.jsonl").symlink_to(outside)
    r = client.get("/api/replay?file=link.jsonl&record=0")
    assert r.status_code == 400 and "leads out" in r.json()["error"]
    listed = {f["file"]: f for f in client.get("/api/records").json()["files"]}
    assert listed["link.jsonl"]["records"] == [] and "leads out" in listed["link.jsonl"]["error"]


def test_uploads_are_checked_like_replay_and_bounded(server):
    client, records, _, _ = server
    recs = _seed_records(records)
    good = (records / "old.jsonl").read_bytes()
    r = client.post("/api/uploads?name=mine.jsonl", content=good, headers=UPLOAD)
    assert r.status_code == 201 and [x["ok"] for x in r.json()["records"]] == [True, True]
    uid = r.json()["id"]
    assert client.get(f"/api/replay?upload={uid}&record=1").json()["totals"] == recs[1]["totals"]
    # a corrupt upload is listed with its faults, not trusted
    broken = good.replace(b'"winner":', b'"winner":7,"x":', 1) + b"not json\n"
    items = client.post("/api/uploads", content=broken, headers=UPLOAD).json()["records"]
    assert [x["ok"] for x in items] == [False, True, False] and "not valid JSON" in items[2]["faults"][0]
    # the same as a form field (curl -F file=@games.jsonl)
    r = client.post("/api/uploads", files={"file": ("g.jsonl", good, "application/x-ndjson")}, headers=SENT_BY_PAGE)
    assert r.status_code == 201 and r.json()["name"] == "g.jsonl"
    # over the limit: refused by its declared length, and by what arrives when no length is declared
    big = good * (20_000 // len(good) + 1)
    r = client.post("/api/uploads", content=big, headers=UPLOAD)
    assert r.status_code == 413 and "limit" in r.json()["error"]
    r = client.post("/api/uploads", content=iter([big[:10_000], big[10_000:]]), headers=UPLOAD)  # chunked
    assert r.status_code == 413
    assert client.post("/api/uploads", content=b"\n\n", headers=UPLOAD).status_code == 400
    assert client.get("/api/replay?upload=nope&record=0").status_code == 404


# --------------------------------------------------------------------------
# Many games: isolation, clean-up
def test_games_are_isolated_from_each_other(server):
    client, *_ = server
    a = new_game(client, seed="3")
    b = new_game(client, seed="3")
    assert a["id"] != b["id"] and snapshot(a) == snapshot(b)  # the same deal, two games
    a2 = client.post(f"/api/games/{a['id']}/move", json={"move": "hat-10", "turn": 0}).json()
    assert a2["turn"] == 1 and snapshot(client.get(f"/api/games/{b['id']}").json()) == snapshot(b)
    # a page of game a cannot move in game b at another turn
    r = client.post(f"/api/games/{a['id']}/move", json={"move": "hat+10", "turn": 0})
    assert r.status_code == 409
    # games played at once from threads each end with a valid record of their own
    views, errors = {}, []

    def run(k):
        try:
            c = TestClient(client.app, base_url="http://127.0.0.1")
            views[k] = play_out(c, new_game(c, seed=str(100 + k)), random.Random(k))
        except Exception as err:  # reported below
            errors.append(err)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len({v["id"] for v in views.values()}) == 6


def test_an_abandoned_game_is_dropped_after_the_timeout(server):
    client, _, clock, app = server
    old = new_game(client)
    clock.now += 30
    fresh = new_game(client)
    clock.now += 40  # old: idle 70 s > 60; fresh: idle 40 s
    app.state.sweep()
    r = client.get(f"/api/games/{old['id']}")
    assert r.status_code == 404 and "idle" in r.json()["error"]
    assert client.get(f"/api/games/{fresh['id']}").status_code == 200  # asking keeps it alive
    clock.now += 59
    app.state.sweep()
    assert client.get(f"/api/games/{fresh['id']}").status_code == 200
    assert client.delete(f"/api/games/{fresh['id']}").status_code == 204
    assert client.get(f"/api/games/{fresh['id']}").status_code == 404


def test_the_server_holds_at_most_max_games(tmp_path):
    app = create_app(tmp_path, max_games=2)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        for _ in range(2):  # each under way (a game that never got a move would make room: test_ignored_options)
            view = new_game(client)
            assert client.post(f"/api/games/{view['id']}/move", json={"move": "hat+10"}).status_code == 200
        r = client.post("/api/games", json=BH_1HAND)
        assert r.status_code == 503 and "2 games in play" in r.json()["error"]


def test_watching_bots_plays_every_seat(server):
    client, records, _, _ = server
    r = client.post("/api/games", json={**BH_1HAND, "seat": "none", "agents": "strong,simple,random,random"})
    view = r.json()
    assert view["seat"] is None and all(s["cards"] is not None for s in view["seats"])  # every hand face up
    r = client.post(f"/api/games/{view['id']}/move", json={"move": "hat+10"})
    assert r.status_code == 409 and "watched" in r.json()["error"]
    final = play_out(client, view, random.Random(0))
    assert final["result"]["verdict"].startswith("player_")
    ((_, record),) = read_jsonl(records / "games.jsonl")
    assert record["agents"] == ["strong", "simple", "random", "random"] and replay_report(record).ok


def test_a_game_that_cannot_be_saved_keeps_its_record_for_download(server):
    client, records, _, _ = server
    (records / "games.jsonl").mkdir()  # the records file cannot be written
    view = play_out(client, new_game(client), random.Random(2))
    assert view["result"]["saved"] is None and "could not save" in view["result"]["save_error"]
    record = json.loads(client.get(f"/api/games/{view['id']}/record").text)
    assert record["totals"] == view["result"]["totals"] and replay_report(record).ok


# --------------------------------------------------------------------------
# The command
def test_serve_refuses_bad_options_before_starting(tmp_path, capsys):
    from bobshat.cli import main

    assert main(["serve", "--records-dir", str(tmp_path / "no" / "such")]) == 2
    assert "does not exist" in capsys.readouterr().err
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert main(["serve", "--port", str(port), "--records-dir", str(tmp_path)]) == 2
        assert "cannot listen" in capsys.readouterr().err
    assert main(["serve", "--agents", "dragon", "--records-dir", str(tmp_path), "--port", "0"]) == 2
    assert "makes no agent" in capsys.readouterr().err


def test_serve_prints_the_url_and_warns_off_loopback(tmp_path, monkeypatch):
    import uvicorn

    from bobshat.web import serve

    started = []
    monkeypatch.setattr(uvicorn.Server, "run", lambda self: started.append(self.config))
    out = io.StringIO()
    assert serve(port=0, records_dir=str(tmp_path / "recs"), out=out) == 0
    assert "http://127.0.0.1:0/" in out.getvalue() and "warning" not in out.getvalue()
    assert (tmp_path / "recs").is_dir() and started[-1].host == "127.0.0.1"
    out = io.StringIO()
    serve(host="0.0.0.0", port=0, records_dir=str(tmp_path), out=out)
    assert out.getvalue().startswith("warning: --host 0.0.0.0 lets other machines reach this server")


# --------------------------------------------------------------------------
# Load: 50 games at once through a real server on loopback
def test_fifty_concurrent_games_through_a_real_server_all_end_with_valid_records(tmp_path):
    httpx = pytest.importorskip("httpx")
    from web_server import LiveServer

    n = 50
    app = create_app(tmp_path)

    async def one(client, k):
        gen = random.Random(k)
        r = await client.post("/api/games", json={**BH_1HAND, "seed": str(k), "opponents": "random"})
        assert r.status_code == 201, r.text
        view = r.json()
        while not view["done"]:
            if view["your_turn"]:
                move = gen.choice(view["moves"])["name"]
                r = await client.post(f"/api/games/{view['id']}/move", json={"move": move, "turn": view["turn"]})
            else:
                r = await client.post(f"/api/games/{view['id']}/advance", json={"steps": 1000})
            assert r.status_code == 200, r.text
            view = r.json()
        return view

    async def main(url):
        limits = httpx.Limits(max_connections=n)
        async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:
            return await asyncio.gather(*(one(client, k) for k in range(n)))

    with LiveServer(app) as live:
        views = asyncio.run(main(live.url))
    records = [r for _, r in read_jsonl(tmp_path / "games.jsonl")]
    assert len(records) == n and replay_file(tmp_path / "games.jsonl") == (n, [])
    by_totals = sorted(tuple(r["totals"]) for r in records)
    assert by_totals == sorted(tuple(v["result"]["totals"]) for v in views)
    assert len({v["id"] for v in views}) == n


def test_move_error_is_what_the_terminal_says():
    """The web page's error for a bad move is the terminal game's reason (one parser for both)."""
    game = make_game("oh_hell")
    from bobshat_env.core import rng

    state = game.init(rng.game_keys(0, np.zeros(1, dtype=np.int64), 0))
    legal = game.legal_action_mask(state)[0]
    with pytest.raises(MoveError, match="it is the bidding"):
        game.play_text().parse("QS", state, int(state.cur[0]), legal)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_serve_says_when_it_stops(tmp_path, sig):
    """A real `bobshat serve` stopped by Ctrl-C or SIGTERM says it stopped (it went quiet, as if hung)."""
    import subprocess
    import sys

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "bobshat", "serve", "--port", str(port), "--records-dir", str(tmp_path)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stdout.readline()
        assert first.startswith(f"bobshat serve: open http://127.0.0.1:{port}/"), first + proc.stderr.read()
        deadline = time.monotonic() + 60
        while True:  # until uvicorn listens: its signal handlers are in place by then
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read()
                time.sleep(0.1)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    # uvicorn stops gracefully, then raises the signal again: Ctrl-C is the CLI's 130, SIGTERM the signal's status
    assert proc.returncode == (130 if sig == signal.SIGINT else -signal.SIGTERM), err
    assert out.strip().splitlines()[-1] == f"bobshat serve: stopped (the records of finished games are in {tmp_path})"
    assert "Traceback" not in err

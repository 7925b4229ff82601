"""Issue 52, part 2: options and inputs that were silently ignored or misreported.

Each test pins one item: an error that names the option, a stated line where
a section is left out, or the fixed behaviour.
"""

from __future__ import annotations

import pytest

from bobshat.cli import main


def _one_line_error(capsys, flag: str) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert flag in err, err
    return err


# --------------------------------------------------------------------------
# eval: the --vr-* options without --variance-reduction
@pytest.mark.parametrize("vr", [[], ["--no-variance-reduction"]])
@pytest.mark.parametrize(
    "extra, flag",
    [
        (["--vr-fresh", "5"], "--vr-fresh"),
        (["--vr-value", "nope.pt"], "--vr-value"),
        (["--vr-decisions", "all"], "--vr-decisions"),
        (["--vr-proxy", "none"], "--vr-proxy"),
        (["--vr-proxy-fresh", "2"], "--vr-proxy-fresh"),
    ],
)
def test_eval_refuses_vr_options_without_variance_reduction(vr, extra, flag, capsys):
    argv = ["eval", "--agents", "simple,random", "--layout", "2v2", "--deals", "1", "--quiet"]
    assert main([*argv, *vr, *extra]) == 2
    err = _one_line_error(capsys, flag)
    assert "--variance-reduction" in err


# --------------------------------------------------------------------------
# bids: the variance-reduced section, when it is left out, says why; wide numbers stay apart
_BIDS = ["bids", "--deals", "2", "--worlds", "1", "--play", "strong", "--quiet"]


def test_bids_without_a_bidder_of_known_probabilities_says_why(capsys):
    assert main([*_BIDS, "--bidders", "pimc:worlds=2"]) == 0
    out = capsys.readouterr().out
    assert "variance reduction: no reduced estimate here: no bidder has known probabilities" in out
    assert main([*_BIDS, "--bidders", "pimc:worlds=2", "--no-variance-reduction"]) == 0  # asked off: no line
    assert "variance reduction" not in capsys.readouterr().out


def test_bids_with_one_deal_says_the_interval_needs_two(capsys):
    argv = [*_BIDS, "--bidders", "random"]
    argv[argv.index("--deals") + 1] = "1"
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "variance-reduced (decision terms" in out
    assert "(one deal: no interval and no variance factor, which need 2 deals or more)" in out


def _scaled(x, by: float):
    """Every float of a JSON document times ``by`` (ints, bools and strings kept)."""
    if isinstance(x, dict):
        return {k: _scaled(v, by) for k, v in x.items()}
    if isinstance(x, list):
        return [_scaled(v, by) for v in x]
    return x * by if isinstance(x, float) else x


@pytest.mark.parametrize("game", ["bobs_hat", "oh_hell"])
def test_bids_table_keeps_wide_numbers_apart(game):
    import re

    from bobshat_env.games import make_game
    from train.bids import format_report, measure, report_json

    r = measure(make_game(game, players=4), ["random", "simple"], 3, seed=1, worlds=1, play="strong")
    text = format_report(_scaled(report_json([r]), 1000.0))  # intervals of 100 and more everywhere
    run_together = re.compile(r"\.\d{3}[+\-]?\d|\.\d{2}[+\-]\d|%[+\-\d]")  # +13.000235.065, 12.34+5.00, 9.1%12
    bad = [line for line in text.splitlines() if run_together.search(line)]
    assert not bad, "\n".join(bad)


# --------------------------------------------------------------------------
# serve: a move body that contradicts itself; a full server makes room instead of locking everyone out
_BH_1HAND = {"game": "bobs_hat", "players": "4", "hands": "1", "opponents": "random,random,random", "seat": "0"}


def _client(tmp_path, **kwargs):
    pytest.importorskip("starlette", reason="the web extra is not installed: pip install -e '.[web]'")
    pytest.importorskip("httpx", reason="httpx is not installed (the dev extra has it)")
    from starlette.testclient import TestClient

    from bobshat.web.app import create_app

    app = create_app(tmp_path, **kwargs)
    return app, TestClient(app, base_url="http://127.0.0.1")


def _new(client) -> dict:
    r = client.post("/api/games", json=_BH_1HAND)
    assert r.status_code == 201, r.text
    return r.json()


def test_serve_refuses_a_move_whose_action_and_notation_disagree(tmp_path):
    _, client = _client(tmp_path)
    with client:
        view = _new(client)
        assert view["your_turn"] and len(view["moves"]) >= 2
        one, other = view["moves"][0], view["moves"][1]
        body = {"move": one["name"], "action": other["action"], "turn": view["turn"]}
        r = client.post(f"/api/games/{view['id']}/move", json=body)
        assert r.status_code == 400, r.text
        assert "disagree" in r.json()["error"] and one["name"] in r.json()["error"]
        assert client.get(f"/api/games/{view['id']}").json()["turn"] == view["turn"]  # nothing applied
        body = {"move": one["name"], "action": one["action"], "turn": view["turn"]}  # both, agreeing: fine
        r = client.post(f"/api/games/{view['id']}/move", json=body)
        assert r.status_code == 200 and r.json()["turn"] == view["turn"] + 1


def test_a_full_server_drops_the_longest_idle_game_that_never_got_a_move(tmp_path):
    from tests.test_web import Clock

    clock = Clock()
    app, client = _client(tmp_path, max_games=3, clock=clock, sweep_every=3600)
    with client:
        played = _new(client)  # the person at the page: a move made
        r = client.post(f"/api/games/{played['id']}/move", json={"move": played["moves"][0]["name"]})
        assert r.status_code == 200
        flood = []
        for _ in range(2):
            clock.now += 1
            flood.append(_new(client)["id"])
        for _ in range(5):  # a client filling the server: each new game replaces the oldest unmoved one
            clock.now += 1
            flood.append(_new(client)["id"])
        assert len(app.state.store) == 3
        assert client.get(f"/api/games/{played['id']}").status_code == 200  # never dropped
        assert [client.get(f"/api/games/{g}").status_code for g in flood] == [404] * 5 + [200] * 2
        for g in flood[-2:]:  # every game has a move now: nothing may be dropped, so the server is full
            view = client.get(f"/api/games/{g}").json()
            assert client.post(f"/api/games/{g}/move", json={"move": view["moves"][0]["name"]}).status_code == 200
        r = client.post("/api/games", json=_BH_1HAND)
        assert r.status_code == 503 and "3 games in play" in r.json()["error"]

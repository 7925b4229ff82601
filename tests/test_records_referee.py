"""Records written by the engine agree with independent referees, and `bobshat replay` accepts them.

`bobshat replay` re-plays records through the engine; a rules bug shared by
the writer and the replayer would pass it. So the records it accepts are also
checked here by plain-Python referees (tests/record_referee.py) and, for Oh
Hell, by OpenSpiel; and records edited to break a rule are refused by both.
"""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
from record_referee import openspiel_oh_hell, referee_bobs_hat, referee_oh_hell

from bobshat.cli import main
from bobshat_env.core import bobs_hat as bh
from bobshat_env.core.config import OhHellConfig
from bobshat_env.records import read_jsonl, replay_report, write_jsonl
from bobshat_env.vector import VectorEnv

BH_RUNS = [
    ["--players", "3", "--agents", "strong,simple,random"],
    ["--players", "4", "--first-dealer", "-1", "--double-fewest", "--no-bid", "--negative-scoring"],
    ["--players", "5", "--secret-bidding", "--agents", "strong,strong,random,simple,random"],
]
OH_RUNS = [
    ["--players", "4", "--scoring", "positive", "--agents", "strong,simple,random,random"],
    ["--players", "3", "--scoring", "neutral", "--deal-style", "short_high_low", "--first-dealer", "-1"],
    ["--players", "6", "--scoring", "negative", "--deal-style", "short_low", "--agents", "strong"],
]


def _simulate(tmp_path, game: str, options: list[str], games: int) -> tuple[list[dict], str]:
    path = tmp_path / f"{game}.jsonl"
    options = list(options)
    if "--agents" in options and options[options.index("--agents") + 1] == "strong":
        players = int(options[options.index("--players") + 1])
        options[options.index("--agents") + 1] = ",".join(["strong"] * players)
    argv = ["simulate", "--game", game, *options, "--games", str(games), "--seed", "5", "--records", str(path)]
    assert main(argv) == 0
    assert main(["replay", str(path)]) == 0  # the engine's own check
    return [rec for _, rec in read_jsonl(path)], str(path)


@pytest.mark.parametrize("options", BH_RUNS, ids=["3p", "4p_options", "5p_secret"])
def test_bobs_hat_records_pass_the_referee(options, tmp_path, capsys):
    records, _ = _simulate(tmp_path, "bobs_hat", options, games=6)
    capsys.readouterr()
    assert len(records) == 6
    for rec in records:
        assert referee_bobs_hat(rec) == []
    if "--no-bid" in options:
        assert any(bid == [] for rec in records for h in rec["hands"] for bid in h["bids"])
        assert any(bid.count("fewest") == 2 for rec in records for h in rec["hands"] for bid in h["bids"])


def test_bobs_hat_renege_records_pass_the_referee(tmp_path, capsys):
    """Renege mode, with a policy that now and then plays any held card: reneges are recorded and
    both the replay and the referee accept the records."""
    env = VectorEnv("bobs_hat", num_envs=8, players=4, hands=3, renege_mode=True, record=True, agent_names=list("abcd"))
    ts = env.reset(seed=3)
    gen = np.random.default_rng(0)
    for _ in range(400):
        mask = ts.action_mask.copy()
        wild = gen.random(len(mask)) < 0.05
        if wild.any():  # any held card: a renege where it breaks follow suit
            held = env.state.hands[np.arange(len(mask)), env.state.cur] & (env.state.phase == bh.PLAY)[:, None]
            mask[wild, :60] |= held[wild]
        ts = env.step(np.array([gen.choice(np.flatnonzero(m)) for m in mask]))
    records = env.pop_records()
    assert any("renege" in h for rec in records for h in rec["hands"]), "no renege in these games; pick another seed"
    path = tmp_path / "renege.jsonl"
    write_jsonl(path, records)
    assert main(["replay", str(path)]) == 0
    for rec in records:
        assert referee_bobs_hat(rec) == []


@pytest.mark.parametrize("options", OH_RUNS, ids=["4p_positive", "3p_neutral", "6p_negative"])
def test_oh_hell_records_pass_the_referee_and_openspiel(options, tmp_path, capsys):
    records, _ = _simulate(tmp_path, "oh_hell", options, games=3)
    for rec in records:
        sizes = list(OhHellConfig(**rec["config"]).hand_sizes)
        assert referee_oh_hell(rec, sizes) == []
        if rec["config"]["scoring"] == "positive":
            assert openspiel_oh_hell(rec, pytest.importorskip("pyspiel")) == []


# --------------------------------------------------------------------------
# Records edited to break a rule: the replay and the referee both refuse them
def _bh_record(tmp_path) -> dict:
    records, _ = _simulate(tmp_path, "bobs_hat", ["--players", "4", "--hands", "2"], games=1)
    return records[0]


def _oh_record(tmp_path) -> dict:
    records, _ = _simulate(tmp_path, "oh_hell", ["--players", "4", "--deal-style", "short_low"], games=1)
    return records[0]


def _off_suit_swap(hand: dict, players: int) -> bool:
    """Swap a following card with a later off-suit card of the same seat, breaking follow suit."""
    tricks = hand["tricks"]
    suit = (lambda c: c.rstrip("0123456789")) if hand.get("trump_card") is None else (lambda c: c[-1])
    for t, trick in enumerate(tricks):
        led = suit(trick["cards"][0])
        for i in range(1, players):
            seat = (trick["leader"] + i) % players
            if suit(trick["cards"][i]) != led:
                continue
            for later in tricks[t + 1 :]:
                j = (seat - later["leader"]) % players
                if suit(later["cards"][j]) != led:
                    trick["cards"][i], later["cards"][j] = later["cards"][j], trick["cards"][i]
                    return True
    return False


def _mutations(game: str):
    def score(rec):
        rec["hands"][0]["scores"][1] += 1
        rec["totals"][1] += 1

    def winner(rec):
        trick = rec["hands"][0]["tricks"][0]
        trick["winner"] = (trick["winner"] + 1) % rec["config"]["players"]

    def follow_suit(rec):
        assert any(_off_suit_swap(h, rec["config"]["players"]) for h in rec["hands"])

    def dealer(rec):
        rec["hands"][1]["dealer"] = (rec["hands"][1]["dealer"] + 1) % rec["config"]["players"]

    out = [score, winner, follow_suit, dealer]
    if game == "bobs_hat":

        def hat_holder(rec):
            h = rec["hands"][0]
            h["hat_holder"] = 0 if h["hat_holder"] != 0 else 1

        out.append(hat_holder)
    else:

        def hook(rec):  # a dealer's bid now makes the bids add up to the tricks
            for h in rec["hands"]:
                d = h["dealer"]
                hooked = h["hand_size"] - (sum(h["bids"]) - h["bids"][d])
                if 0 <= hooked <= h["hand_size"]:
                    h["bids"][d] = hooked
                    return
            raise AssertionError("no hand where the dealer could have hooked")

        out.append(hook)
    return out


@pytest.mark.parametrize("game", ["bobs_hat", "oh_hell"])
def test_edited_records_are_refused_by_replay_and_referee(game, tmp_path, capsys):
    rec = _bh_record(tmp_path) if game == "bobs_hat" else _oh_record(tmp_path)
    sizes = list(OhHellConfig(**rec["config"]).hand_sizes) if game == "oh_hell" else None

    def referee(r):
        return referee_bobs_hat(r) if game == "bobs_hat" else referee_oh_hell(r, sizes)

    assert referee(rec) == [] and replay_report(rec).ok
    for mutate in _mutations(game):
        bad = copy.deepcopy(rec)
        mutate(bad)
        assert bad != rec
        assert referee(bad), f"the referee accepted a record edited by {mutate.__name__}"
        report = replay_report(json.loads(json.dumps(bad)))
        assert not report.ok, f"replay accepted a record edited by {mutate.__name__}"

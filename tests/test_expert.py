"""``bobshat expert`` (train/expert.py): the policy distilled toward search on it, round after round.

What must hold: each label is the expert's move at the very decision whose
observation and mask it is stored with (the search agent's for card plays,
the oracle's best bid for bids), not another row's or another seat's; the
fit moves the policy toward the labels; a run writes an ordinary policy
checkpoint (``ppo:PATH``, ``train --init-from``); a bad option is a one-line
error naming it, exit status 2, and nothing written.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from procs import run_here

from agents import make_agent
from agents.checkpoint import load_checkpoint
from agents.ppo_agent import load_policy
from bobshat_env.games import make_game
from train.expert import ExpertOptions, agreement, fit_options, label_round
from train.imitate import fit

# The shipped Bob's Hat policy on a 2-hand game (its network does not depend on the number of hands):
# 54 decisions a game keep every test to seconds.
POLICY = "checkpoints/bobs_hat_4p.pt"
BH_FLAGS = ["--game", "bobs_hat", "--players", "4", "--hands", "2"]
TINY = ["--games", "2", "--worlds", "2", "--top-k", "2", "--oracle-worlds", "1", "--eval-deals", "2"]


run = run_here  # bobshat in this process (tests/procs.py)


def stub_move(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """A move that depends on the row's own observation: the legal action at a position its cells choose."""
    legal_count = mask.sum(axis=1)
    pick = (np.abs(obs).sum(axis=1) * 1000).astype(np.int64) % legal_count
    order = np.argsort(~mask, axis=1, kind="stable")  # legal actions first, in id order
    return order[np.arange(len(pick)), pick]


@pytest.fixture(scope="module")
def game():
    return make_game("bobs_hat", players=4, hands=2)


def test_card_labels_are_the_searchs_moves_at_their_own_decisions(game, monkeypatch):
    """The search is replaced by a stub whose move is a function of the observation it is shown: every
    stored card label must be that function of the stored observation (a shift by a row or a seat, or a
    shuffle, breaks it), and the stub must have been asked with the public record of the hand."""
    from agents.search import PolicySearchAgent

    calls = []

    def act(self, obs, mask, seat, public=None):
        calls.append((obs.shape[0], public))
        assert public is not None and len(public["void"]) == obs.shape[0]
        return stub_move(obs, mask)

    monkeypatch.setattr(PolicySearchAgent, "act", act)
    net, _ = load_policy(POLICY, game)
    opts = ExpertOptions(init_from=POLICY, out="unused.pt", games=4, card_share=1.0, bids="policy")
    labels = label_round(game, net, opts, 0)
    assert labels.is_card.all() and labels.n == int(sum(n for n, _ in calls)) > 50
    expected = stub_move(labels.obs, labels.mask)
    assert (labels.label == expected).all()
    assert (labels.label != labels.greedy).mean() > 0.3  # the stub often disagrees with the policy: not vacuous
    assert (labels.target.argmax(axis=1) == labels.label).all()
    assert labels.mask[np.arange(labels.n), labels.label].all()


@pytest.mark.parametrize("gap", [0.0, 0.5, 1.5])
def test_bid_labels_are_the_oracles_best_bids(game, monkeypatch, gap):
    """The oracle is replaced by values that make the best bid a function of the bidder's own observation,
    worth 1 point more than the others: the label unless ``bid_gap`` asks for more, then the policy's bid."""
    import train.bids.oracle as oracle

    def values(game_, state, play, worlds=8, seed=0, objective="score", **_):
        assert objective == "margin"
        mask = game_.legal_action_mask(state)
        best = stub_move(game_.observe(state), mask)
        info = np.where(mask, 0.0, np.nan)
        info[mask[:, : game_.module.N_CARDS].any(axis=1)] = np.nan
        info[np.arange(len(best)), best] = 1.0
        return info.copy(), info

    monkeypatch.setattr(oracle, "decision_values", values)
    net, _ = load_policy(POLICY, game)
    opts = ExpertOptions(init_from=POLICY, out="unused.pt", games=4, card_share=0.0, bids="oracle", bid_gap=gap)
    labels = label_round(game, net, opts, 0)
    assert not labels.is_card.any() and labels.n == 4 * 2 * 5  # 4 games, 2 hands, 4 bids and the hat
    expected = stub_move(labels.obs, labels.mask) if gap < 1 else labels.greedy
    assert (labels.label == expected).all()
    assert (stub_move(labels.obs, labels.mask) != labels.greedy).any()


def test_the_fit_moves_the_policy_toward_the_labels(game, monkeypatch):
    from agents.search import PolicySearchAgent

    monkeypatch.setattr(PolicySearchAgent, "act", lambda self, obs, mask, seat, public=None: stub_move(obs, mask))
    net, _ = load_policy(POLICY, game)
    opts = ExpertOptions(init_from=POLICY, out="unused.pt", games=8, card_share=1.0, bids="policy", epochs=20)
    opts.learning_rate = 3e-3
    labels = label_round(game, net, opts, 0)
    before = agreement(net, labels)["all"]
    fit(net, labels, fit_options(opts, 0))
    after = agreement(net, labels)["all"]
    assert after > before + 0.2, (before, after)


def test_a_tiny_run_writes_an_ordinary_policy(tmp_path, capsys):
    out, report = tmp_path / "expert.pt", tmp_path / "report.json"
    argv = ["expert", *BH_FLAGS, "--init-from", POLICY, "--out", str(out), "--log-dir", str(tmp_path / "tb"), *TINY]
    code, stdout, stderr = run([*argv, "--rounds", "2", "--json", str(report), "--quiet"], capsys)
    assert code == 0, stderr
    data = json.loads(report.read_text())
    assert [r["round"] for r in data["rounds"]] == [1, 2]
    for r in data["rounds"]:
        assert r["labelled"]["bids"] == 2 * 2 * 5 and r["labelled"]["cards"] > 0
        assert set(r) >= {"agreement_before", "agreement_after_train", "vs_strong", "vs_start"}
    _, meta = load_checkpoint(out)
    assert meta["expert"]["round"] == 2 and meta["expert"]["init_from"] == POLICY
    g = make_game("bobs_hat", players=4, hands=2)
    agent = make_agent(f"ppo:{out}", g)
    state = g.init(np.arange(3, dtype=np.uint64))
    a = agent.act(g.observe(state), g.legal_action_mask(state), state.cur.astype(np.int64))
    assert g.legal_action_mask(state)[np.arange(3), a].all()
    from train.ppo.config import Args
    from train.ppo.learner import initial_weights

    args = Args(game="bobs_hat", players=4, trump_symmetry=True, trick_features=True, init_from=str(out))
    assert initial_weights(args, make_game("bobs_hat", players=4)) is not None  # train --init-from takes it
    assert any((tmp_path / "tb").iterdir())  # the TensorBoard events


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--rounds", "0"], "--rounds must be in [1, 1000], got 0"),
        (["--card-share", "1.5"], "--card-share must be in [0, 1], got 1.5"),
        (["--mix", "0"], "--mix must be in (0, 1], got 0.0"),
        (["--holdout", "1"], "--holdout must be in [0, 1), got 1.0"),
        (["--z", "nan"], "--z must be in [0, 100], got nan"),
        (["--bid-gap", "-1"], "--bid-gap must be in [0, 1000], got -1.0"),
        (["--worlds", "0"], "--worlds must be in [1, 1024], got 0"),
        (["--learning-rate", "2"], "--learning-rate must be in [1e-06, 1], got 2.0"),
        (["--bids", "guess"], "--bids must be one of oracle, search, policy, got 'guess'"),
        (["--card-share", "0", "--bids", "policy"], "labels nothing"),
        (["--init-from", ""], "--init-from is required"),
        (["--init-from", "nowhere.pt"], "nowhere.pt"),
        (["--config", "PRESET"], "--config: unknown key(s) worldz"),
        (["--worlds", "x"], "argument --worlds: expected an integer, got 'x'"),
    ],
)
def test_a_bad_option_is_a_clear_error_and_nothing_is_written(tmp_path, capsys, flags, message):
    preset = tmp_path / "preset.yaml"
    preset.write_text("worldz: 3\n")
    flags = [str(preset) if f == "PRESET" else f for f in flags]
    argv = ["expert", *BH_FLAGS, "--init-from", POLICY, "--out", str(tmp_path / "out.pt")]
    code, _, stderr = run([*argv, "--log-dir", str(tmp_path / "tb"), *TINY, *flags, "--quiet"], capsys)
    assert code == 2, stderr
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("bobshat expert: error: ") and message in last, stderr
    assert "Traceback" not in stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["preset.yaml"]


def test_the_preset_is_read_and_flags_win(tmp_path):
    from train.expert import options_from

    opts = options_from({"game": "oh_hell", "rounds": 3, "worlds": 8}, {"rounds": 5, "worlds": None})
    assert (opts.rounds, opts.worlds, opts.extra) == (5, 8, {"game": "oh_hell"})
    import yaml

    with open("configs/expert/oh_hell_4p.yaml") as f:
        shipped = options_from(yaml.safe_load(f), {})
    assert shipped.extra["game"] == "oh_hell" and shipped.bids == "oracle"

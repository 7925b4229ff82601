"""``bobshat imitate`` (train/imitate.py): a policy fitted to the decisions in records files.

What must hold: the rows are the decisions the players really faced (the
observation and mask they saw, the action they chose); the split is by
game; a policy imitated from a deterministic bot agrees with it on held-out
games; the checkpoint is an ordinary policy (``ppo:PATH``, ``train
--init-from``); bad input is a one-line error, exit status 2, nothing
written; the same seed gives the same weights.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import numpy as np
import pytest
import torch
from procs import run_here
from test_records import play

from agents import make_agent
from agents.arena import play_games
from agents.checkpoint import load_checkpoint
from bobshat.cli import main
from bobshat_env.core import bobs_hat
from bobshat_env.games import make_game
from bobshat_env.records import Recorder, read_records
from train.imitate import ImitateOptions, batch_decisions, build_sets, game_decisions, holdout_games, imitate

# A short Bob's Hat (2 hands: 54 decisions a game) keeps the learning test to seconds.
BH_FLAGS = ["--game", "bobs_hat", "--players", "4", "--hands", "2"]


run = run_here  # bobshat in this process (tests/procs.py)


class Watcher:
    """Wraps an agent and keeps every (obs, mask, action) it was shown and chose, in the order of the calls."""

    def __init__(self, inner, rows: list):
        self.inner, self.rows = inner, rows
        self.needs_public = getattr(inner, "needs_public", False)
        self.name = inner.name

    def act(self, obs, mask, seat, public=None):
        a = self.inner.act(obs, mask, seat, public=public) if self.needs_public else self.inner.act(obs, mask, seat)
        self.rows.append((obs.copy(), mask.copy(), np.asarray(a).copy()))
        return a


@pytest.mark.parametrize(
    "name, options", [("bobs_hat", {"hands": 3}), ("oh_hell", {"deal_style": "short_low"})], ids=["bobs_hat", "oh_hell"]
)
def test_rows_are_what_the_players_saw_and_chose(name, options):
    """Several hands (totals carried into the observation), strong bots, one game at a time so that the calls
    come in play order: the replayed rows equal the live ones bit for bit."""
    game = make_game(name, players=4, **options)
    rows: list = []
    agents = [Watcher(make_agent("strong", game, seed=i), rows) for i in range(4)]
    res = play_games(
        game, agents, 3, seed=5, batch_size=1, recorder_factory=lambda g, st, ids: Recorder(g, st, ids, seed=5)
    )
    live = [np.concatenate([r[i] for r in rows]) for i in range(3)]
    replayed = [np.concatenate(part) for part in zip(*(game_decisions(game, r)[:3] for r in res.records))]
    assert live[0].shape == replayed[0].shape and live[0].shape[0] > 3 * 4 * game.config.hands
    for what, a, b in zip(("observations", "masks", "actions"), live, replayed):
        assert np.array_equal(a, b), what
    assert np.abs(live[0]).sum() > 0 and len(set(live[2].tolist())) > 10


@pytest.mark.parametrize(
    "name, options, agent",
    [
        ("bobs_hat", {"hands": 4, "first_dealer": -1, "no_bid": True, "double_fewest": True}, "random"),
        ("bobs_hat", {"hands": 4}, "strong"),
        ("oh_hell", {"deal_style": "short_low", "first_dealer": -1}, "strong"),
    ],
    ids=["bobs_hat_options", "bobs_hat", "oh_hell"],
)
def test_the_batched_replay_gives_the_one_record_replay_rows_bit_for_bit(name, options, agent):
    """``batch_decisions`` (many records' hands stepped together, the actions forced) equals
    ``game_decisions`` (each record replayed alone, every state kept) in every array, dtype and shape: games
    of different first dealers (different configs), the options' bids, totals carried from hand to hand."""
    game = make_game(name, players=4, **options)
    if agent == "random":  # random legal actions, now and then a no-bid (tests/test_records.py)
        records, _ = play(bobs_hat, game.config, 12, seed=3, nobid_p=0.2)
    else:
        agents = [make_agent(agent, game, seed=i) for i in range(4)]
        records = play_games(game, agents, 12, seed=9, recorder_factory=Recorder).records
    if options.get("no_bid"):
        assert any([] in h["bids"] for r in records for h in r["hands"])  # a no-bid: later hands observe it
    if options.get("first_dealer") == -1:
        assert len({r["config"]["first_dealer"] for r in records}) > 1
    one = [game_decisions(game, r) for r in records]
    together = batch_decisions(game, records)
    assert len(together) == len(records)
    for a, b in zip(one, together):
        for what, x, y in zip(("obs", "mask", "action", "value"), a, b):
            assert x.dtype == y.dtype and x.shape == y.shape, what
            assert np.array_equal(x, y), what
    assert np.abs(np.concatenate([v for *_, v in one])).sum() > 0


def test_a_renege_is_left_out_and_the_rest_of_its_game_is_learned():
    """Renege mode: a player's card that breaks follow suit ends the hand and the same hand is dealt again.
    The renege is not a move the policy can make (its mask holds the legal cards only), so it is left out;
    every other decision of the game, the hand broken by it and the hand dealt again included, is kept,
    in both replays, and the values still see the penalty of the broken hand."""
    game = make_game("bobs_hat", players=4, hands=3, renege_mode=True)
    records, _ = play(bobs_hat, game.config, 8, seed=4, renege_p=0.05)
    reneges = sum(1 for r in records for h in r["hands"] if h.get("renege"))
    assert reneges >= 2
    decisions = sum(
        len(h["bids"]) + (h["hat"] is not None) + sum(len(t["cards"]) for t in h["tricks"])
        for r in records
        for h in r["hands"]
    )
    one = [game_decisions(game, r) for r in records]
    together = batch_decisions(game, records)
    for a, b in zip(one, together):
        for what, x, y in zip(("obs", "mask", "action", "value"), a, b):
            assert np.array_equal(x, y), what
    mask, action = (np.concatenate([part[k] for part in one]) for k in (1, 2))
    assert mask[np.arange(len(action)), action].all()  # only moves the policy can make
    assert len(action) == decisions - reneges  # every decision but the reneges
    # The broken hand's only score change is the renege's -15, so every decision of it has the margin to go of
    # that penalty: -15 x 0.1 for the reneger's, +15 / 3 x 0.1 for the others' (values taken before the drop).
    broken = [(r, one[i]) for i, r in enumerate(records) if r["hands"][0].get("renege")]
    assert broken
    for r, (_, _, _, value) in broken:
        h = r["hands"][0]
        n = len(h["bids"]) + (h["hat"] is not None) + sum(len(t["cards"]) for t in h["tricks"]) - 1
        assert set(np.round(value[:n], 4).tolist()) == {-1.5, 0.5}


def test_value_target_is_the_hand_margin_from_the_first_decision():
    """The value head's target (as the presets reward a hand) at each hand's first decision: the seat's hand
    score less the others' mean, times 0.1."""
    game = make_game("oh_hell", players=4, deal_style="short_low")
    res = play_games(game, [make_agent("simple", game)] * 4, 1, seed=3, recorder_factory=Recorder)
    record = res.records[0]
    obs, mask, action, value = game_decisions(game, record)
    start = 0
    for hand in record["hands"]:
        n = 4 * (1 + hand["hand_size"])  # bids, then every card
        first = (hand["dealer"] + 1) % 4  # the seat left of the dealer bids first
        scores = np.asarray(hand["scores"], dtype=float)
        want = (scores[first] - (scores.sum() - scores[first]) / 3) * 0.1
        assert value[start] == pytest.approx(want, abs=1e-5)
        start += n
    assert start == len(action) and np.abs(value).max() > 0


@pytest.fixture(scope="module")
def simple_records(tmp_path_factory) -> Path:
    """300 games of the deterministic `simple` bot in every seat (written by `bobshat simulate --records`)."""
    path = tmp_path_factory.mktemp("imitate") / "simple.jsonl"
    argv = ["simulate", *BH_FLAGS, "--agents", "simple,simple,simple,simple", "--games", "300", "--seed", "4"]
    assert main([*argv, "--records", str(path)]) == 0
    return path


@pytest.fixture(scope="module")
def imitated(simple_records, tmp_path_factory) -> tuple[Path, dict]:
    """The policy imitated from them, and the --json report."""
    folder = tmp_path_factory.mktemp("imitated")
    out, report = folder / "policy.pt", folder / "report.json"
    argv = ["imitate", *BH_FLAGS, "--records", str(simple_records), "--out", str(out), "--epochs", "10"]
    argv += ["--minibatch-size", "256", "--learning-rate", "3e-3", "--json", str(report), "--quiet"]
    assert main(argv) == 0
    return out, json.loads(report.read_text())


def test_imitating_a_deterministic_bot_agrees_with_it_on_held_out_games(imitated):
    """Before training the network agrees on about a third of the decisions; the bids depend on the hand
    (in the observation, not the mask), so a row observed from the wrong seat cannot be learned."""
    _, report = imitated
    held = report["held_out"]
    assert held["games"] == 30 and report["training"]["games"] == 270
    assert held["decisions"] == 30 * 54 and held["bids"]["decisions"] == 30 * 10
    assert held["agreement"] >= 0.85, held
    assert held["bids"]["agreement"] >= 0.8 and held["cards"]["agreement"] >= 0.8, held
    assert held["with_choice"]["agreement"] >= 0.75, held


def test_the_checkpoint_is_an_ordinary_policy(imitated, capsys):
    """It plays as ppo:PATH (legal moves, the arena refuses others), agrees with the bot as the report says,
    and is a network `bobshat train --init-from` takes."""
    from train.ppo.config import Args
    from train.ppo.learner import initial_weights

    path, report = imitated
    game = make_game("bobs_hat", players=4, hands=2)
    agent = make_agent(f"ppo:{path}", game)
    rows: list = []
    res = play_games(game, [Watcher(agent, rows)] + [make_agent("simple", game)] * 3, 8, seed=11)
    obs, mask, action = (np.concatenate([r[i] for r in rows]) for i in range(3))
    assert mask[np.arange(len(action)), action].all() and res.totals.shape == (8, 4)
    simple = make_agent("simple", game).act(obs, mask, np.zeros(len(action), dtype=np.int64))
    assert (simple == action).mean() >= 0.8  # seat: the observation is seat-relative, simple reads it as given
    _, meta = load_checkpoint(path)
    assert meta["imitation"]["held_out"]["agreement"] == report["held_out"]["agreement"]
    args = Args(game="bobs_hat", players=4, game_options={"hands": 2}, init_from=str(path))
    args.trump_symmetry = args.trick_features = True
    weights = initial_weights(args, game)
    assert weights is not None and torch.equal(weights["policy.weight"], agent.net.policy.weight)


def test_the_split_is_by_game(simple_records):
    """The held-out set holds exactly the decisions of the games drawn for it, in order, and no others."""
    game = make_game("bobs_hat", players=4, hands=2)
    records = [r for _, r, _ in read_records(simple_records)][:40]
    small = simple_records.with_name("forty.jsonl")
    small.write_text("".join(json.dumps(r) + "\n" for r in records))
    train, held = build_sets(game, [str(small)], 0.25, seed=7)
    chosen = holdout_games(40, 0.25, seed=7)
    assert chosen.sum() == 10 and train.games == 30 and held.games == 10
    per_game = [game_decisions(game, r)[2] for r in records]
    assert np.array_equal(held.action, np.concatenate([a for a, c in zip(per_game, chosen) if c]))
    assert np.array_equal(train.action, np.concatenate([a for a, c in zip(per_game, chosen) if not c]))
    obs, mask, _, _ = held.batch(np.arange(held.n))
    want = [game_decisions(game, r) for r, c in zip(records, chosen) if c]
    assert np.array_equal(obs, np.concatenate([w[0] for w in want]))
    assert np.array_equal(mask, np.concatenate([w[1] for w in want]))


@pytest.fixture(scope="module")
def twenty_records(simple_records) -> Path:
    """The first 20 of them (1,080 decisions): a set that trains in a fraction of a second."""
    records = [r for _, r, _ in read_records(simple_records)][:20]
    small = simple_records.with_name("twenty.jsonl")
    small.write_text("".join(json.dumps(r) + "\n" for r in records))
    return small


def _weights(path: Path) -> dict:
    return load_checkpoint(path)[0]


def _same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("draw", ["command", "initial weights", "minibatches", "held-out games"])
def test_the_seed_reaches_each_random_draw(twenty_records, tmp_path, capsys, monkeypatch, draw):
    """``--seed`` decides every random draw of a run, each on its own: the same seed gives the same result,
    another seed another one. ``command``: the whole run from the command line (the flag reaches the run);
    ``initial weights``: the fresh network, with no training; ``minibatches``: the order the fit draws the
    decisions in, from one starting network; ``held-out games``: which games are held out."""
    import copy

    import train.imitate as imitate_module
    from train.imitate import fit, make_network

    game = make_game("bobs_hat", players=4, hands=2)

    def result(seed: int):
        name = f"s{seed}_{len(list(tmp_path.iterdir()))}.pt"
        if draw == "command":
            argv = ["imitate", *BH_FLAGS, "--records", str(twenty_records), "--out", str(tmp_path / name)]
            assert main([*argv, "--epochs", "1", "--hidden", "32", "--seed", str(seed), "--quiet"]) == 0
            return _weights(tmp_path / name)
        if draw == "initial weights":
            monkeypatch.setattr(imitate_module, "fit", lambda *a, **k: [])
            opts = ImitateOptions(records=[str(twenty_records)], out=str(tmp_path / name), hidden=(32,), seed=seed)
            imitate(game, opts)
            return _weights(tmp_path / name)
        if draw == "minibatches":
            net = copy.deepcopy(start)
            fit(net, data, ImitateOptions(records=[], out="unused.pt", epochs=1, minibatch_size=64, seed=seed))
            return {k: v.detach().clone() for k, v in net.state_dict().items()}
        return {"held": torch.from_numpy(holdout_games(40, 0.25, seed))}

    if draw == "minibatches":
        data, _ = build_sets(game, [str(twenty_records)], 0.0, seed=0)
        start = make_network(game, ImitateOptions(records=[], out="unused.pt", hidden=(32,)))
    a, b, c = result(3), result(3), result(4)
    capsys.readouterr()
    assert _same(a, b), "the same seed gave another result"
    assert not _same(a, c), "another seed gave the same result: the seed does not reach this draw"


def _corrupt(lines: list[str]) -> list[str]:
    record = json.loads(lines[1])
    card = record["hands"][0]["tricks"][0]["cards"]
    card[0], card[1] = card[1], card[0]  # the leader plays the second seat's card: replay refuses it
    return [lines[0], json.dumps(record), *lines[2:]]


@pytest.mark.parametrize(
    "case, flags, message",
    [
        ("missing", [], "--records: no such file: "),
        ("bad json", [], "line 2 is not valid JSON"),
        ("faulty record", [], "line 2: hand 1, trick 1: seat"),
        ("empty", [], "no records in"),
        ("other game", ["--game", "oh_hell"], "line 1: it is a 'bobs_hat' record; this run imitates oh_hell"),
        ("other players", ["--players", "3"], "line 1: it was played with players=4; this run imitates players=3"),
        ("other options", ["--hands", "3"], "line 1: it was played with hands=2; this run imitates hands=3"),
        ("holdout", ["--holdout", "1"], "--holdout must be in [0, 1), got 1.0"),
        ("holdout", ["--holdout", "-0.1"], "--holdout must be in [0, 1), got -0.1"),
        ("init", ["--init-from", "checkpoints/oh_hell_4p.pt"], "was trained for oh_hell"),
    ],
)
def test_bad_input_is_a_clear_error_and_nothing_is_written(simple_records, tmp_path, capsys, case, flags, message):
    lines = simple_records.read_text().splitlines()[:3]
    path = tmp_path / "in.jsonl"
    text = {
        "missing": None,
        "bad json": [lines[0], lines[1][:-20], lines[2]],
        "faulty record": _corrupt(lines),
        "empty": ["", ""],
    }.get(case, lines)
    if text is not None:
        path.write_text("\n".join(text) + "\n")
    out = tmp_path / "policy.pt"
    game = flags if flags[:1] == ["--game"] else [*BH_FLAGS, *flags]  # later flags win: --players 3
    argv = ["imitate", *game, "--records", str(path), "--out", str(out), "--epochs", "1", "--quiet"]
    code, stdout, stderr = run(argv, capsys)
    assert code == 2, stderr
    last = stderr.strip().splitlines()[-1]  # argparse prints its usage lines first
    assert last.startswith("bobshat imitate: error: ") and message in last, stderr
    assert "Traceback" not in stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ([] if text is None else ["in.jsonl"])


def test_help_names_the_flags(capsys):
    code, out, _ = run(["imitate", "--help"], capsys)
    assert code == 0
    for flag in ("--records", "--out", "--holdout", "--epochs", "--seed", "--init-from", "--json"):
        assert flag in out


# --------------------------------------------------------------------------
# Abuse: a full disk, two runs writing the same --out, an interrupted fit
def _small_policy() -> tuple[dict, dict]:
    """A checkpoint's tensors and metadata as ``imitate`` writes them, for a tiny Bob's Hat network."""
    from agents.checkpoint import POLICY_PREFIX, net_meta
    from train.imitate import make_network

    game = make_game("bobs_hat", players=4, hands=2)
    net = make_network(game, ImitateOptions(records=[], out="unused.pt", hidden=(8,)))
    meta = {**net_meta(game, net), "games": 1, "run_name": "imitate:p.pt"}
    return {POLICY_PREFIX + k: v for k, v in net.state_dict().items()}, meta


def test_a_full_disk_is_a_one_line_error_and_leaves_nothing_at_out(simple_records, tmp_path, capsys):
    """The policy does not fit a 64 KB disk: one line naming --out, exit status 2, and no file left there (the
    readable sidecar, written first, is taken back: it would describe a checkpoint that is not there)."""
    from tests.mounts import tmpfs

    with tmpfs(tmp_path / "full", size_kb=64) as full:
        out = full / "policy.pt"
        argv = ["imitate", *BH_FLAGS, "--records", str(simple_records), "--out", str(out), "--epochs", "1", "--quiet"]
        code, _, stderr = run(argv, capsys)
        left = sorted(p.name for p in full.iterdir())
    assert code == 2 and "Traceback" not in stderr, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bobshat imitate: error: --out: ") and "No space" in lines[0]
    assert left == []


def test_a_full_disk_keeps_the_old_checkpoint_and_its_sidecar(tmp_path):
    """Over an older checkpoint, a write that fails part-way leaves the pair as it was: the checkpoint and the
    sidecar that describes it."""
    from agents.checkpoint import write_checkpoint
    from bobshat_env.paths import OutputWriteError
    from tests.mounts import tmpfs

    tensors, meta = _small_policy()
    with tmpfs(tmp_path / "full", size_kb=64) as full:
        out = full / "policy.pt"
        write_checkpoint(out, tensors, {**meta, "games": 1})
        old = {p.name: p.read_bytes() for p in full.iterdir()}
        big = {**tensors, "policy.filler": torch.zeros(16_384)}  # 64 KB more than the old one: it does not fit
        with pytest.raises(OutputWriteError):
            write_checkpoint(out, big, {**meta, "games": 2})
        now = {p.name: p.read_bytes() for p in full.iterdir()}
        games = load_checkpoint(out)[1]["games"]
    assert now == old and games == 1


def test_two_runs_writing_the_same_out_leave_a_checkpoint_and_sidecar_that_agree(tmp_path, monkeypatch):
    """Each run writes the sidecar, then the checkpoint. Run A is held between the two while run B writes both:
    without a lock, the sidecar would be B's and the checkpoint A's. With it, B waits for A: last one wins both."""
    from checkpoint_race import race

    from agents.checkpoint import write_checkpoint

    tensors, meta = _small_policy()
    out = tmp_path / "policy.pt"
    race(
        monkeypatch,
        lambda: write_checkpoint(out, tensors, {**meta, "games": 1}),
        lambda: write_checkpoint(out, tensors, {**meta, "games": 2}),
    )
    inside = load_checkpoint(out)[1]
    beside = json.loads(out.with_name("policy.pt.json").read_text())
    assert inside == beside and inside["games"] in (1, 2)


def test_a_sigterm_while_the_checkpoint_is_written_leaves_the_old_pair(tmp_path, monkeypatch):
    """``bobshat imitate`` turns SIGTERM into SystemExit(143) (train.runtime.pool.sigterm_as_exit); one that comes
    while the checkpoint goes to disk (its sidecar already written) leaves the old checkpoint and its sidecar,
    and no temporary."""
    from agents.checkpoint import write_checkpoint

    tensors, meta = _small_policy()
    out = tmp_path / "policy.pt"
    write_checkpoint(out, tensors, {**meta, "games": 1})
    old = {p.name: p.read_bytes() for p in tmp_path.iterdir()}

    def killed_part_way(obj, f, *args, **kwargs):
        f.write(b"PK\x03\x04 half a checkpoint")
        raise SystemExit(143)

    monkeypatch.setattr(torch, "save", killed_part_way)
    with pytest.raises(SystemExit):
        write_checkpoint(out, tensors, {**meta, "games": 2})
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == old


@pytest.mark.parametrize("where", ["out", "sidecar"])
@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_an_out_that_is_not_a_regular_file_is_refused_before_the_replay(simple_records, tmp_path, capsys, where, kind):
    """Found by trying (bobshat expert had it too): a FIFO at --out (or at its sidecar OUT.json) was taken
    as writable, and the checkpoint went into the pipe after the whole replay and fit; with no reader, the
    run hung there, and nothing could read the checkpoint back. Now one line and exit status 2 before the
    replay. A reader drains the FIFO so that the old code fails instead of hanging."""
    out = tmp_path / "policy.pt"
    target = out if where == "out" else out.with_name("policy.pt.json")
    got: list[bytes] = []
    reader = None
    if kind == "fifo":
        os.mkfifo(target)
        reader = threading.Thread(target=lambda: got.append(target.read_bytes()), daemon=True)
        reader.start()
    else:
        target.mkdir()
    argv = ["imitate", *BH_FLAGS, "--records", str(simple_records), "--out", str(out), "--epochs", "1", "--quiet"]
    try:
        code, _, stderr = run(argv, capsys)
    finally:
        if reader is not None and reader.is_alive():
            os.close(os.open(target, os.O_WRONLY))  # let the reader's open return
            reader.join(timeout=10)
    assert code == 2 and "Traceback" not in stderr, stderr
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("bobshat imitate: error: --out: cannot write ") and str(target) in last, stderr
    assert ("not a regular file" if kind == "fifo" else "it is a folder") in last, stderr
    assert got in ([], [b""]) and sorted(p.name for p in tmp_path.iterdir()) == [target.name]


def test_the_learning_rate_decays_linearly_to_zero_over_the_run(twenty_records, monkeypatch):
    """Every optimizer step of the fit uses ``learning_rate x (1 - step / steps)``: from the rate asked for,
    down the same amount each step, to one step short of 0 at the last, over all epochs (not one)."""
    from train.imitate import fit, make_network

    game = make_game("bobs_hat", players=4, hands=2)
    data, _ = build_sets(game, [str(twenty_records)], 0.0, seed=0)
    net = make_network(game, ImitateOptions(records=[], out="unused.pt", hidden=(8,)))
    rates: list[float] = []
    step = torch.optim.Adam.step

    def recording(self, *args, **kwargs):
        rates.append(self.param_groups[0]["lr"])
        return step(self, *args, **kwargs)

    monkeypatch.setattr(torch.optim.Adam, "step", recording)
    opts = ImitateOptions(records=[], out="unused.pt", epochs=3, minibatch_size=256, learning_rate=2e-3)
    fit(net, data, opts)
    total = 3 * -(-data.n // 256)
    assert total >= 9 and len(rates) == total
    assert rates == pytest.approx([2e-3 * (1 - i / total) for i in range(total)], rel=1e-12)


def test_agreement_with_a_choice_leaves_out_the_forced_moves(twenty_records):
    """``with_choice`` counts the decisions with more than one legal action (a last card, a forced follow,
    are not a choice the policy made); each share is the greedy move's agreement on exactly its rows."""
    from agents.ppo_agent import masked_logits
    from train.imitate import agreement, make_network

    game = make_game("bobs_hat", players=4, hands=2)
    data, _ = build_sets(game, [str(twenty_records)], 0.0, seed=0)
    torch.manual_seed(0)
    net = make_network(game, ImitateOptions(records=[], out="unused.pt", hidden=(8,))).eval()
    report = agreement(net, data)
    obs, mask, action, _ = data.batch(np.arange(data.n))
    with torch.no_grad():
        greedy = masked_logits(net(torch.from_numpy(obs))[0], torch.from_numpy(mask)).argmax(dim=1).numpy()
    hit = greedy == action
    choice = mask.sum(axis=1) > 1
    bids = action >= game.deck.n_cards
    assert 0 < choice.sum() < data.n  # forced moves are there to leave out
    assert report["with_choice"] == {"decisions": int(choice.sum()), "agreement": pytest.approx(hit[choice].mean())}
    assert report["decisions"] == data.n and report["agreement"] == pytest.approx(hit.mean())
    assert report["bids"] == {"decisions": 20 * 10, "agreement": pytest.approx(hit[bids].mean())}  # 4 bids + hat
    assert report["cards"] == {"decisions": data.n - 200, "agreement": pytest.approx(hit[~bids].mean())}


def test_the_held_out_share_keeps_a_game_on_each_side():
    """A positive --holdout that rounds to no game still holds one out, and one that rounds to every game
    still trains on one; 0 holds none out. The games drawn depend on the seed only through the draw."""
    assert holdout_games(5, 0.05, 0).sum() == 1
    assert holdout_games(3, 0.99, 0).sum() == 2
    assert holdout_games(40, 0.0, 0).sum() == 0
    assert holdout_games(40, 0.25, 1).sum() == holdout_games(40, 0.25, 2).sum() == 10


def test_records_of_another_first_dealer_are_imitated(tmp_path):
    """The first dealer is not a rule of the game: records of games dealt from other seats (``--first-dealer
    -1`` draws it) are imitated by a run of the default first dealer, each replayed from its own."""
    dealt = make_game("bobs_hat", players=4, hands=2, first_dealer=-1)
    res = play_games(dealt, [make_agent("simple", dealt)] * 4, 12, seed=5, recorder_factory=Recorder)
    assert len({r["config"]["first_dealer"] for r in res.records}) > 1
    path = tmp_path / "dealers.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in res.records))
    train, held = build_sets(make_game("bobs_hat", players=4, hands=2), [str(path)], 0.0, seed=0)
    assert (train.games, held.games, train.n) == (12, 0, 12 * 54)


def test_a_full_disk_at_json_keeps_the_old_report(twenty_records, tmp_path, capsys):
    """The report does not fit the disk of --json: one line naming --json, exit status 2, and the report
    already there as it was (the write is all or nothing), no temporary beside it."""
    from tests.mounts import fill, tmpfs

    with tmpfs(tmp_path / "full", size_kb=64) as full:
        report = full / "report.json"
        report.write_text('{"old": true}\n')
        fill(full)
        before = {p.name: p.read_bytes() for p in full.iterdir()}
        argv = ["imitate", *BH_FLAGS, "--records", str(twenty_records), "--out", str(tmp_path / "p.pt")]
        code, _, stderr = run([*argv, "--epochs", "1", "--hidden", "8", "--json", str(report), "--quiet"], capsys)
        after = {p.name: p.read_bytes() for p in full.iterdir()}
    assert code == 2 and "Traceback" not in stderr, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bobshat imitate: error: --json: ") and "No space" in lines[0]
    assert after == before

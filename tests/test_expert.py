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
import os
import shutil
import threading
from pathlib import Path

import numpy as np
import pytest
import torch
from procs import assert_ended_as_asked, descendants, kill_all, run_here, signal_when_ready, start, wait_gone

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
    before = agreement(net, labels)["agreement"]
    fit(net, labels, fit_options(opts, 0))
    after = agreement(net, labels)["agreement"]
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
        (["--eval-deals", "1"], "--eval-deals must be 0 (no evaluation) or at least 2"),  # a NaN CI in the JSON
        (["--games", "1", "--holdout", "0.99"], "--holdout 0.99 of --games 1 holds out every game"),  # fit on none
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


def test_a_rerun_into_a_log_dir_with_events_is_refused(tmp_path, capsys):
    tb = tmp_path / "tb"
    argv = ["expert", *BH_FLAGS, "--init-from", POLICY, "--log-dir", str(tb), *TINY, "--eval-deals", "0", "--quiet"]
    code, _, stderr = run([*argv, "--out", str(tmp_path / "one.pt")], capsys)
    assert code == 0, stderr
    events = sorted(p.name for p in tb.iterdir())
    assert len(events) == 1
    code, _, stderr = run([*argv, "--out", str(tmp_path / "two.pt")], capsys)  # the same steps again: refused
    assert code == 2 and "Traceback" not in stderr
    last = stderr.strip().splitlines()[-1]
    assert last.startswith(f"bobshat expert: error: --log-dir {tb} already holds a run's TensorBoard events"), stderr
    assert sorted(p.name for p in tb.iterdir()) == events and not (tmp_path / "two.pt").exists()


def test_a_round_with_nothing_to_fit_is_an_error_and_leaves_nothing(tmp_path, capsys):
    # policy bids (no label) and one card play in a thousand labelled: the one training game holds no label
    argv = ["expert", *BH_FLAGS, "--init-from", POLICY, "--out", str(tmp_path / "out.pt"), "--log-dir"]
    argv += [str(tmp_path / "tb"), *TINY, "--eval-deals", "0", "--bids", "policy", "--card-share", "0.001"]
    code, _, stderr = run([*argv, "--holdout", "0.5", "--quiet"], capsys)
    assert code == 2 and "Traceback" not in stderr
    assert "round 1: the training games hold no labelled decision" in stderr.strip().splitlines()[-1]
    assert list(tmp_path.iterdir()) == []  # no checkpoint, no events file to block a rerun there


def test_the_preset_is_read_and_flags_win(tmp_path):
    from train.expert import options_from

    opts = options_from({"game": "oh_hell", "rounds": 3, "worlds": 8}, {"rounds": 5, "worlds": None})
    assert (opts.rounds, opts.worlds, opts.extra) == (5, 8, {"game": "oh_hell"})
    import yaml

    with open("configs/expert/oh_hell_4p.yaml") as f:
        shipped = options_from(yaml.safe_load(f), {})
    assert shipped.extra["game"] == "oh_hell" and shipped.bids == "oracle"


@pytest.mark.parametrize(
    "preset, message",
    [
        ("game_options: [1, 2]\n", "--config: game_options must be a mapping of game options, got [1, 2]"),
        ("out: 5\n", "--out must be a string, got 5"),
        ("init_from: [a.pt]\n", "--init-from must be a string, got ['a.pt']"),
        ("log_dir: 7\n", "--log-dir must be a string, got 7"),
        ("\udcff\udcfe", "is not valid YAML"),  # bytes ff fe: not UTF-8
    ],
    ids=["game_options-list", "out-int", "init_from-list", "log_dir-int", "not-utf8"],
)
def test_a_bad_preset_is_a_clear_error_and_nothing_is_written(tmp_path, capsys, preset, message):
    """A preset holds any YAML value: each must come out as one line naming the option, not a TypeError."""
    path = tmp_path / "preset.yaml"
    path.write_bytes(preset.encode("utf-8", "surrogateescape"))
    given = [] if preset.startswith("out:") else ["--out", str(tmp_path / "out.pt")]
    given += [] if preset.startswith("init_from:") else ["--init-from", POLICY]
    given += [] if preset.startswith("log_dir:") else ["--log-dir", str(tmp_path / "tb")]
    code, _, stderr = run(["expert", *BH_FLAGS, *given, *TINY, "--config", str(path), "--quiet"], capsys)
    assert code == 2 and "Traceback" not in stderr, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bobshat expert: error: ") and message in lines[0], stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["preset.yaml"]


def _drain(fifo: Path) -> tuple[threading.Thread, list[bytes]]:
    """A reader of ``fifo`` (what a run writing into it would send), so that the run cannot block on it."""
    got: list[bytes] = []
    t = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    t.start()
    return t, got


def _release(fifo: Path, reader: threading.Thread) -> None:
    """Let the reader's open return (nobody wrote): a writer opens and closes the FIFO."""
    if reader.is_alive():
        os.close(os.open(fifo, os.O_WRONLY))
    reader.join(timeout=10)


@pytest.mark.parametrize(
    "case, message",
    [
        ("log-dir-is-a-file", "--log-dir: cannot write {tmp}/tb: {tmp}/tb is not a folder"),
        ("log-dir-under-a-file", "--log-dir: cannot write {tmp}/file/tb: {tmp}/file is not a folder"),
        ("sidecar-is-a-folder", "--out: cannot write {tmp}/out.pt.json: it is a folder"),
        ("json-is-the-sidecar", "--json is the same file as the sidecar of --out ({tmp}/out.pt.json)"),
        ("json-is-out", "--json is the same file as --out ({tmp}/out.pt)"),
        ("out-is-a-fifo", "--out: cannot write {tmp}/out.pt: not a regular file"),
        ("log-dir-is-out", "--log-dir {tmp}/out.pt: it would make a folder of --out's {tmp}/out.pt"),
        ("log-dir-under-the-sidecar", "--log-dir {tmp}/out.pt.json/tb: it would make a folder of --out's"),
    ],
    ids=lambda v: v if not v.startswith("--") else "msg",
)
def test_an_output_that_cannot_be_written_is_refused_before_the_run(tmp_path, capsys, case, message):
    """Found by trying: a file at --log-dir was a FileExistsError traceback; a folder at the sidecar's path
    failed only after the round's work, with the TensorBoard folder made; --json naming --out's sidecar (or
    --out) overwrote it with the report; a FIFO at --out took the checkpoint into the pipe (and with no
    reader, hung the run); a --log-dir at --out (or below it, or its sidecar) made a folder there, and the
    checkpoint could not be written after the round. Each is one line now, exit status 2, before anything is
    written."""
    out, tb, argv = tmp_path / "out.pt", tmp_path / "tb", []
    reader = None
    if case == "log-dir-is-a-file":
        tb.write_text("")
    elif case == "log-dir-under-a-file":
        (tmp_path / "file").write_text("")
        tb = tmp_path / "file" / "tb"
    elif case == "sidecar-is-a-folder":
        (tmp_path / "out.pt.json").mkdir()
    elif case == "log-dir-is-out":
        tb = out
    elif case == "log-dir-under-the-sidecar":
        tb = tmp_path / "out.pt.json" / "tb"
    elif case.startswith("json-is-"):
        argv = ["--json", str(out) + (".json" if case == "json-is-the-sidecar" else "")]
    else:
        os.mkfifo(out)
        reader, got = _drain(out)
    before = sorted(p.name for p in tmp_path.iterdir())
    argv = ["expert", *BH_FLAGS, "--init-from", POLICY, "--out", str(out), "--log-dir", str(tb), *TINY, *argv]
    try:
        code, _, stderr = run([*argv, "--eval-deals", "0", "--quiet"], capsys)
    finally:
        if reader is not None:
            _release(out, reader)
    assert code == 2 and "Traceback" not in stderr, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bobshat expert: error: "), stderr
    assert message.format(tmp=tmp_path) in lines[0], stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    if reader is not None:
        assert got == [b""]  # nothing went into the pipe


def test_a_full_disk_at_out_is_a_one_line_error_and_leaves_nothing_there(tmp_path, capsys):
    """The checkpoint (430 KB) does not fit a 64 KB disk: one line naming --out, exit status 2, and neither the
    checkpoint nor its sidecar (written first) left there. Found: a torch RuntimeError traceback, and the
    sidecar of a checkpoint that was never written left behind."""
    from tests.mounts import tmpfs

    with tmpfs(tmp_path / "full", size_kb=64) as full:
        argv = ["expert", *BH_FLAGS, "--init-from", POLICY, "--out", str(full / "out.pt"), *TINY]
        code, _, stderr = run([*argv, "--log-dir", str(tmp_path / "tb"), "--eval-deals", "0", "--quiet"], capsys)
        left = sorted(p.name for p in full.iterdir())
    assert code == 2 and "Traceback" not in stderr, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bobshat expert: error: --out: ") and "No space" in lines[0]
    assert left == []


def test_a_full_disk_at_the_log_dir_is_a_one_line_error_before_the_first_round(tmp_path, capsys, monkeypatch):
    """TensorBoard's first write (its events file) fails on a full disk: one line naming --log-dir, exit
    status 2, no round run (no --out), and the folder and the empty events file it made taken back; the
    writer thread's own traceback not printed. Found: an OSError traceback (twice: the command's and the
    thread's), an empty events file left."""
    from tests.mounts import fill, tmpfs

    reported: list = []
    monkeypatch.setattr(threading, "excepthook", reported.append)  # what Python would print for a thread

    with tmpfs(tmp_path / "full", size_kb=64) as full:
        fill(full)
        tb = full / "runs" / "tb"
        argv = ["expert", *BH_FLAGS, "--init-from", POLICY, "--out", str(tmp_path / "out.pt"), *TINY]
        code, _, stderr = run([*argv, "--log-dir", str(tb), "--quiet"], capsys)
        left = sorted(p.name for p in full.iterdir())
    assert code == 2 and "Traceback" not in stderr, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"bobshat expert: error: --log-dir: cannot write {tb}: No space")
    assert left == ["filler"] and not (tmp_path / "out.pt").exists()
    assert reported == [] and threading.excepthook == reported.append


def test_a_log_write_that_fails_mid_run_is_a_one_line_error_and_the_round_is_kept(tmp_path, capsys, monkeypatch):
    """The disk fills later: TensorBoard's writer thread meets ENOSPC and raises it at the next flush (as
    tensorboard's EventFileWriter does). One line naming --log-dir, exit status 2; the round's checkpoint,
    written before its numbers are logged, is there."""
    import errno

    from torch.utils.tensorboard import SummaryWriter

    def full(self):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(SummaryWriter, "flush", full)
    out, tb = tmp_path / "out.pt", tmp_path / "tb"
    argv = ["expert", *BH_FLAGS, "--init-from", POLICY, "--out", str(out), "--log-dir", str(tb), *TINY]
    code, _, stderr = run([*argv, "--games", "1", "--eval-deals", "0", "--quiet"], capsys)
    assert code == 2 and "Traceback" not in stderr, stderr
    want = f"bobshat expert: error: --log-dir: cannot write {tb}: No space left on device"
    assert stderr.strip().splitlines() == [want]
    assert load_checkpoint(out)[1]["expert"]["round"] == 1


@pytest.fixture(scope="module")
def policy_pair(game):
    """(game, net) of the shipped policy, for the checkpoint writes."""
    net, _ = load_policy(POLICY, game)
    return game, net


def test_two_runs_writing_the_same_out_leave_a_checkpoint_and_sidecar_that_agree(tmp_path, monkeypatch, policy_pair):
    """As ``bobshat imitate`` (tests/test_imitate.py): run A is held between the sidecar and the checkpoint
    while run B writes both. Without the lock on the folder the sidecar would be B's and the checkpoint A's."""
    from checkpoint_race import race

    from train.expert import save_round

    game, net = policy_pair
    out = tmp_path / "out.pt"
    opts = ExpertOptions(init_from=POLICY, out=str(out))
    race(monkeypatch, lambda: save_round(game, net, opts, 0), lambda: save_round(game, net, opts, 1))
    inside = load_checkpoint(out)[1]
    beside = json.loads(out.with_name("out.pt.json").read_text())
    assert inside == beside and inside["expert"]["round"] in (1, 2)


def test_a_sigterm_while_the_checkpoint_is_written_leaves_the_old_pair(tmp_path, monkeypatch, policy_pair):
    """SIGTERM is SystemExit(143) in ``bobshat expert`` (as in imitate); one that comes while a round's
    checkpoint goes to disk (its sidecar already written) leaves the previous round's pair, no temporary."""
    import torch

    from train.expert import save_round

    game, net = policy_pair
    opts = ExpertOptions(init_from=POLICY, out=str(tmp_path / "out.pt"))
    save_round(game, net, opts, 0)
    old = {p.name: p.read_bytes() for p in tmp_path.iterdir()}

    def killed_part_way(obj, f, *args, **kwargs):
        f.write(b"PK\x03\x04 half a checkpoint")
        raise SystemExit(143)

    monkeypatch.setattr(torch, "save", killed_part_way)
    with pytest.raises(SystemExit):
        save_round(game, net, opts, 1)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == old


def test_a_sigterm_mid_run_exits_143_and_leaves_the_previous_out(tmp_path):
    """A real SIGTERM to ``bobshat expert`` in its first round (its TensorBoard file is there): exit status 143
    with no traceback (the cleanup ran: Python's default would end it on the spot, -15), the previous --out and
    its sidecar as they were, no temporary, nothing of it left running."""
    out, tb = tmp_path / "out.pt", tmp_path / "tb"
    shutil.copy(POLICY, out)
    shutil.copy(POLICY + ".json", str(out) + ".json")
    old = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    argv = ["expert", *BH_FLAGS, "--init-from", POLICY, "--out", str(out), "--log-dir", str(tb), *TINY]
    proc = start([*argv, "--rounds", "1000", "--games", "8", "--quiet"], Path.cwd())
    kids: set[int] = set()
    try:
        status, err, kids = signal_when_ready(proc, "SIGTERM", ready=lambda pid: tb.is_dir() and any(tb.iterdir()))
        assert_ended_as_asked("expert", "SIGTERM", status, err)
    finally:
        kill_all({proc.pid, *kids, *descendants(proc.pid)})
    assert not wait_gone(kids)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.name != "tb"} == old


def test_the_games_of_a_round_are_bounded_by_memory():
    """Every labelled decision is kept until the round is labelled (1.2 MB a game with every card play
    labelled, measured): 100,000 games, the old bound, would need some 120 GB, then a copy. Checked, not run."""
    from train.expert import ExpertError, check_options

    check_options(ExpertOptions(init_from=POLICY, out="out.pt", games=10_000, card_share=1.0))
    with pytest.raises(ExpertError, match=r"--games must be in \[1, 10000\], got 10001"):
        check_options(ExpertOptions(init_from=POLICY, out="out.pt", games=10_001))


# --------------------------------------------------------------------------
# What a user reads in the report: the margins, the split, the options' effect on the labels
def test_the_2v2_margins_are_what_bobshat_eval_reports_for_the_same_deals(game):
    """``vs_strong`` is ``bobshat eval --layout 2v2`` of the policy against strong on the same deals: the same
    mean per hand, the policy's seats minus the other's (its sign: a policy that wins reads positive), and the
    same 95% CI, over deals (the seatings of one deal are not independent)."""
    from train.evaluate.tournament import evaluate
    from train.expert import duplicate_2v2

    net, _ = load_policy(POLICY, game)
    mean, ci = duplicate_2v2(game, net, "strong", 6, 9)
    summary = evaluate(game, [f"ppo:{POLICY}"] * 2 + ["strong"] * 2, 6, seed=9).summary()
    (pair,) = summary["pairwise"]
    assert pair["a"] == f"ppo:{POLICY}" and pair["b"] == "strong", pair
    assert mean == pytest.approx(pair["diff_per_hand"], abs=1e-9) and mean != 0
    assert ci == pytest.approx(pair["ci95"], rel=1e-9) and ci > 0
    r_mean, _ = duplicate_2v2(game, net, "random", 6, 9)
    assert r_mean > 5  # the shipped policy beats random seats by points a hand: the margin is the policy's


def _stub_search(monkeypatch) -> None:
    from agents.search import PolicySearchAgent

    monkeypatch.setattr(PolicySearchAgent, "act", lambda self, obs, mask, seat, public=None: stub_move(obs, mask))


def test_the_held_out_games_are_not_trained_on_and_the_report_measures_them(game, tmp_path, monkeypatch):
    """A round's fit sees the labels of the training games only; ``agreement_before`` and
    ``agreement_after_held_out`` are the starting and the new policy on the held-out games (the same
    decisions), ``labels_not_the_policy`` the share of labels that are not the policy's move, ``vs_start``
    is played against the policy the run started from, and ``--epochs`` and ``--learning-rate`` reach the fit."""
    import train.expert as expert_module
    from train.expert import expert
    from train.imitate import holdout_games

    _stub_search(monkeypatch)
    seen: dict = {"fit": [], "eval": []}
    label_round = expert_module.label_round

    def keep_labels(*args, **kwargs):
        seen["labels"] = label_round(*args, **kwargs)
        return seen["labels"]

    def keep_fit(net, data, opts, log=None):
        seen["fit"].append((data, opts))
        return fit(net, data, opts, log)

    def keep_eval(game_, a, b, deals, seed):
        seen["eval"].append((a, b))
        return 0.0, 0.0

    monkeypatch.setattr(expert_module, "label_round", keep_labels)
    monkeypatch.setattr(expert_module, "fit", keep_fit)
    monkeypatch.setattr(expert_module, "duplicate_2v2", keep_eval)
    opts = ExpertOptions(
        init_from=POLICY, out=str(tmp_path / "out.pt"), log_dir=str(tmp_path / "tb"), games=8, card_share=1.0,
        bids="policy", holdout=0.25, epochs=3, learning_rate=3e-3, eval_deals=2,
    )  # fmt: skip
    report = expert(game, opts)
    labels = seen["labels"]
    held_games = np.nonzero(holdout_games(8, 0.25, opts.seed))[0]
    held = np.isin(labels.game, held_games)
    assert len(held_games) == 2 and held.any() and (~held).any()
    ((data, fit_opts),) = seen["fit"]
    assert sorted(set(data.game.tolist())) == sorted(set(labels.game[~held].tolist()))  # no held-out game
    assert data.n == int((~held).sum()) and (fit_opts.epochs, fit_opts.learning_rate) == (3, 3e-3)
    (row,) = report["rounds"]
    start, _ = load_policy(POLICY, game)
    new, _ = load_policy(opts.out, game)
    assert row["agreement_before"] == agreement(start, labels.take(np.nonzero(held)[0]))
    assert row["agreement_after_held_out"] == agreement(new, labels.take(np.nonzero(held)[0]))
    assert row["agreement_after_train"] == agreement(new, labels.take(np.nonzero(~held)[0]))
    assert not all(torch.equal(v, w) for v, w in zip(new.state_dict().values(), start.state_dict().values()))
    assert row["labels_not_the_policy"] == pytest.approx((labels.label != labels.greedy).mean())
    assert 0 < row["labels_not_the_policy"] < 1
    (_, strong), (a, b) = seen["eval"]
    assert strong == "strong" and a is not b
    assert all(torch.equal(v, w) for v, w in zip(b.state_dict().values(), start.state_dict().values()))


def test_mix_puts_that_weight_on_the_label_and_the_rest_on_the_policy(game, monkeypatch):
    """The target is ``mix`` on the label plus ``1 - mix`` on the policy's own distribution at that decision."""
    from agents.ppo_agent import masked_logits

    _stub_search(monkeypatch)
    net, _ = load_policy(POLICY, game)
    for mix in (0.25, 1.0):
        opts = ExpertOptions(init_from=POLICY, out="unused.pt", games=2, card_share=1.0, bids="policy", mix=mix)
        labels = label_round(game, net, opts, 0)
        with torch.no_grad():
            logits = masked_logits(net(torch.from_numpy(labels.obs))[0], torch.from_numpy(labels.mask))
            probs = torch.softmax(logits, dim=-1).numpy()
        one_hot = np.eye(game.n_actions)[labels.label]
        np.testing.assert_allclose(labels.target, mix * one_hot + (1 - mix) * probs, atol=1e-5)


def test_bid_temperature_gives_the_softmax_of_the_bids_values(game, monkeypatch):
    """With ``bid_temperature`` T > 0 a bid's target is the softmax of its legal alternatives' values / T (a
    higher T: a flatter target); at 0, a best bid alone."""
    import train.bids.oracle as oracle

    def values(game_, state, play, worlds=8, seed=0, objective="score", **_):
        mask = game_.legal_action_mask(state)
        info = np.where(mask, np.arange(mask.shape[1], dtype=np.float64) % 3, np.nan)  # 0, 1, 2 points
        info[mask[:, : game_.module.N_CARDS].any(axis=1)] = np.nan
        return info.copy(), info

    monkeypatch.setattr(oracle, "decision_values", values)
    net, _ = load_policy(POLICY, game)
    top = []
    for t in (0.0, 0.5, 2.0):
        opts = ExpertOptions(init_from=POLICY, out="unused.pt", games=2, card_share=0.0, bid_temperature=t)
        labels = label_round(game, net, opts, 0)
        v = np.where(labels.mask, np.arange(game.n_actions) % 3, -np.inf)
        if t == 0:  # the best bid (the policy's own where it is one of the best: bid_gap 0)
            assert (v[np.arange(labels.n), labels.label] == v.max(axis=1)).all()
            want = np.eye(game.n_actions)[labels.label]
        else:
            e = np.where(labels.mask, np.exp((v - v.max(axis=1, keepdims=True)) / t), 0.0)
            want = e / e.sum(axis=1, keepdims=True)
        np.testing.assert_allclose(labels.target, want, atol=1e-6)
        top.append(labels.target.max(axis=1).mean())
    assert top[0] == 1 > top[1] > top[2]


def test_each_round_labels_new_deals_and_the_seed_repeats_them(game, monkeypatch):
    """Round 2 plays other deals than round 1 (labelling the same ones again would fit to the same games);
    the same round and seed play the same ones again, another seed others."""
    _stub_search(monkeypatch)
    net, _ = load_policy(POLICY, game)

    def first_obs(round_no: int, seed: int = 0) -> np.ndarray:
        opts = ExpertOptions(init_from=POLICY, out="unused.pt", games=2, card_share=1.0, bids="policy", seed=seed)
        return label_round(game, net, opts, round_no).obs

    one = first_obs(0)
    assert np.array_equal(one, first_obs(0))
    assert not np.array_equal(one[:8], first_obs(1)[:8])
    assert not np.array_equal(one[:8], first_obs(0, seed=1)[:8])


def test_bids_search_labels_the_bids_with_the_search(game, monkeypatch):
    """``--bids search``: bids (and the hat choice) get the search agent's move, not the oracle's."""
    import train.bids.oracle as oracle

    _stub_search(monkeypatch)
    monkeypatch.setattr(oracle, "decision_values", lambda *a, **k: pytest.fail("the oracle was asked"))
    net, _ = load_policy(POLICY, game)
    opts = ExpertOptions(init_from=POLICY, out="unused.pt", games=2, card_share=0.0, bids="search")
    labels = label_round(game, net, opts, 0)
    assert labels.n == 2 * 2 * 5 and not labels.is_card.any()
    assert (labels.label == stub_move(labels.obs, labels.mask)).all()

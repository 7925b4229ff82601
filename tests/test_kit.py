"""The policy commands' kit (train/runtime/kit.py): options, outputs, the report, inference, agreement.

What must hold: the flags are the options' fields with their defaults; every
field's type, range (its open ends too) and choices are checked however the
options are made; a preset is read with the alias-safe loader and its unknown
keys named; a checkpoint's sidecar is checked with it; the report goes where
it is asked, whole; the chunked inference is the network's own answer; the
agreement counts what it says it counts.
"""

from __future__ import annotations

import argparse
import json
import math
import os
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from bobshat.cli import KIT_TYPES, main
from bobshat_env.paths import OutputPathError, check_folder
from train.options import ExpertError, ExpertOptions, ExploitOptions, ImitateOptions, ImitationError
from train.runtime.kit import (
    add_flags,
    agreement,
    check_checkpoint_out,
    options_from,
    policy_outputs,
    read_preset,
    write_report,
)


def _parser(cls, preset=False) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(exit_on_error=False)
    add_flags(p, cls, KIT_TYPES, preset)
    return p


def test_the_flags_are_the_fields_with_their_defaults():
    ns = vars(_parser(ExpertOptions).parse_args([]))
    assert ns == {k: v for k, v in vars(ExpertOptions()).items() if k != "extra"}
    assert set(vars(_parser(ExpertOptions, preset=True).parse_args([])).values()) == {None}  # the preset's then
    ns = _parser(ImitateOptions).parse_args(["--records", "a", "b", "--out", "o.pt", "--hidden", "8,4"])
    opts = options_from(ImitateOptions, {}, vars(ns))
    assert (opts.records, opts.hidden, opts.epochs, opts.learning_rate) == (["a", "b"], [8, 4], 4, 2e-3)
    assert "trump_symmetry" not in vars(ns)  # not a flag
    text = _parser(ExpertOptions).format_help()
    assert "--card-share CARD_SHARE" in text and "(0.1)" in text and "(0.0003)" in text


def test_switches_take_their_action_and_a_false_or_none_default_is_not_shown(capsys):
    """exploit's options: store_true and --x/--no-x switches (a bool field gets no type), a required spec,
    and the help shows (0) and (1) but never (False) or (None)."""
    p = _parser(ExploitOptions)
    ns = vars(p.parse_args(["--target", "random", "--resume", "--no-variance-reduction", "--seed", "0"]))
    opts = ExploitOptions(**ns)
    assert (opts.target, opts.resume, opts.variance_reduction, opts.seed, opts.seats) == ("random", True, False, 0, 1)
    assert ExploitOptions(**vars(p.parse_args(["--target", "x", "--variance-reduction"]))).variance_reduction
    with pytest.raises(SystemExit):
        p.parse_args([])
    assert "the following arguments are required: --target" in capsys.readouterr().err
    text = p.format_help()
    assert "(False)" not in text and "(None)" not in text and "(1)" in text and "(runs)" in text
    assert "the batches (0)" in " ".join(_parser(ImitateOptions).format_help().split())  # a 0 is a default shown


@pytest.mark.parametrize(
    "values, message",
    [
        ({"games": 0}, "--games must be in [1, 10000], got 0"),
        ({"games": 10_001}, "--games must be in [1, 10000], got 10001"),
        ({"games": True}, "--games must be an integer, got True"),
        ({"games": 2.0}, "--games must be an integer, got 2.0"),
        ({"mix": 0.0}, "--mix must be in (0, 1], got 0.0"),
        ({"holdout": 1.0}, "--holdout must be in [0, 1), got 1.0"),
        ({"z": math.nan}, "--z must be in [0, 100], got nan"),
        ({"z": "2"}, "--z must be a number, got '2'"),
        ({"out": 5}, "--out must be a string, got 5"),
        ({"out": None}, "--out must be a string, got None"),
        ({"bids": "guess"}, "--bids must be one of oracle, search, policy, got 'guess'"),
    ],
)
def test_every_field_is_checked_when_the_options_are_made(values, message):
    with pytest.raises(ExpertError) as err:
        ExpertOptions(**values)
    assert str(err.value) == message


def test_the_ends_of_a_range_and_a_sequence_s_items():
    ExpertOptions(mix=1.0, holdout=0.0, games=1, z=0)  # the closed ends are in; an int is a number
    ImitateOptions(records=[], out="o.pt", hidden=(1, 16_384), init_from=None)
    for hidden, message in (((8, 0), "--hidden must be in [1, 16384], got 0"), (8, "--hidden must be a list, got 8")):
        with pytest.raises(ImitationError, match=message.replace("[", r"\[")):
            ImitateOptions(records=[], out="o.pt", hidden=hidden)
    with pytest.raises(ImitationError, match="--records must be a string, got 3"):
        ImitateOptions(records=[3], out="o.pt")


def test_a_preset_is_laid_under_the_flags_and_its_unknown_keys_are_named(tmp_path):
    opts = options_from(ExpertOptions, {"rounds": 3, "worlds": 8}, {"rounds": 5, "worlds": None, "json": "x"})
    assert (opts.rounds, opts.worlds, opts.games) == (5, 8, 32)
    with pytest.raises(ExpertError, match=r"--config: unknown key\(s\) extra, gamez; known: bid_gap, "):
        options_from(ExpertOptions, {"gamez": 1, "extra": {}}, {})
    path = tmp_path / "p.yaml"
    for text, message in (
        ("a: &x [1]\nb: *x\n", "is not valid YAML: aliases (*name) are not allowed"),
        ("- 1\n", "must hold a mapping of options"),
        ("a: [\n", "is not valid YAML"),
    ):
        path.write_text(text)
        with pytest.raises(ExpertError) as err:
            read_preset(str(path), ExpertError)
        assert str(err.value).startswith(f"--config: {path} ") and message in str(err.value)
    with pytest.raises(ExpertError, match="--config: cannot read"):
        read_preset(str(tmp_path / "missing.yaml"), ExpertError)
    path.write_text("rounds: 2\n")
    assert read_preset(str(path)) == {"rounds": 2} and read_preset(None) == {}


def test_bobshat_expert_refuses_an_alias_in_its_preset(tmp_path, capsys):
    """expert read its preset with plain yaml.safe_load: a "billion laughs" expanded; now one line."""
    path = tmp_path / "laughs.yaml"
    path.write_text("rounds: &a 1\ngames: *a\n")
    out = tmp_path / "out.pt"
    assert main(["expert", "--config", str(path), "--init-from", "checkpoints/bobs_hat_4p.pt", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"bobshat expert: error: --config: {path} is not valid YAML: aliases (*name) are not allowed in a config"
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["laughs.yaml"]


@pytest.mark.parametrize("where", ["out", "sidecar"])
@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_a_checkpoint_and_its_sidecar_are_checked_together(tmp_path, where, kind):
    out = tmp_path / "p.pt"
    target = out if where == "out" else tmp_path / "p.pt.json"
    os.mkfifo(target) if kind == "fifo" else target.mkdir()
    with pytest.raises(OutputPathError, match=f"^--out: cannot write {target}: "):
        check_checkpoint_out(out)
    check_checkpoint_out(tmp_path / "q.pt")
    assert sorted(p.name for p in tmp_path.iterdir()) == [target.name]


def test_a_folder_that_cannot_be_made_is_refused(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(OutputPathError, match=f"^--log-dir: cannot write {tmp_path}/file/tb: {tmp_path}/file is not"):
        check_folder(tmp_path / "file" / "tb", "--log-dir")
    check_folder(tmp_path / "new" / "deeper", "--log-dir")
    if os.geteuid() != 0:  # root creates files in a read-only folder
        (tmp_path / "ro").mkdir(mode=0o500)
        with pytest.raises(OutputPathError, match="Permission denied"):
            check_folder(tmp_path / "ro" / "tb", "--log-dir")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"] + (["ro"] if os.geteuid() != 0 else [])


def test_the_report_goes_where_it_is_asked(tmp_path, capsys):
    report = {"a": [1, 2], "b": {"c": None}}
    path = tmp_path / "r.json"
    write_report(report, path, "the text")
    assert (
        path.read_bytes() == (json.dumps(report, indent=1) + "\n").encode() and json.loads(path.read_text()) == report
    )
    assert capsys.readouterr() == ("the text\n", "")
    write_report(report, "-", "the text")  # the JSON alone on stdout, for pipes
    assert capsys.readouterr() == (json.dumps(report, indent=1) + "\n", "the text\n")
    write_report(report, None, "the text")
    write_report(report, "-")
    assert capsys.readouterr() == ("the text\n" + json.dumps(report, indent=1) + "\n", "")
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temporary left


class Net(torch.nn.Module):
    """A policy whose logits are its first A observation cells and whose value is their sum."""

    def __init__(self, n_actions: int) -> None:
        super().__init__()
        self.n_actions, self.w = n_actions, torch.nn.Parameter(torch.ones(1))
        self.calls: list[int] = []

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        self.calls.append(obs.shape[0])
        logits = obs[:, : self.n_actions] * self.w
        return logits, logits.sum(dim=1)


def test_the_inference_is_the_network_s_chunk_by_chunk_without_gradients():
    from agents.ppo_agent import PolicyNet, masked_logits

    gen = np.random.default_rng(3)
    net = PolicyNet(12, 5, (8,))
    obs = gen.normal(size=(7, 12)).astype(np.float32)
    mask = gen.random((7, 5)) < 0.6
    mask[:, 2] = True
    whole = policy_outputs(net, obs, mask)
    logits, value = net(torch.from_numpy(obs))
    want = masked_logits(logits, torch.from_numpy(mask))
    np.testing.assert_array_equal(whole.logits, want.detach().numpy())
    np.testing.assert_array_equal(whole.probs, torch.softmax(want, dim=-1).detach().numpy())
    np.testing.assert_array_equal(whole.value, value.detach().numpy())
    assert np.allclose(whole.probs.sum(axis=1), 1) and (whole.probs[~mask] < 1e-30).all()
    parts = policy_outputs(net, obs, mask, chunk=3)
    for a, b in zip(whole, parts):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    stub = Net(5)
    only = policy_outputs(stub, obs, chunk=3)
    assert only.logits is None and only.probs is None and stub.calls == [3, 3, 1]
    np.testing.assert_allclose(only.value, obs[:, :5].sum(axis=1), rtol=1e-6)
    assert not torch.from_numpy(only.value).requires_grad and torch.is_grad_enabled()


def test_the_agreement_counts_the_greedy_moves_that_are_the_labels():
    """Six decisions (obs cells = logits): the greedy legal move is known by construction, so each count is."""
    A = 4
    obs = np.zeros((6, A), dtype=np.float32)
    obs[np.arange(6), [0, 1, 2, 3, 1, 0]] = 1.0  # the best logit of each row
    mask = np.ones((6, A), dtype=bool)
    mask[5] = [False, True, False, False]  # the last row has one legal move: 1, not its best logit 0
    label = np.array([0, 1, 0, 3, 2, 1])  # hits: rows 0, 1, 3, 5
    is_card = np.array([True, True, False, False, True, False])
    data = SimpleNamespace(n=6, games=2, label=label, is_card=is_card, batch=lambda idx: (obs[idx], mask[idx]))
    stub = Net(A)
    got = agreement(stub, data, chunk=4)
    assert stub.calls == [4, 2]
    assert got == {
        "games": 2,
        "decisions": 6,
        "agreement": 4 / 6,
        "bids": {"decisions": 3, "agreement": 2 / 3},
        "cards": {"decisions": 3, "agreement": 2 / 3},
        "with_choice": {"decisions": 5, "agreement": 3 / 5},
    }
    empty = SimpleNamespace(n=0, games=0, label=label[:0], is_card=is_card[:0], batch=None)
    assert agreement(stub, empty)["cards"] == {"decisions": 0, "agreement": None}

"""A shipped policy by its name in every command: ``ppo:bobs_hat_4p`` and ``search:policy=oh_hell_4p``.

`serve` and `bids` took shipped names, while `eval` and `search:policy=` refused them,
so a user outside the repository needed an absolute path. One resolver
(:mod:`agents.shipped`) now serves every spec: a bare name that is no file here
is the shipped policy of that name; a file of that name wins.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from agents.registry import make_agent, spec_files
from agents.shipped import resolve_checkpoint, shipped_checkpoints, shipped_names
from bobshat.cli import main
from bobshat_env.games import make_game

SHIPPED = shipped_checkpoints()


def test_every_table_policy_is_offered_by_name():
    assert {"bobs_hat_4p", "oh_hell_4p"} <= set(shipped_names())
    assert all((SHIPPED / f"{n}.pt").is_file() for n in shipped_names())


def test_a_bare_name_resolves_to_the_shipped_file_and_anything_else_is_left_alone(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert resolve_checkpoint("bobs_hat_4p") == str(SHIPPED / "bobs_hat_4p.pt")
    for text in ("nope", "runs/x/policy.pt", "bobs_hat_4p.pt", "./bobs_hat_4p", "sub/bobs_hat_4p", ""):
        assert resolve_checkpoint(text) == text
    (tmp_path / "bobs_hat_4p").write_bytes(b"mine")  # a file of that name here wins over the shipped one
    assert resolve_checkpoint("bobs_hat_4p") == "bobs_hat_4p"


def test_spec_files_name_the_file_a_shipped_name_reads(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    files = spec_files("bid=ppo:bobs_hat_4p,sample=true+play=search:policy=bobs_hat_4p,worlds=4")
    assert files == [str(SHIPPED / "bobs_hat_4p.pt")] * 2


def test_ppo_by_name_plays_as_ppo_by_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    game = make_game("bobs_hat", players=4)
    by_name = dict(make_agent("ppo:bobs_hat_4p", game, seed=0).net.state_dict())
    by_path = dict(make_agent(f"ppo:{SHIPPED / 'bobs_hat_4p.pt'}", game, seed=0).net.state_dict())
    oh_hell = make_game("oh_hell", players=4)
    other = dict(make_agent(f"ppo:{SHIPPED / 'oh_hell_4p.pt'}", oh_hell, seed=0).net.state_dict())
    assert by_name.keys() == by_path.keys() and all(np.array_equal(by_name[k], by_path[k]) for k in by_name)
    assert not all(np.array_equal(by_name[k], other[k]) for k in by_name if k in other)  # the comparison can fail


def test_a_shipped_name_keeps_the_ppo_options_after_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    game = make_game("bobs_hat", players=4)
    assert make_agent("ppo:bobs_hat_4p,sample=true", game, seed=0).sample
    assert not make_agent("ppo:bobs_hat_4p", game, seed=0).sample


def test_eval_takes_shipped_names_from_any_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "e.json"
    argv = ["eval", "--game", "bobs_hat", "--players", "4", "--hands", "1", "--deals", "1", "--quiet",
            "--agents", "ppo:bobs_hat_4p,search:policy=bobs_hat_4p,worlds=2,strong,simple", "--json", str(out)]
    assert main(argv) == 0, capsys.readouterr().err
    assert json.loads(out.read_text())["deals"] == 1


def test_an_unknown_name_says_which_names_are_shipped(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    argv = ["eval", "--game", "bobs_hat", "--players", "4", "--hands", "1", "--deals", "1", "--quiet",
            "--agents", "ppo:bobs_hat_9p,strong,strong,strong"]
    assert main(argv) != 0
    err = capsys.readouterr().err
    assert "no checkpoint at 'bobs_hat_9p' (nor a shipped policy: " in err and "oh_hell_4p" in err


@pytest.mark.parametrize("spec", ["ppo:nope/x.pt", "ppo:x.pt", "ppo:nope/x"])
def test_a_path_is_never_read_as_a_name(tmp_path, monkeypatch, spec):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"no checkpoint at '[^']*'$"):
        make_agent(spec, make_game("oh_hell", players=4), seed=0)

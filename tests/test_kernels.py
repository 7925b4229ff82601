"""The compiled core's plumbing: serial and parallel builds agree, step()
checks its inputs before any kernel runs, and a reused result is overwritten."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import numba
import numpy as np
import pytest

from agents.base import sample_masked
from bobshat_env.core import bobs_hat as bh
from bobshat_env.core import compiled, rng
from bobshat_env.core import oh_hell as oh
from bobshat_env.core.tricks import StepResult
from bobshat_env.games import make_game

GAMES = [
    ("bobs_hat", {"renege_mode": True, "no_bid": True}),
    ("oh_hell", {"deal_style": "short_high_low", "scoring": "negative"}),
]


def _states_equal(a, b) -> None:
    for f in fields(a):
        np.testing.assert_array_equal(getattr(a, f.name), getattr(b, f.name), err_msg=f.name)


@contextlib.contextmanager
def _serial():
    """Run the kernels' serial builds whatever the batch size."""
    saved = compiled.PARALLEL_MIN_BATCH
    compiled.PARALLEL_MIN_BATCH = 10**9
    try:
        yield
    finally:
        compiled.PARALLEL_MIN_BATCH = saved


def compare_builds(name: str, options: dict) -> int:
    """Step, observe and mask a batch above PARALLEL_MIN_BATCH with the parallel
    kernels and a copy with the serial ones; both must produce the same states,
    masks, results and observations at every step. Returns the steps played."""
    assert numba.get_num_threads() >= 2, "needs two numba threads (NUMBA_NUM_THREADS=2)"
    game = make_game(name, players=4, **options)
    B = compiled.PARALLEL_MIN_BATCH + 88
    kernel = bh._step_kernel if name == "bobs_hat" else oh._step_kernel
    fn, chunks = compiled.step_chunks(kernel, B)
    assert fn is kernel.parallel and chunks > 1
    with _serial():
        assert compiled.step_chunks(kernel, B) == (kernel.serial, 1)
    par = game.init(rng.game_keys(3, np.arange(B)))
    ser = par.copy()
    gen = np.random.default_rng(0)
    steps = 0
    while steps < 300:
        m_par = game.legal_action_mask(par)
        o_par = game.observe(par, view="full")
        with _serial():
            m_ser = game.legal_action_mask(ser)
            o_ser = game.observe(ser, view="full")
        np.testing.assert_array_equal(m_par, m_ser)
        np.testing.assert_array_equal(o_par, o_ser)
        live = ~game.done(par)
        if not live.any():
            break
        actions = sample_masked(m_par | ~live[:, None], gen)  # a finished game's action is ignored
        r_par = game.step(par, actions, active=live, legal=m_par)
        with _serial():
            r_ser = game.step(ser, actions, active=live, legal=m_ser)
        _states_equal(par, ser)
        _states_equal(r_par, r_ser)
        steps += 1
    assert (par.hand_no > 0).any(), "the games should have reached later hands"
    return steps


def test_parallel_and_serial_builds_step_observe_and_mask_alike():
    """:func:`compare_builds` for both games in a child process with two numba
    threads, so that the parallel build runs (and is compared) even on a
    one-core machine, where this process has one thread and only the serial build."""
    root = Path(__file__).resolve().parent.parent
    code = (
        "import json, sys; sys.path[:0] = [sys.argv[1], sys.argv[1] + '/tests']; import test_kernels\n"
        "for name, options in json.loads(sys.argv[2]):\n"
        "    print(name, test_kernels.compare_builds(name, options), 'steps alike')"
    )
    path = os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "NUMBA_NUM_THREADS": "2", "PYTHONPATH": path}
    out = subprocess.run(
        [sys.executable, "-c", code, str(root), json.dumps(GAMES)],
        cwd=root, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert [line.split()[0] for line in out.stdout.splitlines()] == [name for name, _ in GAMES], out.stdout


@pytest.mark.parametrize("module", [bh, oh])
def test_step_checks_its_inputs_and_changes_nothing(module):
    cfg = bh.BobsHatConfig(players=4) if module is bh else oh.OhHellConfig(players=4)
    state = module.init(cfg, rng.game_keys(0, np.arange(3)))
    before = state.copy()
    legal = module.legal_action_mask(cfg, state)
    good = np.argmax(legal, axis=1)
    with pytest.raises(ValueError, match="expected 3 actions"):
        module.step(cfg, state, good[:2])
    with pytest.raises(ValueError, match="integer action ids"):
        module.step(cfg, state, good.astype(float))
    with pytest.raises(ValueError, match="one flag per game"):
        module.step(cfg, state, good, active=np.ones(2, dtype=bool))
    with pytest.raises(ValueError, match=r"legal must be a \(3, "):
        module.step(cfg, state, good, legal=legal[:, :10])
    with pytest.raises(ValueError, match="result is for"):
        module.step(cfg, state, good, result=StepResult.empty(2, 4))
    with pytest.raises(ValueError, match="holds taken of shape"):  # another game's result
        module.step(cfg, state, good, result=StepResult.empty(3, 4, (7,)))
    with pytest.raises(bh.IllegalActionError, match="game 1"):
        module.step(cfg, state, np.array([good[0], module.N_ACTIONS + 5, good[2]]))
    _states_equal(state, before)


@pytest.mark.parametrize("module", [bh, oh])
def test_a_reused_result_is_overwritten_not_accumulated(module):
    cfg = bh.BobsHatConfig(players=4, hands=2) if module is bh else oh.OhHellConfig(players=4, deal_style="short_low")
    a = module.init(cfg, rng.game_keys(1, np.arange(5)))
    b = a.copy()
    reused = module.new_result(cfg, 5)  # uninitialized: every row must be overwritten
    gen = np.random.default_rng(4)
    hands_done = 0
    for _ in range(150):
        legal = module.legal_action_mask(cfg, a)
        done = a.phase == module.DONE
        acts = sample_masked(legal | done[:, None], gen)  # a finished game's action is ignored
        fresh = module.step(cfg, a, acts, active=~done, legal=legal)
        got = module.step(cfg, b, acts, active=~done, legal=legal, result=reused)
        assert got is reused
        _states_equal(fresh, got)
        hands_done += int(fresh.hand_done.sum())
    assert hands_done > 0

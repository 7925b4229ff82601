"""The compiled core's plumbing: serial and parallel builds agree, step()
checks its inputs before any kernel runs, and a reused result is overwritten."""

from __future__ import annotations

from dataclasses import fields

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


@pytest.mark.parametrize(("name", "options"), GAMES)
def test_parallel_and_serial_builds_step_observe_and_mask_alike(name, options, monkeypatch):
    """A batch above PARALLEL_MIN_BATCH runs the parallel kernels, unless the
    threshold is raised; both must produce the same states, masks, results and
    observations at every step."""
    if numba.get_num_threads() < 2:
        pytest.skip("one numba thread: there is no parallel build to compare")
    game = make_game(name, players=4, **options)
    B = compiled.PARALLEL_MIN_BATCH + 88
    par = game.init(rng.game_keys(3, np.arange(B)))
    ser = par.copy()
    gen = np.random.default_rng(0)
    for _ in range(300):
        m_par = game.legal_action_mask(par)
        o_par = game.observe(par, view="full")
        with monkeypatch.context() as m:
            m.setattr(compiled, "PARALLEL_MIN_BATCH", 10**9)
            m_ser = game.legal_action_mask(ser)
            o_ser = game.observe(ser, view="full")
        np.testing.assert_array_equal(m_par, m_ser)
        np.testing.assert_array_equal(o_par, o_ser)
        live = ~game.done(par)
        if not live.any():
            break
        actions = sample_masked(m_par | ~live[:, None], gen)  # a finished game's action is ignored
        r_par = game.step(par, actions, active=live, legal=m_par)
        with monkeypatch.context() as m:
            m.setattr(compiled, "PARALLEL_MIN_BATCH", 10**9)
            r_ser = game.step(ser, actions, active=live, legal=m_ser)
        _states_equal(par, ser)
        _states_equal(r_par, r_ser)
    assert (par.hand_no > 0).any(), "the games should have reached later hands"


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
    with pytest.raises(bh.IllegalActionError, match="game 1"):
        module.step(cfg, state, np.array([good[0], module.N_ACTIONS + 5, good[2]]))
    _states_equal(state, before)


@pytest.mark.parametrize("module", [bh, oh])
def test_a_reused_result_is_overwritten_not_accumulated(module):
    cfg = bh.BobsHatConfig(players=4, hands=2) if module is bh else oh.OhHellConfig(players=4, deal_style="short_low")
    a = module.init(cfg, rng.game_keys(1, np.arange(5)))
    b = a.copy()
    reused = StepResult.empty(5, 4)
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

"""Each game's core module satisfies the written contract (bobshat_env/core/contract.py's GameRules).

The checker is first shown to catch what it forbids on copies of a real game
module with one name removed or of the wrong kind, so a green run means
something.
"""

from __future__ import annotations

import subprocess
import sys
from types import ModuleType

import numpy as np
import pytest

from bobshat_env.core import game_module
from bobshat_env.core.contract import GameRules, contract_faults
from bobshat_env.games import GAMES, make_game


def _copy(module: ModuleType) -> ModuleType:
    fake = ModuleType(module.__name__)
    fake.__dict__.update({k: v for k, v in vars(module).items() if not k.startswith("__")})
    return fake


@pytest.mark.parametrize("name", GAMES)
def test_every_game_module_satisfies_the_contract(name):
    module = game_module(name)
    assert contract_faults(module) == []
    assert not hasattr(module, "__getattr__")  # every name is an ordinary attribute, none made up at run time


@pytest.mark.parametrize(
    "name",
    ["ROLE_CARDS", "NAME", "DECK", "State", "DONE", "TRUMP_SLICE", "step", "new_result", "public_state", "role_holder"],
)
def test_a_missing_name_is_a_fault(name):
    fake = _copy(game_module("bobs_hat"))
    delattr(fake, name)
    assert contract_faults(fake) == [f"{name}{'()' if callable(getattr(GameRules, name, None)) else ''} is missing"]


def test_a_name_of_the_wrong_kind_is_a_fault():
    module = game_module("oh_hell")
    cases = {
        "N_ACTIONS": "63",  # a string, not an int
        "PLAY": True,  # a bool is not a phase
        "ROLE_CARDS": np.zeros(module.N_CARDS, dtype=np.int8),  # not a bool table
        "SYMMETRY_CARD_SLICES": ["hand"],  # a list, not a tuple
        "DECK": object(),
        "State": dict,  # not a TrickState
        "PHASE_NAMES": "bid play",
        "observe": 3,  # not a function
        "card_str": int,  # a class, not a function
    }
    for name, bad in cases.items():
        fake = _copy(module)
        setattr(fake, name, bad)
        faults = contract_faults(fake)
        assert len(faults) == 1 and faults[0].startswith(name), (name, faults)
    fake = _copy(module)
    fake.ROLE_CARDS = np.zeros(5, dtype=bool)
    assert contract_faults(fake) == ["ROLE_CARDS has shape (5,), not (N_CARDS,)"]


def test_a_function_with_other_parameters_is_a_fault():
    module = game_module("bobs_hat")
    for name, fn in {
        "step": lambda cfg, state, actions: None,  # too few
        "legal_action_mask": lambda cfg, state, buffer=None: None,  # keyword renamed (callers pass out=)
        "layout": lambda cfg, view="private", extra=0: None,  # one more
    }.items():
        fake = _copy(module)
        setattr(fake, name, fn)
        faults = contract_faults(fake)
        assert len(faults) == 1 and faults[0].startswith(name) and "does not fit" in faults[0], faults


@pytest.mark.parametrize("name", GAMES)
def test_the_observation_functions_are_the_encoders(name):
    """The module's layout / observe / decode / public_state answer as core/observe.py and core/resample.py do."""
    game = make_game(name, players=4)
    module, cfg = game.module, game.config
    state = game.init(np.arange(3, dtype=np.uint64))
    obs = module.observe(cfg, state)
    assert obs.shape == (3, module.layout(cfg).size) and obs.dtype == np.float32
    assert module.decode(cfg, obs[0])["hand"] is not None
    pub, counts, unseen = module.public_state(cfg, obs, state.cur.astype(np.int64))
    assert np.array_equal(pub.hands[np.arange(3), state.cur], state.hands[np.arange(3), state.cur])
    assert np.array_equal(module.role_holder(state), np.full(3, -1))  # nobody holds a role before the first trick


def test_every_core_module_imports_first():
    """The game modules import core/observe.py and core/resample.py last and those import the games:
    each of them must load in a fresh interpreter whichever is imported first."""
    for first in ("bobs_hat", "oh_hell", "observe", "resample"):
        code = f"import bobshat_env.core.{first}\nfrom bobshat_env.core import bobs_hat, oh_hell\n"
        code += "assert bobs_hat._observe.bh_layout and oh_hell._resample.oh_public_state\n"
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, (first, done.stderr[-2000:])

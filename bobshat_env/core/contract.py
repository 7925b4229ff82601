"""The written contract of a game's core module: what ``bobshat_env/core/<name>.py`` provides.

Every game is one module of this package (:func:`bobshat_env.core.game_module`
finds it by name) that defines the names of :class:`GameRules`, under the same
names in every game, so the rest of the package (:mod:`bobshat_env.games`, the
suit symmetry, the search, the trick features, records) asks a game instead of
branching on its name. A module satisfies a Protocol as an object does (PEP
544: its functions are the methods, without ``self``); :func:`contract_faults`
checks one at run time, name by name and kind by kind, which
``tests/test_contract.py`` runs for every game.

Adding a game: write ``core/<name>.py`` with every name below (the two games
here are the worked examples; the batched wrappers, ``init`` to ``decode``,
are :mod:`.game`'s ``GameWrappers`` bound to the game's kernels and hooks),
then its description in :mod:`bobshat_env.games`.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any, Protocol, get_type_hints

import numpy as np

from .cards import Deck
from .tricks import StepResult, TrickState


class GameRules(Protocol):
    """The names a game's core module defines (module docstring). Seats are absolute, arrays batched."""

    # -- what the game is
    NAME: str  # the game's name, the module's own (``game_module`` checks it)
    DECK: Deck  # suit and in-suit strength of every card id
    N_CARDS: int  # card actions are 0 .. N_CARDS - 1 (the card ids)
    N_ACTIONS: int  # the flat discrete action space
    BID_BASE: int  # the first bid action
    ROLE_CARDS: np.ndarray  # (N_CARDS,) bool: cards with a role of their own in a trick (Bob's Hat: the hat cards)
    # how chance draws a hand's trump: True, the card turned from the deck after the deal (any card not dealt;
    # ``deal`` takes its card id); False, one of ``N_TRUMPS`` values on its own, each equally likely (``deal`` takes it)
    TRUMP_TURNED: bool
    N_TRUMPS: int

    # -- phases (a state's ``phase`` values); games may have more (Bob's Hat's HAT)
    BID: int
    PLAY: int
    DEAL: int  # waiting for a deal (``deal``, or ``step`` with ``auto_deal``)
    DONE: int
    PHASE_NAMES: Sequence[str] | Mapping[int, str]  # ``PHASE_NAMES[phase]``

    # -- suit symmetry (core/symmetry.py): observation slices indexed by card and by suit, the trump slice
    SYMMETRY_CARD_SLICES: tuple[str, ...]
    SYMMETRY_SUIT_SLICES: tuple[str, ...]
    TRUMP_SLICE: str

    # -- the batched state and the error of an illegal action
    State: type[TrickState]
    IllegalActionError: type[ValueError]

    # -- the batched rules
    def init(self, cfg: Any, keys: np.ndarray, auto_deal: bool = True) -> TrickState:
        """New games, one per key, at the first hand (dealt from the key with ``auto_deal``)."""

    def deal(self, cfg: Any, state: Any, games: np.ndarray, trump: np.ndarray, hands: np.ndarray) -> None:
        """Start the pending hand of ``games`` (phase DEAL) with a given trump and deal."""

    def new_result(self, cfg: Any, B: int) -> StepResult:
        """A :class:`StepResult` for B games (its ``hand_taken`` shaped like the state's ``taken``)."""

    def step(
        self,
        cfg: Any,
        state: Any,
        actions: np.ndarray,
        active: np.ndarray | None = None,
        auto_deal: bool = True,
        legal: np.ndarray | None = None,
        result: StepResult | None = None,
    ) -> StepResult:
        """Apply one action per game in place; the result carries each ended hand's closing facts."""

    def legal_action_mask(self, cfg: Any, state: Any, out: np.ndarray | None = None) -> np.ndarray:
        """(B, N_ACTIONS) bool: the legal actions of the player to act in each game."""

    def restart_hand(self, cfg: Any, state: Any, games: np.ndarray, hands: np.ndarray) -> None:
        """Start the current hand of ``games`` again from its deal with other hands (a search's sampled world)."""

    def deal_attempt(self, state: Any) -> np.ndarray:
        """(B,) which deal of its hand each game is on (0: the first; a Bob's Hat renege deals again)."""

    def random_deal(self, cfg: Any, keys: np.ndarray, hand_no: np.ndarray, attempt: np.ndarray | None = None) -> tuple:
        """The chance of a hand's deal, a pure function of (key, hand number, attempt): (trump, hands)."""

    def score_bounds(self, cfg: Any, hand_size: int) -> tuple[int, int]:
        """(low, high): no seat scores less or more in one hand of ``hand_size`` cards (bounds, not always reached)."""

    def role_holder(self, state: Any) -> np.ndarray:
        """(B,) the seat holding the role ``ROLE_CARDS`` carry now (Bob's Hat: the hat), -1 none."""

    # -- names and notation
    def action_str(self, action: int) -> str:
        """A person's name of an action id."""

    def card_str(self, card: int) -> str:
        """A card id's notation (docs/rules.md)."""

    def parse_card(self, text: str) -> int:
        """A card id from its notation; ValueError otherwise."""

    def suit_name(self, s: int) -> str:
        """A suit's name in messages."""

    def relabel_actions(self, cards: np.ndarray, suits: np.ndarray) -> np.ndarray:
        """(N_ACTIONS,) action ids under a suit relabelling (card permutation ``cards``, suit map ``suits``)."""

    # -- what a seat sees and what a search rebuilds from it: the game's own (pgx style), on the shared,
    #    game-neutral parts of core/observe.py and core/resample.py, which import no game
    def layout(self, cfg: Any, view: str = "private") -> Any:
        """The named slices (an ``ObsLayout``) of the observation vector in ``view``."""

    def observe(
        self, cfg: Any, state: Any, seat: np.ndarray | int | None = None, view: str = "private", out: Any = None
    ) -> np.ndarray:
        """(B, size) float32 observations of ``seat`` (default: the seat to act)."""

    def decode(self, cfg: Any, vec: np.ndarray, view: str = "private") -> dict:
        """The facts of one observation vector."""

    def public_state(self, cfg: Any, obs: np.ndarray, seat: np.ndarray) -> tuple[Any, np.ndarray, np.ndarray]:
        """``(state, counts, unseen)`` a seat knows from its private observations (hidden hands empty)."""


class BoundGame(Protocol):
    """What a core helper asks of a :class:`bobshat_env.games.Game` (a game's rules bound to a configuration),
    which the core cannot import (it is the floor below): such helpers take a ``BoundGame``."""

    @property
    def module(self) -> ModuleType: ...  # the game's core module, a GameRules

    @property
    def config(self) -> Any: ...

    @property
    def players(self) -> int: ...

    @property
    def secret_bids(self) -> bool: ...


def _methods() -> dict[str, inspect.Signature]:
    out = {}
    for name, value in vars(GameRules).items():
        if inspect.isfunction(value) and not name.startswith("_"):
            sig = inspect.signature(value)
            out[name] = sig.replace(parameters=list(sig.parameters.values())[1:])  # without self
    return out


def _kind_fault(name: str, hint: Any, value: Any) -> str | None:
    """Why ``value`` is not of the kind the contract's annotation ``hint`` says, or None."""
    if hint is int:
        ok = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    elif hint is str:
        ok = isinstance(value, str)
    elif hint is np.ndarray:
        ok = isinstance(value, np.ndarray) and value.dtype == np.bool_ and value.ndim == 1
    elif getattr(hint, "__origin__", None) is tuple:
        ok = isinstance(value, tuple) and all(isinstance(v, str) for v in value)
    elif getattr(hint, "__origin__", None) is type:
        ok = isinstance(value, type) and issubclass(value, hint.__args__[0])
    elif name == "PHASE_NAMES":
        ok = isinstance(value, (tuple, Mapping))
    else:
        ok = isinstance(value, hint)
    return None if ok else f"{name} is {type(value).__name__} {value!r:.60}, the contract says {hint}"


def contract_faults(module: ModuleType) -> list[str]:
    """What ``module`` lacks or has of the wrong kind against :class:`GameRules` ([] when it satisfies it).

    Constants by type (ints, strings, tuples of slice names, the deck, a
    bool card table of ``N_CARDS``), classes by base class, functions by
    being callable with the contract's parameters: as many, and the same
    names wherever callers pass them by keyword (those with defaults).
    """
    faults = []
    hints = get_type_hints(GameRules)
    for name, hint in hints.items():
        if not hasattr(module, name):
            faults.append(f"{name} is missing")
        elif (why := _kind_fault(name, hint, getattr(module, name))) is not None:
            faults.append(why)
    roles = getattr(module, "ROLE_CARDS", None)
    if isinstance(roles, np.ndarray) and roles.shape != (getattr(module, "N_CARDS", -1),):
        faults.append(f"ROLE_CARDS has shape {roles.shape}, not (N_CARDS,)")
    for name, want in _methods().items():
        fn = getattr(module, name, None)
        if fn is None:
            faults.append(f"{name}() is missing")
            continue
        if not callable(fn) or isinstance(fn, type):
            faults.append(f"{name} is {type(fn).__name__}, the contract says a function")
            continue
        params = list(inspect.signature(fn).parameters.values())
        wanted = list(want.parameters.values())
        keywords = [p.name for p in wanted if p.default is not inspect.Parameter.empty]
        got_keywords = [p.name for p in params if p.default is not inspect.Parameter.empty]
        if len(params) != len(wanted) or got_keywords != keywords:
            faults.append(f"{name}{inspect.signature(fn)} does not fit the contract's {name}{want}")
    return faults

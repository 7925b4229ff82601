"""A game's Python-side wrappers, written once for every game (issue 47; pgx's ``core.Env`` is the model).

A game module (``core/bobs_hat.py``, ``core/oh_hell.py``) keeps only its rules:
its numba kernels (``_step_kernel``, ``_mask_kernel``, ``_obs_kernel``,
``_score_*``), constants, :class:`~.tricks.TrickState` fields, observation
layout and a few small hooks. It hands them to one :class:`GameWrappers`
and binds the wrappers under the contract's public names
(``init = _GAME.init``, ``step = _GAME.step``, ...; :mod:`.contract`), so
the envs, agents and tests keep calling ``bobs_hat.step(cfg, state, actions)``.
What the wrappers do the same way in every game lives here: the input checks
and the kernel call of a step, the new deals after it, the legal mask's call,
a new game, a hand's start and restart, the illegal action's message.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np

from .compiled import BatchKernel, step_chunks
from .observe import GameObservation
from .tricks import StepResult, TrickState, clear_hand, common_fields, raise_illegal, random_first_dealer, step_inputs

S = TypeVar("S", bound=TrickState)


@dataclass(frozen=True)
class GameWrappers(Generic[S]):
    """One game's kernels, constants and hooks; its methods are the game module's public wrappers.

    Every hook takes the game's config first (``cfg``), as the public
    functions do. A hand starts in ``first_phase`` with ``first_to_act`` of
    the dealers acting first and leading the first trick; the state's
    ``hand_size``, trump field (``trump_field``: what :func:`random_deal` and
    ``deal`` give as trump) and ``taken`` are set for it, then ``reset_hand``
    clears the game's own per-hand fields.
    """

    module: str  # the game module's name: its constants and names word an illegal action
    State: type[S]
    n_cards: int
    n_actions: int
    first_phase: int  # the phase a dealt hand starts in
    deal_phase: int  # waiting for a deal
    step_kernel: BatchKernel  # (state, result, actions, active, legal, chunks, *step_args(cfg)) -> int
    step_args: Callable[[Any], tuple]  # cfg -> the step kernel's game arguments
    mask_kernel: BatchKernel  # (phase, cur, hands, led_suit, <the game's arguments>, out) -> None
    # (cfg, state, the kernel's version for the batch, out): calls it with the game's arguments. A call, not a
    # tuple of arguments to unpack: the mask runs every step, and at one game its Python overhead counts.
    mask_call: Callable[[Any, S, Callable[..., None], np.ndarray], None]
    own_fields: Callable[[Any, int], dict]  # (cfg, B) -> the game's own State fields of B new games
    first_to_act: Callable[[Any, np.ndarray], np.ndarray]  # (cfg, dealers) -> who bids first and leads
    hand_sizes: Callable[[Any, np.ndarray], np.ndarray]  # (cfg, hand numbers) -> cards per seat
    trump_field: str  # the State field a hand's trump goes into
    random_deal: Callable[..., tuple[np.ndarray, np.ndarray]]  # the module's random_deal
    deal_attempt: Callable[[S], np.ndarray]  # the module's deal_attempt
    bid_fault: Callable[[Any, S, int, int], str | None]  # (cfg, state, g, a) -> why a bid is illegal, or None
    trump_fault: Callable[[Any, np.ndarray, np.ndarray, np.ndarray], str | None]  # deal's trump check, below
    observation: GameObservation  # the game's observation (core/observe.py): layout, offsets, decoder
    obs_kernel: BatchKernel  # (out, seat, each, <the shared arrays>, *obs_args(state), offsets, scales) -> int
    obs_args: Callable[[S], tuple]  # state -> the observation kernel's game arrays
    own_facts: Callable[[Any, dict], dict]  # (cfg, a decoded vector's slices) -> the facts only this game has
    taken_shape: tuple[int, ...] = ()  # the trailing shape of state.taken (and of a result's hand_taken)
    reset_hand: Callable[[S, np.ndarray], None] | None = None  # (state, games): the game's own fields, a new hand

    # -- construction and new hands
    def init(self, cfg: Any, keys: np.ndarray, auto_deal: bool = True) -> S:
        """New games, one per key, at the first hand.

        With ``auto_deal`` the first hand is dealt from the key and every later
        hand too; without it each game waits in phase DEAL for ``deal``.
        """
        keys = np.asarray(keys, dtype=np.uint64).reshape(-1)
        first = random_first_dealer(cfg, keys)
        fields = common_fields(keys, cfg.players, self.n_cards, first, self.deal_phase)
        state = self.State(**fields, **self.own_fields(cfg, keys.shape[0]))
        state.cur[:] = state.leader[:] = self.first_to_act(cfg, first)
        if auto_deal:
            trump, hands = self.random_deal(cfg, keys, state.hand_no, self.deal_attempt(state))
            self.start_hand(cfg, state, np.arange(keys.shape[0]), trump, hands)
        return state

    def deal(self, cfg: Any, state: S, games: np.ndarray, trump: np.ndarray, hands: np.ndarray) -> None:
        """Start the pending hand of ``games`` (all in phase DEAL) with a given deal.

        trump: (n,) integers, the hand's trump as the game takes it (Bob's Hat: 0-3, the trump card's index;
        Oh Hell: the turned card's id); the game's ``trump_fault`` says what is wrong with it. hands:
        (n, P, N_CARDS) bool, the hand's size in cards per seat, no card twice, only cards of the deck
        (``cfg.deck_mask``). Raises ValueError naming the first fault (and the game), with nothing changed.
        """
        games = np.asarray(games, dtype=np.int64).reshape(-1)
        trump = np.asarray(trump).reshape(-1)
        hands = np.asarray(hands, dtype=bool)
        n = games.shape[0]
        if hands.shape != (n, cfg.players, self.n_cards):
            raise ValueError(f"hands must have shape ({n}, {cfg.players}, {self.n_cards}), got {hands.shape}")
        if trump.shape != (n,) or trump.dtype.kind not in "iu":
            raise ValueError(f"{self.trump_field} must be one integer per game ({n}), got {trump.dtype} {trump.shape}")
        if np.any(state.phase[games] != self.deal_phase):
            g = int(games[np.nonzero(state.phase[games] != self.deal_phase)[0][0]])
            raise ValueError(f"deal() needs games waiting for a deal (phase 'deal'); game {g} is not")
        trump = trump.astype(np.int64)
        why = self.trump_fault(cfg, games, trump, hands)
        if why is not None:
            raise ValueError(why)
        card_str = sys.modules[self.module].card_str
        outside = hands.any(axis=1) & ~cfg.deck_mask
        if outside.any():
            g, card = np.argwhere(outside)[0]
            raise ValueError(f"game {games[g]}: card {card_str(int(card))} is not in this variant's deck")
        size = np.asarray(self.hand_sizes(cfg, state.hand_no[games]), dtype=np.int64)
        counts = hands.sum(axis=2)
        if np.any(counts != size[:, None]):
            g, p = np.argwhere(counts != size[:, None])[0]
            raise ValueError(
                f"game {games[g]}: seat {p} was dealt {counts[g, p]} cards; hand {state.hand_no[games[g]] + 1} "
                f"deals {size[g]}"
            )
        if np.any(hands.sum(axis=1) > 1):
            g, card = np.argwhere(hands.sum(axis=1) > 1)[0]
            raise ValueError(f"game {games[g]}: card {card_str(int(card))} was dealt to two seats")
        self.start_hand(cfg, state, games, trump, hands)

    def start_hand(self, cfg: Any, state: S, idx: np.ndarray, trump: np.ndarray, hands: np.ndarray) -> None:
        """Start the pending hand of games ``idx`` with ``trump`` and ``hands`` (checked by the caller)."""
        clear_hand(state, idx, hands, self.first_phase, self.first_to_act(cfg, state.dealer[idx]))
        state.hand_size[idx] = self.hand_sizes(cfg, state.hand_no[idx])  # type: ignore[attr-defined]
        getattr(state, self.trump_field)[idx] = trump
        state.taken[idx] = 0  # type: ignore[attr-defined]
        if self.reset_hand is not None:
            self.reset_hand(state, idx)

    def restart_hand(self, cfg: Any, state: S, games: np.ndarray, hands: np.ndarray) -> None:
        """Start the current hand of ``games`` again from its deal, with ``hands`` (n, P, N_CARDS) and the same trump.

        What a search needs to replay a hand's public actions in a sampled world
        (:mod:`agents.search`): the state as it was before the hand's first
        action, the scores and the hand number as they are. No checks: the
        caller gives hands of the hand's size.
        """
        games = np.asarray(games, dtype=np.int64).reshape(-1)
        trump = getattr(state, self.trump_field)[games].copy()
        self.start_hand(cfg, state, games, trump, np.asarray(hands, dtype=bool))

    # -- legal actions
    def legal_action_mask(self, cfg: Any, state: S, out: np.ndarray | None = None) -> np.ndarray:
        """(B, N_ACTIONS) bool: the legal actions of the player to act in each game.

        All False in a finished game or one waiting for a deal. ``out``: a
        (B, N_ACTIONS) bool buffer to fill instead of a new array.
        """
        B = state.phase.shape[0]
        if out is None:
            out = np.empty((B, self.n_actions), dtype=bool)
        self.mask_call(cfg, state, self.mask_kernel.on(B), out)
        return out

    def raise_illegal(self, cfg: Any, state: S, g: int, a: int, legal: np.ndarray) -> None:
        """Raise :class:`~.tricks.IllegalActionError` for action ``a`` in game ``g``, saying why."""
        raise_illegal(state, g, a, legal, sys.modules[self.module], lambda g, a: self.bid_fault(cfg, state, g, a))

    # -- what a seat sees
    def observe(
        self, cfg: Any, state: S, seat: np.ndarray | int | None = None, view: str = "private", out: Any = None
    ) -> np.ndarray:
        """(B, D) float32 observations of ``seat`` (default: the seat to act).

        ``seat`` is one seat per game (B,), or one seat for all games ((1,) or
        a scalar). ``view``: "private" (the observer's hand), "public" (no
        hand) or "full" (every hand). ``out``, if given, is a preallocated
        (B, D) float32 buffer to fill (every cell is overwritten) and is returned.
        """
        return self.observation.observe(self.obs_kernel, cfg, state, seat, view, out, self.obs_args(state))

    def decode(self, cfg: Any, vec: np.ndarray, view: str = "private") -> dict:
        """The facts in one observation vector, in plain Python values; seats are relative to the observer."""
        return self.observation.decode(cfg, vec, view, self.own_facts)

    # -- the transition
    def new_result(self, cfg: Any, B: int) -> StepResult:
        """A :class:`StepResult` for B games, for ``step`` to fill (and a one-game loop to reuse)."""
        return StepResult.uninitialized(B, cfg.players, self.taken_shape)

    def step(
        self,
        cfg: Any,
        state: S,
        actions: np.ndarray,
        active: np.ndarray | None = None,
        auto_deal: bool = True,
        legal: np.ndarray | None = None,
        result: StepResult | None = None,
    ) -> StepResult:
        """Apply one action per game, in place, and report what happened.

        actions: (B,) action ids. active: (B,) bool, the games to step (default
        all); the others are left untouched and their action is ignored, which is
        how finished games ride along in a batch. Every active action is checked
        first: an illegal one raises :class:`IllegalActionError` naming the game,
        seat and reason, and nothing is changed. In Bob's Hat's renege mode a
        card that breaks follow suit is not an error: it applies the renege rule.
        With ``auto_deal`` False, a new hand waits in phase DEAL for ``deal``.
        ``legal``: this state's ``legal_action_mask``, when the caller has it
        already (saves computing it twice per step). ``result``: a
        :class:`StepResult` of this batch's shape to overwrite and return instead
        of a new one (what a one-game loop reuses).
        """
        B = state.batch_size
        actions, active = step_inputs(B, actions, active, legal, self.n_actions)
        if legal is None:
            legal = self.legal_action_mask(cfg, state)
        res = self.new_result(cfg, B) if result is None else result.checked(B, cfg.players, self.taken_shape)
        kernel, chunks = step_chunks(self.step_kernel, B)
        new_hands = kernel(state.arrays(), res.arrays(), actions, active, legal, chunks, *self.step_args(cfg))
        if new_hands < 0:
            self.raise_illegal(cfg, state, -1 - new_hands, int(actions[-1 - new_hands]), legal)
        if new_hands and auto_deal:
            pending = np.flatnonzero(res.new_hand)
            attempt = self.deal_attempt(state)[pending]
            trump, hands = self.random_deal(cfg, state.key[pending], state.hand_no[pending], attempt)
            self.start_hand(cfg, state, pending, trump, hands)
        return res

"""Trick facts a policy network can use directly, computed from the observation inside the network.

An MLP given one-hot cards must learn for itself which card currently wins
the trick and which of its own cards would beat it: comparisons across
suits, trump and ranks that take it millions of decisions to approximate.
:class:`TrickFeatures` computes them exactly, with a few matrix products on
the observation, and the network reads them next to it:

==================  =========  ==============================================
feature             size       meaning
==================  =========  ==============================================
winning seat        P          relative seat whose card wins the trick so far
beats               N          my cards that would win it if played now
                               (all of them when I lead)
hat in trick        1          a Bob's Hat card (14, 15) is in the trick
                               (Bob's Hat only; 0 in Oh Hell)
unseen per suit     S          cards of each suit I have not seen, / ranks
unseen hat cards    1          hat cards I have not seen, / 6 (Bob's Hat)
outranked           N          for each of my cards: unseen higher cards of
                               its suit, / ranks
==================  =========  ==============================================

"Unseen" is what the observation shows: not in my hand, not played this
hand, not in the current trick; it includes cards out of play. Nothing here
is hidden information: every feature is a function of the observation, so
a network with features plays under the same information as one without.
The module has no weights; its tables are buffers saved with the network
(:class:`agents.ppo_agent.PolicyNet` with ``features``).

The features carry no gradient, so they are computed by one compiled loop
over the rows (:func:`prepare_inputs`), which also applies the suit
relabelling of :mod:`bobshat_env.core.symmetry` first: one pass per call,
which matters because opponents in the training pool each call it on a few
hundred rows every step (as torch operations it was a fifth of training
time).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numba
import numpy as np
import torch
from numba import njit, prange
from torch import nn

from bobshat_env.core import game_module
from bobshat_env.core.tricks import card_strength, count_unseen, trick_winner_so_far

if TYPE_CHECKING:
    from bobshat_env.games import Game

# feature spec: slice offsets and sizes the kernel reads, in this order
_SPEC = ("hand", "played", "trick", "leader", "trump", "n_trump_suits", "players", "n_cards", "n_ranks", "n_suits")


class TrickFeatures(nn.Module):
    """The table above for one game's observation layout; ``forward(obs) -> (B, size)``."""

    def __init__(self, spec: torch.Tensor, suit_of: torch.Tensor, rank_of: torch.Tensor, hat: torch.Tensor):
        super().__init__()
        self.register_buffer("spec", spec.to(torch.int64))
        self.register_buffer("suit_of", suit_of.to(torch.int64))
        self.register_buffer("rank_of", rank_of.to(torch.int64))
        self.register_buffer("hat", hat.to(torch.bool))
        o = dict(zip(_SPEC, (int(x) for x in spec.tolist())))
        if len(o) != len(_SPEC) or suit_of.shape != (o["n_cards"],):
            raise ValueError(f"feature tables do not fit their spec {spec.tolist()}")
        self.offsets = o
        self.size = 2 * o["n_cards"] + o["players"] + o["n_suits"] + 2
        self.needs = max(o["hand"], o["played"]) + o["n_cards"]  # observation values the kernel reads
        self.needs = max(self.needs, o["trick"] + o["players"] * o["n_cards"], o["leader"] + o["players"])
        self.needs = max(self.needs, o["trump"] + o["n_trump_suits"])
        self.tables = (spec.numpy().astype(np.int64), suit_of.numpy().astype(np.int64),
                       rank_of.numpy().astype(np.int64), hat.numpy().astype(np.bool_))  # fmt: skip

    @classmethod
    def for_game(cls, game: str | Game, config: Any = None, view: str = "private") -> TrickFeatures:
        """The features of ``game``'s observations (layout of ``config`` and ``view``).

        ``game`` is a game's name (with its ``config``) or a
        :class:`bobshat_env.games.Game`; the deck, trump slice and special
        cards are asked of the game's core module.
        """
        if isinstance(game, str):
            try:
                module = game_module(game)
            except ValueError:
                raise ValueError(f"no trick features for game {game!r}") from None
        else:
            module, config = game.module, game.config if config is None else config
        layout, deck, trump, hat = module.layout(config, view), module.DECK, module.TRUMP_SLICE, module.ROLE_CARDS
        n_trump = deck.n_suits  # the trump one-hot's suits (Bob's Hat's fourth entry, no trump, is not one)
        sl = layout.slices
        spec = [sl["hand"].start, sl["played"].start, sl["trick"].start, sl["leader"].start, sl[trump].start]
        spec += [n_trump, config.players, deck.n_cards, int(deck.rank_of.max()) + 1, deck.n_suits]
        return cls(
            torch.tensor(spec), torch.from_numpy(deck.suit_of.astype(np.int64)),
            torch.from_numpy(deck.rank_of.astype(np.int64)), torch.from_numpy(np.asarray(hat, dtype=bool)),
        )  # fmt: skip

    @classmethod
    def from_state(cls, state: dict[str, torch.Tensor], prefix: str = "features.") -> TrickFeatures:
        """Rebuild from a network's state dict (the buffers are all it needs)."""
        get = {k: state[prefix + k] for k in ("spec", "suit_of", "rank_of", "hat")}
        return cls(get["spec"], get["suit_of"], get["rank_of"], get["hat"])

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """(B, size) features of observations (B, D), in the observations' dtype."""
        x, _ = prepare_inputs(obs, None, self)
        return x[:, obs.shape[1] :].to(obs.dtype)


_NO_SYMMETRY = np.zeros((0, 0), dtype=np.int64)
_NO_FEATURES = (np.zeros(len(_SPEC), dtype=np.int64), np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1, bool))


def prepare_inputs(
    obs: torch.Tensor, symmetry: Any, features: TrickFeatures | None
) -> tuple[torch.Tensor, torch.Tensor]:
    """(x, k): observations relabelled by ``symmetry`` (a SuitSymmetry or None), then ``features`` appended.

    ``k`` (B,) int64 is each row's relabelling (0 without a symmetry). ``x``
    is float32, (B, D + features.size); no gradient flows through it.
    """
    x = np.ascontiguousarray(obs.detach().to("cpu", torch.float32).numpy())  # the kernel runs on the CPU
    if x.ndim != 2:
        raise ValueError(f"observations must be a (B, D) batch, got shape {tuple(x.shape)}")
    B, D = x.shape
    # the kernel does no bounds checks: the tables must fit the rows
    if symmetry is not None and symmetry.obs_index.shape[1] != D:
        raise ValueError(f"observations have {D} values, the symmetry tables expect {symmetry.obs_index.shape[1]}")
    if features is not None and features.needs > D:
        raise ValueError(f"observations have {D} values, the trick features read up to {features.needs}")
    F = features.size if features is not None else 0
    out = np.empty((B, D + F), dtype=np.float32)
    k = np.zeros(B, dtype=np.int64)
    sym = _NO_SYMMETRY if symmetry is None else symmetry.obs_index
    key = (0, 0) if symmetry is None else symmetry.key
    tables: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] = (
        _NO_FEATURES if features is None else features.tables
    )
    # the size first: numba.get_num_threads() starts numba's threads, which a small batch must not do (they
    # share torch's OpenMP runtime, whose thread count they change: see train/runtime/threads.py)
    if B >= PARALLEL_MIN_ROWS and (threads := numba.get_num_threads()) > 1:
        _prepare_parallel(x, sym, key[0], key[1], F > 0, *tables, out, k, 4 * threads)
    else:
        _prepare_rows(x, sym, key[0], key[1], F > 0, *tables, out, k, 0, B)
    return torch.from_numpy(out), torch.from_numpy(k)


# From this many rows on, the pass is split over numba's threads (the trainer's rollout prepares ~640 rows a
# step; docs/results/engineering.md). Rows never touch each other, so the result is the same.
PARALLEL_MIN_ROWS = 256


@njit(cache=True, nogil=True, parallel=True)
def _prepare_parallel(
    obs: np.ndarray, sym: np.ndarray, key_start: int, key_n: int, with_features: bool,
    spec: np.ndarray, suit_of: np.ndarray, rank_of: np.ndarray, hat: np.ndarray, out: np.ndarray, k: np.ndarray,
    chunks: int,
) -> None:  # fmt: skip
    B = obs.shape[0]
    for c in prange(chunks):  # ranges of rows, each with its own scratch
        lo, hi = c * B // chunks, (c + 1) * B // chunks
        _prepare_rows(obs, sym, key_start, key_n, with_features, spec, suit_of, rank_of, hat, out, k, lo, hi)


@njit(cache=True, nogil=True)
def _prepare_rows(
    obs: np.ndarray, sym: np.ndarray, key_start: int, key_n: int, with_features: bool,
    spec: np.ndarray, suit_of: np.ndarray, rank_of: np.ndarray, hat: np.ndarray, out: np.ndarray, k: np.ndarray,
    lo: int, hi: int,
) -> None:  # fmt: skip
    D = obs.shape[1]
    # scratch for the features, allocated once per call (per row it cost a fifth of the pass)
    P, N, R, S = spec[6], spec[7], spec[8], spec[9]
    seat_card, seen = np.empty((1, P), dtype=np.int64), np.empty(N, dtype=np.bool_)
    above, unseen_s, higher = np.empty((S, R + 1), np.int64), np.empty(S, np.int64), np.empty(N, np.int64)
    for i in range(lo, hi):
        # relabel: trump becomes suit 0 (module symmetry); the key's argmax picks the table row
        row = 0
        if sym.shape[0] > 0:
            for j in range(1, key_n):
                if obs[i, key_start + j] > obs[i, key_start + row]:
                    row = j
            for j in range(D):
                out[i, j] = obs[i, sym[row, j]]
        else:
            for j in range(D):
                out[i, j] = obs[i, j]
        k[i] = row
        if with_features:
            _features_row(out, i, spec, suit_of, rank_of, hat, seat_card, seen, above, unseen_s, higher)


@njit(cache=True, inline="always")
def _features_row(
    out: np.ndarray, i: int, spec: np.ndarray, suit_of: np.ndarray, rank_of: np.ndarray, hat: np.ndarray,
    seat_card: np.ndarray, seen: np.ndarray, above: np.ndarray, unseen_s: np.ndarray, higher: np.ndarray,
) -> None:  # fmt: skip
    """Write row ``i``'s features after its (relabelled) observation, in the module table's order.

    ``seat_card`` (1, P), ``seen`` (N,), ``above`` (S, R + 1), ``unseen_s`` (S,) and ``higher`` (N,)
    are scratch space."""
    h, pl, tr, ld, tp = spec[0], spec[1], spec[2], spec[3], spec[4]
    n_trump, P, N, R, S = spec[5], spec[6], spec[7], spec[8], spec[9]
    f = out.shape[1] - (2 * N + P + S + 2)  # first feature column
    trump = -1
    for s in range(n_trump):
        if out[i, tp + s] > 0.5:
            trump = s
    leader = -1
    for p in range(P):
        if out[i, ld + p] > 0.5:
            leader = p
    # each seat's card in the trick (-1: none yet) and the card winning it so far
    led = -1
    n_in = 0
    for p in range(P):
        seat_card[0, p] = -1
        for c in range(N):
            if out[i, tr + p * N + c] > 0.5:
                seat_card[0, p] = c
                n_in += 1
    if leader >= 0 and seat_card[0, leader] >= 0:
        led = suit_of[seat_card[0, leader]]
    best, best_seat = trick_winner_so_far(seat_card, 0, led, trump, suit_of, rank_of)
    hat_in = 0.0
    for p in range(P):
        c = seat_card[0, p]
        out[i, f + p] = 1.0 if p == best_seat and best > 0 else 0.0  # a card off the suit led never wins
        if c >= 0 and hat[c]:
            hat_in = 1.0
    # my cards that would win now; unseen cards (not mine, played or in the trick); unseen higher cards
    for c in range(N):
        seen[c] = (out[i, h + c] > 0.5) | (out[i, pl + c] > 0.5)  # branch-free
    for p in range(P):
        if seat_card[0, p] >= 0:
            seen[seat_card[0, p]] = True
    unseen_hat = 0
    for c in range(N):
        beats = 0.0
        if out[i, h + c] > 0.5 and (n_in == 0 or card_strength(c, led, trump, suit_of, rank_of) > best):
            beats = 1.0
        out[i, f + P + c] = beats
        unseen_hat += hat[c] & (not seen[c])
    count_unseen(seen, suit_of, rank_of, above, unseen_s, higher)
    out[i, f + P + N] = hat_in
    for s in range(S):
        out[i, f + P + N + 1 + s] = unseen_s[s] / R
    out[i, f + P + N + 1 + S] = unseen_hat / 6.0
    o = f + P + N + 2 + S
    for c in range(N):
        out[i, o + c] = higher[c] / R if out[i, h + c] > 0.5 else 0.0

"""Inference of the hidden hands for the search agents: which worlds to search.

A search agent (:mod:`agents.search`) plays its candidates in sampled
*worlds*, deals of the hidden cards consistent with what its seat has seen.
How those worlds are drawn is the inference method, an option of the agent
spec (``search:policy=PATH,inference=METHOD``):

- ``none``: uniform over the deals consistent with the hard facts (own hand,
  cards seen, hand sizes, voids shown; :func:`bobshat_env.core.resample.sample_hands`);
- ``policy``: ``oversample`` times more uniform worlds, each weighted by the
  product of the policy's probabilities of every other seat's past actions of
  the hand in that world (:func:`policy_log_likelihood`: the hand is replayed
  on the engine from each world's deal, one network call for all worlds of
  all decisions per replayed step), then ``worlds`` of them resampled;
- ``learned``: worlds dealt card by card from a card-location network's
  marginals (:class:`CardNet`: for each unseen card, which seat holds it,
  from the seat's own view, as a correction to the hard facts' prior
  :func:`holder_prior`), each card's holder drawn in proportion to the room
  it has left times the network's correction (:func:`deal_from_marginals`;
  with no correction, a uniform deal).

Policy inference is sampling-importance-resampling with the uniform
consistent sampler as the proposal; the learned deal never breaks a void or
a hand size. Every world drawn satisfies the hard facts exactly, whatever the
weights or the network say.

Holders are numbered from the seat's point of view (:data:`NOBODY` = 0, the
card is out of play or not dealt; 1..P-1 = the seats after it, clockwise),
as in the network's output and :mod:`train.inference`'s measurement.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import nn

from bobshat_env.core.resample import relative_voids, sample_hands, trick_voids

if TYPE_CHECKING:
    from bobshat_env.games import Game

METHODS = ("none", "policy", "learned")
CHOICES = ("auto", *METHODS)  # an agent's option: auto is learned where the policy has a card network, else none
SCOPES = ("bids", "all")  # policy inference: the hat choice and the bids only, or every action of the hand
MIN_PROB = 1e-3  # floor of an observed action's probability in the likelihood: one surprise does not rule a world out
NOBODY = 0  # the holder class of a card no seat holds (out of play, not dealt)
CARDS_SUFFIX = ".cards"  # the card-location network beside its policy: oh_hell_4p.pt -> oh_hell_4p.cards
# (not .pt: the shipped folder's *.pt files are policies, listed by name)
CARDS_MODEL = "card-location"  # the checkpoint metadata's ``model`` of a card-location network

Policy = Callable[[np.ndarray, np.ndarray], torch.Tensor]  # (obs, mask) -> masked logits (B, A)


# --------------------------------------------------------------------------
# Holders, from one seat's point of view
def holders(hands: np.ndarray, seat: np.ndarray) -> np.ndarray:
    """(..., N) holder class of every card, relative to ``seat``: 0 nobody, r = the seat r places after it.

    ``hands`` (n, ..., P, N) by absolute seat; the seat's own cards get class
    0 too (they are not hidden from it; callers score unseen cards only).
    """
    hands = np.asarray(hands, dtype=bool)
    P = hands.shape[-2]
    seat = np.asarray(seat, dtype=np.int64).reshape((-1,) + (1,) * (hands.ndim - 2))
    rel = (np.arange(P) - seat) % P  # (n, 1.., P): relative seat of each absolute seat
    rel = np.broadcast_to(rel, hands.shape[:-1])
    held = hands.any(axis=-2)
    owner = np.argmax(hands, axis=-2)  # absolute seat holding each card (0 where none)
    cls = np.take_along_axis(rel, owner, axis=-1)
    return np.where(held, cls, NOBODY)


# --------------------------------------------------------------------------
# Policy-based inference
def policy_log_likelihood(
    game: Game,
    policy: Policy,
    state: Any,
    hands: np.ndarray,
    seat: np.ndarray,
    played_by: np.ndarray,
    history: np.ndarray,
    scope: str = "all",
) -> np.ndarray:
    """(n, M) log-probability, under the policy, of the other seats' public actions this hand in each world.

    Each world's hand is started again from its deal (the cards each seat
    holds now plus those it has played, the game's ``restart_hand``) and the
    hand's public actions (``history``, -1 after the last) are replayed on the
    engine; at every action of another seat the policy, on that seat's
    observation in the world, says how likely the action was (floored at
    :data:`MIN_PROB`). ``scope="bids"`` replays the hat choice and the bids
    only, ``"all"`` the card play too. ``state`` is the decisions' public
    state (n rows), ``hands`` (n, M, P, N) the worlds.
    """
    core = game.module
    n, M, P, N = hands.shape
    R = n * M
    idx = np.repeat(np.arange(n), M)
    st = state.take(idx)
    dealt = hands.reshape(R, P, N) | np.asarray(played_by, dtype=bool)[idx]
    core.restart_hand(game.config, st, np.arange(R), dealt)
    me = np.asarray(seat, dtype=np.int64)[idx]
    logp = np.zeros(R)
    hist = np.asarray(history)[idx]
    for t in range(hist.shape[1]):
        a = hist[:, t].astype(np.int64)
        live = a >= 0
        if scope == "bids":
            live &= st.phase < core.PLAY
        if not live.any():
            break
        m = game.legal_action_mask(st)
        other = np.nonzero(live & (st.cur.astype(np.int64) != me))[0]
        if other.size:
            logits = policy(game.observe(st.take(other)), m[other])
            lp = torch.log_softmax(logits, dim=-1).numpy()[np.arange(other.size), a[other]]
            logp[other] += np.maximum(lp, np.log(MIN_PROB))
        game.step(st, np.where(live, a, 0), active=live, auto_deal=False)
    return logp.reshape(n, M)


def resample(logw: np.ndarray, k: int, gen: np.random.Generator) -> np.ndarray:
    """(n, k) indices drawn from each row's weights ``exp(logw)`` (n, M) by systematic resampling (low variance)."""
    w = np.exp(logw - logw.max(axis=1, keepdims=True))
    cum = np.cumsum(w / w.sum(axis=1, keepdims=True), axis=1)
    u = (gen.random((logw.shape[0], 1)) + np.arange(k)[None, :]) / k
    idx = np.stack([np.searchsorted(c, x) for c, x in zip(cum, u)])
    return np.minimum(idx, logw.shape[1] - 1)


# --------------------------------------------------------------------------
# Learned inference: a card-location network
def card_features(game: Game, obs: np.ndarray, seat: np.ndarray, public: dict | None) -> np.ndarray:
    """(n, F) float32 inputs of the card-location network: what the seat sees, relative to it.

    The seat's observation vector, then the public record of the hand by
    relative seat: the voids shown (P x S) and which seat played which card
    (P x N), neither of which the observation holds. No hidden card enters.
    """
    obs = np.asarray(obs, dtype=np.float32)
    seat = np.asarray(seat, dtype=np.int64)
    n, P, N, S = obs.shape[0], game.players, game.deck.n_cards, game.deck.n_suits
    void = np.zeros((n, P, S), dtype=bool)
    played = np.zeros((n, P, N), dtype=bool)
    if public is not None:
        if "void" in public:
            void = relative_voids(np.asarray(public["void"], dtype=bool), seat)
        if "played_by" in public:
            played = relative_voids(np.asarray(public["played_by"], dtype=bool), seat)  # any (n, P, X): by seat
    return np.concatenate([obs, void.reshape(n, -1), played.reshape(n, -1)], axis=1).astype(np.float32)


def card_feature_size(game: Game) -> int:
    """The card-location network's input size for ``game``."""
    d = game.deck
    return int(game.obs_size()) + game.players * (d.n_suits + d.n_cards)


class CardNet(nn.Module):
    """Per card, which holder: an MLP from :func:`card_features` to (N, P) logits (0 nobody, r = seat r after me)."""

    def __init__(self, in_size: int, n_cards: int, players: int, hidden: tuple[int, ...] = (256, 256)):
        super().__init__()
        self.in_size, self.n_cards, self.players, self.hidden = int(in_size), int(n_cards), int(players), tuple(hidden)
        layers: list[nn.Module] = []
        last = self.in_size
        for h in self.hidden:
            layers += [nn.Linear(last, h), nn.ReLU()]
            last = h
        layers.append(nn.Linear(last, self.n_cards * self.players))
        self.body = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, N, P) logits of each card's holder class."""
        return self.body(x).view(-1, self.n_cards, self.players)


def holder_prior(unseen: np.ndarray, counts: np.ndarray, void: np.ndarray, seat: np.ndarray, deck: Any) -> np.ndarray:
    """(n, N, P) log prior of each card's holder class from the hard facts: -inf where impossible.

    A seat may hold a card in proportion to the cards it holds (nobody: to
    the unseen cards no seat holds), unless it is known void in the card's
    suit or holds nothing; nobody cannot where the other seats hold every
    unseen card. This is about the uniform sampler's marginal (exact without
    voids); the card-location network learns a correction to it. A card with
    no possible holder (one the seat has seen: never scored) gets a flat prior.
    """
    seat = np.asarray(seat, dtype=np.int64)
    unseen = np.asarray(unseen, dtype=bool)
    n, N = unseen.shape
    P = np.asarray(counts).shape[1]
    w = np.zeros((n, N, P))
    rel_void = relative_voids(np.asarray(void, dtype=bool), seat)  # (n, P, S)
    rel_counts = relative_voids(np.asarray(counts, dtype=np.int64)[:, :, None], seat)[:, :, 0]  # (n, P)
    w[:, :, 1:] = rel_counts[:, None, 1:] * ~rel_void[:, 1:, :][:, :, deck.suit_of].transpose(0, 2, 1)
    w[:, :, NOBODY] = np.maximum(unseen.sum(axis=1) - rel_counts[:, 1:].sum(axis=1), 0)[:, None]
    w = np.where(w.sum(axis=2, keepdims=True) > 0, w, 1.0)
    with np.errstate(divide="ignore"):
        logw = np.log(w)
    return logw - np.logaddexp.reduce(logw, axis=2, keepdims=True)


def card_log_marginals(net: CardNet, features: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """(n, N, P) log-probability of each card's holder class: the softmax of the network's correction added
    to the hard facts' ``prior`` (:func:`holder_prior`), impossible holders excluded."""
    with torch.inference_mode():
        logits = net(torch.from_numpy(np.ascontiguousarray(features, dtype=np.float32))).double().numpy()
    logits = np.where(np.isfinite(prior), logits + prior, -np.inf)
    return logits - np.logaddexp.reduce(logits, axis=2, keepdims=True)


def cards_path(policy: str | Path) -> Path:
    """The card-location network's file beside a policy checkpoint (``oh_hell_4p.pt`` -> ``oh_hell_4p.cards``)."""
    p = Path(policy)
    stem = p.name[: -len(".pt")] if p.name.endswith(".pt") else p.name
    return p.with_name(stem + CARDS_SUFFIX)


def card_net_meta(game: Game, net: CardNet) -> dict[str, Any]:
    """The metadata a card-location network is saved with (the game it reads, its sizes)."""
    return {
        "model": CARDS_MODEL,
        "game": game.name,
        "players": game.players,
        "config": game.config.to_dict(),
        "obs_size": net.in_size,
        "n_cards": net.n_cards,
        "hidden": list(net.hidden),
    }


def save_card_net(path: str | Path, game: Game, net: CardNet, extra: dict[str, Any] | None = None) -> None:
    """Write a card-location network as a bobshat checkpoint (atomic, checksummed; ``extra`` in the metadata)."""
    from .checkpoint import write_checkpoint

    tensors = {f"cards.{k}": v for k, v in net.state_dict().items()}
    write_checkpoint(path, tensors, {**card_net_meta(game, net), **(extra or {})})


def card_net_mismatch(meta: dict[str, Any], game: Game) -> str | None:
    """Why a card-location network's metadata does not fit ``game`` (None: it fits)."""
    if meta.get("model") != CARDS_MODEL:
        return "is not a card-location network (a policy? those are ppo:PATH)"
    if meta.get("game") != game.name or meta.get("players") != game.players:
        return f"is for {meta.get('game')} with {meta.get('players')} players, not {game.name} with {game.players}"
    if meta.get("obs_size") != card_feature_size(game) or meta.get("n_cards") != game.deck.n_cards:
        return f"reads {meta.get('obs_size')} inputs; this game's view has {card_feature_size(game)}"
    return None


def load_card_net(path: str | Path, game: Game, fits_only: bool = False) -> CardNet | None:
    """A card-location network written by :func:`save_card_net`, checked against ``game``; a clear error if
    it does not fit (with ``fits_only``, None instead: a network of another table is simply not used; a
    damaged file is an error either way)."""
    from .checkpoint import CheckpointError, load_checkpoint

    tensors, meta = load_checkpoint(path)
    where = repr(str(path))
    why = card_net_mismatch(meta, game)
    if why is not None:
        if fits_only:
            return None
        raise CheckpointError(f"{where} {why}")
    net = CardNet(meta["obs_size"], meta["n_cards"], meta["players"], tuple(meta["hidden"]))
    state = {k[len("cards.") :]: v for k, v in tensors.items() if k.startswith("cards.")}
    try:
        net.load_state_dict(state)
    except RuntimeError as err:
        raise CheckpointError(f"{where} does not hold a card-location network of its metadata's sizes") from err
    net.eval()
    return net


def check_inference(agent: str, inference: str, cards: str) -> None:
    """ValueError naming the ``agent`` (``search``, ``puct``) if its ``inference`` option is none of
    :data:`CHOICES`, or ``cards`` is given for a method that reads no network; reads no file."""
    if inference not in CHOICES:
        raise ValueError(f"unknown {agent} inference {inference!r}; choose one of {', '.join(CHOICES)}")
    if cards and inference not in ("auto", "learned"):
        raise ValueError(f"{agent} option cards names the network of inference=learned; add inference=learned")


def resolve_inference(
    agent: str, inference: str, cards: str, policy: str | Path | None, game: Game
) -> tuple[str, CardNet | None]:
    """(method, card network) of an agent's ``inference`` option, checked by :func:`check_inference`.

    ``auto`` is ``learned`` where a card-location network of this table sits beside the policy (or at
    ``cards``), else ``none``; ``learned`` needs the network (``cards``, default the policy's
    :func:`cards_path`) and names the file when it is missing or made for another table."""
    if inference == "auto":
        where = cards or (str(cards_path(policy)) if policy else "")
        card_net = load_card_net(where, game, fits_only=True) if where and Path(where).is_file() else None
        if cards and card_net is None:
            card_net = load_card_net(cards, game)  # (the error: a named network is for another table)
        return ("learned" if card_net is not None else "none"), card_net
    if inference == "learned":
        if not cards and not policy:
            raise ValueError(f"{agent} option inference=learned needs cards=PATH (a card-location network)")
        where = cards or str(cards_path(policy or ""))
        try:
            return "learned", load_card_net(where, game)
        except FileNotFoundError:
            raise FileNotFoundError(
                f"inference=learned: no card-location network at {where!r} (bobshat infer --train writes one)"
            ) from None
    return inference, None


def deal_from_marginals(
    logit: np.ndarray,
    own_hand: np.ndarray,
    seat: np.ndarray,
    unseen: np.ndarray,
    counts: np.ndarray,
    void: np.ndarray,
    deck: Any,
    worlds: int,
    gen: np.random.Generator,
    max_tries: int = 20,
) -> np.ndarray:
    """(n, W, P, N) deals drawn card by card, each card's holder in proportion to the room it has left times
    ``exp(logit)`` (n, N, P; by holder class), under the hard facts.

    With ``logit`` zero this is a uniform deal of the unseen cards (a card
    goes to each holder in proportion to the cards it still has to receive);
    a learned correction tilts it toward the holders the network favours.
    The cards go in a random order; a void seat never gets its suit and no
    holder gets more cards than it holds, so a deal can run into a card with
    no room left: it is drawn again, up to ``max_tries`` times, after which
    those worlds come from the uniform sampler. Every world is consistent.
    """
    seat = np.asarray(seat, dtype=np.int64)
    unseen = np.asarray(unseen, dtype=bool) & ~np.asarray(own_hand, dtype=bool)
    n, N = unseen.shape
    P = np.asarray(counts).shape[1]
    rel_counts = relative_voids(np.asarray(counts, dtype=np.int64)[:, :, None], seat)[:, :, 0].copy()
    cap0 = rel_counts
    cap0[:, NOBODY] = unseen.sum(axis=1) - rel_counts[:, 1:].sum(axis=1)
    if np.any(cap0 < 0):
        raise ValueError("the other seats hold more cards than are unseen")
    allowed = np.ones((n, N, P), dtype=bool)
    rel_void = relative_voids(np.asarray(void, dtype=bool), seat)  # (n, P, S)
    allowed[:, :, 1:] = ~rel_void[:, 1:, :][:, :, deck.suit_of].transpose(0, 2, 1)
    tilt = np.exp(logit - logit.max(axis=2, keepdims=True)) * allowed  # (n, N, P)
    R = n * worlds
    row_of = np.repeat(np.arange(n), worlds)
    cls = np.full((R, N), -1, dtype=np.int64)
    todo = np.arange(R)
    steps = int(unseen.sum(axis=1).max(initial=0))
    for _ in range(max_tries):
        if not todo.size:
            break
        rows = row_of[todo]
        t = todo.size
        cap = cap0[rows].astype(np.float64)
        out = np.full((t, N), NOBODY, dtype=np.int64)
        order = np.argsort(np.where(unseen[rows], gen.random((t, N)), 2.0), axis=1)
        ok = np.ones(t, dtype=bool)
        ar = np.arange(t)
        for j in range(steps):
            c = order[:, j]
            live = unseen[rows, c] & ok
            w = cap * tilt[rows, c]  # (t, P)
            cum = np.cumsum(w, axis=1)
            total = cum[:, -1]
            ok &= ~(live & (total <= 0))
            live &= total > 0
            h = np.minimum((cum < (gen.random(t) * total)[:, None]).sum(axis=1), P - 1)
            out[ar[live], c[live]] = h[live]
            cap[ar[live], h[live]] -= 1
        cls[todo[ok]] = out[ok]
        todo = todo[~ok]
    hands = np.zeros((R, P, N), dtype=bool)
    r, c = np.nonzero((cls > NOBODY) & unseen[row_of])
    hands[r, (seat[row_of[r]] + cls[r, c]) % P, c] = True
    hands[np.arange(R), seat[row_of]] = np.asarray(own_hand, dtype=bool)[row_of]
    if todo.size:  # the worlds that kept running out of room: uniform ones
        need = np.unique(row_of[todo])
        for b in need:
            k = todo[row_of[todo] == b]
            fill = sample_hands(own_hand[b : b + 1], seat[b : b + 1], unseen[b : b + 1], counts[b : b + 1],
                                void[b : b + 1], deck, k.size, gen)  # fmt: skip
            hands[k] = fill[0]
    return hands.reshape(n, worlds, P, N)


# --------------------------------------------------------------------------
# The sampler the search agents use
class WorldSampler:
    """``worlds`` consistent deals of the hidden cards per decision, drawn by one inference method.

    ``policy`` (obs, mask -> masked logits) is needed by ``method="policy"``,
    ``cards`` (a :class:`CardNet`) by ``"learned"``. Policy inference needs
    ``oversample > 1`` to choose among worlds and the hand's public history
    (an arena hands it to agents that declare ``needs_public``); without them
    the worlds are uniform. ``temper`` (0, 1] raises the weights
    to that power (the learned correction is scaled by it): below 1 the
    worlds spread wider (the product of many action probabilities of a greedy
    player is sharper than what it knows, and a few worlds drawn again and
    again search little).
    """

    def __init__(
        self,
        game: Game,
        method: str = "none",
        worlds: int = 32,
        oversample: int = 4,
        gen: np.random.Generator | None = None,
        policy: Policy | None = None,
        scope: str = "all",
        cards: CardNet | None = None,
        temper: float = 1.0,
    ):
        if method not in METHODS:
            raise ValueError(f"unknown inference {method!r}; choose one of {', '.join(METHODS)}")
        if scope not in SCOPES:
            raise ValueError(f"unknown inference scope {scope!r}; choose one of {', '.join(SCOPES)}")
        if method == "policy" and policy is None:
            raise ValueError("inference=policy needs the policy")
        if method == "learned" and cards is None:
            raise ValueError("inference=learned needs a card-location network")
        self.game, self.method, self.worlds, self.oversample = game, method, int(worlds), int(oversample)
        self.gen = gen if gen is not None else np.random.default_rng()
        if isinstance(temper, bool) or not isinstance(temper, (int, float)) or not 0 < temper <= 1:
            raise ValueError(f"inference temper must be a number in (0, 1], got {temper!r}")
        self.policy, self.scope, self.cards, self.temper = policy, scope, cards, float(temper)

    def facts(
        self, obs: np.ndarray, seat: np.ndarray, public: dict | None
    ) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray]:
        """(public state, counts, unseen, voids) of each decision: the hard facts the worlds respect."""
        game = self.game
        state, counts, unseen = game.public_state(obs, seat)
        void = trick_voids(state.trick, state.led_suit, game.deck)
        if public is not None and "void" in public:
            void |= np.asarray(public["void"], dtype=bool)
        return state, counts, unseen, void

    def sample(self, obs: np.ndarray, seat: np.ndarray, public: dict | None) -> tuple[Any, np.ndarray]:
        """The public state of each decision and ``worlds`` sampled deals of the hidden cards (n, W, P, N)."""
        game, W = self.game, self.worlds
        seat = np.asarray(seat, dtype=np.int64)
        state, counts, unseen, void = self.facts(obs, seat, public)
        b = np.arange(seat.shape[0])
        history = None if public is None else public.get("history")
        if self.method == "learned":
            assert self.cards is not None
            feats = card_features(game, obs, seat, public)
            prior = holder_prior(unseen, counts, void, seat, game.deck)
            logq = card_log_marginals(self.cards, feats, prior)
            with np.errstate(invalid="ignore"):  # (-inf - -inf where a holder is impossible: replaced by 0)
                logit = np.where(np.isfinite(prior), logq - prior, 0.0) * self.temper  # the network's correction
            own = state.hands[b, seat]
            return state, deal_from_marginals(logit, own, seat, unseen, counts, void, game.deck, W, self.gen)
        infer = self.method == "policy" and history is not None and self.oversample > 1
        M = W * self.oversample if infer else W
        hands = sample_hands(state.hands[b, seat], seat, unseen, counts, void, game.deck, M, self.gen)
        if infer and public is not None and history is not None:
            assert self.policy is not None
            played_by = np.asarray(public["played_by"])
            logw = policy_log_likelihood(game, self.policy, state, hands, seat, played_by, history, self.scope)
            hands = hands[b[:, None], resample(logw * self.temper, W, self.gen)]
        return state, hands

"""Suit symmetry (bobshat_env/core/symmetry.py) and the network that uses it.

The strong check: deal a game with trump suit k and, beside it, the same
deal with suits k and 0 swapped (so its trump is suit 0), play relabelled
actions in both, and require the same scores, relabelled legal masks and
equal canonical observations at every decision.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.checkpoint import save_checkpoint
from agents.ppo_agent import PolicyNet, load_policy, masked_logits, policy_from_tensors
from bobshat_env.core import bobs_hat as bh
from bobshat_env.core.cards import BOBS_HAT_DECK, OH_HELL_DECK
from bobshat_env.core.symmetry import trump_canonical
from bobshat_env.games import make_game

CASES = [
    ("bobs_hat", {"players": 4, "hands": 3}, BOBS_HAT_DECK),
    ("bobs_hat", {"players": 3, "hands": 2, "double_fewest": True}, BOBS_HAT_DECK),
    ("oh_hell", {"players": 4}, OH_HELL_DECK),
]


def _swap_cards(deck, k: int) -> np.ndarray:
    """Card id -> the same rank in the suit swapped with k (0 <-> k)."""
    suits = np.arange(deck.n_suits)
    suits[[0, k]] = [k, 0]
    lookup = {(int(s), int(r)): c for c, (s, r) in enumerate(zip(deck.suit_of, deck.rank_of))}
    return np.array([lookup[(int(suits[s]), int(r))] for s, r in zip(deck.suit_of, deck.rank_of)])


def _random_deal(game, state, deck, gen: np.random.Generator, k: int):
    """A deal for every game (all waiting for one) whose trump suit is k, and its suit-swapped twin."""
    B, P = state.phase.shape[0], game.players
    size = state.hand_size if game.name == "bobs_hat" else None
    swap = _swap_cards(deck, k)
    hands = np.zeros((B, P, deck.n_cards), dtype=bool)
    extra = np.zeros(B, dtype=np.int64)
    for g in range(B):
        n = (
            int(size[g])
            if size is not None
            else int(game.module.hand_size_for(game.config, state.hand_no[g : g + 1])[0])
        )
        if game.name == "oh_hell":
            trump_cards = np.flatnonzero(deck.suit_of == k)
            extra[g] = gen.choice(trump_cards)
            pool = np.setdiff1d(np.arange(deck.n_cards), [extra[g]])
        else:
            pool = np.arange(deck.n_cards)
        cards = gen.permutation(pool)[: n * P].reshape(P, n)
        for p in range(P):
            hands[g, p, cards[p]] = True
    twin = hands[:, :, np.argsort(swap)]  # twin holds swap[c] wherever hands holds c
    assert (twin[:, :, swap] == hands).all()
    if game.name == "bobs_hat":
        return (np.full(B, k), hands), (np.zeros(B, dtype=np.int64), twin)
    return (extra, hands), (swap[extra], twin)


@pytest.mark.parametrize("name,options,deck", CASES, ids=["bh4", "bh3-double-fewest", "oh4"])
@pytest.mark.parametrize("k", [1, 2])
def test_relabelled_deals_play_alike_and_look_alike(name, options, deck, k):
    game = make_game(name, **options)
    sym = trump_canonical(game.name, game.config)
    B = 24
    keys = np.arange(B, dtype=np.uint64) + np.uint64(99)
    a, b = game.init(keys, auto_deal=False), game.init(keys, auto_deal=False)
    gen = np.random.default_rng(k)
    games = np.arange(B)
    decisions = 0
    while not game.done(a).all():
        waiting = a.phase == game.module.DEAL
        assert (waiting == (b.phase == game.module.DEAL)).all()
        if waiting.any():
            assert waiting.all()  # same decision count per hand: the games stay in step
            (ta, ha), (tb, hb) = _random_deal(game, a, deck, gen, k)
            game.module.deal(game.config, a, games, ta, ha)
            game.module.deal(game.config, b, games, tb, hb)
        ma, mb = game.legal_action_mask(a), game.legal_action_mask(b)
        # action x in a is action sym.action_index[k, x] in b
        assert (mb[:, sym.action_index[k]] == ma).all()
        seat = a.cur.astype(np.int64)
        oa, ob = game.observe(a, seat=seat), game.observe(b, seat=seat)
        np.testing.assert_array_equal(sym.canonical_obs(oa), ob)
        np.testing.assert_array_equal(sym.canonical_obs(ob), ob)  # trump 0: nothing to relabel
        np.testing.assert_array_equal(sym.canonical_mask(oa, ma), mb)
        act_a = np.array([gen.choice(np.flatnonzero(m)) for m in ma])
        ra = game.step(a, act_a, auto_deal=False)
        rb = game.step(b, sym.action_index[k, act_a], auto_deal=False)
        np.testing.assert_array_equal(ra.rewards, rb.rewards)
        decisions += 1
    np.testing.assert_array_equal(a.scores, b.scores)
    assert decisions > 40 and np.abs(a.scores).sum() > 0


def test_tables_are_involutions_and_bids_relabel_their_suits():
    game = make_game("bobs_hat", players=4)
    sym = trump_canonical(game.name, game.config)
    for table in (sym.obs_index, sym.action_index):
        for row in table:
            np.testing.assert_array_equal(np.sort(row), np.arange(row.size))
            np.testing.assert_array_equal(row[row], np.arange(row.size))
    np.testing.assert_array_equal(sym.obs_index[0], np.arange(game.obs_size()))  # blue trump: as is
    np.testing.assert_array_equal(sym.obs_index[3], np.arange(game.obs_size()))  # no trump: as is
    # trump black (2): a bid of most black + fewest becomes most blue + fewest, most red stays
    bid = bh.BID_BASE + bh.bid_code(("most_black",), fewest=1)
    assert sym.action_index[2, bid] == bh.BID_BASE + bh.bid_code(("most_blue",), fewest=1)
    red = bh.BID_BASE + bh.bid_code(("most_red",))
    assert sym.action_index[2, red] == red
    assert sym.action_index[1, bh.HAT_MINUS] == bh.HAT_MINUS


def test_unknown_game_is_refused():
    with pytest.raises(ValueError, match="no suit symmetry for game 'chess'"):
        trump_canonical("chess", None)


def test_symmetric_network_is_the_plain_one_on_canonical_observations(tmp_path):
    game = make_game("bobs_hat", players=4)
    sym = trump_canonical(game.name, game.config)
    torch.manual_seed(0)
    net = PolicyNet(game.obs_size(), game.n_actions, (32,), sym)
    plain = PolicyNet(game.obs_size(), game.n_actions, (32,))
    plain.load_state_dict({k: v for k, v in net.state_dict().items() if not k.startswith("sym_")})
    state = game.init(np.arange(64, dtype=np.uint64))
    obs = game.observe(state)
    k = obs[:, sym.key[0] : sym.key[0] + sym.key[1]].argmax(axis=1)
    assert len(set(k.tolist())) >= 3  # the deals cover several trumps
    with torch.no_grad():
        logits, value = net(torch.from_numpy(obs))
        pl, pv = plain(torch.from_numpy(sym.canonical_obs(obs)))
    torch.testing.assert_close(value, pv)
    torch.testing.assert_close(logits, torch.gather(pl, 1, torch.from_numpy(sym.action_index[k])))
    # training's path: canonical observations and masks through head(), actions mapped back
    mask = torch.from_numpy(game.legal_action_mask(state))
    with torch.no_grad():
        x, m, kk = net.prepare(torch.from_numpy(obs), mask)
        best_c = masked_logits(net.head(x)[0], m).argmax(dim=1)
        best = masked_logits(logits, mask).argmax(dim=1)
    np.testing.assert_array_equal(kk.numpy(), k)
    torch.testing.assert_close(net.original_actions(best_c, kk), best)
    assert mask.gather(1, best[:, None]).all()
    # the tables travel with the weights: a checkpoint reloads as the same symmetric network
    path = tmp_path / "sym.pt"
    meta = {"game": "bobs_hat", "players": 4, "obs_size": game.obs_size(), "n_actions": game.n_actions, "hidden": [32]}
    save_checkpoint(path, {f"policy.{k}": v for k, v in net.state_dict().items()}, meta)
    loaded, _ = load_policy(path, game)
    assert loaded.symmetry is not None
    with torch.no_grad():
        torch.testing.assert_close(loaded(torch.from_numpy(obs))[0], logits)
    frozen = net.clone_frozen()
    with torch.no_grad():
        torch.testing.assert_close(frozen(torch.from_numpy(obs))[0], logits)
    broken = {f"policy.{k}": v for k, v in net.state_dict().items() if k != "sym_act"}
    with pytest.raises(ValueError, match="incomplete symmetry tables"):
        policy_from_tensors(broken, meta)

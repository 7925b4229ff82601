"""Trick features (agents/features.py) against a plain reading of the rules, and in the network."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.checkpoint import save_checkpoint
from agents.features import TrickFeatures
from agents.ppo_agent import PolicyNet, load_policy
from bobshat_env.core.cards import BH_IS_HAT_CARD, BOBS_HAT_DECK, OH_HELL_DECK
from bobshat_env.core.symmetry import trump_canonical
from bobshat_env.games import make_game


def _states(game, B: int, steps: int, seed: int) -> list[np.ndarray]:
    """Observations of the seat to act along random games (every phase, tricks at every stage)."""
    state = game.init(np.arange(B, dtype=np.uint64) + np.uint64(seed))
    gen = np.random.default_rng(seed)
    out = []
    for _ in range(steps):
        out.append(game.observe(state, seat=state.cur.astype(np.int64)))
        mask = game.legal_action_mask(state)
        game.step(state, np.array([gen.choice(np.flatnonzero(m)) for m in mask]))
    return out


def _expected(game, deck, obs: np.ndarray) -> np.ndarray:
    """The features of one observation, the slow way: read the cards, apply the trick rules."""
    d = game.layout_fn(game.config, "private").decode(obs)
    P, N = game.players, deck.n_cards
    R = int(deck.rank_of.max()) + 1
    trump_vec = d["trump"] if game.name == "bobs_hat" else d["trump_suit"]
    trump = int(np.argmax(trump_vec)) if trump_vec.any() else -1
    trump = -1 if trump >= deck.n_suits else trump  # Bob's Hat's "none"
    hand = np.flatnonzero(d["hand"])
    trick = {p: int(np.flatnonzero(d["trick"][p])[0]) for p in range(P) if d["trick"][p].any()}
    led = deck.suit_of[trick[int(np.argmax(d["leader"]))]] if trick else -1

    def strength(c: int) -> int:
        if deck.suit_of[c] == trump:
            return 200 + int(deck.rank_of[c])
        return 100 + int(deck.rank_of[c]) if deck.suit_of[c] == led else 0

    best = max((strength(c) for c in trick.values()), default=0)
    winning = np.zeros(P)
    for p, c in trick.items():
        winning[p] = best > 0 and strength(c) == best
    beats = np.zeros(N)
    for c in hand:
        beats[c] = (not trick) or strength(c) > best
    seen = set(hand) | set(np.flatnonzero(d["played"])) | set(trick.values())
    unseen = [c for c in range(N) if c not in seen]
    unseen_suit = np.array([sum(deck.suit_of[c] == s for c in unseen) for s in range(deck.n_suits)]) / R
    hat = BH_IS_HAT_CARD if game.name == "bobs_hat" else np.zeros(N, dtype=bool)
    hat_in_trick = float(any(hat[c] for c in trick.values()))
    unseen_hat = sum(hat[c] for c in unseen) / 6
    outranked = np.zeros(N)
    for c in hand:
        outranked[c] = sum(deck.suit_of[u] == deck.suit_of[c] and deck.rank_of[u] > deck.rank_of[c] for u in unseen) / R
    return np.concatenate([winning, beats, [hat_in_trick], unseen_suit, [unseen_hat], outranked])


@pytest.mark.parametrize(
    "name,options,deck",
    [("bobs_hat", {"players": 4}, BOBS_HAT_DECK), ("bobs_hat", {"players": 5}, BOBS_HAT_DECK),
     ("oh_hell", {"players": 4}, OH_HELL_DECK)],
    ids=["bh4", "bh5", "oh4"],
)  # fmt: skip
def test_features_match_the_rules(name, options, deck):
    game = make_game(name, **options)
    feats = TrickFeatures.for_game(game.name, game.config)
    checked = 0
    for obs in _states(game, B=6, steps=60, seed=5):
        got = feats(torch.from_numpy(obs)).numpy()
        assert got.shape == (obs.shape[0], feats.size)
        for i in range(obs.shape[0]):
            np.testing.assert_allclose(got[i], _expected(game, deck, obs[i]), atol=1e-6, err_msg=f"row {i}")
            checked += 1
    assert checked == 360


def test_network_with_features_and_symmetry_saves_and_reloads(tmp_path):
    game = make_game("bobs_hat", players=4)
    sym = trump_canonical(game.name, game.config)
    feats = TrickFeatures.for_game(game.name, game.config)
    torch.manual_seed(0)
    net = PolicyNet(game.obs_size(), game.n_actions, (32,), sym, feats)
    assert net.input_size == game.obs_size() + feats.size
    obs = torch.from_numpy(np.concatenate(_states(game, B=8, steps=30, seed=2)))
    with torch.no_grad():
        logits, value = net(obs)
        x, k = net.prepare(obs)
        # the features are those of the relabelled observation: the network sees one labelling throughout
        torch.testing.assert_close(x[:, game.obs_size() :], feats(x[:, : game.obs_size()]))
    path = tmp_path / "f.pt"
    meta = {"game": "bobs_hat", "players": 4, "obs_size": game.obs_size(), "n_actions": game.n_actions, "hidden": [32]}
    save_checkpoint(path, {f"policy.{k}": v for k, v in net.state_dict().items()}, meta)
    loaded, _ = load_policy(path, game)
    assert loaded.features is not None and loaded.symmetry is not None
    with torch.no_grad():
        l2, v2 = loaded(obs)
    torch.testing.assert_close(l2, logits)
    torch.testing.assert_close(v2, value)
    with pytest.raises(ValueError, match="observations have 100 values, the symmetry tables expect 442"):
        net(torch.zeros(3, 100))
    with pytest.raises(ValueError, match="observations have 100 values, the trick features read up to"):
        feats(torch.zeros(3, 100))
    with pytest.raises(ValueError, match="no trick features for game 'go'"):
        TrickFeatures.for_game("go", None)


def test_a_large_batch_is_split_over_threads_with_the_same_result(monkeypatch):
    """From PARALLEL_MIN_ROWS rows on, the pass runs in ranges of rows over numba's threads; every row is the
    one the single-thread pass writes (which the test above checks against the rules), for any number of
    ranges, even or not. Seen red with a range's upper bound one short (a row per range left unwritten)."""
    import numba

    from agents import features

    game = make_game("bobs_hat", players=4)
    sym, feats = trump_canonical(game.name, game.config), TrickFeatures.for_game(game.name, game.config)
    obs = torch.from_numpy(np.concatenate(_states(game, B=40, steps=30, seed=8)))  # 1,200 rows, every phase
    assert obs.shape[0] >= features.PARALLEL_MIN_ROWS
    real, chunks = features._prepare_parallel, []
    monkeypatch.setattr(features, "_prepare_parallel", lambda *a: chunks.append(a[-1]) or real(*a))
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        serial = features.prepare_inputs(obs, sym, feats)
    finally:
        numba.set_num_threads(threads)
    assert chunks == []  # one thread: the serial pass
    split = features.prepare_inputs(obs, sym, feats)
    assert chunks == ([4 * threads] if threads > 1 else [])
    assert torch.equal(split[0], serial[0]) and torch.equal(split[1], serial[1])
    # any number of ranges (7 and 1,200 do not divide evenly into each other's multiples)
    x = np.ascontiguousarray(obs.numpy())
    for n in (1, 7, 1200):
        out, k = np.full_like(serial[0].numpy(), np.nan), np.full(x.shape[0], -1)
        real(x, sym.obs_index, sym.key[0], sym.key[1], True, *feats.tables, out, k, n)
        assert np.array_equal(out, serial[0].numpy()) and np.array_equal(k, serial[1].numpy()), n

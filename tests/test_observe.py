"""Bob's Hat observations decode back into the same facts as the state."""

from __future__ import annotations

import numpy as np
import pytest

from bobshat_env.config import BobsHatConfig
from bobshat_env.core import bobs_hat as bh
from bobshat_env.core import observe, rng
from bobshat_env.core.cards import BH_TRUMPS


def _random_positions(cfg, n_games=6, steps=(0, 1, 3, 7, 20, 45, 90)):
    state = bh.init(cfg, rng.game_keys(9, np.arange(n_games)))
    gen = np.random.default_rng(0)
    for t in range(max(steps) + 1):
        if t in steps:
            yield state
        mask = bh.legal_action_mask(cfg, state)
        pick = (gen.random(n_games) * mask.sum(1)).astype(int)
        bh.step(cfg, state, np.argmax(np.cumsum(mask, 1) > pick[:, None], 1))


@pytest.mark.parametrize("players", [3, 4, 5])
def test_decode_matches_state(players):
    cfg = BobsHatConfig(players=players, no_bid=True, double_fewest=True)
    for state in _random_positions(cfg):
        obs = observe.bh_observe(cfg, state, view="full")
        assert obs.dtype == np.float32 and obs.shape == (state.batch_size, observe.bh_layout(cfg, "full").size)
        for g in range(state.batch_size):
            me = int(state.cur[g])
            rel = lambda s, me=me: (s - me) % players  # noqa: E731
            facts = observe.bh_decode(cfg, obs[g], view="full")
            assert facts["hand"] == np.flatnonzero(state.hands[g, me]).tolist()
            assert facts["phase"] == bh.PHASE_NAMES[state.phase[g]]
            assert facts["trump"] == BH_TRUMPS[state.trump[g]]
            assert facts["hand_number"] == state.hand_no[g] + 1
            assert facts["dealer"] == rel(int(state.dealer[g]))
            assert facts["hat"] == (None if state.hat_value[g] == 0 else int(state.hat_value[g]))
            holder = int(state.hat_holder[g])
            assert facts["hat_holder"] == (None if holder < 0 else rel(holder))
            seats = [(me + r) % players for r in range(players)]
            assert facts["bids"] == [
                None if state.bids[g, s] < 0 else bh.bid_cards(int(state.bids[g, s])) for s in seats
            ]
            assert facts["no_bid_left"] == [not state.no_bid_used[g, s] for s in seats]
            assert facts["trick"] == [None if state.trick[g, s] < 0 else int(state.trick[g, s]) for s in seats]
            assert facts["leader"] == rel(int(state.leader[g]))
            assert facts["played"] == np.flatnonzero(state.played[g]).tolist()
            assert facts["taken"] == state.taken[g, seats].tolist()
            assert facts["scores"] == state.scores[g, seats].tolist()
            assert facts["all_hands"] == [np.flatnonzero(state.hands[g, s]).tolist() for s in seats]


def test_public_view_hides_the_hand_and_private_view_hides_others():
    cfg = BobsHatConfig(players=4)
    state = next(_random_positions(cfg))
    private = observe.bh_observe(cfg, state)
    public = observe.bh_observe(cfg, state, view="public")
    layout = observe.bh_layout(cfg)
    hand = layout.slices["hand"]
    assert private[:, hand].sum(axis=1).tolist() == [5] * state.batch_size
    assert public[:, hand].sum() == 0
    others = np.delete(public, np.r_[hand], axis=1)
    np.testing.assert_array_equal(np.delete(private, np.r_[hand], axis=1), others)
    assert "all_hands" not in layout.slices


def test_observation_of_another_seat_and_bad_input():
    cfg = BobsHatConfig(players=3)
    state = next(_random_positions(cfg, steps=(5,)))
    obs = observe.bh_observe(cfg, state, seat=np.full(state.batch_size, 2))
    for g in range(state.batch_size):
        assert observe.bh_decode(cfg, obs[g])["hand"] == np.flatnonzero(state.hands[g, 2]).tolist()
    with pytest.raises(ValueError, match="unknown view"):
        observe.bh_layout(cfg, "oracle")
    with pytest.raises(ValueError, match="shape"):
        observe.bh_decode(cfg, obs[0][:-1])


@pytest.mark.parametrize("view", observe.VIEWS)
def test_kernels_read_every_slice_offset_by_name_from_the_layout(view):
    """The named offsets tuples hold each slice's start (all_hands only in the full view)."""
    from bobshat_env.config import OhHellConfig

    for cfg, layout_fn, offsets_fn, cls in (
        (BobsHatConfig(players=5, secret_bidding=True), observe.bh_layout, observe.bh_offsets, observe.BhOffsets),
        (OhHellConfig(players=6), observe.oh_layout, observe.oh_offsets, observe.OhOffsets),
    ):
        layout = layout_fn(cfg, view)
        o = cls(*offsets_fn(cfg, view))
        for name in cls._fields:
            if name in layout.slices:
                assert getattr(o, name) == layout.slices[name].start, name
        assert o.players == cfg.players and o.n_hand_number == layout.shape_of("hand_number")[0]
        assert o.all_hands == (layout.slices["all_hands"].start if view == "full" else -1)
        assert (o.own_hand, o.full) == (int(view != "public"), int(view == "full"))
    assert observe.BhOffsets(*observe.bh_offsets(BobsHatConfig(secret_bidding=True))).secret == 1


def test_offsets_name_a_field_the_layout_lacks():
    layout = observe.bh_layout(BobsHatConfig())
    with pytest.raises(ValueError, match="OhOffsets.trump_suit is neither a slice of this layout nor given"):
        layout.offsets(observe.OhOffsets, players=4, n_cards=60, n_hand_number=16)

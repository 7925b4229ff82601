"""Bob's Hat observations decode back into the same facts as the state."""

from __future__ import annotations

import numpy as np
import pytest

from bobshat_env.core import bobs_hat as bh
from bobshat_env.core import observe, rng
from bobshat_env.core import oh_hell as oh
from bobshat_env.core.cards import BH_TRUMPS
from bobshat_env.core.config import BobsHatConfig, OhHellConfig


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
        obs = bh.observe(cfg, state, view="full")
        assert obs.dtype == np.float32 and obs.shape == (state.batch_size, bh.layout(cfg, "full").size)
        for g in range(state.batch_size):
            me = int(state.cur[g])
            rel = lambda s, me=me: (s - me) % players  # noqa: E731
            facts = bh.decode(cfg, obs[g], view="full")
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
    private = bh.observe(cfg, state)
    public = bh.observe(cfg, state, view="public")
    layout = bh.layout(cfg)
    hand = layout.slices["hand"]
    assert private[:, hand].sum(axis=1).tolist() == [5] * state.batch_size
    assert public[:, hand].sum() == 0
    others = np.delete(public, np.r_[hand], axis=1)
    np.testing.assert_array_equal(np.delete(private, np.r_[hand], axis=1), others)
    assert "all_hands" not in layout.slices


def test_observation_of_another_seat_and_bad_input():
    cfg = BobsHatConfig(players=3)
    state = next(_random_positions(cfg, steps=(5,)))
    obs = bh.observe(cfg, state, seat=np.full(state.batch_size, 2))
    for g in range(state.batch_size):
        assert bh.decode(cfg, obs[g])["hand"] == np.flatnonzero(state.hands[g, 2]).tolist()
    with pytest.raises(ValueError, match="unknown view"):
        bh.layout(cfg, "oracle")
    with pytest.raises(ValueError, match="shape"):
        bh.decode(cfg, obs[0][:-1])


@pytest.mark.parametrize("module, cfg, own", [(bh, BobsHatConfig(), "trump"), (oh, OhHellConfig(), "hand_size")])
def test_decode_of_an_all_zero_vector_gives_none_for_its_empty_one_hots(module, cfg, own):
    """A vector no state gives (all zero: padding) decodes to None where a one-hot slice is empty, as the
    dealer and leader do, instead of failing on None + 1."""
    facts = module.decode(cfg, np.zeros(module.layout(cfg).size, dtype=np.float32))
    assert facts["hand_number"] is None and facts[own] is None and facts["dealer"] is None


@pytest.mark.parametrize("view", observe.VIEWS)
def test_kernels_read_every_slice_offset_by_name_from_the_layout(view):
    """The named offsets tuples hold each slice's start (all_hands only in the full view)."""
    from bobshat_env.core.config import OhHellConfig

    for cfg, layout_fn, offsets_fn, cls in (
        (BobsHatConfig(players=5, secret_bidding=True), bh.layout, bh.obs_offsets, bh.ObsOffsets),
        (OhHellConfig(players=6), oh.layout, oh.obs_offsets, oh.ObsOffsets),
    ):
        layout = layout_fn(cfg, view)
        o = cls(*offsets_fn(cfg, view))
        for name in cls._fields:
            if name in layout.slices:
                assert getattr(o, name) == layout.slices[name].start, name
        assert o.players == cfg.players and o.n_hand_number == layout.shape_of("hand_number")[0]
        assert o.all_hands == (layout.slices["all_hands"].start if view == "full" else -1)
        assert (o.own_hand, o.full) == (int(view != "public"), int(view == "full"))
    assert bh.ObsOffsets(*bh.obs_offsets(BobsHatConfig(secret_bidding=True))).secret == 1


def test_offsets_name_a_field_the_layout_lacks():
    layout = bh.layout(BobsHatConfig())
    with pytest.raises(ValueError, match="oh_hell.ObsOffsets.trump_suit is neither a slice of this layout nor given"):
        layout.offsets(oh.ObsOffsets, players=4, n_cards=60, n_hand_number=16)


def test_scripted_observation_exact_values():
    """Every slice of a 4-player observation, at the README's offsets, in a position written out by hand:
    hand 2, mid-trick, after a scored hand 1, with the -10 hat taken by the observer."""
    from bh_script import Game, cards

    g = Game(BobsHatConfig(players=4))
    # Hand 1 (dealer 0, no trump): seat 0 leads blue and takes all 20 cards (5 blue, 10 red, 5 black).
    g.deal("none", ["blue20 blue19 blue18 blue17 blue16", "red20 red19 red18 red17 red16",
                    "black20 black19 black18 black17 black16", "red1 red2 red3 red4 red5"])  # fmt: skip
    g.hat(10)
    g.bid("blue", "red", "fewest", "black+fewest")
    for k in range(5):
        g.trick(f"blue{20 - k} red{20 - k} black{20 - k} red{k + 1}")
    # blue made +5 +5; red missed -5; fewest tied at 0 cards -5; black -5 and fewest -5; no hat card taken
    assert g.hand_scores == [[10, -5, -5, -10]]
    # Hand 2 (dealer 1, red trumps): the dealer chooses -10, bids from the dealer, the dealer leads.
    g.deal("red", ["blue1 blue2 blue5 black1 black2 black3", "red14 red10 blue3 blue4 black5 black6",
                   "red1 blue20 blue19 black20 black19 black18", "red2 blue6 blue7 black7 black8 black9"])  # fmt: skip
    g.hat(-10)
    g.bid("red", "blue+black", "fewest", "black")  # seats 1, 2, 3, 0
    assert g.trick("red14 red1 red2 blue1") == 1  # seat 1 takes red 3, blue 1 and the hat (red14)
    assert g.trick("blue3 blue20 blue6 blue2") == 2  # seat 2 takes blue 4
    g.play("black20 black7 black1")  # seat 2 leads; seat 1 to play
    assert g.cur == 1

    obs = bh.observe(g.cfg, g.state)[0]  # seen from seat 1: relative seats 0-3 are seats 1, 2, 3, 0
    assert obs.dtype == np.float32 and obs.shape == (442,)
    layout = bh.layout(g.cfg)
    assert [(n, layout.slices[n].start) for n in layout.names] == [
        ("hand", 0), ("played", 60), ("bids", 120), ("no_bid_left", 144), ("taken", 148), ("scores", 160),
        ("hat_value", 164), ("phase", 166), ("trump", 169), ("hand_number", 173), ("dealer", 189),
        ("hat_holder", 193), ("leader", 198), ("trick", 202),
    ]  # the README's table  # fmt: skip

    def onehot(size: int, *hot: int) -> list[float]:
        return [1.0 if i in hot else 0.0 for i in range(size)]

    assert np.flatnonzero(obs[0:60]).tolist() == sorted(cards("red10 blue4 black5 black6"))
    assert obs[0:60].sum() == 4
    assert np.flatnonzero(obs[60:120]).tolist() == sorted(cards("red14 red1 red2 blue1 blue3 blue20 blue6 blue2"))
    assert obs[60:120].sum() == 8  # the cards of the trick in progress are not "played" yet
    # bids per relative seat: most blue, red, black, fewest, double fewest, has bid
    assert obs[120:144].reshape(4, 6).tolist() == [
        [0, 1, 0, 0, 0, 1],  # seat 1: red
        [1, 0, 1, 0, 0, 1],  # seat 2: blue + black
        [0, 0, 0, 1, 0, 1],  # seat 3: fewest
        [0, 0, 1, 0, 0, 1],  # seat 0: black
    ]
    assert obs[144:148].tolist() == [0, 0, 0, 0]  # the no-bid option is off
    taken = [[1, 3, 0], [4, 0, 0], [0, 0, 0], [0, 0, 0]]  # blue, red, black, by relative seat
    np.testing.assert_allclose(obs[148:160].reshape(4, 3), np.array(taken) / 20, rtol=1e-6)
    np.testing.assert_allclose(obs[160:164], np.array([-5, -5, -10, 10]) / 100, rtol=1e-6)
    assert obs[164:166].tolist() == [0, 1]  # the -10 hat
    assert obs[166:169].tolist() == onehot(3, 2)  # play
    assert obs[169:173].tolist() == onehot(4, 1)  # red
    assert obs[173:189].tolist() == onehot(16, 1)  # hand 2
    assert obs[189:193].tolist() == onehot(4, 0)  # the observer deals
    assert obs[193:198].tolist() == onehot(5, 1)  # centre, then relative seats: the observer holds the hat
    assert obs[198:202].tolist() == onehot(4, 1)  # seat 2 led
    trick = obs[202:442].reshape(4, 60)
    assert [np.flatnonzero(row).tolist() for row in trick] == [[], cards("black20"), cards("black7"), cards("black1")]

    # seen from seat 0 (relative seats 0-3: seats 0, 1, 2, 3), the same facts move
    other = bh.observe(g.cfg, g.state, seat=np.array([0]))[0]
    assert np.flatnonzero(other[0:60]).tolist() == sorted(cards("blue5 black2 black3"))
    np.testing.assert_allclose(other[160:164], np.array([10, -5, -5, -10]) / 100, rtol=1e-6)
    assert other[189:193].tolist() == onehot(4, 1) and other[193:198].tolist() == onehot(5, 2)
    assert other[198:202].tolist() == onehot(4, 2)
    assert [np.flatnonzero(row).tolist() for row in other[202:442].reshape(4, 60)] == [
        cards("black1"), [], cards("black20"), cards("black7")
    ]  # fmt: skip

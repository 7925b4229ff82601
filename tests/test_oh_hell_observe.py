"""Oh Hell observations decode back into the same facts as the state."""

from __future__ import annotations

import numpy as np
import pytest

from bobshat_env.core import oh_hell as oh
from bobshat_env.core import rng
from bobshat_env.core.cards import OH_SUIT_CHARS, oh_parse_card
from bobshat_env.core.config import OhHellConfig


def _random_positions(cfg, n_games=6, steps=(0, 1, 3, 7, 20, 45, 90, 150)):
    """Positions along random games: bidding, mid-trick, between tricks, later hands."""
    state = oh.init(cfg, rng.game_keys(12, np.arange(n_games)))
    gen = np.random.default_rng(1)
    for t in range(max(steps) + 1):
        if t in steps:
            yield state
        mask = oh.legal_action_mask(cfg, state)
        pick = (gen.random(n_games) * mask.sum(1)).astype(int)
        oh.step(cfg, state, np.argmax(np.cumsum(mask, 1) > pick[:, None], 1), active=state.phase != oh.DONE)


def _facts_of_state(cfg, state, g, me):
    P = cfg.players
    seats = [(me + r) % P for r in range(P)]
    rel = lambda s: (int(s) - me) % P  # noqa: E731
    return {
        "hand": np.flatnonzero(state.hands[g, me]).tolist(),
        "phase": oh.PHASE_NAMES[int(state.phase[g])] if state.phase[g] in (oh.BID, oh.PLAY) else "other",
        "trump": OH_SUIT_CHARS[int(state.trump_card[g]) % 4],
        "trump_card": int(state.trump_card[g]),
        "hand_number": int(state.hand_no[g]) + 1,
        "hand_size": int(state.hand_size[g]),
        "dealer": rel(state.dealer[g]),
        "bids": [None if state.bids[g, s] < 0 else int(state.bids[g, s]) for s in seats],
        "leader": rel(state.leader[g]),
        "trick": [None if state.trick[g, s] < 0 else int(state.trick[g, s]) for s in seats],
        "played": np.flatnonzero(state.played[g]).tolist(),
        "taken": state.taken[g, seats].tolist(),
        "scores": state.scores[g, seats].tolist(),
        "all_hands": [np.flatnonzero(state.hands[g, s]).tolist() for s in seats],
    }


@pytest.mark.parametrize("players", [3, 4, 5, 6, 7])
def test_decode_matches_state(players):
    cfg = OhHellConfig(players=players, scoring="negative", first_dealer=-1)
    layout = oh.layout(cfg, "full")
    buf = np.full((6, layout.size), 7.0, dtype=np.float32)  # a dirty reused buffer
    phases = set()
    for state in _random_positions(cfg):
        obs = oh.observe(cfg, state, view="full")
        assert obs.dtype == np.float32 and obs.shape == (state.batch_size, layout.size)
        np.testing.assert_array_equal(oh.observe(cfg, state, view="full", out=buf), obs)
        for g in range(state.batch_size):
            facts = oh.decode(cfg, obs[g], view="full")
            assert facts == _facts_of_state(cfg, state, g, int(state.cur[g]))
            phases.add(facts["phase"])
    assert phases == {"bid", "play"}


def test_scripted_observation_exact_values():
    cfg = OhHellConfig(players=4)  # 10 cards, dealer 0
    state = oh.init(cfg, np.array([0], dtype=np.uint64), auto_deal=False)
    hands = [
        "AC KC QC JC TC 9C 8C 7C 6C 5C",
        "AS KS QS JS TS 9S 8S 7S 6S 5S",
        "4S 3S AH KH QH JH TH 9H 8H 7H",
        "2S AD KD QD JD TD 9D 8D 7D 6D",
    ]
    rows = np.zeros((1, 4, 52), dtype=bool)
    for p, h in enumerate(hands):
        rows[0, p, [oh_parse_card(c) for c in h.split()]] = True
    oh.deal(cfg, state, np.array([0]), np.array([oh_parse_card("2H")]), rows)
    for a in (oh.BID_BASE + 3, oh.BID_BASE + 0, oh.BID_BASE + 2, oh.BID_BASE + 4):  # seats 1, 2, 3, 0
        oh.step(cfg, state, np.array([a]))
    for c in ("AS", "4S", "2S", "5C", "KS"):  # trick 1 to seat 1, then seat 1 leads KS
        oh.step(cfg, state, np.array([oh_parse_card(c)]))
    assert int(state.cur[0]) == 2
    layout = oh.layout(cfg)
    assert layout.size == 52 + 52 + 4 * 12 + 4 + 4 + 2 + 4 + 52 + 19 + 10 + 4 + 4 + 4 * 52 == 463
    assert oh.layout(cfg, "full").size == 463 + 4 * 52
    d = layout.decode(oh.observe(cfg, state)[0])  # seat 2, the seat to act
    assert d["hand"].sum() == 9 and d["hand"][oh_parse_card("3S")] == 1 and d["hand"][oh_parse_card("4S")] == 0
    assert np.flatnonzero(d["played"]).tolist() == sorted(oh_parse_card(c) for c in ("AS", "4S", "2S", "5C"))
    # relative seats 0..3 are seats 2, 3, 0, 1: bids 0, 2, 4, 3 at index bid + 1
    assert [int(np.argmax(r)) for r in d["bids"]] == [1, 3, 5, 4]
    assert d["bids"].sum() == 4
    assert d["taken"].tolist() == [0.0, 0.0, 0.0, np.float32(0.1)]
    assert d["phase"].tolist() == [0, 1]
    assert d["trump_suit"].tolist() == [0, 0, 0, 1]  # C D S H
    assert np.flatnonzero(d["trump_card"]).tolist() == [oh_parse_card("2H")]
    assert np.flatnonzero(d["hand_number"]).tolist() == [0]
    assert np.flatnonzero(d["hand_size"]).tolist() == [9]
    assert d["dealer"].tolist() == [0, 0, 1, 0]
    assert d["leader"].tolist() == [0, 0, 0, 1]
    assert np.argwhere(d["trick"]).tolist() == [[3, oh_parse_card("KS")]]
    assert d["scores"].tolist() == [0, 0, 0, 0]
    facts = oh.decode(cfg, oh.observe(cfg, state, seat=np.array([1]))[0])
    assert facts["bids"] == [3, 0, 2, 4] and facts["taken"] == [1, 0, 0, 0] and facts["leader"] == 0
    assert facts["trick"] == [oh_parse_card("KS"), None, None, None]
    assert facts["trump"] == "H" and facts["phase"] == "play" and facts["hand_size"] == 10


def test_public_view_hides_the_hand_and_full_view_shows_all():
    cfg = OhHellConfig(players=5)
    state = next(_random_positions(cfg))
    private = oh.observe(cfg, state)
    public = oh.observe(cfg, state, view="public")
    full = oh.observe(cfg, state, view="full")
    layout = oh.layout(cfg)
    hand = layout.slices["hand"]
    assert private[:, hand].sum(axis=1).tolist() == [10] * state.batch_size
    assert public[:, hand].sum() == 0
    np.testing.assert_array_equal(np.delete(private, np.r_[hand], axis=1), np.delete(public, np.r_[hand], axis=1))
    np.testing.assert_array_equal(full[:, : layout.size], private)
    all_hands = oh.layout(cfg, "full").slices["all_hands"]
    assert full[:, all_hands].sum(axis=1).tolist() == [50] * state.batch_size
    assert "all_hands" not in layout.slices


def test_waiting_and_finished_games_have_no_phase_or_trump():
    cfg = OhHellConfig(players=3, deal_style="short_low")
    state = oh.init(cfg, np.array([5], dtype=np.uint64), auto_deal=False)
    facts = oh.decode(cfg, oh.observe(cfg, state)[0])
    assert facts["phase"] == "other" and facts["trump"] is None and facts["trump_card"] is None
    assert facts["hand"] == [] and facts["bids"] == [None, None, None] and facts["hand_size"] == 10
    assert facts["dealer"] == 2  # dealer 0 seen from seat 1, the first to bid


def test_bad_view_and_bad_vector():
    cfg = OhHellConfig(players=3)
    state = next(_random_positions(cfg))
    obs = oh.observe(cfg, state)
    with pytest.raises(ValueError, match="unknown view"):
        oh.layout(cfg, "oracle")
    with pytest.raises(ValueError, match="shape"):
        oh.decode(cfg, obs[0][:-1])

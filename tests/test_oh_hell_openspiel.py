"""Differential test of the Oh Hell core against OpenSpiel's ``oh_hell``.

OpenSpiel plays one hand with positive scoring. Its chance nodes come in this
order: the number of tricks (outcome = the hand size), the dealer (outcome =
the seat), then one card per deal action, card ``k`` to seat ``k % P``
(seat 0 first whatever the dealer), and last the trump card. Both use the
same card ids (``rank * 4 + suit``) and the same action layout (bids at
``52 + bid``), so the comparison is direct.

Each hand: our core deals a random hand of a random size (a random hand of
the long deal style) with a random dealer; OpenSpiel gets the same size,
dealer, cards per seat and trump card. Then both play the same random legal
actions; at every decision the seat to act and the legal action sets must be
identical, and at the end OpenSpiel's returns must equal our hand scores.
"""

from __future__ import annotations

import numpy as np
import pytest

from bobshat_env.core import oh_hell as oh
from bobshat_env.core import rng
from bobshat_env.core.cards import oh_parse_card
from bobshat_env.core.config import OhHellConfig

pyspiel = pytest.importorskip("pyspiel")

HANDS_PER_PLAYER_COUNT = 300


def _drive_openspiel(game, size: int, dealer: int, hands: np.ndarray, trump_card: int):
    """An OpenSpiel state at the start of bidding with this deal: the benchmark's, which checks each chance step."""
    from benchmarks.vs_ismcts import openspiel_state

    return openspiel_state(game, size, dealer, hands, trump_card)


@pytest.mark.parametrize("players", [3, 4, 5, 6, 7])
def test_same_deal_same_play_same_scores(players):
    P, B = players, HANDS_PER_PLAYER_COUNT
    cfg = OhHellConfig(players=P, deal_style="long")
    game = pyspiel.load_game("oh_hell", {"players": P})
    r = np.random.default_rng(100 + P)
    keys = rng.game_keys(P, np.arange(B))
    state = oh.init(cfg, keys, auto_deal=False)
    # Put every game at a random hand of the game (so a random hand size) with a random dealer.
    hand_no = r.integers(0, cfg.hands, size=B).astype(np.int8)
    dealer = r.integers(0, P, size=B).astype(np.int8)
    state.hand_no[:] = hand_no
    state.dealer[:] = dealer
    state.first_dealer[:] = (dealer - hand_no) % P
    trump_card, hands = oh.random_deal(cfg, keys, hand_no)
    oh.deal(cfg, state, np.arange(B), trump_card, hands)
    sizes = oh.hand_size_for(cfg, hand_no)
    assert set(sizes.tolist()) == set(range(1, cfg.start_size + 1))  # every hand size is tried
    os_states = [_drive_openspiel(game, int(sizes[i]), int(dealer[i]), hands[i], int(trump_card[i])) for i in range(B)]

    decisions, forbidden_seen = 0, 0
    done = np.zeros(B, dtype=bool)
    while not done.all():
        mask = oh.legal_action_mask(cfg, state)
        forbidden_seen += int((oh.forbidden_bid(state)[~done] >= 0).sum())
        act = np.zeros(B, dtype=np.int64)
        for i in np.nonzero(~done)[0]:
            s = os_states[i]
            assert not s.is_terminal()
            assert s.current_player() == state.cur[i], f"hand {i}: seat to act differs"
            legal = np.nonzero(mask[i])[0].tolist()
            assert s.legal_actions() == legal, f"hand {i}: legal actions differ"
            if state.phase[i] == oh.BID:
                # bids near a fair share make the hook rule bite more often than uniform bids
                small = [a for a in legal if a - oh.BID_BASE <= max(1, 2 * int(sizes[i]) // P)]
                legal = small or legal
            act[i] = r.choice(legal)
            s.apply_action(int(act[i]))
            decisions += 1
        res = oh.step(cfg, state, act, active=~done, auto_deal=False)
        for i in np.nonzero(res.hand_done)[0]:
            s = os_states[i]
            assert s.is_terminal()
            assert s.returns() == res.rewards[i].tolist()
            assert res.rewards[i].tolist() == state.last_scores[i].tolist()
        for i in np.nonzero(~done & ~res.hand_done)[0]:
            assert not os_states[i].is_terminal()
        done |= res.hand_done
    assert decisions == int((sizes.astype(np.int64) + 1).sum()) * P  # every bid and every card
    assert forbidden_seen > B // 2  # the hook rule bit for most dealers


def test_openspiel_scoring_parameters():
    """Pin OpenSpiel's scoring: positive scoring is its default
    (``off_bid_penalty=False``, ``points_per_trick=1``); its off-bid penalty
    mode is none of our scoring modes (docs/rules.md) (made: ``ppt * tricks + 10``, missed:
    ``-ppt * |tricks - bid|``)."""
    cfg = OhHellConfig(players=3)
    c = oh_parse_card
    assert (c("2C"), c("KD"), c("KS"), c("KH"), c("AD"), c("AS"), c("AH")) == (0, 45, 46, 47, 49, 50, 51)
    hands = np.zeros((3, 52), dtype=bool)
    hands[0, [c("AH"), c("KH")]] = True
    hands[1, [c("AS"), c("KS")]] = True
    hands[2, [c("AD"), c("KD")]] = True
    results = {}
    for params in ({}, {"off_bid_penalty": True}, {"off_bid_penalty": True, "points_per_trick": 10}):
        game = pyspiel.load_game("oh_hell", {"players": 3, **params})
        s = _drive_openspiel(game, 2, 2, hands, c("2C"))  # dealer 2, trump card 2C: clubs
        # bids 2, 1, 0 (seats 0, 1, 2); seat 0 leads AH then KH and takes both tricks (no club is played)
        for a in (52 + 2, 52 + 1, 52 + 0, c("AH"), c("AS"), c("AD"), c("KH"), c("KS"), c("KD")):
            s.apply_action(a)
        results[tuple(params.items())] = s.returns()
    assert results[()] == [12.0, 0.0, 10.0]
    assert oh.score_hand(cfg, np.array([[2, 1, 0]]), np.array([[2, 0, 0]])).tolist() == [[12, 0, 10]]
    assert results[(("off_bid_penalty", True),)] == [12.0, -1.0, 10.0]
    assert results[(("off_bid_penalty", True), ("points_per_trick", 10))] == [30.0, -10.0, 10.0]

"""The core's trick rules that the engine and the bots share: card strength and the trick's winner,
voids shown by a trick, card counting, and Bob's Hat's hand size."""

from __future__ import annotations

import numpy as np
import pytest

from bobshat_env.core import bobs_hat as bh
from bobshat_env.core.cards import BOBS_HAT_DECK, OH_HELL_DECK, bh_card, bh_hand_size, oh_parse_card
from bobshat_env.core.config import BobsHatConfig
from bobshat_env.core.tricks import (
    card_strength,
    count_unseen,
    trick_voids,
    trick_winner_so_far,
    winner_of_trick,
)

BLUE, RED, BLACK, NO_TRUMP = 0, 1, 2, 3
SUIT, RANK = BOBS_HAT_DECK.suit_of.astype(np.int64), BOBS_HAT_DECK.rank_of.astype(np.int64)


def _trick(*cards: int) -> np.ndarray:
    return np.array([cards], dtype=np.int64)


def test_card_strength_ranks_trumps_then_the_suit_led_then_nothing():
    red3, red20, blue1, black20 = bh_card(RED, 3), bh_card(RED, 20), bh_card(BLUE, 1), bh_card(BLACK, 20)
    s = lambda c: card_strength(c, RED, BLUE, SUIT, RANK)  # noqa: E731  red led, blue trump
    assert s(blue1) > s(red20) > s(red3) > s(black20) == 0
    assert card_strength(blue1, RED, NO_TRUMP, SUIT, RANK) == 0  # no trump: an off-suit card never wins


def test_trick_winner_so_far_and_the_completed_trick_agree():
    # red led by seat 1; seat 3 ruffs with the blue 2 under blue trump; seat 0 has not played yet
    trick = _trick(-1, bh_card(RED, 9), bh_card(RED, 17), bh_card(BLUE, 2))
    best, seat = trick_winner_so_far(trick, 0, RED, BLUE, SUIT, RANK)
    assert seat == 3 and best == card_strength(bh_card(BLUE, 2), RED, BLUE, SUIT, RANK)
    assert trick_winner_so_far(trick, 0, RED, NO_TRUMP, SUIT, RANK)[1] == 2  # no trump: the red 17
    assert trick_winner_so_far(_trick(-1, -1, -1, -1), 0, -1, BLUE, SUIT, RANK) == (-1, -1)
    full = _trick(bh_card(BLUE, 20), bh_card(RED, 9), bh_card(RED, 17), bh_card(BLUE, 2))
    assert winner_of_trick(full, 0, 1, BLUE, SUIT, RANK) == 0  # the blue 20 is the highest trump
    assert winner_of_trick(full, 0, 1, NO_TRUMP, SUIT, RANK) == 2


def test_trick_voids_mark_the_seats_that_did_not_follow():
    # Oh Hell: hearts led by seat 2; seat 3 discards a club, seat 0 follows; seat 1 not yet
    trick = np.array([[oh_parse_card("2H"), -1, oh_parse_card("KH"), oh_parse_card("5C")]])
    void = trick_voids(trick, np.array([3]), OH_HELL_DECK)
    assert void.shape == (1, 4, 4)
    assert np.argwhere(void).tolist() == [[0, 3, 3]]  # seat 3 holds no heart
    assert not trick_voids(trick, np.array([-1]), OH_HELL_DECK).any()  # nothing led: nothing shown
    with pytest.raises(ValueError, match="one suit led per row"):
        trick_voids(trick, np.array([3, 3]), OH_HELL_DECK)


@pytest.mark.parametrize("deck", [BOBS_HAT_DECK, OH_HELL_DECK], ids=lambda d: d.name)
def test_count_unseen_counts_each_suit_and_the_higher_cards(deck):
    gen = np.random.default_rng(0)
    suit, rank = deck.suit_of.astype(np.int64), deck.rank_of.astype(np.int64)
    R = int(rank.max()) + 1
    above = np.empty((deck.n_suits, R + 1), dtype=np.int64)
    unseen_s, higher = np.empty(deck.n_suits), np.empty(deck.n_cards)
    for _ in range(20):
        seen = gen.random(deck.n_cards) < 0.4
        n = count_unseen(seen, suit, rank, above, unseen_s, higher)
        assert n == (~seen).sum()
        for s in range(deck.n_suits):
            assert unseen_s[s] == np.sum(~seen & (suit == s))
        for c in range(deck.n_cards):
            assert higher[c] == np.sum(~seen & (suit == suit[c]) & (rank > rank[c]))


def test_count_unseen_scripted():
    seen = np.ones(60, dtype=bool)
    for c in (bh_card(RED, 2), bh_card(RED, 15), bh_card(RED, 20), bh_card(BLACK, 1)):
        seen[c] = False
    above = np.empty((3, 21), dtype=np.int64)
    unseen_s, higher = np.empty(3), np.empty(60)
    assert count_unseen(seen, SUIT, RANK, above, unseen_s, higher) == 4
    assert unseen_s.tolist() == [0, 3, 1]
    assert higher[bh_card(RED, 14)] == 2 and higher[bh_card(RED, 15)] == 1 and higher[bh_card(RED, 20)] == 0
    assert higher[bh_card(BLUE, 1)] == 0 and higher[bh_card(BLACK, 1)] == 0


def test_bobs_hat_hand_k_deals_4_plus_k():
    assert bh_hand_size(0) == 5 and bh_hand_size(9) == 14
    assert bh_hand_size(np.arange(3)).tolist() == [5, 6, 7]
    assert bh.hand_size_of(2) == 7  # the compiled rule
    assert [BobsHatConfig(players=p).max_hand_size for p in (3, 4, 5)] == [16, 14, 12]
    state = bh.init(BobsHatConfig(players=3), np.array([1, 2], dtype=np.uint64))
    assert state.hands.sum(axis=2).tolist() == [[5, 5, 5], [5, 5, 5]]

"""Rules tests for the batched Oh Hell core (docs/rules.md).

Scripted games use explicit deals (``auto_deal=False``) and the card notation
of docs/rules.md (``AS``, ``TH``, ``2C``); every expected number is
written out. Random-play tests check invariants over a grid of configs.
"""

from __future__ import annotations

from dataclasses import fields

import numpy as np
import pytest

from bobshat_env.core import bobs_hat, rng
from bobshat_env.core import oh_hell as oh
from bobshat_env.core.cards import OH_N_CARDS, oh_parse_card
from bobshat_env.core.config import BobsHatConfig, ConfigError, OhHellConfig

SCORINGS = ("positive", "neutral", "negative")
STYLES = ("long", "long_inverted", "short_high_low", "short_high", "short_low")


# --------------------------------------------------------------------------
# Helpers
def row(text: str) -> np.ndarray:
    """(52,) bool: the cards of a whitespace-separated list like ``"AS TH"``."""
    out = np.zeros(OH_N_CARDS, dtype=bool)
    out[[oh_parse_card(t) for t in text.split()]] = True
    return out


def names(ids) -> list[str]:
    return sorted(oh.action_str(int(a)) for a in ids)


def snapshot(state: oh.State) -> dict[str, np.ndarray]:
    return {f.name: getattr(state, f.name).copy() for f in fields(state)}


def assert_unchanged(state: oh.State, before: dict[str, np.ndarray]) -> None:
    for name, arr in before.items():
        now = getattr(state, name)
        assert now.dtype == arr.dtype, name
        assert np.array_equal(now, arr), f"field {name} changed"


def random_actions(state: oh.State, mask: np.ndarray, t: int) -> np.ndarray:
    """A legal action per game that depends only on the game's key and step
    number ``t``, so a game plays the same whatever batch it is in."""
    n = mask.sum(axis=1)
    k = rng.uniform_ints(rng.combine(state.key, 1000 + t), np.maximum(n, 1))
    rank = np.cumsum(mask, axis=1) - 1
    return np.argmax(mask & (rank == k[:, None]), axis=1)


class Game:
    """One scripted game (B = 1) stepped with ``auto_deal=False``."""

    def __init__(self, cfg: OhHellConfig, key: int = 0):
        self.cfg = cfg
        self.state = oh.init(cfg, np.array([key], dtype=np.uint64), auto_deal=False)
        self.results: list[oh.StepResult] = []

    @property
    def cur(self) -> int:
        return int(self.state.cur[0])

    def legal(self) -> list[int]:
        return np.nonzero(oh.legal_action_mask(self.cfg, self.state)[0])[0].tolist()

    def legal_bids(self) -> list[int]:
        return [a - oh.BID_BASE for a in self.legal() if a >= oh.BID_BASE]

    def legal_cards(self) -> list[str]:
        return names(a for a in self.legal() if a < oh.N_CARDS)

    def deal(self, trump_card: str, hands: list[str]) -> None:
        rows = np.stack([row(h) for h in hands])[None]
        oh.deal(self.cfg, self.state, np.array([0]), np.array([oh_parse_card(trump_card)]), rows)

    def act(self, action: int) -> oh.StepResult:
        res = oh.step(self.cfg, self.state, np.array([action]), auto_deal=False)
        self.results.append(res)
        return res

    def bid(self, *bids: int) -> None:
        for b in bids:
            self.act(oh.BID_BASE + b)

    def trick(self, text: str) -> int:
        """Play one whole trick (cards in turn order from the leader); its winner."""
        out = [self.act(oh_parse_card(c)) for c in text.split()]
        assert len(out) == self.cfg.players
        assert out[-1].trick_done[0] and not any(r.trick_done[0] for r in out[:-1])
        return int(out[-1].trick_winner[0])


# --------------------------------------------------------------------------
# Configuration and hand sizes
HAND_SIZES = {
    10: {
        "long": [10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
        "long_inverted": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1],
        "short_high_low": [6, 5, 4, 3, 2, 1, 2, 3, 4, 5, 6],
        "short_high": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
        "short_low": [10, 9, 8, 7, 6, 5, 4, 3, 2, 1],
    },
    8: {
        "long": [8, 7, 6, 5, 4, 3, 2, 1, 2, 3, 4, 5, 6, 7, 8],
        "long_inverted": [1, 2, 3, 4, 5, 6, 7, 8, 7, 6, 5, 4, 3, 2, 1],
        "short_high_low": [6, 5, 4, 3, 2, 1, 2, 3, 4, 5, 6],
        "short_high": [1, 2, 3, 4, 5, 6, 7, 8],
        "short_low": [8, 7, 6, 5, 4, 3, 2, 1],
    },
    7: {
        "long": [7, 6, 5, 4, 3, 2, 1, 2, 3, 4, 5, 6, 7],
        "long_inverted": [1, 2, 3, 4, 5, 6, 7, 6, 5, 4, 3, 2, 1],
        "short_high_low": [6, 5, 4, 3, 2, 1, 2, 3, 4, 5, 6],
        "short_high": [1, 2, 3, 4, 5, 6, 7],
        "short_low": [7, 6, 5, 4, 3, 2, 1],
    },
}
START = {3: 10, 4: 10, 5: 10, 6: 8, 7: 7}


@pytest.mark.parametrize("players", [3, 4, 5, 6, 7])
@pytest.mark.parametrize("style", STYLES)
def test_hand_sizes_by_deal_style(players, style):
    cfg = OhHellConfig(players=players, deal_style=style)
    expected = HAND_SIZES[START[players]][style]
    assert list(cfg.hand_sizes) == expected
    assert cfg.hands == len(expected)
    assert oh.hand_size_for(cfg, np.arange(cfg.hands)).tolist() == expected


@pytest.mark.parametrize("style", STYLES)
def test_game_deals_the_hand_sizes_in_order(style):
    cfg = OhHellConfig(players=6, deal_style=style, first_dealer=4)
    state = oh.init(cfg, rng.game_keys(5, np.arange(2)))
    sizes, dealers = [int(state.hand_size[0])], [int(state.dealer[0])]
    t = 0
    while state.phase[0] != oh.DONE:
        res = oh.step(cfg, state, random_actions(state, oh.legal_action_mask(cfg, state), t))
        t += 1
        if res.new_hand[0]:
            assert state.hands[0].sum(axis=1).tolist() == [state.hand_size[0]] * 6
            sizes.append(int(state.hand_size[0]))
            dealers.append(int(state.dealer[0]))
    assert sizes == HAND_SIZES[8][style]
    assert dealers == [(4 + k) % 6 for k in range(len(sizes))]


@pytest.mark.parametrize(
    "options, words",
    [
        ({"players": 2}, ["players", "3 to 7", "2"]),
        ({"players": 8}, ["players", "3 to 7", "8"]),
        ({"deal_style": "medium"}, ["deal_style", "medium", "short_high_low"]),
        ({"scoring": "bogus"}, ["scoring", "bogus", "negative"]),
        ({"first_dealer": 4}, ["first_dealer", "4"]),
        ({"players": 3.0}, ["players", "integer"]),
    ],
)
def test_bad_configs_raise_config_error_naming_the_problem(options, words):
    with pytest.raises(ConfigError) as err:
        OhHellConfig(**options)
    for w in words:
        assert w in str(err.value)


# --------------------------------------------------------------------------
# Bidding: order and the hook rule
def test_hook_rule_forbids_the_dealers_making_bid():
    cfg = OhHellConfig(players=4)  # first hand: 10 cards, dealer 0, seat 1 bids first
    g = Game(cfg)
    g.deal("2C", ["AS KS QS JS TS 9S 8S 7S 6S 5S", "4S 3S AH KH QH JH TH 9H 8H 7H",
                  "2S AD KD QD JD TD 9D 8D 7D 6D", "AC KC QC JC TC 9C 8C 7C 6C 5C"])  # fmt: skip
    assert g.cur == 1
    assert g.legal_bids() == list(range(11))
    assert g.legal() == list(range(52, 63))
    g.bid(3)
    assert g.cur == 2 and g.legal_bids() == list(range(11))
    g.bid(2)
    assert g.cur == 3 and g.legal_bids() == list(range(11))
    g.bid(4)
    assert g.cur == 0
    assert oh.forbidden_bid(g.state).tolist() == [1]
    assert g.legal_bids() == [0, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    before = snapshot(g.state)
    with pytest.raises(oh.IllegalActionError, match=r"game 0 for seat 0: hook rule.*bid 1.*add up to 10"):
        g.bid(1)
    assert_unchanged(g.state, before)
    g.bid(2)
    assert g.state.bids[0].tolist() == [2, 3, 2, 4]
    assert g.state.phase[0] == oh.PLAY and g.cur == 1 and int(g.state.leader[0]) == 1


def test_hook_rule_forbids_zero_when_the_others_bid_all_tricks():
    cfg = OhHellConfig(players=3, deal_style="short_high", first_dealer=1)  # 1 card, dealer 1
    g = Game(cfg)
    g.deal("9H", ["AS", "2C", "KD"])
    assert g.cur == 2 and g.legal_bids() == [0, 1]
    g.bid(1)
    assert g.cur == 0 and g.legal_bids() == [0, 1]
    g.bid(0)
    assert g.cur == 1 and g.legal_bids() == [1]


def test_hook_rule_forbids_nothing_when_the_others_overbid():
    cfg = OhHellConfig(players=4)
    g = Game(cfg)
    g.deal("2C", ["AS KS QS JS TS 9S 8S 7S 6S 5S", "4S 3S AH KH QH JH TH 9H 8H 7H",
                  "2S AD KD QD JD TD 9D 8D 7D 6D", "AC KC QC JC TC 9C 8C 7C 6C 5C"])  # fmt: skip
    g.bid(5, 4, 3)  # 12 > 10 tricks: no dealer bid can make the total 10
    assert oh.forbidden_bid(g.state).tolist() == [-1]
    assert g.legal_bids() == list(range(11))
    g.bid(10)
    assert g.state.bids[0].tolist() == [10, 5, 4, 3]


def test_bids_above_the_hand_size_are_illegal():
    cfg = OhHellConfig(players=5, deal_style="short_high_low")  # 6 cards
    g = Game(cfg)
    hands = oh.random_deal(cfg, g.state.key, g.state.hand_no)
    oh.deal(cfg, g.state, np.array([0]), *hands)
    assert g.legal_bids() == [0, 1, 2, 3, 4, 5, 6]
    before = snapshot(g.state)
    with pytest.raises(oh.IllegalActionError, match="seat 1: a bid is 0 to the hand size 6"):
        g.bid(7)
    assert_unchanged(g.state, before)


# --------------------------------------------------------------------------
# Play: lead, follow suit, trump, winner leads
def test_follow_suit_trump_wins_and_winner_leads():
    cfg = OhHellConfig(players=4)  # 10 cards, dealer 0
    g = Game(cfg)
    g.deal("2H", ["AC KC QC JC TC 9C 8C 7C 6C 5C", "AS KS QS JS TS 9S 8S 7S 6S 5S",
                  "4S 3S AH KH QH JH TH 9H 8H 7H", "2S AD KD QD JD TD 9D 8D 7D 6D"])  # fmt: skip
    assert int(g.state.trump[0]) == 3  # hearts (OpenSpiel suit order C D S H)
    g.bid(0, 0, 0, 0)
    assert g.cur == 1  # the dealer's left leads
    assert g.legal_cards() == names(row("AS KS QS JS TS 9S 8S 7S 6S 5S").nonzero()[0])
    g.act(oh_parse_card("AS"))
    assert g.legal_cards() == ["3S", "4S"]  # must follow spades
    g.act(oh_parse_card("4S"))
    assert g.legal_cards() == ["2S"]
    g.act(oh_parse_card("2S"))
    # void in spades: any card
    assert g.legal_cards() == names(row("AC KC QC JC TC 9C 8C 7C 6C 5C").nonzero()[0])
    res = g.act(oh_parse_card("5C"))
    assert res.trick_done[0] and int(res.trick_winner[0]) == 1 and int(res.trick_leader[0]) == 1
    assert res.trick_cards[0].tolist() == [oh_parse_card(c) for c in ("5C", "AS", "4S", "2S")]
    assert g.cur == 1
    # an off-suit ace does not beat the led king
    assert g.trick("KS 3S 6D AC") == 1
    # seat 3 is now void in spades and may play a diamond; seat 2 trumps with its lowest heart
    g.act(oh_parse_card("QS"))
    assert g.legal_cards() == names(row("AH KH QH JH TH 9H 8H 7H").nonzero()[0])
    g.act(oh_parse_card("7H"))
    assert g.legal_cards() == names(row("AD KD QD JD TD 9D 8D 7D").nonzero()[0])
    g.act(oh_parse_card("AD"))
    res = g.act(oh_parse_card("KC"))
    assert int(res.trick_winner[0]) == 2  # the 7 of trumps beats the queen led
    assert g.cur == 2 and int(g.state.leader[0]) == 2
    # a trump lead is won by the highest trump
    assert g.trick("8H KD QC JS") == 2
    assert g.state.taken[0].tolist() == [0, 2, 2, 0]
    assert g.state.tricks_done[0] == 4
    assert g.state.played[0].sum() == 16


def test_overtrump_wins():
    cfg = OhHellConfig(players=3, deal_style="short_high", first_dealer=2)
    g = Game(cfg)
    g.deal("TH", ["AD", "2H", "3H"])  # hearts trump, dealer 2, seat 0 leads
    g.bid(0, 1)
    assert g.legal_bids() == [1]
    g.bid(1)
    assert g.cur == 0
    assert g.trick("AD 2H 3H") == 2
    assert g.state.last_scores[0].tolist() == [10, 0, 11]


@pytest.mark.parametrize("dealer", [0, 1, 2, 3, 4])
def test_bidding_and_lead_start_left_of_the_dealer(dealer):
    cfg = OhHellConfig(players=5, deal_style="short_high", first_dealer=dealer)
    g = Game(cfg)
    left = (dealer + 1) % 5
    assert int(g.state.dealer[0]) == dealer
    g.deal("2C", ["AS", "KS", "QS", "JS", "TS"])
    order = []
    for _ in range(5):
        order.append(g.cur)
        g.bid(0 if g.legal_bids()[0] == 0 else 1)
    assert order == [(left + i) % 5 for i in range(5)]
    assert order[-1] == dealer
    assert g.cur == left and int(g.state.leader[0]) == left
    res = [g.act(g.legal()[0]) for _ in range(5)]
    assert int(res[-1].trick_leader[0]) == left
    assert int(res[-1].trick_winner[0]) == 0  # AS, at seat 0, wins


# --------------------------------------------------------------------------
# A scripted game: scores, totals and dealer rotation
# Per scoring, the three hands' scores of the script below, written out by hand
# from docs/rules.md (Oh Hell). (Bids, tricks taken) per seat: hand 1 ([0, 1, 1], [0, 1, 0]),
# hand 2 ([2, 0, 1], [1, 0, 1]), hand 3 ([2, 0, 0], [0, 0, 3]): bids made with
# and without tricks, bids missed by 1, 2 and 3, under and over.
SCRIPTED_HAND_SCORES = {
    # tricks + 10 if made
    "positive": ([10, 11, 0], [1, 10, 11], [0, 10, 3]),
    # 10 + tricks if made, else 0
    "neutral": ([10, 11, 0], [0, 10, 11], [0, 10, 0]),
    # 10 if made, else -10 per trick off
    "negative": ([10, 10, -10], [-10, 10, 10], [-20, 10, -30]),
}


@pytest.mark.parametrize("scoring", SCORINGS)
def test_scripted_hands_scores_and_dealer_rotation(scoring):
    cfg = OhHellConfig(players=3, deal_style="short_high", first_dealer=2, scoring=scoring)  # 1, 2, ..., 10 cards
    expected = SCRIPTED_HAND_SCORES[scoring]
    totals = np.cumsum(expected, axis=0).tolist()
    g = Game(cfg)
    # Hand 1: dealer 2, spades trump; the 2 of trumps beats the ace led.
    assert int(g.state.dealer[0]) == 2 and int(g.state.hand_size[0]) == 1
    g.deal("5S", ["AH", "2S", "KH"])
    g.bid(0, 1)
    assert g.legal_bids() == [1]  # 0 would make the bids add up to 1
    g.bid(1)
    assert g.trick("AH 2S KH") == 1
    assert g.results[-1].hand_done[0] and not g.results[-1].game_done[0]
    # bids 0, 1, 1; tricks 0, 1, 0: seat 0 made 0, seat 1 made 1, seat 2 missed by 1
    assert g.results[-1].rewards[0].tolist() == expected[0]
    assert g.state.scores[0].tolist() == totals[0]
    assert g.state.phase[0] == oh.DEAL
    # Hand 2: dealer 0, 2 cards, hearts trump, seat 1 leads.
    assert int(g.state.dealer[0]) == 0 and int(g.state.hand_size[0]) == 2 and g.cur == 1
    g.deal("7H", ["AC 3D", "KC 4D", "2C QH"])
    g.bid(0, 1)
    assert g.legal_bids() == [0, 2]
    g.bid(2)
    assert g.state.bids[0].tolist() == [2, 0, 1]
    assert g.trick("KC 2C AC") == 0
    assert g.trick("3D 4D QH") == 2
    # bids 2, 0, 1; tricks 1, 0, 1: seat 0 missed by 1, seat 1 made 0, seat 2 made 1
    assert g.results[-1].rewards[0].tolist() == expected[1]
    assert g.state.last_scores[0].tolist() == expected[1]
    assert g.state.scores[0].tolist() == totals[1]
    # Hand 3: dealer 1, 3 cards, hearts trump and nobody holds one; seat 2 leads and takes all three.
    assert int(g.state.dealer[0]) == 1 and int(g.state.hand_size[0]) == 3 and g.cur == 2
    g.deal("2H", ["3C 4C 5C", "3D 4D 5D", "AS KS QS"])
    g.bid(0, 2)
    assert g.legal_bids() == [0, 2, 3]  # the dealer may not make it 3
    g.bid(0)
    assert g.state.bids[0].tolist() == [2, 0, 0]
    for text in ("AS 3C 3D", "KS 4C 4D", "QS 5C 5D"):
        assert g.trick(text) == 2
    # bids 2, 0, 0; tricks 0, 0, 3: seat 0 missed by 2, seat 1 made 0, seat 2 missed by 3
    assert g.state.taken[0].tolist() == [0, 0, 3]
    assert g.results[-1].rewards[0].tolist() == expected[2]
    assert g.state.last_scores[0].tolist() == expected[2]
    assert g.state.scores[0].tolist() == totals[2]
    # Hand 4: dealer 2 again.
    assert int(g.state.dealer[0]) == 2 and int(g.state.hand_size[0]) == 4 and g.cur == 0


def test_game_ends_after_the_last_hand():
    cfg = OhHellConfig(players=7, deal_style="short_low", first_dealer=6)
    state = oh.init(cfg, rng.game_keys(3, np.arange(1)))
    t, hands_done = 0, 0
    while state.phase[0] != oh.DONE:
        res = oh.step(cfg, state, random_actions(state, oh.legal_action_mask(cfg, state), t))
        t += 1
        hands_done += int(res.hand_done[0])
    assert res.game_done[0] and hands_done == 7
    assert t == sum(range(1, 8)) * 7 + 7 * 7  # every card and every bid
    assert not oh.legal_action_mask(cfg, state).any()
    before = snapshot(state)
    with pytest.raises(oh.IllegalActionError, match="game 0 for seat .*: the game is over"):
        oh.step(cfg, state, np.array([oh.BID_BASE]))
    assert_unchanged(state, before)
    # an inactive finished game rides along untouched
    res = oh.step(cfg, state, np.array([0]), active=np.array([False]))
    assert not res.hand_done.any() and res.rewards.tolist() == [[0] * 7]
    assert_unchanged(state, before)


@pytest.mark.parametrize(
    "scoring, expected",
    [
        ("positive", [12, 1, 13, 4, 10, 0]),
        ("neutral", [12, 0, 13, 0, 10, 0]),
        ("negative", [10, -10, 10, -30, 10, -70]),
    ],
)
def test_scoring_modes(scoring, expected):
    cfg = OhHellConfig(players=6, scoring=scoring)
    bids = np.array([[2, 0, 3, 1, 0, 7]])
    taken = np.array([[2, 1, 3, 4, 0, 0]])
    assert oh.score_hand(cfg, bids, taken).tolist() == [expected]


@pytest.mark.parametrize(
    "scoring, hand_scores", [("positive", [1, 10, 10]), ("neutral", [0, 10, 10]), ("negative", [-10, 10, 10])]
)
def test_scoring_mode_in_play(scoring, hand_scores):
    cfg = OhHellConfig(players=3, deal_style="short_high", scoring=scoring, first_dealer=2)
    g = Game(cfg)
    g.deal("2C", ["AD", "KD", "QD"])
    g.bid(0, 0)
    assert g.legal_bids() == [0]
    g.bid(0)
    assert g.trick("AD KD QD") == 0
    assert g.state.last_scores[0].tolist() == hand_scores
    assert g.state.scores[0].tolist() == hand_scores
    assert g.results[-1].rewards[0].tolist() == hand_scores


# --------------------------------------------------------------------------
# Illegal actions and bad deals
def _two_games_in_play():
    cfg = OhHellConfig(players=3, deal_style="short_high_low")  # 6 cards, dealer 0
    state = oh.init(cfg, np.array([1, 2], dtype=np.uint64), auto_deal=False)
    hands = np.stack(
        [
            np.stack([row("AS KS 2H 3H 4H 5H"), row("QS 2C 3C 4C 5C 6C"), row("AD KD QD JD TD 9D")]),
            np.stack([row("AC KC QC JC TC 9C"), row("AH KH QH JH TH 9H"), row("2S 3S 4S 5S 6S 8H")]),
        ]
    )
    oh.deal(cfg, state, np.array([0, 1]), np.array([oh_parse_card("8S"), oh_parse_card("8D")]), hands)
    for b in (1, 2, 2):
        oh.step(cfg, state, np.array([oh.BID_BASE + b] * 2))
    oh.step(cfg, state, np.array([oh_parse_card("QS"), oh_parse_card("AH")]))  # seat 1 leads
    return cfg, state  # game 0: seat 2 to play after QS; game 1: seat 2 after AH


@pytest.mark.parametrize(
    "action, pattern",
    [
        (oh_parse_card("AS"), r"illegal action \d+ \(AS\) in game 1 for seat 2: seat 2 does not hold AS"),
        (oh_parse_card("2S"), r"\(2S\) in game 1 for seat 2: seat 2 must follow the suit led \(H\)"),
        (oh.BID_BASE + 1, r"\(bid:1\) in game 1 for seat 2: it is the play phase"),
        (63, r"action 63 \(<unknown action 63>\) in game 1"),
        (-1, r"action -1 .* in game 1"),
    ],
)
def test_illegal_actions_raise_and_change_nothing(action, pattern):
    cfg, state = _two_games_in_play()
    assert names(np.nonzero(oh.legal_action_mask(cfg, state)[1])[0]) == ["8H"]
    before = snapshot(state)
    with pytest.raises(oh.IllegalActionError, match=pattern):
        oh.step(cfg, state, np.array([oh_parse_card("AD"), action]))
    assert_unchanged(state, before)
    # the same action is fine when game 1 is inactive; game 0 still moves
    oh.step(cfg, state, np.array([oh_parse_card("AD"), action]), active=np.array([True, False]))
    assert state.trick[0].tolist() == [-1, oh_parse_card("QS"), oh_parse_card("AD")]
    assert state.trick[1].tolist() == [-1, oh_parse_card("AH"), -1]


def test_illegal_action_error_is_shared_with_bobs_hat():
    assert oh.IllegalActionError is bobs_hat.IllegalActionError
    assert issubclass(oh.IllegalActionError, ValueError)


def test_card_in_bid_phase_and_action_before_the_deal():
    cfg = OhHellConfig(players=4)
    state = oh.init(cfg, np.array([9], dtype=np.uint64), auto_deal=False)
    before = snapshot(state)
    with pytest.raises(oh.IllegalActionError, match="game 0 for seat 1: the hand has not been dealt"):
        oh.step(cfg, state, np.array([oh.BID_BASE]))
    assert_unchanged(state, before)
    oh.deal(cfg, state, np.array([0]), *oh.random_deal(cfg, state.key, state.hand_no))
    card = int(np.nonzero(state.hands[0, 1])[0][0])
    before = snapshot(state)
    with pytest.raises(oh.IllegalActionError, match="seat 1: it is the bid phase"):
        oh.step(cfg, state, np.array([card]))
    assert_unchanged(state, before)
    with pytest.raises(ValueError, match="expected 1 actions"):
        oh.step(cfg, state, np.array([52, 52]))


def test_bad_deals_are_rejected():
    cfg = OhHellConfig(players=3, deal_style="short_high")  # 1 card
    state = oh.init(cfg, np.array([0], dtype=np.uint64), auto_deal=False)
    g0 = np.array([0])

    def deal(trump: str, hands: list[str]) -> None:
        oh.deal(cfg, state, g0, np.array([oh_parse_card(trump)]), np.stack([row(h) for h in hands])[None])

    with pytest.raises(ValueError, match="seat 1 was dealt 2 cards; hand 1 deals 1"):
        deal("2C", ["AS", "KS QS", "JS"])
    with pytest.raises(ValueError, match="card AS was dealt to two seats"):
        deal("2C", ["AS", "AS", "JS"])
    with pytest.raises(ValueError, match="trump card AS was also dealt"):
        deal("AS", ["AS", "KS", "JS"])
    with pytest.raises(ValueError, match="trump_card must be a card id"):
        oh.deal(cfg, state, g0, np.array([52]), np.stack([row(h) for h in ["AS", "KS", "JS"]])[None])
    with pytest.raises(ValueError, match="hands must have shape"):
        oh.deal(cfg, state, g0, np.array([0]), np.zeros((1, 4, 52), dtype=bool))
    assert state.phase[0] == oh.DEAL
    deal("2C", ["AS", "KS", "JS"])
    with pytest.raises(ValueError, match="game 0 is not"):
        deal("2C", ["AS", "KS", "JS"])


@pytest.mark.parametrize("module", [bobs_hat, oh])
def test_a_deal_of_several_games_refuses_one_in_play_and_changes_nothing(module):
    """deal() of two games, one waiting for its deal and one in play: refused, naming the game in play (the
    shared check of core/game.py), and neither game changes; a seat dealt a card short is refused too."""
    cfg = BobsHatConfig(players=3) if module is bobs_hat else OhHellConfig(players=3)
    state = module.init(cfg, np.array([5, 6], dtype=np.uint64), auto_deal=False)
    trump, hands = module.random_deal(cfg, state.key, state.hand_no, module.deal_attempt(state))
    module.deal(cfg, state, np.array([1]), trump[1:], hands[1:])
    before = {f.name: getattr(state, f.name).copy() for f in fields(state)}
    with pytest.raises(ValueError, match="game 1 is not"):
        module.deal(cfg, state, np.array([0, 1]), trump, hands)
    assert all(np.array_equal(getattr(state, name), value) for name, value in before.items())
    assert state.phase[0] == module.DEAL and state.phase[1] != module.DEAL
    short = hands[:1].copy()
    short[0, 2, np.flatnonzero(short[0, 2])[0]] = False  # seat 2 one card short
    with pytest.raises(ValueError, match="game 0: seat 2 was dealt"):
        module.deal(cfg, state, np.array([0]), trump[:1], short)
    assert state.phase[0] == module.DEAL


def test_action_str():
    assert [oh.action_str(a) for a in (0, 3, 40, 51, 52, 57, 62, 63)] == [
        "2C", "2H", "QC", "AH", "bid:0", "bid:5", "bid:10", "<unknown action 63>",
    ]  # fmt: skip
    assert (oh.N_ACTIONS, oh.BID_BASE, oh.MAX_BID) == (63, 52, 10)


# --------------------------------------------------------------------------
# Chance
def test_random_deal_is_a_pure_function_of_key_and_hand():
    cfg = OhHellConfig(players=5)
    keys = rng.game_keys(11, np.arange(200))
    trump, hands = oh.random_deal(cfg, keys, np.zeros(200, dtype=np.int8))
    assert hands.sum(axis=2).tolist() == [[10] * 5] * 200
    assert hands.sum(axis=1).max() == 1
    assert not hands.any(axis=1)[np.arange(200), trump].any()
    t2, h2 = oh.random_deal(cfg, keys[7:9], np.zeros(2, dtype=np.int8))
    assert np.array_equal(t2, trump[7:9]) and np.array_equal(h2, hands[7:9])
    # every hand of a game is dealt afresh: the last hand (18) deals 10 cards too, and differently
    assert cfg.hand_sizes[0] == cfg.hand_sizes[18] == 10
    t3, h3 = oh.random_deal(cfg, keys, np.full(200, 18, dtype=np.int8))
    assert h3.sum(axis=2).tolist() == [[10] * 5] * 200
    assert not (h3 == hands).all(axis=(1, 2)).any()  # no game gets the same hands twice
    assert (t3 != trump).mean() > 0.9  # the same trump card about 1 time in 52
    # every suit comes up as trump, every card in every seat
    assert sorted(set((trump % 4).tolist())) == [0, 1, 2, 3]
    assert hands.any(axis=0).all()


def test_random_first_dealer_drawn_from_the_key():
    cfg = OhHellConfig(players=7, first_dealer=-1)
    keys = rng.game_keys(4, np.arange(700))
    state = oh.init(cfg, keys)
    counts = np.bincount(state.dealer, minlength=7)
    assert counts.min() > 60  # about 100 each
    assert np.array_equal(state.first_dealer, state.dealer)
    assert np.array_equal(state.cur, (state.dealer + 1) % 7)
    again = oh.init(cfg, keys[::-1])
    assert np.array_equal(again.dealer, state.dealer[::-1])
    fixed = oh.init(OhHellConfig(players=7, first_dealer=3), keys)
    assert (fixed.dealer == 3).all()


def test_same_seed_same_games_at_any_batch_size():
    cfg = OhHellConfig(players=4, deal_style="short_high_low", scoring="negative", first_dealer=-1)
    big = oh.init(cfg, rng.game_keys(2024, np.arange(1000)))
    trajectories = {i: [] for i in (0, 1, 517, 999)}
    t = 0
    while (big.phase != oh.DONE).any():
        mask = oh.legal_action_mask(cfg, big)
        act = random_actions(big, mask, t)
        for i in trajectories:
            trajectories[i].append(int(act[i]))
        oh.step(cfg, big, act, active=big.phase != oh.DONE)
        t += 1
    assert len(set(map(tuple, big.scores.tolist()))) > 900  # the games differ
    for i, actions in trajectories.items():
        small = oh.init(cfg, rng.game_keys(2024, np.array([i])))
        played = []
        for t in range(len(actions)):
            if small.phase[0] == oh.DONE:
                break
            act = random_actions(small, oh.legal_action_mask(cfg, small), t)
            played.append(int(act[0]))
            oh.step(cfg, small, act)
        assert played == actions[: len(played)]
        for f in fields(small):
            assert np.array_equal(getattr(small, f.name)[0], getattr(big, f.name)[i]), f.name


# --------------------------------------------------------------------------
# Random play invariants over a grid of configurations
# Plain restatements of docs/rules.md (Oh Hell), independent of the core's tables and kernels:
# card id = rank * 4 + suit (README), suit of c = c % 4, rank c // 4.
SUIT = np.arange(OH_N_CARDS) % 4


def plain_trick_winner(cards: list[int], leader: int, trump: int) -> int:
    """The seat whose card wins: the highest trump, else the highest card of the suit led."""
    led = cards[leader] % 4
    best = leader
    for seat, c in enumerate(cards):
        b = cards[best]
        if (c % 4 == trump and (b % 4 != trump or c // 4 > b // 4)) or (
            c % 4 == led and b % 4 != trump and b % 4 == led and c // 4 > b // 4
        ):
            best = seat
    return best


def plain_hand_score(scoring: str, bid: int, tricks: int) -> int:
    made = tricks == bid
    if scoring == "positive":
        return tricks + (10 if made else 0)
    if scoring == "neutral":
        return 10 + tricks if made else 0
    return 10 if made else -10 * abs(tricks - bid)


def test_plain_referee_helpers():
    # 2C led, 3C and AD follow-less, 2H trumps it (hearts trump); no trump: the ace of the suit led
    c = oh_parse_card
    assert plain_trick_winner([c("2C"), c("3C"), c("AD"), c("2H")], 0, 3) == 3
    assert plain_trick_winner([c("2C"), c("3C"), c("AD"), c("2H")], 0, 1) == 2
    assert plain_trick_winner([c("2C"), c("3C"), c("AD"), c("2H")], 0, 2) == 1
    assert plain_trick_winner([c("KS"), c("AS"), c("2S")], 2, 0) == 1
    assert [plain_hand_score(m, 2, 3) for m in SCORINGS] == [3, 0, -10]
    assert [plain_hand_score(m, 2, 2) for m in SCORINGS] == [12, 12, 10]


@pytest.mark.parametrize("players", [3, 4, 5, 6, 7])
@pytest.mark.parametrize("style", STYLES)
def test_random_play_invariants(players, style):
    scoring = SCORINGS[(players + STYLES.index(style)) % 3]
    cfg = OhHellConfig(players=players, deal_style=style, scoring=scoring, first_dealer=-1)
    B, P = 24, players
    state = oh.init(cfg, rng.game_keys(players * 10 + STYLES.index(style), np.arange(B)))
    dealt = state.hands.any(axis=1)
    seen = np.zeros((B, OH_N_CARDS), dtype=np.int64)
    totals = np.zeros((B, P), dtype=np.int64)
    hands_done = np.zeros(B, dtype=np.int64)
    bids = np.full((B, P), -1, dtype=np.int64)  # as the actions bid them
    won = np.zeros((B, P), dtype=np.int64)  # tricks by plain_trick_winner
    t = 0
    while (state.phase != oh.DONE).any():
        running = state.phase != oh.DONE
        assert (state.phase[running] != oh.DEAL).all()
        mask = oh.legal_action_mask(cfg, state)
        assert mask[running].any(axis=1).all()
        assert not mask[~running].any()
        # the mask is bids in the bid phase, held cards in the play phase
        bidding = state.phase == oh.BID
        assert not mask[bidding, : oh.N_CARDS].any() and not mask[~bidding, oh.BID_BASE :].any()
        held = state.hands[np.arange(B), state.cur]
        assert not (mask[:, : oh.N_CARDS] & ~held).any()
        # follow suit: the cards of the suit led if the seat holds any, else the whole hand
        for g in np.nonzero(state.phase == oh.PLAY)[0]:
            led_card = int(state.trick[g, state.leader[g]])
            mine = held[g]
            if led_card >= 0 and (mine & (SUIT == led_card % 4)).any():
                mine = mine & (SUIT == led_card % 4)
            assert np.array_equal(mask[g, : oh.N_CARDS], mine), (g, led_card)
        act = random_actions(state, mask, t)
        cur, trump = state.cur.astype(np.int64), state.trump.copy()
        for g in np.nonzero(running & bidding)[0]:
            bids[g, cur[g]] = act[g] - oh.BID_BASE
        res = oh.step(cfg, state, act, active=running, auto_deal=False)
        t += 1
        tc = res.trick_cards[res.trick_done].astype(np.int64)
        np.add.at(seen, (np.repeat(np.nonzero(res.trick_done)[0], P), tc.reshape(-1)), 1)
        for g in np.nonzero(res.trick_done)[0]:
            w = plain_trick_winner(res.trick_cards[g].tolist(), int(res.trick_leader[g]), int(trump[g]))
            assert int(res.trick_winner[g]) == w
            won[g, w] += 1
            if not res.hand_done[g]:
                assert int(state.leader[g]) == w == int(state.cur[g])  # the winner leads next
        totals += res.rewards
        assert not res.rewards[~res.hand_done].any()  # points come with the end of a hand
        h = np.nonzero(res.hand_done)[0]
        if h.size:
            # every dealt card played exactly once, no other card; hands empty
            assert np.array_equal(seen[h], dealt[h].astype(np.int64))
            assert not state.hands[h].any()
            assert (won[h].sum(axis=1) == oh.hand_size_for(cfg, hands_done[h])).all()
            assert np.array_equal(state.taken[h], won[h])
            assert np.array_equal(state.tricks_done[h], won[h].sum(axis=1))
            assert np.array_equal(state.bids[h], bids[h])
            expected = [[plain_hand_score(scoring, bids[g, p], won[g, p]) for p in range(P)] for g in h]
            assert res.rewards[h].tolist() == expected
            assert (bids[h] >= 0).all()
            assert (bids[h].sum(axis=1) != won[h].sum(axis=1)).all()  # hook rule
            hands_done[h] += 1
            bids[h], won[h] = -1, 0
        pending = np.nonzero(res.new_hand)[0]
        if pending.size:
            trump, hands = oh.random_deal(cfg, state.key[pending], state.hand_no[pending])
            oh.deal(cfg, state, pending, trump, hands)
            dealt[pending] = hands.any(axis=1)
            seen[pending] = 0
    assert (hands_done == cfg.hands).all()
    assert np.array_equal(totals, state.scores)
    assert np.array_equal(state.dealer, (state.first_dealer + cfg.hands - 1) % P)

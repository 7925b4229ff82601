"""Every rule of Where's Bob's Hat? (docs/rules.md), pinned with exact numbers.

Scripted hands use three players, seat 0 = Anna, 1 = Bob, 2 = Chris, as in
the rulebook's examples. Cards are written ``blue14``; a trick is written in
play order, starting with its leader.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from bh_script import Game, assert_unchanged, bid_action, card_action, hand_row, snapshot

from bobshat_env.config import BH_DEFAULT_HANDS, BobsHatConfig, ConfigError
from bobshat_env.core import bobs_hat as bh
from bobshat_env.core import rng

ANNA, BOB, CHRIS = 0, 1, 2
OPTIONS = ("double_fewest", "no_bid", "secret_bidding", "negative_scoring", "renege_mode")
DEFAULT_BIDS = list(range(63, 78))  # the 15 non-empty bids without double fewest


def cfg3(**kw) -> BobsHatConfig:
    return BobsHatConfig(players=3, **kw)


def score(cfg: BobsHatConfig, bids: list[str], taken: list[list[int]], hat=0, holder=-1, size=5) -> list[int]:
    """score_hand for one game, bids written like ``"blue+fewest"``."""
    codes = np.array([[bid_action(b) - bh.BID_BASE for b in bids]])
    out = bh.score_hand(cfg, codes, np.array([taken]), np.array([hat]), np.array([holder]), np.array([size]))
    return out[0].tolist()


def expect_illegal(g: Game, action: int, match: str) -> None:
    """The action raises IllegalActionError and changes nothing at all."""
    before = snapshot(g.state)
    n = len(g.results)
    with pytest.raises(bh.IllegalActionError, match=match):
        g.act(action)
    assert_unchanged(g.state, before)
    assert len(g.results) == n


# --------------------------------------------------------------------------
# Scripted deals (hand 1: five cards each; no 14 or 15 unless said)

# Anna's example: Anna takes 4 blue, Bob 3, Chris 1. No trump.
ANNA_HANDS = [
    "blue20 black20 red1 blue5 blue6",
    "blue1 black1 red20 blue19 red3",
    "blue2 blue3 red2 blue4 red4",
]
ANNA_TRICKS = [
    "blue20 blue1 blue2",  # Anna leads, wins 3 blue
    "black20 black1 blue3",  # Anna leads, wins 1 blue + 2 black; Chris void in black
    "red1 red20 red2",  # Anna leads, Bob wins 3 red
    "blue19 blue4 blue5",  # Bob leads, wins 3 blue
    "red3 red4 blue6",  # Bob leads, Chris wins with red4: 2 red + 1 blue
]
ANNA_WINNERS = [ANNA, ANNA, BOB, BOB, CHRIS]
ANNA_TAKEN = [[4, 0, 2], [3, 3, 0], [1, 2, 0]]

# Bob's Hat moves: centre -> Bob (red14) -> Chris (blue15), then stays with Chris.
HAT_HANDS = [
    "black20 red1 blue2 red4 blue5",
    "black1 red14 blue1 red5 blue3",
    "black2 red2 blue15 red3 blue4",
]
HAT_TRICKS = [
    "black20 black1 black2",  # Anna leads and wins; no hat card
    "red1 red14 red2",  # Anna leads, Bob wins with red14 and takes the hat
    "blue1 blue15 blue2",  # Bob leads, Chris wins with blue15 and takes it from Bob
    "red3 red4 red5",  # Chris leads, Bob wins; no hat card: the hat stays with Chris
    "blue3 blue4 blue5",  # Bob leads, Anna wins; no hat card
]
HAT_WINNERS = [ANNA, BOB, CHRIS, BOB, ANNA]
HAT_HOLDERS = [-1, BOB, CHRIS, CHRIS, CHRIS]
HAT_TAKEN = [[3, 0, 3], [0, 6, 0], [3, 0, 0]]


# --------------------------------------------------------------------------
# The rulebook's worked examples (docs/rules.md), through score_hand
def test_example_anna_most_blue_score_hand():
    cfg = cfg3()
    # Anna 4 blue, Bob 3, Chris 1: Anna +9 (Bob most black 3 -> +8, Chris fewest 3 of 6/6 -> +5).
    assert score(cfg, ["blue", "black", "fewest"], [[4, 2, 0], [3, 0, 3], [1, 2, 0]]) == [9, 8, 5]
    # Anna 3 blue and Bob 3: a tie misses: -5.
    assert score(cfg, ["blue", "black", "fewest"], [[3, 3, 0], [3, 0, 3], [2, 1, 0]]) == [-5, 8, 5]


def test_example_bob_fewest_score_hand():
    cfg = cfg3()
    # Seven cards each; Bob takes 3, Anna 12, Chris 6: Bob +7.
    assert score(cfg, ["blue", "fewest", "red"], [[4, 4, 4], [1, 1, 1], [2, 2, 2]], size=7) == [9, 7, -5]
    # Bob and Chris take 3 each (Anna 15): Bob -7 (Chris's fewest too).
    assert score(cfg, ["blue", "fewest", "fewest"], [[5, 5, 5], [1, 1, 1], [1, 1, 1]], size=7) == [10, -7, -7]


def test_example_chris_most_blue_and_red_score_hand():
    cfg = cfg3()
    # Chris makes blue with 8 (+13) and misses red (2 against Anna's 5): +8.
    taken = [[0, 5, 1], [0, 0, 5], [8, 2, 0]]
    assert score(cfg, ["red", "black", "blue+red"], taken, size=7) == [10, 10, 8]
    # With negative scoring the missed red costs -5 - 2.
    assert score(cfg3(negative_scoring=True), ["red", "black", "blue+red"], taken, size=7) == [10, 10, 6]


# --------------------------------------------------------------------------
# Worked examples played card by card
def test_example_anna_played_card_by_card():
    g = Game(cfg3(hands=1))
    g.deal("none", ANNA_HANDS)
    g.hat(10)
    g.bid("blue", "red", "fewest")  # dealer Anna first, then Bob, then Chris
    assert g.state.bids[0].tolist() == [1, 2, 8]
    # Follow suit along the way.
    assert g.legal_cards() == sorted(ANNA_HANDS[0].split(), key=card_action)  # the leader may play anything
    g.play("blue20")
    assert g.legal_cards() == ["blue1", "blue19"]  # Bob must follow blue
    g.play("blue1")
    assert g.legal_cards() == ["blue2", "blue3", "blue4"]
    g.play("blue2")
    g.play("black20")
    assert g.legal_cards() == ["black1"]
    g.play("black1")
    assert g.legal_cards() == ["blue3", "blue4", "red2", "red4"]  # Chris has no black: anything
    g.play("blue3")
    winners = [int(r.trick_winner[0]) for r in g.results if r.trick_done[0]]
    assert winners == ANNA_WINNERS[:2]
    for t in ANNA_TRICKS[2:]:
        g.trick(t)
    winners = [int(r.trick_winner[0]) for r in g.results if r.trick_done[0]]
    assert winners == ANNA_WINNERS
    assert g.taken() == ANNA_TAKEN
    assert g.hat_holder == -1  # no 14 or 15 in play: the hat stayed in the centre
    # Anna most blue 4 > 3, 1: +9; Bob most red 3 > 2: +8; Chris fewest 3 < 6: +5.
    assert g.hand_scores == [[9, 8, 5]]
    assert g.scores == [9, 8, 5]
    assert g.phase == bh.DONE


def test_example_bob_fewest_played_in_hand_three():
    g = Game(cfg3(hands=3))
    g.play_out_hand()
    g.play_out_hand()
    before = g.scores
    assert g.dealer == CHRIS and int(g.state.hand_no[0]) == 2
    hands = [
        "blue20 blue19 red20 red19 black1 black3 blue6",
        "blue2 blue3 red1 red3 black2 black4 blue18",
        "blue1 blue4 red2 red4 black20 black19 blue5",
    ]
    tricks = [
        "blue1 blue20 blue2",  # Chris leads, Anna wins
        "blue19 blue3 blue4",  # Anna
        "red20 red1 red2",  # Anna
        "red19 red3 red4",  # Anna: 12 cards
        "black1 black2 black20",  # Chris
        "black19 black3 black4",  # Chris: 6 cards
        "blue5 blue6 blue18",  # Chris leads, Bob wins: 3 cards
    ]
    # Chris deals and bids first, then Anna, then Bob.
    hs = g.hand("none", hands, -10, ["black", "red", "fewest"], tricks)
    assert g.taken() == [[6, 6, 0], [3, 0, 0], [0, 0, 6]]
    assert g.hat_holder == -1
    assert hs == [11, 7, 11]
    assert g.scores == [before[0] + 11, before[1] + 7, before[2] + 11]
    assert g.scores == np.sum(g.hand_scores, axis=0).tolist()


def test_example_chris_played_card_by_card():
    g = Game(cfg3(hands=1))
    hands = [
        "blue1 blue3 blue5 red20 black20",
        "blue2 blue4 red1 red3 black2",
        "blue20 blue19 blue18 red2 black3",
    ]
    tricks = [
        "blue1 blue2 blue20",  # Chris
        "blue19 blue3 blue4",  # Chris
        "blue18 blue5 red1",  # Chris: 8 blue and 1 red
        "red2 red20 red3",  # Anna: 3 red
        "black20 black2 black3",  # Anna
    ]
    hs = g.hand("blue", hands, 10, ["black", "fewest", "blue+red"], tricks)
    assert g.taken() == [[0, 3, 3], [0, 0, 0], [8, 1, 0]]
    # Chris: blue +13, red -5 = +8. Anna black 3 -> +8. Bob fewest with 0 cards -> +5.
    assert hs == [8, 5, 8]


# --------------------------------------------------------------------------
# Game length and configuration
@pytest.mark.parametrize("players,hands", [(3, 12), (4, 10), (5, 8)])
def test_default_hands(players, hands):
    assert BH_DEFAULT_HANDS[players] == hands
    cfg = BobsHatConfig(players=players)
    assert cfg.hands == hands
    assert cfg.max_hand_size == 4 + hands


@pytest.mark.parametrize("players,max_hands", [(3, 16), (4, 11), (5, 8)])
def test_maximum_hands(players, max_hands):
    assert BobsHatConfig(players=players, hands=max_hands).hands == max_hands
    with pytest.raises(ConfigError, match=f"hands={max_hands + 1} does not fit.*hands must be 1 to {max_hands}"):
        BobsHatConfig(players=players, hands=max_hands + 1)


@pytest.mark.parametrize(
    "kw,match",
    [
        ({"players": 6}, "players must be 3, 4 or 5 for Where's Bob's Hat\\?, got 6"),
        ({"players": 2}, "players must be 3, 4 or 5 for Where's Bob's Hat\\?, got 2"),
        ({"players": 4, "hands": 14}, "hands=14 does not fit the 60-card deck with 4 players"),
        ({"players": 4, "hands": 0}, "hands=0 does not fit the 60-card deck with 4 players.*1 to 11"),
        ({"players": 3, "hands": -1}, "hands=-1 does not fit"),
        ({"players": 4.0}, "players must be an integer, got 4.0"),
        ({"players": True}, "players must be an integer, got True"),
        ({"hands": "10"}, "hands must be an integer, got '10'"),
        ({"first_dealer": 4}, "first_dealer must be a seat 0-3 or -1 \\(random\\), got 4"),
        ({"first_dealer": -2}, "first_dealer must be a seat 0-3 or -1 \\(random\\), got -2"),
        ({"double_fewest": 1}, "double_fewest must be true or false, got 1"),
        ({"no_bid": "yes"}, "no_bid must be true or false, got 'yes'"),
        ({"secret_bidding": None}, "secret_bidding must be true or false, got None"),
        ({"negative_scoring": 0}, "negative_scoring must be true or false, got 0"),
        ({"renege_mode": "false"}, "renege_mode must be true or false, got 'false'"),
    ],
)
def test_bad_configs(kw, match):
    with pytest.raises(ConfigError, match=match):
        BobsHatConfig(**kw)
    with pytest.raises(ConfigError, match=match):
        BobsHatConfig.from_dict(kw)


def test_from_dict_unknown_option_and_round_trip():
    with pytest.raises(ConfigError, match="unknown option\\(s\\) trumps; known options: double_fewest, first_dealer"):
        BobsHatConfig.from_dict({"players": 4, "trumps": 2})
    with pytest.raises(ConfigError, match="unknown option\\(s\\) Players, nobid"):
        BobsHatConfig.from_dict({"Players": 4, "nobid": True})
    with pytest.raises(ConfigError, match="built from a mapping of options, got list"):
        BobsHatConfig.from_dict([("players", 4)])
    cfg = BobsHatConfig(players=5, hands=3, first_dealer=-1, no_bid=True, renege_mode=True)
    assert BobsHatConfig.from_dict(cfg.to_dict()) == cfg
    assert cfg.to_dict() == {
        "players": 5,
        "hands": 3,
        "first_dealer": -1,
        "double_fewest": False,
        "no_bid": True,
        "secret_bidding": False,
        "negative_scoring": False,
        "renege_mode": True,
        "suits": 3,
        "ranks": 20,
        "hand_size_base": 4,
    }


def _play_first_legal(cfg: BobsHatConfig, keys: np.ndarray):
    """Play with auto_deal, first legal action; record every hand's start."""
    state = bh.init(cfg, keys)
    B = len(keys)
    starts = [(state.hand_no.copy(), state.dealer.copy(), state.hands.sum(axis=2), state.trump.copy())]
    total = np.zeros((B, cfg.players), dtype=np.int64)
    n_hands = np.zeros(B, dtype=np.int64)
    while not np.all(state.phase == bh.DONE):
        mask = bh.legal_action_mask(cfg, state)
        assert mask.any(axis=1).all()
        res = bh.step(cfg, state, mask.argmax(axis=1))
        total += res.rewards
        n_hands += res.hand_done
        if res.new_hand.any():
            assert res.new_hand.all()  # same actions, same lengths
            starts.append((state.hand_no.copy(), state.dealer.copy(), state.hands.sum(axis=2), state.trump.copy()))
    assert np.array_equal(total, state.scores)
    assert np.all(n_hands == cfg.hands)
    return starts, state


@pytest.mark.parametrize("players", [3, 4, 5])
def test_game_length_hand_sizes_and_dealer_rotation(players):
    cfg = BobsHatConfig(players=players)
    starts, state = _play_first_legal(cfg, np.arange(3, dtype=np.uint64))
    assert len(starts) == cfg.hands
    for k, (hand_no, dealer, sizes, _) in enumerate(starts, start=1):
        assert np.all(hand_no == k - 1)
        assert np.all(sizes == 4 + k)  # hand k deals 4 + k to everyone
        assert np.all(dealer == (k - 1) % players)  # seat 0 first, then clockwise
    assert np.all(state.phase == bh.DONE)
    assert np.all(state.hand_no == cfg.hands - 1)


@pytest.mark.parametrize("players,hands", [(3, 16), (4, 11), (5, 8)])
def test_longest_game_deals_the_whole_deck(players, hands):
    cfg = BobsHatConfig(players=players, hands=hands)
    starts, state = _play_first_legal(cfg, np.array([7], dtype=np.uint64))
    assert len(starts) == hands
    assert starts[-1][2].tolist() == [[60 // players] * players]
    assert players * (4 + hands) == 60
    assert state.phase.tolist() == [bh.DONE]


def test_first_dealer_option_and_rotation():
    cfg = BobsHatConfig(players=4, hands=6, first_dealer=2)
    starts, _ = _play_first_legal(cfg, np.arange(2, dtype=np.uint64))
    assert [d.tolist() for _, d, _, _ in starts] == [[2, 2], [3, 3], [0, 0], [1, 1], [2, 2], [3, 3]]
    state = bh.init(cfg, np.arange(2, dtype=np.uint64))
    assert state.cur.tolist() == [2, 2] and state.phase.tolist() == [bh.HAT, bh.HAT]


def test_random_first_dealer_from_the_seed():
    cfg = BobsHatConfig(players=5, first_dealer=-1)
    keys = rng.game_keys(123, np.arange(2000))
    first = bh.init(cfg, keys).first_dealer
    # Deterministic per key: same keys, same dealers; one key alone, same dealer.
    assert np.array_equal(bh.init(cfg, keys).first_dealer, first)
    assert [int(bh.init(cfg, keys[i : i + 1]).first_dealer[0]) for i in range(10)] == first[:10].tolist()
    # Every seat occurs, each about 1/5 of the time (400 expected, sd 18).
    counts = np.bincount(first, minlength=5)
    assert counts.sum() == 2000 and counts.min() >= 320 and counts.max() <= 480
    # The dealer rotates clockwise from it.
    starts, _ = _play_first_legal(BobsHatConfig(players=5, hands=4, first_dealer=-1), keys[:20])
    for h, (_, dealer, _, _) in enumerate(starts):
        assert np.array_equal(dealer, (first[:20] + h) % 5)
    # The default is seat 0 whatever the key.
    assert bh.init(BobsHatConfig(players=5), keys).first_dealer.tolist() == [0] * 2000


# --------------------------------------------------------------------------
# Trump
def test_trump_draw_is_uniform_and_deals_are_valid():
    cfg = BobsHatConfig(players=4)
    n = 8000
    keys = rng.game_keys(5, np.arange(n))
    hand_no = np.arange(n) % 10
    trump, hands = bh.random_deal(cfg, keys, hand_no, np.zeros(n, dtype=np.int64))
    counts = np.bincount(trump, minlength=4)
    assert counts.sum() == n and counts.size == 4
    assert np.all(np.abs(counts - n / 4) < 160)  # 2000 expected each, sd 39
    assert np.array_equal(hands.sum(axis=2), np.repeat((5 + hand_no)[:, None], 4, axis=1))
    assert hands.sum(axis=1).max() == 1  # no card twice
    # Each card is dealt about equally often: sum over games of dealt/60 each.
    per_card = hands.sum(axis=(0, 1))
    expected = 4 * (5 + hand_no).sum() / 60
    assert np.all(np.abs(per_card - expected) < 0.1 * expected)
    # The auto deal uses this draw: trump and cards of the first hand.
    state = bh.init(cfg, keys[:50])
    t0, h0 = bh.random_deal(cfg, keys[:50], np.zeros(50, dtype=np.int64), np.zeros(50, dtype=np.int64))
    assert np.array_equal(state.trump, t0) and np.array_equal(state.hands, h0)


def test_no_trump_highest_card_of_the_led_suit_wins():
    g = Game(cfg3(hands=1))
    g.deal(
        "none",
        ["red5 blue1 blue2 blue3 blue4", "black20 black19 black18 black17 black16", "red7 red8 red9 red10 red11"],
    )
    g.hat(10)
    g.bid("blue", "black", "red")
    # Bob's black20 and Anna's blues never win: no trump, red led every time.
    assert g.trick("red5 black20 red7") == CHRIS
    assert g.cur == CHRIS and int(g.state.leader[0]) == CHRIS
    for t in ["red8 blue1 black19", "red9 blue2 black18", "red10 blue3 black17", "red11 blue4 black16"]:
        assert g.trick(t) == CHRIS
    assert g.taken() == [[0, 0, 0], [0, 0, 0], [4, 6, 5]]
    # Chris red 6 -> +11; Anna blue 0 vs 4 -> -5; Bob black 0 vs 5 -> -5.
    assert g.hand_scores == [[-5, -5, 11]]


def test_trump_wins_tricks():
    g = Game(cfg3(hands=1))
    g.deal(
        "black",
        ["red20 black3 red18 black20 red16", "black1 blue10 blue11 black4 blue12", "red19 black2 red17 black5 red2"],
    )
    g.hat(-10)
    g.bid("red", "black", "fewest")
    assert g.trick("red20 black1 red19") == BOB  # the lowest trump beats red20
    assert g.trick("blue10 black2 black3") == ANNA  # highest of two trumps
    g.play("red18")
    assert g.legal_cards() == ["blue11", "blue12", "black4"]  # void in red: no obligation to trump
    g.play("blue11")
    assert g.legal_cards() == ["red2", "red17"]
    g.play("red17")
    assert g.results[-1].trick_winner.tolist() == [ANNA]
    assert g.trick("black20 black4 black5") == ANNA  # trump led
    assert g.trick("red16 blue12 red2") == ANNA
    assert g.taken() == [[3, 4, 5], [0, 2, 1], [0, 0, 0]]
    # Anna red 4 > 2 -> +9; Bob black 1 vs 5 -> -5; Chris fewest with 0 cards -> +5.
    assert g.hand_scores == [[9, -5, 5]]


# --------------------------------------------------------------------------
# Hat choice, bidding order, lead
def test_hat_choice_bidding_order_and_first_lead():
    cfg = BobsHatConfig(players=4, hands=2, first_dealer=2)
    g = Game(cfg)
    assert g.phase == bh.DEAL and g.legal() == []
    expect_illegal(g, bh.HAT_PLUS, "the hand has not been dealt")
    tr, hands = bh.random_deal(cfg, g.state.key, g.state.hand_no, g.state.attempt)
    bh.deal(cfg, g.state, np.array([0]), tr, hands)
    # The dealer (seat 2) chooses the hat: only 60 and 61 are legal.
    assert g.phase == bh.HAT and g.cur == 2 and g.legal() == [60, 61]
    some_card = int(np.nonzero(g.state.hands[0, 2])[0][0])
    expect_illegal(g, some_card, "it is the hat phase")
    expect_illegal(g, bid_action("blue"), "it is the hat phase")
    g.hat(-10)
    assert int(g.state.hat_value[0]) == -10 and int(g.state.hat_holder[0]) == -1
    # Bidding: the dealer first, then clockwise; every bid non-empty by default.
    seats = []
    for b in ["blue", "fewest", "red+black", "blue+red+black+fewest"]:
        assert g.phase == bh.BID and g.legal() == DEFAULT_BIDS
        seats.append(g.cur)
        expect_illegal(g, bh.HAT_PLUS, "it is the bid phase")
        expect_illegal(g, bid_action("none"), "the no-bid option is off or already used")
        expect_illegal(g, bid_action("fewest+fewest"), "double fewest needs the double_fewest option")
        g.bid(b)
    assert seats == [2, 3, 0, 1]
    assert g.state.bids[0].tolist() == [6, 15, 1, 8]
    # The dealer leads the first trick with any card.
    assert g.phase == bh.PLAY and g.cur == 2 and int(g.state.leader[0]) == 2
    assert g.legal() == np.nonzero(g.state.hands[0, 2])[0].tolist()
    expect_illegal(g, bh.HAT_MINUS, "it is the play phase")
    expect_illegal(g, bid_action("blue"), "it is the play phase")


def test_hat_plus_ten_for_the_dealer_of_hand_two():
    g = Game(cfg3(hands=2))
    g.play_out_hand()
    tr, hands = bh.random_deal(g.cfg, g.state.key, g.state.hand_no, g.state.attempt)
    bh.deal(g.cfg, g.state, np.array([0]), tr, hands)
    assert g.dealer == BOB and g.cur == BOB and g.legal() == [60, 61]
    g.hat(10)
    assert int(g.state.hat_value[0]) == 10 and g.phase == bh.BID and g.cur == BOB


def test_winner_leads_next_trick():
    g = Game(cfg3(hands=1))
    g.deal("none", HAT_HANDS)
    g.hat(10)
    g.bid("blue", "red", "fewest")
    for t, w in zip(HAT_TRICKS, HAT_WINNERS, strict=True):
        leader = g.cur
        assert g.trick(t) == w
        assert g.results[-1].trick_leader.tolist() == [leader]
        if g.phase == bh.PLAY:
            assert g.cur == w and int(g.state.leader[0]) == w
            assert g.legal() == np.nonzero(g.state.hands[0, w])[0].tolist()


def test_follow_suit_mask_leaves_hand_unchanged_on_illegal_card():
    g = Game(cfg3(hands=1))
    g.deal("none", ANNA_HANDS)
    g.hat(10)
    g.bid("blue", "red", "fewest")
    g.play("blue20")
    expect_illegal(g, card_action("red20"), "seat 1 must follow the suit led \\(blue\\)")
    expect_illegal(g, card_action("blue2"), "seat 1 does not hold blue2")
    expect_illegal(g, 86, "illegal action 86")
    expect_illegal(g, -1, "illegal action -1")


# --------------------------------------------------------------------------
# Bob's Hat
@pytest.mark.parametrize("hat", [10, -10])
def test_hat_moves_and_scores(hat):
    g = Game(cfg3(hands=1))
    g.deal("none", HAT_HANDS)
    g.hat(hat)
    g.bid("blue", "red", "fewest")
    holders = []
    for t, w in zip(HAT_TRICKS, HAT_WINNERS, strict=True):
        assert g.trick(t) == w
        holders.append(g.hat_holder)
    assert holders == HAT_HOLDERS
    assert g.taken() == HAT_TAKEN
    # Anna blue 3 ties Chris's 3: -5. Bob red 6: +11. Chris fewest 3 < 6, 6: +5, plus the hat.
    assert g.hand_scores == [[-5, 11, 5 + hat]]


def test_hat_stays_in_centre_and_never_counts_for_fewest():
    g = Game(cfg3(hands=1))
    g.deal("none", ANNA_HANDS)  # no 14 or 15 at all
    g.hat(-10)
    g.bid("blue", "red", "fewest")
    for t in ANNA_TRICKS:
        g.trick(t)
        assert g.hat_holder == -1
    assert g.hand_scores == [[9, 8, 5]]  # nobody scores the -10
    # The holder took 3 cards, another seat 4: fewest is made (the hat is no card).
    cfg = cfg3()
    assert score(cfg, ["fewest", "red", "black"], [[3, 0, 0], [0, 4, 0], [0, 0, 8]], hat=10, holder=0) == [15, 9, 13]
    assert score(cfg, ["fewest", "red", "black"], [[3, 0, 0], [0, 4, 0], [0, 0, 8]], hat=-10, holder=1) == [5, -1, 13]
    assert score(cfg, ["fewest", "red", "black"], [[3, 0, 0], [0, 4, 0], [0, 0, 8]], hat=10, holder=-1) == [5, 9, 13]


# --------------------------------------------------------------------------
# Most and fewest
def test_most_strictly_more_and_ties():
    cfg = BobsHatConfig(players=4)
    taken = [[5, 0, 1], [5, 2, 0], [1, 6, 0], [0, 6, 2]]
    # Blue 5-5 tie: both miss. Red 6-6 tie: miss. Black 2 > 1: made.
    assert score(cfg, ["blue", "blue", "red", "red+black"], taken, size=7) == [-5, -5, -5, -5 + 7]
    # Strictly more by one.
    assert score(cfg, ["blue", "red", "black", "fewest"], [[5, 0, 1], [4, 3, 0], [1, 2, 4], [0, 5, 3]], size=7) == [
        10,
        -5,
        9,
        -7,
    ]


def test_most_of_a_suit_nobody_was_dealt():
    cfg = cfg3(hands=1)
    g = Game(cfg)
    g.deal("none", ["blue20 blue19 blue18 blue17 blue16", "red1 red2 red3 red4 red5", "red6 red7 red8 red9 red10"])
    g.hat(10)
    g.bid("black+blue", "black", "black+fewest")
    for i in range(5):
        assert g.trick(f"blue{20 - i} red{1 + i} red{6 + i}") == ANNA
    assert g.taken() == [[5, 10, 0], [0, 0, 0], [0, 0, 0]]
    # No black card dealt: every most-black bidder makes +5. Anna blue 5 -> +10.
    # Chris fewest: 0 ties Bob's 0 -> -5.
    assert g.hand_scores == [[15, 5, 0]]
    # Also with negative scoring, and through score_hand.
    neg = cfg3(negative_scoring=True)
    assert score(neg, ["black+blue", "black", "black+fewest"], [[5, 10, 0], [0, 0, 0], [0, 0, 0]]) == [15, 5, 0]
    # A suit dealt but taken by nobody but one: the others score -5 on it.
    assert score(cfg, ["black", "black", "black"], [[5, 9, 1], [0, 0, 0], [0, 0, 0]]) == [6, -5, -5]


def test_fewest_with_ties():
    cfg = BobsHatConfig(players=4)
    # Lowest tied at 4: both fewest bidders miss -8; a tie above the lowest does not matter.
    assert score(
        cfg, ["fewest", "fewest", "fewest", "blue"], [[4, 0, 0], [0, 4, 0], [0, 0, 12], [8, 2, 2]], size=8
    ) == [
        -8,
        -8,
        -8,
        13,
    ]
    assert score(cfg, ["fewest", "fewest", "fewest", "red"], [[2, 0, 0], [0, 5, 0], [0, 0, 5], [8, 6, 6]], size=8) == [
        8,
        -8,
        -8,
        11,
    ]
    # Zero cards is fewest when alone.
    assert score(cfg, ["fewest", "fewest", "black", "black"], [[0, 0, 0], [4, 2, 2], [4, 4, 4], [4, 2, 6]], size=8) == [
        8,
        -8,
        -5,
        11,
    ]


def test_most_and_fewest_scored_independently():
    cfg = cfg3()
    # Anna makes both most blue (3 > 1, 0) and fewest (3 < 6, 6): 8 + 5.
    assert score(cfg, ["blue+fewest", "red", "black"], [[3, 0, 0], [1, 3, 2], [0, 2, 4]]) == [13, 8, 9]
    # Makes most, misses fewest.
    assert score(cfg, ["blue+fewest", "red", "black"], [[4, 2, 0], [1, 3, 0], [0, 0, 5]]) == [9 - 5, 8, 10]
    # Misses most, makes fewest.
    assert score(cfg, ["red+fewest", "red", "black"], [[1, 2, 0], [1, 3, 2], [3, 0, 3]]) == [-5 + 5, 8, 8]
    # Every bid card at once: blue 5 made, red 4 made, black 1 missed, fewest missed.
    assert score(cfg, ["blue+red+black+fewest", "black", "fewest"], [[5, 4, 1], [0, 1, 3], [0, 0, 1]], size=5) == [
        10 + 9 - 5 - 5,
        8,
        5,
    ]


# --------------------------------------------------------------------------
# Options
def test_bid_masks_per_option():
    for df, nb in itertools.product([False, True], repeat=2):
        cfg = cfg3(hands=1, double_fewest=df, no_bid=nb)
        g = Game(cfg)
        g.deal("none", ANNA_HANDS)
        g.hat(10)
        expected = ([62] if nb else []) + list(range(63, 78)) + (list(range(78, 86)) if df else [])
        assert g.legal() == expected


def test_double_fewest():
    cfg = cfg3(double_fewest=True)
    assert bid_action("fewest+fewest") == 78
    # Seven cards: made +14, missed -14; combined with a most bid.
    assert score(cfg, ["blue", "fewest+fewest", "red"], [[4, 4, 4], [1, 1, 1], [2, 2, 2]], size=7) == [9, 14, -5]
    assert score(cfg, ["blue", "fewest+fewest", "fewest+fewest"], [[5, 5, 5], [1, 1, 1], [1, 1, 1]], size=7) == [
        10,
        -14,
        -14,
    ]
    assert score(cfg, ["black", "blue+fewest+fewest", "red"], [[4, 4, 4], [2, 0, 1], [1, 2, 3]], size=7) == [
        9,
        -5 + 14,
        -5,
    ]
    # Played out: Chris takes the hat and 3 cards of 15 with a double fewest.
    g = Game(cfg3(hands=1, double_fewest=True))
    hs = g.hand("none", HAT_HANDS, 10, ["blue", "red", "fewest+fewest"], HAT_TRICKS)
    assert hs == [-5, 11, 10 + 10]
    assert g.state.bids[0].tolist() == [1, 2, 16]


def test_double_fewest_is_illegal_without_the_option():
    g = Game(cfg3(hands=1))
    g.deal("none", ANNA_HANDS)
    g.hat(10)
    for code in range(16, 24):
        expect_illegal(g, bh.BID_BASE + code, "double fewest needs the double_fewest option")


def test_no_bid_once_per_game():
    cfg = cfg3(hands=3, no_bid=True)
    g = Game(cfg)
    # Hand 1: Chris bids nothing, takes the hat (+10) and 3 blue cards: scores exactly 0.
    # Chris's 3 blue still tie Anna's 3, so Anna misses most blue.
    hs = g.hand("none", HAT_HANDS, 10, ["blue", "red", "none"], HAT_TRICKS)
    assert g.hat_holder == CHRIS
    assert hs == [-5, 11, 0]
    assert g.state.no_bid_used[0].tolist() == [False, False, True]
    # Hand 2 (dealer Bob): Bob and Anna may still bid nothing, Chris may not.
    tr, hands = bh.random_deal(cfg, g.state.key, g.state.hand_no, g.state.attempt)
    bh.deal(cfg, g.state, np.array([0]), tr, hands)
    g.hat(-10)
    assert g.cur == BOB and g.legal() == [62] + DEFAULT_BIDS
    g.bid("blue")
    assert g.cur == CHRIS and g.legal() == DEFAULT_BIDS
    mask = bh.legal_action_mask(cfg, g.state)[0]
    assert not mask[62] and mask[63:78].all() and mask.sum() == 15
    expect_illegal(g, bid_action("none"), "illegal action 62 \\(bid:none\\) in game 0 for seat 2: the no-bid option")
    g.bid("red")
    assert g.cur == ANNA and g.legal() == [62] + DEFAULT_BIDS
    g.bid("none")
    while g.phase != bh.DEAL:
        g.act(g.legal()[0])
    assert g.hand_scores[-1][ANNA] == 0
    assert g.state.no_bid_used[0].tolist() == [True, False, True]
    # Hand 3: only Bob keeps his no bid.
    tr, hands = bh.random_deal(cfg, g.state.key, g.state.hand_no, g.state.attempt)
    bh.deal(cfg, g.state, np.array([0]), tr, hands)
    g.hat(10)
    assert g.cur == CHRIS and g.legal() == DEFAULT_BIDS
    g.bid("black")
    assert g.cur == ANNA and g.legal() == DEFAULT_BIDS
    g.bid("black")
    assert g.cur == BOB and g.legal() == [62] + DEFAULT_BIDS


def test_no_bid_is_illegal_without_the_option():
    g = Game(cfg3(hands=1, double_fewest=True))
    g.deal("none", ANNA_HANDS)
    g.hat(10)
    expect_illegal(g, bh.BID_BASE, "the no-bid option is off or already used by this seat")


def test_no_bid_score_hand_is_zero_with_the_hat():
    cfg = cfg3(no_bid=True)
    assert score(cfg, ["none", "red", "fewest"], [[5, 5, 0], [0, 2, 2], [0, 0, 1]], hat=10, holder=0) == [0, -5, 5]
    assert score(cfg, ["none", "red", "fewest"], [[5, 5, 0], [0, 2, 2], [0, 0, 1]], hat=-10, holder=0) == [0, -5, 5]
    assert score(cfg, ["none", "none", "none"], [[5, 5, 0], [0, 2, 2], [0, 0, 1]], hat=-10, holder=2) == [0, 0, 0]


def test_negative_scoring():
    cfg = cfg3(negative_scoring=True)
    # Missed most: -5 - count; made most and fewest unchanged.
    assert score(cfg, ["blue", "black", "fewest"], [[3, 3, 0], [3, 0, 3], [2, 1, 0]]) == [-8, 8, 5]
    assert score(cfg, ["blue+red+black", "black", "fewest"], [[3, 3, 0], [3, 0, 3], [2, 1, 0]]) == [-8 + 8 - 5, 8, 5]
    # Missed fewest stays -(4 + k).
    assert score(cfg, ["fewest", "fewest", "blue"], [[3, 0, 0], [1, 2, 0], [2, 3, 4]], size=5) == [-5, -5, -5 - 2]
    g = Game(cfg3(hands=1, negative_scoring=True))
    hs = g.hand("none", HAT_HANDS, -10, ["blue", "black", "fewest"], HAT_TRICKS)
    # Anna misses blue with 3: -8. Bob misses black with 0: -5. Chris +5 - 10.
    assert hs == [-8, -5, -5]


@pytest.mark.parametrize("flags", list(itertools.product([False, True], repeat=5)))
def test_every_option_combination_scores_the_hat_hand(flags):
    cfg = cfg3(hands=1, **dict(zip(OPTIONS, flags, strict=True)))
    g = Game(cfg)
    hs = g.hand("none", HAT_HANDS, 10, ["blue", "red", "fewest"], HAT_TRICKS)
    # Only negative scoring changes this hand: Anna's missed blue with 3 cards.
    assert hs == [-8 if cfg.negative_scoring else -5, 11, 15]
    assert g.phase == bh.DONE and g.scores == hs


def test_all_options_combined():
    cfg = cfg3(hands=2, double_fewest=True, no_bid=True, secret_bidding=True, negative_scoring=True, renege_mode=True)
    g = Game(cfg)
    hs = g.hand("none", HAT_HANDS, 10, ["none", "red+fewest+fewest", "blue+fewest"], HAT_TRICKS)
    # Anna: no bid -> 0. Bob: red 6 -> +11, double fewest missed (6 vs Chris 3) -> -10.
    # Chris: blue 3 ties Anna's 3 -> -5 - 3; fewest 3 -> +5; hat +10.
    assert hs == [0, 1, 7]
    assert g.state.no_bid_used[0].tolist() == [True, False, False]


def test_secret_bidding_changes_no_rule():
    open_g, secret_g = Game(cfg3(hands=1)), Game(cfg3(hands=1, secret_bidding=True))
    for g in (open_g, secret_g):
        g.deal("none", HAT_HANDS)
        g.hat(-10)
    actions = [bid_action(b) for b in ["blue", "red", "fewest"]] + [
        card_action(c) for c in " ".join(HAT_TRICKS).split()
    ]
    for a in actions:
        assert open_g.legal() == secret_g.legal()
        ra, rb = open_g.act(a), secret_g.act(a)
        for f in ("rewards", "trick_done", "trick_cards", "trick_winner", "hand_done", "game_done"):
            assert np.array_equal(getattr(ra, f), getattr(rb, f)), f
    assert open_g.hand_scores == secret_g.hand_scores == [[-5, 11, -5]]


# --------------------------------------------------------------------------
# Reneging
def test_renege_mode_penalty_and_redeal():
    cfg = cfg3(hands=2, renege_mode=True)
    g = Game(cfg)
    g.deal("none", HAT_HANDS)
    g.hat(10)
    g.bid("blue", "red", "fewest")
    g.trick(HAT_TRICKS[0])  # Anna takes 3 black
    g.play("red1")
    assert g.legal_cards() == ["red5", "red14"]
    res = g.act(card_action("blue1"))  # Bob holds red but plays blue: a renege
    assert res.renege.tolist() == [True] and res.new_hand.tolist() == [True]
    assert res.hand_done.tolist() == [False] and res.trick_done.tolist() == [False]
    assert res.rewards.tolist() == [[0, -15, 0]]
    assert g.scores == [0, -15, 0]
    assert g.state.last_scores[0].tolist() == [0, -15, 0]
    # The same hand again: same dealer, same hand number, next attempt, waiting for a deal.
    assert g.phase == bh.DEAL and g.dealer == ANNA
    assert int(g.state.hand_no[0]) == 0 and int(g.state.attempt[0]) == 1
    with pytest.raises(ValueError, match="seat 0 was dealt 6 cards; hand 1 deals 5"):
        g.deal(
            "red", ["blue1 blue2 blue3 blue4 blue5 blue6", "red1 red2 red3 red4 red5", "black1 black2 black3 black4"]
        )
    # A fresh deal and trump, a new hat choice, new bids: everything of the broken hand is gone.
    g.deal("none", ANNA_HANDS)
    st = g.state
    assert g.phase == bh.HAT and g.cur == ANNA
    assert st.taken[0].sum() == 0 and st.tricks_done[0] == 0 and st.hat_holder[0] == -1 and st.hat_value[0] == 0
    assert st.bids[0].tolist() == [-1, -1, -1] and st.trick[0].tolist() == [-1, -1, -1] and not st.played[0].any()
    g.hat(-10)
    g.bid("blue", "red", "fewest")
    for t in ANNA_TRICKS:
        g.trick(t)
    assert g.hand_scores == [[9, 8, 5]]
    assert g.scores == [9, -7, 5]  # the -15 is kept
    # Then hand 2 with six cards, dealt by Bob, first attempt.
    assert g.phase == bh.DEAL and g.dealer == BOB
    assert int(g.state.hand_no[0]) == 1 and int(g.state.attempt[0]) == 0
    assert g.state.hand_size.tolist() == [6]


def test_renege_voids_a_no_bid_and_still_costs_15():
    # The core's reading: a renege voids the hand, so a no bid made in it is not
    # used up; the -15 applies even to a seat that bid nothing.
    cfg = cfg3(hands=1, no_bid=True, renege_mode=True)
    g = Game(cfg)
    g.deal("none", HAT_HANDS)
    g.hat(10)
    g.bid("blue", "none", "fewest")
    g.trick(HAT_TRICKS[0])
    g.play("red1")
    g.act(card_action("blue1"))  # Bob, who bid nothing, reneges
    assert g.renege_scores == [[0, -15, 0]] and g.scores == [0, -15, 0]
    assert g.state.no_bid_used[0].tolist() == [False, False, False]
    g.deal("none", ANNA_HANDS)
    g.hat(10)
    g.bid("blue")
    assert g.cur == BOB and g.legal() == [62] + DEFAULT_BIDS
    g.bid("none", "fewest")
    for t in ANNA_TRICKS:
        g.trick(t)
    assert g.hand_scores == [[9, 0, 5]]
    assert g.scores == [9, -15, 5]
    assert g.state.no_bid_used[0].tolist() == [False, True, False]


def test_totals_do_not_wrap_after_many_reneges():
    # As after about 2184 reneges by Bob: the totals must hold -32775 (int16 would wrap).
    g = Game(cfg3(hands=1, renege_mode=True))
    g.state.scores[0] = [0, -32760, 0]
    g.deal("none", HAT_HANDS)
    g.hat(10)
    g.bid("blue", "red", "fewest")
    g.trick(HAT_TRICKS[0])
    g.play("red1")
    res = g.act(card_action("blue1"))
    assert res.rewards[0].tolist() == [0, -15, 0]
    assert g.scores == [0, -32775, 0]
    g.hand("none", ANNA_HANDS, 10, ["blue", "red", "fewest"], ANNA_TRICKS)
    assert g.scores == [9, -32767, 5]


def test_renege_with_auto_deal_draws_a_fresh_deal():
    cfg = BobsHatConfig(players=4, hands=2, renege_mode=True)
    key = rng.game_keys(9, np.arange(1))
    state = bh.init(cfg, key)
    first_hands = state.hands.copy()
    t1, h1 = bh.random_deal(cfg, key, np.zeros(1, dtype=np.int64), np.ones(1, dtype=np.int64))
    assert not np.array_equal(h1, first_hands)
    # Hat and bids, then play until somebody can renege.
    for a in [60, 63, 63, 63, 63]:
        bh.step(cfg, state, np.array([a]))
    while True:
        mask = bh.legal_action_mask(cfg, state)[0]
        held = state.hands[0, state.cur[0]]
        off = np.nonzero(held & ~mask[:60])[0]
        if off.size:
            break
        bh.step(cfg, state, np.array([mask.argmax()]))
    seat = int(state.cur[0])
    res = bh.step(cfg, state, np.array([off[0]]))
    assert res.renege.tolist() == [True] and res.new_hand.tolist() == [True]
    expected = [0, 0, 0, 0]
    expected[seat] = -15
    assert res.rewards[0].tolist() == expected and state.scores[0].tolist() == expected
    assert state.phase.tolist() == [bh.HAT] and state.dealer.tolist() == [0] and state.cur.tolist() == [0]
    assert state.hand_no.tolist() == [0] and state.attempt.tolist() == [1]
    assert np.array_equal(state.hands, h1) and np.array_equal(state.trump, t1)
    assert state.hands.sum(axis=2).tolist() == [[5, 5, 5, 5]]
    assert state.bids[0].tolist() == [-1] * 4 and state.hat_value.tolist() == [0]


def test_renege_is_an_error_without_the_option():
    g = Game(cfg3(hands=1))
    g.deal("none", HAT_HANDS)
    g.hat(10)
    g.bid("blue", "red", "fewest")
    g.trick(HAT_TRICKS[0])
    g.play("red1")
    expect_illegal(
        g,
        card_action("blue1"),
        "illegal action 0 \\(blue1\\) in game 0 for seat 1: seat 1 must follow the suit led \\(red\\); "
        "legal actions: \\[24, 33\\]",
    )


@pytest.mark.parametrize("renege_mode", [False, True])
def test_always_errors_even_in_renege_mode(renege_mode):
    cfg = cfg3(hands=1, renege_mode=renege_mode)
    g = Game(cfg)
    g.deal("none", HAT_HANDS)
    # Wrong phase: a card in the hat phase (the dealer holds it).
    expect_illegal(g, card_action("black20"), "it is the hat phase")
    g.hat(10)
    # Wrong phase: a card in the bid phase; bids not allowed.
    expect_illegal(g, card_action("black20"), "it is the bid phase")
    expect_illegal(g, bh.BID_BASE, "no-bid option is off")
    expect_illegal(g, bh.BID_BASE + 16, "double fewest needs the double_fewest option")
    g.bid("blue", "red", "fewest")
    # A card not held (by anyone, or by somebody else), out of range, wrong phase.
    g.play("black20")
    expect_illegal(g, card_action("blue20"), "seat 1 does not hold blue20")
    expect_illegal(g, card_action("black2"), "seat 1 does not hold black2")
    expect_illegal(g, 86, "illegal action 86")
    expect_illegal(g, bh.HAT_PLUS, "it is the play phase")
    expect_illegal(g, bid_action("blue"), "it is the play phase")
    g.play("black1 black2")
    for t in HAT_TRICKS[1:]:
        g.trick(t)
    # The game is over.
    assert g.phase == bh.DONE and g.legal() == []
    expect_illegal(g, card_action("black20"), "the game is over")
    expect_illegal(g, bh.HAT_PLUS, "the game is over")
    assert g.hand_scores == [[-5, 11, 15]]


# --------------------------------------------------------------------------
# Game end
def test_game_end_totals_and_no_further_step():
    cfg = cfg3(hands=2)
    g = Game(cfg)
    hs1 = g.hand("none", HAT_HANDS, -10, ["blue", "red", "fewest"], HAT_TRICKS)
    assert hs1 == [-5, 11, -5]
    assert g.phase == bh.DEAL and not g.results[-1].game_done[0]
    assert g.results[-1].new_hand.tolist() == [True]
    hs2 = g.play_out_hand()
    res = g.results[-1]
    assert res.hand_done.tolist() == [True] and res.game_done.tolist() == [True]
    assert res.new_hand.tolist() == [False]
    assert g.phase == bh.DONE and g.legal() == []
    assert g.scores == [hs1[i] + hs2[i] for i in range(3)]
    assert g.state.last_scores[0].tolist() == hs2
    rewards = np.sum([r.rewards[0] for r in g.results], axis=0)
    assert rewards.tolist() == g.scores
    expect_illegal(g, 0, "the game is over")
    with pytest.raises(ValueError, match="deal\\(\\) needs games waiting for a deal"):
        g.deal("none", HAT_HANDS)


def test_inactive_games_ride_along():
    cfg = cfg3(hands=1)
    state = bh.init(cfg, np.arange(2, dtype=np.uint64), auto_deal=False)
    rows = np.stack([np.stack([hand_row(h) for h in HAT_HANDS])] * 2)
    bh.deal(cfg, state, np.array([0, 1]), np.array([3, 3]), rows)
    bh.step(cfg, state, np.array([60, 60]))
    before = snapshot(state.take(np.array([1])))
    # Game 1 is inactive: its (illegal) action is ignored and its state untouched.
    res = bh.step(cfg, state, np.array([bid_action("blue"), 0]), active=np.array([True, False]))
    assert_unchanged(state.take(np.array([1])), before)
    assert state.bids.tolist() == [[1, -1, -1], [-1, -1, -1]]
    assert res.rewards.tolist() == [[0, 0, 0], [0, 0, 0]]
    # An illegal action of an active game raises and names the game.
    with pytest.raises(bh.IllegalActionError, match="in game 1 for seat 0: it is the bid phase"):
        bh.step(cfg, state, np.array([bid_action("red"), 5]))
    assert state.bids.tolist() == [[1, -1, -1], [-1, -1, -1]]

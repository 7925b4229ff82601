"""A step's result carries each ended hand's closing facts (core/tricks.py's StepResult).

``hand_taken`` (the hand's cards or tricks taken per seat), ``role_holder``
(Bob's Hat's holder, -1 in the centre and always in Oh Hell), ``rewards`` (the
hand's scores) and ``hand_why`` (``WHY_*`` flags per seat), set on the rows
where a hand ended, as it stood before ``auto_deal`` dealt the next one. The
numbers are docs/rules.md's worked examples, played card by card;
the last card of each hand is stepped with ``auto_deal`` so the state has
moved on to the next deal when the facts are read.
"""

from __future__ import annotations

import numpy as np
import pytest
from bh_script import Game, card_action

from bobshat_env.core import bobs_hat as bh
from bobshat_env.core import oh_hell as oh
from bobshat_env.core import rng
from bobshat_env.core.cards import oh_parse_card
from bobshat_env.core.config import BobsHatConfig, OhHellConfig
from bobshat_env.core.tricks import WHY_MADE, WHY_MISSED, WHY_NO_BID, WHY_RENEGE, WHY_ROLE
from bobshat_env.games import make_game

ANNA, BOB, CHRIS = 0, 1, 2
MADE, MISSED, ROLE, NO_BID, RENEGE = WHY_MADE, WHY_MISSED, WHY_ROLE, WHY_NO_BID, WHY_RENEGE


def bh_hand(cfg: BobsHatConfig, trump: str, hands: list[str], hat: int, bids: list[str], tricks: list[str]):
    """Play one scripted hand of Bob's Hat; the last card with auto_deal. Returns (game, that step's result)."""
    g = Game(cfg)
    g.deal(trump, hands)
    g.hat(hat)
    g.bid(*bids)
    cards = " ".join(tricks).split()
    g.play(*cards[:-1])
    res = bh.step(cfg, g.state, np.array([card_action(cards[-1])]), auto_deal=True)
    return g, res


def facts(res) -> tuple[list, int, list, list]:
    return res.hand_taken[0].tolist(), int(res.role_holder[0]), res.rewards[0].tolist(), res.hand_why[0].tolist()


# Anna's example: Anna takes 4 blue, Bob 3, Chris 1; no hat card is played.
ANNA_HANDS = ["blue20 black20 red1 blue5 blue6", "blue1 black1 red20 blue19 red3", "blue2 blue3 red2 blue4 red4"]
ANNA_TRICKS = ["blue20 blue1 blue2", "black20 black1 blue3", "red1 red20 red2", "blue19 blue4 blue5", "red3 red4 blue6"]

# Bob's Hat moves: centre -> Bob (red14) -> Chris (blue15), then stays with Chris.
HAT_HANDS = ["black20 red1 blue2 red4 blue5", "black1 red14 blue1 red5 blue3", "black2 red2 blue15 red3 blue4"]
HAT_TRICKS = ["black20 black1 black2", "red1 red14 red2", "blue1 blue15 blue2", "red3 red4 red5", "blue3 blue4 blue5"]


def test_anna_most_blue_facts_survive_the_next_deal():
    cfg = BobsHatConfig(players=3, hands=2)
    g, res = bh_hand(cfg, "none", ANNA_HANDS, 10, ["blue", "red", "fewest"], ANNA_TRICKS)
    assert res.hand_done[0] and res.new_hand[0] and not res.game_done[0]
    # the state holds hand 2 already: its taken are cleared and the hat is back in the centre
    assert int(g.state.hand_no[0]) == 1 and g.phase == bh.HAT and not g.state.taken.any()
    # Anna most blue 4 > 3, 1: +5 + 4 = +9; Bob most red 3 > 2: +8; Chris fewest 3 < 6, 6: +5 (hand size).
    assert facts(res) == ([[4, 0, 2], [3, 3, 0], [1, 2, 0]], -1, [9, 8, 5], [MADE, MADE, MADE])


def test_hat_holder_and_a_tie_that_misses():
    cfg = BobsHatConfig(players=3, hands=2)
    _, res = bh_hand(cfg, "none", HAT_HANDS, 10, ["blue", "red", "fewest"], HAT_TRICKS)
    # Anna blue 3 ties Chris's 3: missed, -5. Bob red 6: +5 + 6 = +11.
    # Chris fewest 3 < 6, 6: +5, and holds Bob's Hat at the end: +10.
    assert facts(res) == ([[3, 0, 3], [0, 6, 0], [3, 0, 0]], CHRIS, [-5, 11, 15], [MISSED, MADE, MADE | ROLE])


def test_chris_makes_one_bid_and_misses_another():
    cfg = BobsHatConfig(players=3, hands=2)
    hands = ["blue1 blue3 blue5 red20 black20", "blue2 blue4 red1 red3 black2", "blue20 blue19 blue18 red2 black3"]
    tricks = [
        "blue1 blue2 blue20",
        "blue19 blue3 blue4",
        "blue18 blue5 red1",
        "red2 red20 red3",
        "black20 black2 black3",
    ]
    _, res = bh_hand(cfg, "blue", hands, -10, ["black", "fewest", "blue+red"], tricks)
    # Chris: most blue with 8 (+13), most red 1 against Anna's 3 (-5): +8. Anna black 3: +8. Bob fewest 0: +5.
    assert facts(res) == ([[0, 3, 3], [0, 0, 0], [8, 1, 0]], -1, [8, 5, 8], [MADE, MADE, MADE | MISSED])


def test_a_no_bid_hand_scores_nothing_even_with_the_hat():
    cfg = BobsHatConfig(players=3, hands=2, no_bid=True)
    _, res = bh_hand(cfg, "none", HAT_HANDS, 10, ["blue", "red", "none"], HAT_TRICKS)
    # Chris bid nothing: 0, Bob's Hat included (he still holds it). Anna's blue: 3 against Chris's 3, missed.
    assert facts(res) == ([[3, 0, 3], [0, 6, 0], [3, 0, 0]], CHRIS, [-5, 11, 0], [MISSED, MADE, NO_BID])


def test_a_renege_closes_the_hand_with_its_penalty():
    cfg = BobsHatConfig(players=3, hands=2, renege_mode=True)
    g = Game(cfg)
    g.deal("none", HAT_HANDS)
    g.hat(10)
    g.bid("blue", "red", "fewest")
    g.trick(HAT_TRICKS[0])  # Anna takes 3 black
    g.trick(HAT_TRICKS[1])  # Bob takes 3 red and the hat
    g.play("blue1")  # Bob leads blue; Chris holds blue15 and blue4 but plays red3: a renege
    res = bh.step(cfg, g.state, np.array([card_action("red3")]), auto_deal=True)
    assert res.renege[0] and not res.hand_done[0] and int(g.state.attempt[0]) == 1 and not g.state.taken.any()
    assert facts(res) == ([[0, 0, 3], [0, 3, 0], [0, 0, 0]], BOB, [0, 0, -15], [0, 0, RENEGE])


def test_rows_where_no_hand_ended_read_nothing_even_in_a_reused_result():
    cfg = BobsHatConfig(players=3, hands=2)
    g = Game(cfg)
    g.deal("none", HAT_HANDS)
    g.hat(10)
    g.bid("blue", "red", "fewest")
    reused = bh.new_result(cfg, 1)
    for card in " ".join(HAT_TRICKS).split():
        res = bh.step(cfg, g.state, np.array([card_action(card)]), result=reused)
        if not res.hand_done[0]:
            assert facts(res) == ([[0, 0, 0]] * 3, -1, [0, 0, 0], [0, 0, 0]), card
    assert facts(res)[1:] == (CHRIS, [-5, 11, 15], [MISSED, MADE, MADE | ROLE])
    res = bh.step(cfg, g.state, np.array([bh.HAT_PLUS]), result=reused)  # hand 2's hat choice: nothing ended
    assert facts(res) == ([[0, 0, 0]] * 3, -1, [0, 0, 0], [0, 0, 0])


# --------------------------------------------------------------------------
# Oh Hell: (bids, tricks taken) per seat, hand 1 ([0, 1, 1], [0, 1, 0]), hand 2 ([2, 0, 1], [1, 0, 1])
@pytest.mark.parametrize(
    "scoring, scores",
    [
        ("positive", ([10, 11, 0], [1, 10, 11])),  # tricks + 10 if made
        ("neutral", ([10, 11, 0], [0, 10, 11])),  # 10 + tricks if made, else 0
        ("negative", ([10, 10, -10], [-10, 10, 10])),  # 10 if made, else -10 per trick off
    ],
)
def test_oh_hell_facts_survive_the_next_deal(scoring, scores):
    cfg = OhHellConfig(players=3, deal_style="short_high", first_dealer=2, scoring=scoring)  # 1, 2, ... cards
    state = oh.init(cfg, np.array([0], dtype=np.uint64), auto_deal=False)

    def act(a: int, auto_deal: bool = False):
        return oh.step(cfg, state, np.array([a]), auto_deal=auto_deal)

    def deal(trump: str, hands: list[str]) -> None:
        rows = np.zeros((1, 3, oh.N_CARDS), dtype=bool)
        for p, h in enumerate(hands):
            rows[0, p, [oh_parse_card(c) for c in h.split()]] = True
        oh.deal(cfg, state, np.array([0]), np.array([oh_parse_card(trump)]), rows)

    # Hand 1: dealer 2, spades trump; the 2 of trumps beats the ace led.
    deal("5S", ["AH", "2S", "KH"])
    for b in (0, 1, 1):
        act(oh.BID_BASE + b)
    act(oh_parse_card("AH"))
    act(oh_parse_card("2S"))
    res = act(oh_parse_card("KH"), auto_deal=True)
    assert res.hand_done[0] and int(state.hand_no[0]) == 1 and state.phase[0] == oh.BID and not state.taken.any()
    assert facts(res) == ([0, 1, 0], -1, scores[0], [MADE, MADE, MISSED])
    # Hand 2 (dealt by hand here: the facts do not depend on how): dealer 0, hearts trump, seat 1 leads.
    state.phase[0] = oh.DEAL
    deal("7H", ["AC 3D", "KC 4D", "2C QH"])
    for b in (0, 1, 2):
        act(oh.BID_BASE + b)
    for card in ("KC", "2C", "AC", "3D", "4D"):
        assert not act(oh_parse_card(card)).hand_done[0]
    res = act(oh_parse_card("QH"), auto_deal=True)
    assert facts(res) == ([1, 0, 1], -1, scores[1], [MISSED, MADE, MADE])


# --------------------------------------------------------------------------
# Every hand of random batched games: the facts are the hand as the old way (a copy stepped
# without the next deal) leaves it, and the reasons agree with the scores.
@pytest.mark.parametrize(
    "name, options",
    [
        ("bobs_hat", dict(players=4, hands=3, no_bid=True, double_fewest=True, renege_mode=True)),
        ("oh_hell", dict(players=4, deal_style="short_high_low")),
    ],
)
def test_facts_match_the_hand_before_its_next_deal(name, options):
    game = make_game(name, **options)
    B = 32
    state = game.init(rng.game_keys(5, np.arange(B)))
    gen = np.random.default_rng(3)
    ended = 0
    for _ in range(400):
        legal = game.legal_action_mask(state)
        live = ~game.done(state)
        if not live.any():
            break
        if game.renege_mode:  # now and then a held card that breaks follow suit
            held = np.pad(state.hands[np.arange(B), state.cur], ((0, 0), (0, game.n_actions - game.deck.n_cards)))
            legal |= ((gen.random(B) < 0.02) & (state.phase == game.module.PLAY))[:, None] & held
        acts = np.array([gen.choice(np.flatnonzero(row)) if row.any() else 0 for row in legal])
        before = state.copy()
        res = game.step(state, acts, active=live)
        old = before.copy()
        game.step(old, acts, active=live, auto_deal=False)
        h = np.flatnonzero(res.hand_done | res.renege)
        ended += h.size
        assert np.array_equal(res.hand_taken[h], old.taken[h])
        assert np.array_equal(res.role_holder[h], game.module.role_holder(old)[h])
        assert np.array_equal(res.rewards[h], old.last_scores[h])
        why = res.hand_why[h]
        assert np.array_equal(why & RENEGE > 0, res.renege[h][:, None] & (res.rewards[h] == bh.RENEGE_PENALTY))
        assert not np.any((why & NO_BID > 0) & (res.rewards[h] != 0))
        assert np.all((why > 0) | res.renege[h][:, None])  # every seat of a scored hand has a reason
        rest = np.flatnonzero(~(res.hand_done | res.renege))
        assert not res.hand_taken[rest].any() and np.all(res.role_holder[rest] == -1) and not res.hand_why[rest].any()
    assert ended >= B

"""The bidding benchmark's oracles (train/bids/) against values worked out independently in the test.

One-card Oh Hell hands: every card play is forced, so a bid's value in a
deal follows from the cards alone (who wins the one trick, who made their
bid), and the test computes it with its own trick rule and scoring. The
hidden cards matter: the bidder's KH wins the trick in the actual deal but
loses it in most deals consistent with what it saw, so the hindsight oracle
(the actual deal) and the information-set oracle (the mean over the K sampled
worlds, the actual deal not among them) disagree on the best bid by amounts
the test computes from the worlds themselves.
"""

from __future__ import annotations

import numpy as np
import pytest

from agents import make_agent
from agents.composite import CompositeAgent
from bobshat_env.core import bobs_hat as bh
from bobshat_env.core import oh_hell as oh
from bobshat_env.core.cards import oh_parse_card as card
from bobshat_env.core.resample import sample_hands
from bobshat_env.games import make_game
from train.bids import bidders, decision_values, measure, regrets

SPADES = 2  # trump: the turned card is 2S
OTHERS_BIDS = {1: 1, 2: 1, 3: 0}  # seats 1, 2, 3 bid before the dealer (seat 0), who bids last


def one_card_deal():
    """Oh Hell, 4 players, one card each (the first hand of ``short_high``), seat 0 deals, 2S turned.

    Seat 1 leads 5H, seat 2 holds 3H, seat 3 7C, the dealer KH: the dealer's KH takes the trick. Seats 1, 2
    and 3 bid 1, 1, 0 (so the hook forbids nothing): the dealer chooses between bidding 0 and 1.
    """
    game = make_game("oh_hell", players=4, deal_style="short_high")
    st = game.init(np.array([11], dtype=np.uint64), auto_deal=False)
    assert st.dealer[0] == 0 and game.config.scoring == "positive"
    hands = np.zeros((1, 4, oh.N_CARDS), dtype=bool)
    for seat, c in ((1, "5H"), (2, "3H"), (3, "7C"), (0, "KH")):
        hands[0, seat, card(c)] = True
    oh.deal(game.config, st, np.array([0]), np.array([card("2S")]), hands)
    for seat in (1, 2, 3):
        assert st.cur[0] == seat
        game.step(st, np.array([oh.BID_BASE + OTHERS_BIDS[seat]]))
    assert st.cur[0] == 0 and np.flatnonzero(game.legal_action_mask(st)[0]).tolist() == [oh.BID_BASE, oh.BID_BASE + 1]
    return game, st


def points_by_hand(hands: np.ndarray, dealer_bid: int) -> np.ndarray:
    """(4,) each seat's points for the hand, worked out from one deal (4, 52) of one card per seat.

    Seat 1 leads; the highest spade wins, else the highest card of the suit led; positive scoring
    (10 + tricks for a bid made, else the tricks).
    """
    cards = [int(np.flatnonzero(hands[p])[0]) for p in range(4)]
    suit, rank = [c % 4 for c in cards], [c // 4 for c in cards]
    trumps = [p for p in range(4) if suit[p] == SPADES]
    contenders = trumps or [p for p in range(4) if suit[p] == suit[1]]
    winner = max(contenders, key=lambda p: rank[p])
    bid = {**OTHERS_BIDS, 0: dealer_bid}
    taken = [int(p == winner) for p in range(4)]
    return np.array([taken[p] + (10 if taken[p] == bid[p] else 0) for p in range(4)], dtype=float)


def _values_by_hand(deals: np.ndarray) -> dict[str, np.ndarray]:
    """(2,) score and margin (own points minus the other three seats' mean) of bids 0 and 1, meaned over deals."""
    pts = np.array([[points_by_hand(h, b) for b in (0, 1)] for h in deals])  # (n, 2, 4)
    score = pts[:, :, 0]
    margin = pts[:, :, 0] - pts[:, :, 1:].sum(axis=2) / 3
    return {"score": score.mean(axis=0), "margin": margin.mean(axis=0)}


def _worlds(game, st, K: int, seed: int) -> np.ndarray:
    """The K deals the information-set oracle draws (what the dealer saw: its card, the trump, the bids)."""
    seat = np.array([0])
    _, counts, unseen = game.public_state(game.observe(st), seat)
    void = np.zeros((1, 4, game.deck.n_suits), dtype=bool)
    return sample_hands(st.hands[:, 0], seat, unseen, counts, void, game.deck, K, np.random.default_rng(seed))[0]


def test_hindsight_and_information_set_values_match_an_independent_count():
    game, st = one_card_deal()
    K, seed = 16, 4
    worlds = _worlds(game, st, K, seed)
    # The worlds are consistent with what the dealer saw, and not the actual deal.
    assert (worlds[:, 0] == st.hands[0, 0]).all() and (worlds.sum(axis=2) == 1).all()
    assert not worlds[:, :, card("2S")].any()
    hindsight = _values_by_hand(st.hands[:1])
    info = _values_by_hand(worlds)
    for objective in ("score", "margin"):
        hind, inf = decision_values(game, st, "strong", worlds=K, seed=seed, objective=objective)
        bids_ = slice(oh.BID_BASE, oh.BID_BASE + 2)
        np.testing.assert_allclose(hind[0, bids_], hindsight[objective], rtol=0, atol=1e-12)
        np.testing.assert_allclose(inf[0, bids_], info[objective], rtol=0, atol=1e-12)
        assert np.isnan(np.delete(hind[0], [oh.BID_BASE, oh.BID_BASE + 1])).all()
    # In the actual deal KH takes the trick: bid 1 makes 11 points, bid 0 one; seats 1 and 2 (bids 1) take
    # nothing (0 points), seat 3 makes its 0 (10): the margin is the dealer's points minus 10 / 3.
    np.testing.assert_array_equal(hindsight["score"], [1.0, 11.0])
    np.testing.assert_allclose(hindsight["margin"], [1 - 10 / 3, 11 - 10 / 3])
    # Hindsight is the actual deal whatever worlds are drawn: the same with every seed.
    for other_seed in range(4):
        hind, _ = decision_values(game, st, "strong", worlds=K, seed=other_seed)
        np.testing.assert_array_equal(hind[0, oh.BID_BASE : oh.BID_BASE + 2], hindsight["score"], err_msg=other_seed)
    # The hidden cards matter: in most worlds KH loses, so the information set prefers bid 0.
    assert info["score"][0] > info["score"][1]
    chose_one = np.array([oh.BID_BASE + 1])
    hind, inf = decision_values(game, st, "strong", worlds=K, seed=seed)
    assert regrets(hind, chose_one, 0)[0] == 0
    np.testing.assert_allclose(regrets(inf, chose_one, 0)[0], info["score"][0] - info["score"][1])
    assert regrets(hind, np.array([oh.BID_BASE]), 0)[0] == 10


def test_a_sampling_play_policy_averages_several_playouts():
    """With a random play policy each value is the mean of 8 playouts per world unless ``playouts`` says
    otherwise: the default equals playouts=8 exactly (same draws) and differs from a single playout."""
    game = make_game("oh_hell", players=4, deal_style="short_high")
    keys = np.array([21], dtype=np.uint64)
    st = game.init(keys, auto_deal=False)
    st.hand_no[:] = 2  # three cards each, so the play policy's choices matter
    trump, hands = oh.random_deal(game.config, keys, st.hand_no)
    oh.deal(game.config, st, np.array([0]), trump, hands)
    kw = {"worlds": 3, "seed": 2}
    default = decision_values(game, st, "random", **kw)
    eight = decision_values(game, st, "random", playouts=8, **kw)
    one = decision_values(game, st, "random", playouts=1, **kw)
    np.testing.assert_array_equal(default[0], eight[0])
    np.testing.assert_array_equal(default[1], eight[1])
    assert not np.array_equal(np.nan_to_num(default[1]), np.nan_to_num(one[1]))


def test_measure_runs_the_sampling_playouts():
    """``run.playouts`` counts every playout: each legal alternative x (the actual deal + K worlds) x 8."""
    game = make_game("bobs_hat", players=4, hands=1)
    res = measure(game, ["simple"], deals=1, seed=3, worlds=2, play="random", batch_size=1)
    dec = res.decisions["simple"]
    assert dec.is_hat.sum() == 1 and (~dec.is_hat).sum() == 1  # the bidder deals: a hat choice and a bid
    legal = int((~np.isnan(dec.q_hind)).sum())
    assert res.table["playouts"] == 8
    assert res.table["run"]["playouts"] == legal * (2 + 1) * 8


# Student t 0.975 quantiles, so the intervals below are computed without the project's helper (whose table is
# rounded: the comparisons allow 1e-6)
T975 = {1: 12.706204736174698, 2: 4.302652729911275, 3: 3.182446305284263, 4: 2.7764451051977934}


def _mean_ci(per_deal: np.ndarray) -> tuple[float, float]:
    x = per_deal[~np.isnan(per_deal)]
    return float(x.mean()), float(T975[x.size - 1] * x.std(ddof=1) / np.sqrt(x.size))


def _by_deal(values: np.ndarray, deal: np.ndarray, keep: np.ndarray, deals: int, per: np.ndarray | None = None):
    """(deals,) per deal: the sum of ``values[keep]`` over ``per`` (a count per deal), or their mean; NaN if none."""
    out = np.full(deals, np.nan)
    for d in range(deals):
        s = keep & (deal == d)
        if s.any():
            out[d] = values[s].sum() / (per[d] if per is not None else s.sum())
    return out


def _label(name: str, action: int) -> str:
    if name == "oh_hell":
        return str(action - oh.BID_BASE)
    return "+".join(bh.bid_cards(action - bh.BID_BASE)) or "none"


@pytest.fixture(scope="module")
def short_run():
    """Two-hand games of Bob's Hat (the bidder deals in some: hat choices), 4 deals, strong play policy."""
    return measure(make_game("bobs_hat", players=4, hands=2), ["random", "strong"], deals=4, seed=5, worlds=2,
                   play="strong", batch_size=2)  # fmt: skip


def test_report_numbers_follow_from_the_decisions(short_run):
    """Every per-hand number, interval and pairwise difference of the table, recomputed here from the
    decisions: regret per hand is the deal's regret summed over its decisions (hat choices too) over its
    hands; per bid and per hat over those decisions; the intervals are Student t over deals; the pairwise
    differences are paired by deal (and the paired interval is not the unpaired one)."""
    res = short_run
    name = res.game.name
    deals = res.table["deals"]
    off = res.game.module.N_CARDS
    per_deal = {}
    for b in res.table["bidders"]:
        dec = res.decisions[b["name"]]
        rows = np.arange(dec.chosen.size)
        bid, hat = ~dec.is_hat, dec.is_hat
        hands = np.bincount(dec.deal[bid], minlength=deals)
        assert (hands == res.game.config.hands).all()
        assert b["hands"] == bid.sum() and b["decisions"] == {"bid": int(bid.sum()), "hat": int(hat.sum())}
        score = _by_deal(dec.score, dec.deal, bid, deals)
        assert (b["score_per_hand"], b["ci95"]) == pytest.approx(_mean_ci(score), rel=1e-6)
        margin = _by_deal(dec.margin, dec.deal, bid, deals)
        assert (b["margin_per_hand"], b["margin_ci95"]) == pytest.approx(_mean_ci(margin), rel=1e-6)
        per_deal[b["name"]] = {"score": score}
        for objective, pair in (("score", (dec.q_hind, dec.q_info)), ("margin", (dec.m_hind, dec.m_info))):
            for oracle, q in zip(("hindsight", "info_set"), pair):
                r = np.nanmax(q, axis=1) - q[rows, dec.chosen - off]
                got = b["regret"][objective][oracle]
                every = np.ones(rows.size, dtype=bool)
                per_hand = _by_deal(r, dec.deal, every, deals, per=hands)
                assert (got["per_hand"], got["ci95"]) == pytest.approx(_mean_ci(per_hand), rel=1e-6)
                assert (got["bid"], got["bid_ci95"]) == pytest.approx(_mean_ci(_by_deal(r, dec.deal, bid, deals)))
                if name == "bobs_hat":
                    expected = _mean_ci(_by_deal(r, dec.deal, hat, deals))
                    assert (got["hat"], got["hat_ci95"]) == pytest.approx(expected, rel=1e-6, nan_ok=True)
                    other = np.where(dec.chosen == bh.HAT_PLUS, bh.HAT_MINUS, bh.HAT_PLUS)
                    gain = q[rows, dec.chosen - off] - q[rows, other - off]  # the hat chosen over the other one
                    cal = b["calibration"]["hat"][objective]
                    expected = _mean_ci(_by_deal(gain, dec.deal, hat, deals))
                    assert (cal[oracle], cal[oracle + "_ci95"]) == pytest.approx(expected, rel=1e-6, nan_ok=True)
                else:
                    assert got["hat"] is None
                assert got["zero_share"] == pytest.approx(np.mean(r <= 1e-9))
                if objective == "score":
                    per_deal[b["name"]][oracle] = per_hand
        labels = [_label(name, int(a)) for a in dec.chosen[bid]]
        assert b["bid_distribution"] == pytest.approx({k: labels.count(k) / len(labels) for k in set(labels)})
    (d,) = res.table["pairwise"]
    a, b = per_deal[d["a"]], per_deal[d["b"]]
    for key, mean, ci in (
        ("score", "score_diff", "ci95"),
        ("hindsight", "hindsight_regret_diff", "hindsight_ci95"),
        ("info_set", "info_set_regret_diff", "info_set_ci95"),
    ):
        paired = _mean_ci(a[key] - b[key])
        assert (d[mean], d[ci]) == pytest.approx(paired, rel=1e-6), key
        unpaired = np.hypot(_mean_ci(a[key])[1], _mean_ci(b[key])[1])
        assert abs(unpaired - paired[1]) > 1e-6  # the two intervals differ here: the test can tell them apart


def test_which_play_policies_count_as_sampling():
    game = make_game("oh_hell", players=4)
    ck = bidders.ROOT / "checkpoints" / "oh_hell_4p.pt"
    for spec, sampling in (
        ("random", True), ("strong", False), ("simple", False),
        (f"ppo:{ck}", False), (f"ppo:{ck},sample=true", True),
    ):  # fmt: skip
        assert bidders.is_sampling(make_agent(spec, game, seed=0)) is sampling, spec
    strong, rnd = make_agent("strong", game), make_agent("random", game, seed=0)
    assert bidders.is_sampling(CompositeAgent(game, strong, rnd, name="x")) and not bidders.is_sampling(
        CompositeAgent(game, strong, strong, name="y")
    )

"""Benchmarking bidding strategies: regret against hindsight and information-set oracles.

``bobshat bids --bidders random,simple,strong`` runs this package; ``--suite v1``
runs the versioned benchmark of the README's leaderboard.

Modules (one job each)
    ``bidders`` specs, the shipped play policy, seeds; ``oracle`` the values
    of every alternative of a bidding decision (:func:`decision_values`);
    ``benchmark`` each bidder's games in chunks through the one worker-pool
    driver (:mod:`train.runtime.pool`), :func:`measure` and :func:`run_suite`;
    ``report`` regrets and scores as JSON and text; ``plots`` the figure;
    ``command`` the ``bobshat bids`` entry. Each game's own pieces live in a
    file named after it (``bobs_hat.py``, ``oh_hell.py``), reached through the
    game's description (``bid_oracle`` in :mod:`bobshat_env.games`).

What is measured
    Each *bidder* (any agent spec; only its bidding decisions are used: the
    bids, and the dealer's hat choice in Where's Bob's Hat?) plays ``deals``
    whole games. In game ``d`` it sits in seat ``d % P`` and every other
    seat, and every card of every seat, is played by one fixed agent, the
    *play policy* (``--play``; it also makes the other seats' bids). Deal
    ``d`` has the key ``rng.game_keys(seed, d)``, the key of deal ``d`` of
    ``bobshat eval`` and of game ``d`` of ``simulate``, so every bidder meets
    the same cards in the same seat (duplicate play), against the same field.
    The games run in the arena's loop (:func:`agents.arena.play_games`, as
    every tournament does), the bidder's seat held by a ``bid=BIDDER+play=PLAY``
    composite agent; a per-step observer keeps the bidder's decisions.

Oracles (one value per legal alternative of every bidding decision)
    *hindsight*: the actual deal (all hands known); *information set*: the
    mean over ``worlds`` (K) deals of the hidden cards drawn uniformly among
    those consistent with what the bidder saw (its hand, the trump, the hat,
    the bids before it: :func:`bobshat_env.core.resample.sample_hands`). The
    value of an alternative is the bidder's own score for the hand (objective
    ``score``; ``margin``: its score minus the other seats' mean, what a game
    is won on; both come from the same playouts) when it takes that
    alternative and the hand is then played out to its end by the play
    policy: every later bid of the other seats by the play policy (reacting
    to the alternative, as it would at the table; Oh Hell's hook stays
    legal), every card by the play policy. A hat choice is valued with the
    dealer's own bid as the bidder actually made it. All playouts of a chunk
    of decisions (alternatives x worlds x playouts) run as one batch on the
    batched core (``max_rows`` rows at most). A deterministic play policy
    (greedy ``ppo:``, ``strong``, ``simple``) gets one playout per world; a
    sampling one (``random``, ``ppo:...,sample=true``, ``pimc``) ``playouts``
    (default 8), averaged. With a deterministic play policy the hindsight
    value of the alternative chosen is exactly what the hand scored (a test
    checks it).

    A decision's *regret* is the value of the best alternative minus that of
    the one chosen (>= 0), for each oracle and objective. The objectives
    differ most on the hat: for the dealer's own score the +10 hat is nearly
    always the better one (a hat counts only for whoever holds it), while a
    -10 hat that ends with an opponent is worth 10 / (P - 1) of margin. A
    bidder's regret per hand is the sum over its decisions in the hand (the
    bid, and the hat choice when it deals) averaged over hands; 95%
    confidence intervals (Student t) are over deals, each deal's hands
    averaged first. Caveats: the information-set worlds are uniform over
    consistent deals, not weighted by how likely the earlier bids made them
    (the usual PIMC simplification), and with secret bidding the worlds keep
    the earlier seats' bids as made; with K worlds the estimated best value
    is biased up by noise, so information-set regrets are slightly high
    (less so as K grows). Hindsight regret with a deterministic play policy
    has no such noise.

Reproducibility
    Deals are split into chunks of ``batch_size`` games (at most a quarter of
    the deals); each (chunk, bidder) builds its agents and its world sampler
    from ``(seed, chunk, bidder spec)``, so a bidder's numbers do not depend
    on which other bidders are in the run or on ``workers``.

JSON schema (``--json``; :func:`report_json` builds it)::

    {
      "schema": "bobshat.bids/1",
      "suite": "v1" | null,
      "tables": [{                                   # one per game (the v1 suite has two)
        "game": "bobs_hat" | "oh_hell",
        "config": {...game options...},
        "play": str,                                 # the play policy's spec
        "play_sha256": str | null,                   # of a ppo: checkpoint file
        "seed": int, "deals": int, "worlds": int, "playouts": int,
        "hands_per_game": int, "batch_size": int,
        "variance_reduction": bool,                  # on (the default) or off (--no-variance-reduction)
        "bidders": [{
          "name": str,                               # the bidder's spec ("shipped": the table's checkpoint)
          "hands": int, "decisions": {"bid": int, "hat": int},
          "score_per_hand": float, "ci95": float,    # the bidder's own hand score
          "margin_per_hand": float, "margin_ci95": float,   # its score minus the other seats' mean
          "regret": {"score" | "margin": {"hindsight" | "info_set": {
              "per_hand": float, "ci95": float,      # points per hand, >= 0
              "bid": float, "bid_ci95": float,       # per bid decision
              "hat": float | null, "hat_ci95": float | null,   # per hat choice (Bob's Hat)
              "zero_share": float}}},                # share of decisions with regret 0 (a best choice)
          "made_rate": float,                        # Bob's Hat: bid cards made / bid cards;
                                                     # Oh Hell: hands with tricks == bid
          "bid_distribution": {"<bid>": float, ...}, # share of hands; Bob's Hat "most_blue+fewest",
                                                     # "none" (no-bid); Oh Hell "0".."10"
          "calibration": {...},                      # see below
          "variance_reduction": VR | null            # null: a bidder whose probabilities are unknown
        }, ...],
        "pairwise": [{"a": str, "b": str,            # a minus b, paired over deals
                      "score_diff": float, "ci95": float,    # score per hand
                      "hindsight_regret_diff": float, "hindsight_ci95": float,   # regret per hand (score)
                      "info_set_regret_diff": float, "info_set_ci95": float,
                      "variance_reduction": VR | null}, ...],   # null: neither has known probabilities
        "run": {"seconds": float, "bidding_decisions": int, "playouts": int,
                "playout_decisions": int, "seconds_per_decision": float, "workers": int}
      }, ...]
    }

``VR`` (docs/variance_reduction.md): the same quantities with the control
variates of a bidder with known probabilities (``random``, sampled ``ppo``)
subtracted at its bids, ``Q(s, a) - sum_b pi(b|s) Q(s, b)`` with the oracles'
own values as ``Q`` (unbiased; no playout of its own)::

    {"score" | "hindsight" | "info_set": {"mean": float, "ci95": float,   # per hand, like the plain ones
        "variance_factor": float,                    # plain / reduced variance over deals
        "beta": [float]}}                            # the term's cross-fitted coefficient

``calibration`` for Where's Bob's Hat? (``p`` = the information-set oracle's
chance that a bid is made: the share of its worlds where it was)::

    {"types": {"most_blue" | "most_red" | "most_black" | "fewest" | "double_fewest":
                 {"rate": float,                     # share of hands with this bid card
                  "success": float | null,           # actual share made, when bid
                  "predicted": float | null,         # mean p of the bids made, when bid
                  "predicted_alone": float,          # mean p of bidding this card alone, every hand
                  "points": float | null}},          # mean points of the bid card, when bid
     "curve": {"edges": [0, ..., 1],                 # bins of p of the card bid alone (one per j / K
                                                     # with K <= 10 worlds, else ten)
               "n": [int], "p": [float|null],        # cards in the bin, their mean p
               "bid_share": [float|null],            # share of them bid
               "success": [float|null]},             # share of those bids made
     "hat": {"decisions": int, "chose_plus": float | null,
             "score" | "margin": {                   # oracle value of the hat chosen minus the other one
                 "hindsight": float | null, "hindsight_ci95": float | null,
                 "info_set": float | null, "info_set_ci95": float | null}}}

``calibration`` for Oh Hell (``seat_from_dealer``: 0 the dealer, who bids
last; 1 the dealer's left, who bids first)::

    {"exact_rate": float, "mean_bid": float, "mean_taken": float,
     "over_under": float,                            # mean tricks taken minus bid
     "by_hand_size": {"<size>": ROW, ...}, "by_seat_from_dealer": {"<k>": ROW, ...},
     "curve": {"bid": [0..10], "hands": [int], "mean_taken": [float|null],
               "info_set_taken": [float|null]}}      # tricks the oracle expected after that bid
    ROW = {"hands": int, "mean_bid": float, "mean_taken": float, "over_under": float,
           "exact_rate": float, "oracle_bid": float}  # oracle_bid: mean best bid of the info-set oracle
"""

from .benchmark import measure, run_suite
from .oracle import decision_values
from .plots import plot
from .report import format_report, regrets, report_json

# what README.md and notebooks/03_bidding_study.ipynb import from here
__all__ = ["decision_values", "format_report", "measure", "plot", "regrets", "report_json", "run_suite"]

"""Duplicate tournaments between bots: scores with confidence intervals, ratings, bidding reports, plots.

``bobshat eval --agents strong,simple,random,random --deals 2000`` runs this package.

Modules (one job each)
    ``statistics`` confidence intervals over deals, win shares, ratings;
    ``duplicate`` seatings and duplicate play (also the trainer's check and
    the strength benchmark); ``tournament`` chunks of deals played through
    the one worker-pool driver (:mod:`train.runtime.pool`); ``report`` the JSON
    summary and the terminal report; ``plots`` the figure; ``command`` the
    ``bobshat eval`` entry. Each game's own statistics live in a file named
    after it (``bobs_hat.py``, ``oh_hell.py``), reached through the game's
    description (``bid_report`` in :mod:`bobshat_env.games`).

Duplicate play
    A *deal* is everything chance decides in a game: its 64-bit key (the trump,
    the cards of every hand, a random first dealer; see
    :mod:`bobshat_env.core.rng`). Deal ``d`` has key ``rng.game_keys(seed, d)``
    (the key of game ``d`` of ``bobshat simulate --seed SEED``) and is played
    once per *seating*: an assignment of the agents to the seats. The seatings
    are all distinct permutations of the agent list when ``P! <= 24`` (up to 4
    players), else its ``P`` rotations (``seatings="all"`` / ``"rotations"``
    choose). Every agent so holds every seat's cards equally often, and the
    luck of the cards cancels within a deal. An agent named twice (``random``
    in two seats) is one entrant that sits in two seats of every game.
    With ``duplicate=False`` every game gets a deal of its own (key
    ``rng.game_keys(seed, g)`` for game ``g``); the seatings still cycle, so
    only the sharing of deals is switched off.

Statistics
    Games are grouped in units of one deal (its ``R`` seatings; with
    ``duplicate=False`` a block of ``R`` consecutive games). The games of a
    deal are correlated, so every statistic is first averaged within the deal
    (over its games and the seats the agent held), and means and 95%
    confidence intervals (Student t, ``n_deals - 1`` degrees of freedom) are
    taken over the per-deal values, which are independent. Pairwise
    differences are paired per deal. ``win_rate`` counts a shared first place
    as ``1 / (number tied)``, so the win rates of a table add up to 1 and an
    even field gives ``1 / P``. The rating is OpenSkill's Plackett-Luce model
    (``openskill`` package), one match per deal in deal order, the agents
    ranked by their mean score in that deal (equal means share a rank).

Reproducibility
    Deals are split into chunks of ``batch_size // R`` deals (fewer when that
    leaves under 4 chunks; at least 1) whose games are stepped together; each
    chunk builds its agents afresh with seeds derived from
    ``(seed, chunk, agent)``. ``workers`` spreads chunks over
    processes, ``ray_address`` over the tasks of a Ray cluster: the numbers
    are the same for any number of workers, with or without Ray (they
    depend on ``seed``, ``deals``, the agents, the options and ``batch_size``).

Bidding statistics come from the engine's state during play (bids, cards
or tricks taken and hand scores at each hand's end, each hand checked
against the engine's own score), so they need no records.

JSON schema (``--json``; ``Evaluation.summary()``)::

    {
      "schema": "bobshat.eval/1",
      "game": "bobs_hat" | "oh_hell",
      "config": {...game options...},
      "seed": int, "duplicate": bool, "deals": int,
      "seatings": [[agent name by seat], ...],      # the R seatings of every deal
      "games": int,                                 # deals * R
      "hands_per_game": int, "batch_size": int,
      "agents": [{
        "name": str,                                # the agent spec
        "seats_per_game": int,
        "mean_per_hand": float, "ci95": float,      # score per hand, CI half-width
        "mean_per_game": float, "ci95_per_game": float,
        "sd_per_game": float,                       # spread of single games' totals
        "win_rate": float, "win_rate_ci95": float,  # share of wins (ties split), CI half-width
        "win_rate_ci95_range": [float, float],      # that interval clipped to [0, 1]
        "rating": {"mu": float, "sigma": float, "ordinal": float} | null,
        "bids": {...}                               # see below
      }, ...],
      "pairwise": [{"a": str, "b": str, "diff_per_hand": float, "ci95": float,
                    "diff_per_game": float, "ci95_per_game": float}, ...],   # a minus b
      "seats": [{"seat": int, "mean_per_hand": float, "ci95": float}, ...],
      "run": {"seconds": float, "decisions": int, "workers": int,   # timing, not results
              "ray_address": str},                  # only with --ray-address; workers: the cluster's CPUs
      "variance_reduction": {                       # --variance-reduction (docs/variance_reduction.md)
        "enabled": bool,
        "reason": str,                              # only when not enabled: "off", or why not
        "value": str, "fresh_deals": int,           # the value checkpoint; fresh deals per chance event
        "decisions": "bids" | "all" | "none",       # which decisions of known-probability agents get terms
        "terms": [str, ...],                        # the columns of beta: chance, bid, play (value function), proxy
        "proxy": {"agents": [str, ...],             # multi-fidelity term (--vr-proxy): cheap spec per agent,
                  "fresh_deals": int,               # fresh deals per evaluated deal,
                  "seconds": float} | null,         # time of its games; null when not used
        "seconds": float,                           # time the estimate took (part of run.seconds)
        "agents": [{"name": str, "mean": float, "ci95": float,   # reduced score per hand, CI half-width
                    "variance_factor": float,       # plain / reduced variance over deals (>1: fewer deals needed)
                    "beta": [float, ...]}, ...],    # coefficients of the terms, in the order of "terms"
        "pairwise": [{"a": str, "b": str, "mean": float, "ci95": float,   # a minus b, paired over deals
                      "variance_factor": float, "beta": [...]}, ...]
      }
    }

``bids`` for Where's Bob's Hat?::

    {"hands": int,                       # hands the agent played (one per seat held)
     "mean_bid_cards": float,            # bid cards per hand (double fewest counts 2)
     "types": {"most_blue" | "most_red" | "most_black" | "fewest" | "double_fewest":
                   {"rate": float,       # share of hands with this bid
                    "success": float | null,   # share of those bids made
                    "points": float | null,    # mean points per such bid
                    "points_per_hand": float}, # its contribution per hand
               "no_bid": {"rate": float}},
     "hat": {"dealer_hands": int,
             "chose_plus": float | null,       # share of its deals with the +10 hat
             "dealer_kept": float | null,      # share of its deals it ended holding the hat
             "held_plus": float, "held_minus": float,   # share of hands ending with the +10 / -10 hat
             "points_per_hand": float},        # hat points scored per hand
     "reneges": int}

``bids`` for Oh Hell::

    {"hands": int, "mean_bid": float, "mean_taken": float,
     "bid_fraction": float,               # mean of bid / hand size
     "exact_rate": float, "over_rate": float, "under_rate": float,
     "zero_bid_rate": float, "zero_bid_exact": float | null,
     "by_hand_size": {"<size>": {"hands": int, "mean_bid": float, "mean_taken": float,
                                 "exact_rate": float}, ...}}
"""

from .plots import plot
from .report import format_report
from .tournament import evaluate

__all__ = ["evaluate", "format_report", "plot"]  # what notebooks/02_train_and_evaluate.ipynb imports from here

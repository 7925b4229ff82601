"""Independent referees for game records (docs/records.md), in plain Python.

``bobshat replay`` checks a record by playing it again through the engine,
the same rules code that wrote it: it catches a corrupt or edited record,
not a rules bug that the writer and the replayer share. These referees read a
record's JSON alone and re-derive, from docs/rules.md, everything the record
claims: deals, dealer rotation, bidding order and legality (no-bid, double
fewest, the Oh Hell hook), turn order, follow suit, trick winners, Bob's Hat,
reneges, tricks and cards taken, hand scores and totals. They use no engine
code: card notation is parsed here and the trick and score rules are the
plain restatements of the rules tests (``test_bobs_hat_sim``'s referee,
``test_oh_hell_core``'s plain helpers). Each returns the problems it found.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from test_bobs_hat_sim import ref_hand_scores, ref_trick_winner
from test_oh_hell_core import plain_hand_score, plain_trick_winner

BH_SUITS = ("blue", "red", "black")
BH_TRUMPS = {"blue": 0, "red": 1, "black": 2, "none": 3}
BH_MOST = {"most_blue": 1, "most_red": 2, "most_black": 4}
OH_RANKS = "23456789TJQKA"
OH_SUITS = "CDSH"


def bh_card(text: str) -> int:
    """``blue14`` -> suit * 20 + rank - 1 (README's action ids)."""
    for s, name in enumerate(BH_SUITS):
        if text.startswith(name) and text[len(name) :].isdigit() and 1 <= int(text[len(name) :]) <= 20:
            return s * 20 + int(text[len(name) :]) - 1
    raise ValueError(f"not a Bob's Hat card: {text!r}")


def oh_card(text: str) -> int:
    """``QS`` -> rank * 4 + suit (README's action ids, OpenSpiel's)."""
    if len(text) != 2 or text[0] not in OH_RANKS or text[1] not in OH_SUITS:
        raise ValueError(f"not an Oh Hell card: {text!r}")
    return OH_RANKS.index(text[0]) * 4 + OH_SUITS.index(text[1])


def _bh_suit(text: str) -> int:
    return bh_card(text) // 20


def _bh_winner(cards: list[str], leader: int, trump: int) -> int:
    return ref_trick_winner([bh_card(c) for c in cards], leader, trump)


def _oh_suit(text: str) -> int:
    return oh_card(text) % 4


def _oh_winner(cards: list[str], leader: int, trump: int) -> int:
    return plain_trick_winner([oh_card(c) for c in cards], leader, trump)


class _Problems(list):
    def check(self, ok: bool, where: str, what: str) -> bool:
        if not ok:
            self.append(f"{where}: {what}")
        return ok


def _play_tricks(
    problems: _Problems,
    where: str,
    tricks: list[dict],
    held: list[set[str]],
    first_leader: int,
    trump: int,
    suit_of: Any,
    winner_of: Any,
    renege: dict | None,
) -> tuple[list[list[int]], int | None]:
    """Follow the tricks (cards as the record writes them); (the cards each seat took, the renege found or None)."""
    P = len(held)
    won: list[list[int]] = [[] for _ in range(P)]
    leader, found = first_leader, None
    for t, trick in enumerate(tricks):
        at = f"{where} trick {t + 1}"
        problems.check(trick.get("leader") == leader, at, f"leader {trick.get('leader')}, the rules say {leader}")
        cards = trick["cards"]
        for i, c in enumerate(cards):
            seat = (leader + i) % P
            if not problems.check(c in held[seat], at, f"seat {seat} plays {c}, which it does not hold"):
                return won, found
            led = suit_of(cards[0])
            if i > 0 and suit_of(c) != led and any(suit_of(x) == led for x in held[seat]):
                if renege is None or found is not None:
                    problems.append(f"{at}: seat {seat} plays {c} but holds the suit led")
                else:
                    found = seat
                    problems.check(t == len(tricks) - 1 and i == len(cards) - 1, at, "play goes on after a renege")
            held[seat].discard(c)
        if found is not None:  # the renege ends the hand; the trick is not taken
            break
        if not problems.check(len(cards) == P, at, f"{len(cards)} cards in the trick"):
            break
        by_seat = [cards[(s - leader) % P] for s in range(P)]
        winner = winner_of(by_seat, leader, trump)
        problems.check(trick.get("winner") == winner, at, f"winner {trick.get('winner')}, the rules say {winner}")
        won[winner] += cards
        leader = winner
    return won, found


def referee_bobs_hat(rec: dict) -> list[str]:
    """Everything a Where's Bob's Hat? record claims, re-derived from docs/rules.md (Where's Bob's Hat?)."""
    problems = _Problems()
    cfg = rec["config"]
    P, n_hands = cfg["players"], cfg["hands"]
    rules = SimpleNamespace(players=P, negative_scoring=bool(cfg.get("negative_scoring")))
    totals, no_bid_used, number = [0] * P, [False] * P, 1
    first_dealer = cfg["first_dealer"]
    for e, entry in enumerate(rec["hands"]):
        where = f"hand entry {e + 1}"
        k = entry["number"]
        problems.check(k == number, where, f"hand number {k}, expected {number}")
        size = 4 + k
        problems.check(entry["hand_size"] == size, where, f"hand size {entry['hand_size']}, hand {k} deals {size}")
        dealer = (first_dealer + k - 1) % P
        problems.check(entry["dealer"] == dealer, where, f"dealer {entry['dealer']}, the rotation says {dealer}")
        deal = [[bh_card(c) for c in cards] for cards in entry["deal"]]
        problems.check([len(d) for d in deal] == [size] * P, where, f"dealt {[len(d) for d in deal]}")
        everything = [c for d in deal for c in d]
        problems.check(len(set(everything)) == len(everything), where, "a card dealt twice")
        problems.check(entry["hat"] in (10, -10), where, f"hat {entry['hat']}")
        trump = BH_TRUMPS[entry["trump"]]
        codes = []
        for seat, bid in enumerate(entry["bids"]):
            fewest = bid.count("fewest")
            most = [b for b in bid if b != "fewest"]
            problems.check(all(b in BH_MOST for b in most) and len(set(most)) == len(most), where, f"bid {bid}")
            problems.check(fewest <= (2 if cfg.get("double_fewest") else 1), where, f"seat {seat} bids {bid}")
            if not bid:
                problems.check(bool(cfg.get("no_bid")) and not no_bid_used[seat], where, f"seat {seat} bids nothing")
            codes.append(sum(BH_MOST.get(b, 0) for b in most) + 8 * fewest)
        renege = entry.get("renege")
        held = [set(d) for d in entry["deal"]]
        won, found = _play_tricks(problems, where, entry["tricks"], held, dealer, trump, _bh_suit, _bh_winner, renege)
        if renege is not None or found is not None:
            problems.check(bool(cfg.get("renege_mode")), where, "a renege without the renege option")
            seat = None if renege is None else renege.get("seat")
            problems.check(found is not None and seat == found, where, f"renege by {seat}, the play shows {found}")
            last = entry["tricks"][-1]["cards"][-1] if entry["tricks"] else None
            problems.check(renege is not None and renege.get("card") == last, where, f"renege card, played {last}")
            expected = [-15 if p == found else 0 for p in range(P)]
        else:
            holder = None
            for trick in entry["tricks"]:
                if any(bh_card(c) % 20 + 1 in (14, 15) for c in trick["cards"]):
                    holder = trick["winner"]
            problems.check(entry["hat_holder"] == holder, where, f"hat holder {entry['hat_holder']}, expected {holder}")
            taken = [[sum(1 for c in w if bh_card(c) // 20 == s) for s in range(3)] for w in won]
            problems.check(entry["taken"] == taken, where, f"taken {entry['taken']}, the tricks give {taken}")
            dealt_per_suit = [sum(1 for c in everything if c // 20 == s) for s in range(3)]
            expected = ref_hand_scores(
                rules, codes, taken, dealt_per_suit, entry["hat"], -1 if holder is None else holder, size
            )
            for seat, bid in enumerate(entry["bids"]):
                no_bid_used[seat] |= not bid
            number += 1
        problems.check(entry["scores"] == expected, where, f"scores {entry['scores']}, the rules give {expected}")
        totals = [a + b for a, b in zip(totals, expected)]
    problems.check(number == n_hands + 1, "record", f"{number - 1} hands played, the game has {n_hands}")
    problems.check(rec["totals"] == totals, "record", f"totals {rec['totals']}, the hands add up to {totals}")
    return list(problems)


def referee_oh_hell(rec: dict, hand_sizes: list[int]) -> list[str]:
    """Everything an Oh Hell record claims, re-derived from docs/rules.md (Oh Hell).
    ``hand_sizes``: the deal style's sequence (pinned by hand in test_oh_hell_core)."""
    problems = _Problems()
    cfg = rec["config"]
    P, scoring = cfg["players"], cfg["scoring"]
    totals = [0] * P
    problems.check(len(rec["hands"]) == len(hand_sizes), "record", f"{len(rec['hands'])} hands")
    for e, entry in enumerate(rec["hands"]):
        where = f"hand {e + 1}"
        size = hand_sizes[e] if e < len(hand_sizes) else -1
        problems.check(entry["number"] == e + 1 and entry["hand_size"] == size, where, "number or hand size")
        dealer = (cfg["first_dealer"] + e) % P
        problems.check(entry["dealer"] == dealer, where, f"dealer {entry['dealer']}, the rotation says {dealer}")
        deal = [[oh_card(c) for c in cards] for cards in entry["deal"]]
        trump_card = oh_card(entry["trump_card"])
        everything = [c for d in deal for c in d] + [trump_card]
        problems.check([len(d) for d in deal] == [size] * P, where, f"dealt {[len(d) for d in deal]}")
        problems.check(len(set(everything)) == len(everything), where, "a card dealt twice (or turned and dealt)")
        bids = entry["bids"]
        problems.check(all(0 <= b <= size for b in bids), where, f"bids {bids}")
        # the dealer bids last; the hook: the bids may not add up to the tricks
        problems.check(sum(bids) != size, where, f"bids {bids} add up to the {size} tricks (the dealer's hook)")
        trump = trump_card % 4
        held, lead = [set(d) for d in entry["deal"]], (dealer + 1) % P
        won, _ = _play_tricks(problems, where, entry["tricks"], held, lead, trump, _oh_suit, _oh_winner, None)
        taken = [len(w) // P for w in won]
        problems.check(entry["taken"] == taken, where, f"taken {entry['taken']}, the tricks give {taken}")
        problems.check(sum(taken) == size, where, f"{sum(taken)} tricks played of {size}")
        expected = [plain_hand_score(scoring, b, t) for b, t in zip(bids, taken)]
        problems.check(entry["scores"] == expected, where, f"scores {entry['scores']}, the rules give {expected}")
        totals = [a + b for a, b in zip(totals, expected)]
    problems.check(rec["totals"] == totals, "record", f"totals {rec['totals']}, the hands add up to {totals}")
    return list(problems)


def openspiel_oh_hell(rec: dict, pyspiel: Any) -> list[str]:
    """Each hand of a positive-scoring Oh Hell record played in OpenSpiel's ``oh_hell``: the seat to
    act and the legality of every bid and card, and OpenSpiel's returns against the record's scores."""
    import numpy as np
    from test_oh_hell_openspiel import _drive_openspiel

    problems = _Problems()
    P = rec["config"]["players"]
    assert rec["config"]["scoring"] == "positive", "OpenSpiel plays positive scoring only"
    game = pyspiel.load_game("oh_hell", {"players": P})
    for e, entry in enumerate(rec["hands"]):
        hands = np.zeros((P, 52), dtype=bool)
        for p, cards in enumerate(entry["deal"]):
            hands[p, [oh_card(c) for c in cards]] = True
        s = _drive_openspiel(game, entry["hand_size"], entry["dealer"], hands, oh_card(entry["trump_card"]))
        moves = [((entry["dealer"] + 1 + i) % P, 52 + entry["bids"][(entry["dealer"] + 1 + i) % P]) for i in range(P)]
        for trick in entry["tricks"]:
            moves += [((trick["leader"] + i) % P, oh_card(c)) for i, c in enumerate(trick["cards"])]
        for seat, action in moves:
            ok = s.current_player() == seat and action in s.legal_actions()
            if not problems.check(ok, f"hand {e + 1}", f"OpenSpiel: seat {seat} may not play action {action}"):
                break
            s.apply_action(action)
        else:
            problems.check(s.is_terminal(), f"hand {e + 1}", "OpenSpiel: the hand is not over")
            problems.check(s.returns() == entry["scores"], f"hand {e + 1}", f"OpenSpiel scores {s.returns()}")
    return list(problems)

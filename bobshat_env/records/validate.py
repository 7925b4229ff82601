"""Replay validation: a record is rebuilt hand by hand with the rules core and every disagreement reported.

The replay trusts nothing in a record (docs/records.md): it checks structure,
every hat choice, bid and card against the rules (renege entries included),
recomputes every trick's winner, the hat holder, the cards or tricks taken,
every hand's scores and the totals, and reports each disagreement as a
:class:`~bobshat_env.records.faults.Fault` where it is. It never raises on a
corrupt record. The game's own parts come from its adapter
(:class:`~bobshat_env.records.rules.RecordRules`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.tricks import follow_suit_mask, rotate_dealer
from ..games import GAMES
from .faults import Fault, FaultSink, HandFaults, ReplayReport
from .rules import FORMAT, RecordRules, is_int, is_int_list, rules_named
from .steps import ReplayStep, step_one, watch_deal, watching


def replay_record(record: Any, index: int | None = None, line: int | None = None) -> list[Fault]:
    """Every fault of one record against the rules; an empty list if it is valid."""
    return replay_report(record, index, line).faults


def replay_report(record: Any, index: int | None = None, line: int | None = None) -> ReplayReport:
    """Replay one record with the rules core; never raises on a corrupt record."""
    sink = FaultSink(index, line)
    report = ReplayReport(sink.faults)
    try:
        _replay(record, sink, report)
    except Exception as err:  # a last resort: a corrupt record must become a fault, not a traceback
        sink.add(f"the replay could not go on ({type(err).__name__}: {err})")
    return report


def replay_steps(record: Any) -> tuple[ReplayReport, list[ReplayStep]]:
    """Replay one record (as :func:`replay_report`) and keep every state it passes through.

    Returns the report and, in order, a :class:`ReplayStep` for each hand
    entry's deal and each action (hat, bid, card) the replay stepped through
    the rules core: what a viewer needs to step through the game card by card
    (``bobshat serve``). Trust the steps only if ``report.ok``: a faulty
    record stops where the rules disagree with it.
    """
    with watching() as steps:
        report = replay_report(record)
    return report, list(steps)


def _replay(record: Any, sink: FaultSink, report: ReplayReport) -> None:
    """Check the record's game-level keys, then its hands and totals; faults go to ``sink``, findings to ``report``."""
    if not isinstance(record, dict):
        sink.add(f"a record is a JSON object, got {type(record).__name__}")
        return
    game = record.get("game")
    rules = rules_named(game)
    if rules is None:
        sink.add(f"unknown game {game!r}: expected one of {', '.join(GAMES)}")
        return
    report.game = game
    if record.get("format") != FORMAT or not is_int(record.get("format")):
        sink.add(f"unknown format {record.get('format')!r}: this version reads format {FORMAT}")
        return
    missing = [k for k in ("config", "seed", "agents", "hands", "totals") if k not in record]
    if missing:
        sink.add(f"missing key(s) {', '.join(missing)}")
    if "config" not in record:
        return
    cfg = rules.config_from_record(record["config"], sink)
    if cfg is None:
        return
    P = cfg.players
    report.players = P
    seed = record.get("seed")
    if "seed" in record and seed is not None and not is_int(seed):
        sink.add(f"seed must be an integer or null, got {seed!r}")
    agents = record.get("agents")
    if "agents" in record:
        if isinstance(agents, list) and len(agents) == P and all(isinstance(a, str) for a in agents):
            report.agents = agents
        else:
            sink.add(f"agents must be a list of {P} names, one per seat, got {agents!r}")
    hands = record.get("hands")
    if "hands" in record and not isinstance(hands, list):
        sink.add(f"hands must be a list of hands, got {type(hands).__name__}")
        hands = None
    if hands is None:
        return  # no hands to add up: the totals cannot be checked
    report.hands = len(hands)
    totals, unreplayed = _replay_hands(rules, cfg, hands, sink)
    report.totals = totals
    if "totals" in record:
        _check_totals(record["totals"], totals, unreplayed, P, sink, report)


def _replay_hands(rules: RecordRules, cfg: Any, hands: list, sink: FaultSink) -> tuple[list[int], list[int]]:
    """Replay the hand entries in order: the totals they add up to, and the entries whose scores the rules
    could not recompute (the record's own scores are added for those)."""
    P = cfg.players
    totals = [0] * P
    unreplayed: list[int] = []  # hand entries whose scores the rules could not recompute
    hand_no = 0  # 0-based number of the hand the next entry must be
    ctx = rules.new_context(cfg)
    for e, hand in enumerate(hands):
        if hand_no >= cfg.hands:
            sink.add(
                f"the record has {len(hands) - e} hand(s) after the last hand: the config plays {cfg.hands}",
                entry=e,
            )
            break
        fault = HandFaults(sink, hand_no + 1, e)
        scores, renege = _replay_hand(rules, cfg, hand, hand_no, ctx, fault)
        if scores is None and isinstance(hand, dict) and is_int_list(hand.get("scores"), P):
            scores = hand["scores"]  # could not replay: carry the record's scores to the totals
            unreplayed.append(e)
        if scores is not None:
            totals = [a + int(b) for a, b in zip(totals, scores)]
        if not renege:
            hand_no += 1
    else:
        if hand_no < cfg.hands:
            if hands and isinstance(hands[-1], dict) and "renege" in hands[-1]:
                sink.add(f"the record ends with a renege in hand {hand_no + 1}: that hand must be dealt again")
            else:
                sink.add(f"the record has {hand_no} hand(s) but the config plays {cfg.hands}")
    return totals, unreplayed


def _check_totals(
    got: Any, totals: list[int], unreplayed: list[int], P: int, sink: FaultSink, report: ReplayReport
) -> None:
    """Compare the record's ``totals`` with what its hands add up to."""
    if not is_int_list(got, P):
        sink.add(f"totals must be a list of {P} integers, got {got!r}")
        return
    report.recorded_totals = got
    if got == totals:
        return
    if unreplayed:
        sink.add(
            f"totals {got} but the hands add up to {totals} "
            f"(using the record's own scores for hands[{', '.join(map(str, unreplayed))}], which could not be "
            "replayed)"
        )
    else:
        sink.add(f"totals {got} but the rules give {totals}")


def _replay_hand(
    rules: RecordRules, cfg: Any, hand: Any, hand_no: int, ctx: dict, fault: HandFaults
) -> tuple[list[int] | None, bool]:
    """Replay one hand entry: the rules' scores (None if it cannot be replayed) and whether it reneged."""
    P = cfg.players
    if not isinstance(hand, dict):
        fault(f"a hand is a JSON object, got {type(hand).__name__}")
        return None, False
    claims_renege = "renege" in hand
    missing = [k for k in rules.hand_keys if k not in hand]
    if missing:
        fault(f"missing key(s) {', '.join(missing)}")
        rules.after_hand(cfg, None, hand, not claims_renege, ctx)
        return None, claims_renege

    def give_up() -> tuple[None, bool]:
        rules.after_hand(cfg, None, hand, not claims_renege, ctx)
        return None, claims_renege

    number = hand["number"]
    if number != hand_no + 1 or not is_int(number):
        fault(f"number is {number!r} but this entry is hand {hand_no + 1}")
    size = rules.hand_size(cfg, hand_no)
    if hand["hand_size"] != size or not is_int(hand["hand_size"]):
        fault(f"hand_size is {hand['hand_size']!r} but hand {hand_no + 1} deals {size} cards each")
    dealer = int(rotate_dealer(np.array([cfg.first_dealer]), np.array([hand_no]), cfg.players)[0])
    if hand["dealer"] != dealer or not is_int(hand["dealer"]):
        fault(f"dealer is {hand['dealer']!r} but the rules give seat {dealer}")

    # The deal.
    trump = rules.parse_trump(hand, fault)
    owner = _parse_deal(rules, hand["deal"], P, size, fault)
    if trump is None or owner is None or not rules.check_trump_vs_deal(trump, owner, fault):
        return give_up()
    cards_of = np.zeros((P, rules.n_cards), dtype=bool)
    dealt = np.nonzero(owner >= 0)[0]
    cards_of[owner[dealt], dealt] = True
    try:
        state = rules.start_hand(cfg, hand_no, dealer, trump, cards_of, ctx)
    except ValueError as err:
        fault(f"the deal cannot be played: {err}")
        return give_up()
    watch_deal(fault.entry, state)

    if claims_renege and not cfg.renege_mode:
        fault("the hand has a renege entry, but reneges only happen with the renege_mode option")
        return give_up()

    # Hat choice, bids.
    if not rules.replay_prelude(cfg, state, hand, ctx, fault):
        return give_up()

    # Tricks.
    outcome = _replay_tricks(rules, cfg, state, hand, owner, fault)
    if outcome is None:
        return give_up()
    rewards, reneged = outcome

    # What the hand gives.
    want = [int(x) for x in rewards]
    scores = hand["scores"]
    if not is_int_list(scores, P):
        fault(f"scores must be a list of {P} integers, got {scores!r}")
    elif scores != want:
        fault(f"scores {scores} but the rules give {want}")
    rules.check_outcome(cfg, state, hand, fault)
    rules.after_hand(cfg, state, hand, not reneged, ctx)
    return want, reneged


def _parse_deal(rules: RecordRules, deal: Any, P: int, size: int, fault: HandFaults) -> np.ndarray | None:
    """(N,) seat dealt each card (-1 undealt), or None after the faults."""
    if not isinstance(deal, list) or len(deal) != P or not all(isinstance(d, list) for d in deal):
        fault(f"deal must be a list of {P} lists of cards, one per seat")
        return None
    owner = np.full(rules.n_cards, -1, dtype=np.int64)
    ok = True
    for seat, cards in enumerate(deal):
        if len(cards) != size:
            fault(f"seat {seat} is dealt {len(cards)} cards; this hand deals {size} each")
            ok = False
        for text in cards:
            try:
                c = rules.parse_card(text)
            except ValueError as err:
                fault(f"deal of seat {seat}: {err}")
                ok = False
                continue
            if owner[c] >= 0:
                where = "twice to that seat" if owner[c] == seat else f"to seats {owner[c]} and {seat}"
                fault(f"card {text} is dealt twice ({where})")
                ok = False
                continue
            owner[c] = seat
    return owner if ok else None


def _replay_tricks(
    rules: RecordRules, cfg: Any, state: Any, hand: dict, owner: np.ndarray, fault: HandFaults
) -> tuple[np.ndarray, bool] | None:
    """Play the record's tricks with the core: (hand rewards, reneged), or None after a fault that stops the hand."""
    P = cfg.players
    mod = rules.module
    tricks = hand["tricks"]
    size = int(rules.hand_size(cfg, int(state.hand_no[0])))
    if not isinstance(tricks, list):
        fault(f"tricks must be a list, got {type(tricks).__name__}")
        return None
    claim = hand.get("renege")
    if claim is not None and not (
        isinstance(claim, dict) and is_int(claim.get("seat")) and isinstance(claim.get("card"), str)
    ):
        fault(f'renege must be {{"seat": s, "card": c}}, got {claim!r}')
        return None
    played: set[int] = set()
    for t, trick in enumerate(tricks):
        tn = t + 1
        if int(state.phase[0]) != mod.PLAY:
            fault(f"the hand is over after {t} tricks, but the record has {len(tricks)}", tn)
            return None
        if not isinstance(trick, dict) or not all(k in trick for k in ("leader", "cards", "winner")):
            fault("a trick is an object with leader, cards and winner", tn)
            return None
        leader = int(state.leader[0])
        if trick["leader"] != leader or not is_int(trick["leader"]):
            fault(f"leader is {trick['leader']!r} but the rules give seat {leader}", tn)
        cards = trick["cards"]
        if not isinstance(cards, list) or not cards:
            fault(f"cards must be a non-empty list of cards, got {cards!r}", tn)
            return None
        res = None
        for i, text in enumerate(cards):
            seat = int(state.cur[0])
            try:
                c = rules.parse_card(text)
            except ValueError as err:
                fault(f"seat {seat} played an {err}", tn)
                return None
            if i >= P:
                fault(f"the trick has {len(cards)} cards; a trick has {P}", tn)
                return None
            if not state.hands[0, seat, c]:
                fault(f"seat {seat} played {text} but does not hold it ({_not_held_why(c, seat, owner, played)})", tn)
                return None
            # The core's own follow-suit rule (what its legal mask uses for cards).
            if not follow_suit_mask(state.hands[:, seat], state.led_suit, rules.deck)[0, c]:
                led = rules.suit_name(int(state.led_suit[0]))
                if not cfg.renege_mode:
                    fault(f"seat {seat} played {text} but must follow {led}", tn)
                    return None
                # Renege mode: a held card that breaks follow suit ends the hand.
                if t != len(tricks) - 1 or i != len(cards) - 1:
                    fault(f"seat {seat} reneged with {text} (must follow {led}), but the record plays on", tn)
                    return None
                if claim is None:
                    fault(f"seat {seat} reneged with {text} (must follow {led}), but the hand has no renege entry", tn)
                    return None
                if claim["seat"] != seat or claim["card"] != text:
                    fault(
                        f"the renege entry names seat {claim['seat']} and {claim['card']}, "
                        f"but the renege was seat {seat}'s {text}",
                        tn,
                    )
            played.add(c)
            res = step_one(mod, cfg, state, c)
            if res.renege[0]:
                if trick["winner"] is not None:
                    fault(f"winner is {trick['winner']!r}, but a trick ended by a renege has no winner (null)", tn)
                return res.rewards[0], True
        assert res is not None  # cards is a non-empty list
        if not res.trick_done[0]:
            fault(f"the trick has {len(cards)} cards; a trick has {P}", tn)
            return None
        want = int(res.trick_winner[0])
        if trick["winner"] != want or not is_int(trick["winner"]):
            fault(f"winner is {trick['winner']!r} but the rules give seat {want}", tn)
        if res.hand_done[0]:
            if claim is not None:
                fault(
                    f"the renege entry names seat {claim['seat']} and {claim['card']}, "
                    "but every card of the hand follows suit"
                )
            if t != len(tricks) - 1:
                fault(f"the hand is over after {tn} tricks, but the record has {len(tricks)}", tn + 1)
            return res.rewards[0], False
    if claim is not None:
        fault(
            f"the renege entry names seat {claim['seat']} and {claim['card']}, "
            "but no card of the record breaks follow suit"
        )
    else:
        fault(f"the record has {len(tricks)} complete trick(s) but the hand has {size}")
    return None


def _not_held_why(c: int, seat: int, owner: np.ndarray, played: set[int]) -> str:
    """Why ``seat`` does not hold card ``c`` it played, for the fault message."""
    if c in played:
        return "it was already played"
    if owner[c] >= 0 and owner[c] != seat:
        return f"it was dealt to seat {owner[c]}"
    if owner[c] == seat:
        return "it was already played"
    return "it was not dealt this hand"

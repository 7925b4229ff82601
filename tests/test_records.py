"""Game records: recording batched play, JSON Lines round trips, replay and its faults.

Games are played with random legal actions (and, in renege mode, now and then
any held card), recorded, written, read back and replayed: a valid record
gives no fault and the rules' totals. Then records are corrupted one way at a
time, and each corruption must be reported where it is, in words that name it.
"""

from __future__ import annotations

import ast
import copy
import io
import json
import random
from pathlib import Path

import numpy as np
import pytest

from bobshat_env.core import bobs_hat, oh_hell, rng
from bobshat_env.core.cards import bh_card_str, bh_parse_card, oh_parse_card
from bobshat_env.core.config import BobsHatConfig, OhHellConfig
from bobshat_env.records import (
    Fault,
    Recorder,
    RecordFormatError,
    read_jsonl,
    replay_file,
    replay_main,
    replay_record,
    replay_report,
    write_jsonl,
)


# --------------------------------------------------------------------------
# Driving games
def _actions(gen, mod, cfg, state, renege_p=0.0, nobid_p=0.0):
    """Random legal actions; with renege_p, sometimes any held card; with nobid_p, sometimes no bid."""
    B = state.batch_size
    mask = mod.legal_action_mask(cfg, state)
    if renege_p:
        use = (state.phase == mod.PLAY) & (gen.random(B) < renege_p)
        held = np.zeros_like(mask)
        held[:, : mod.N_CARDS] = state.hands[np.arange(B), state.cur]
        mask = np.where(use[:, None], held, mask)
    actions = (gen.random(mask.shape) * mask).argmax(axis=1)
    if nobid_p:
        nb = mask[:, bobs_hat.BID_BASE] & (gen.random(B) < nobid_p)
        actions[nb] = bobs_hat.BID_BASE
    return actions


def play(mod, cfg, n_games, seed=0, batch=None, renege_p=0.0, nobid_p=0.0, agents=None):
    """Play and record ``n_games`` (slot i: key game_keys(seed, i)); returns (records by game, final scores)."""
    batch = batch or n_games
    records, scores = [None] * n_games, np.zeros((n_games, cfg.players), dtype=np.int64)
    gen = np.random.default_rng(seed)
    for start in range(0, n_games, batch):
        ids = np.arange(start, min(n_games, start + batch))
        state = mod.init(cfg, rng.game_keys(seed, ids, 0))
        rec = Recorder(cfg, state, agents=agents or [f"random{p}" for p in range(cfg.players)])
        while not (state.phase == mod.DONE).all():
            active = state.phase != mod.DONE
            actions = _actions(gen, mod, cfg, state, renege_p, nobid_p)
            res, finished = rec.step(state, actions, active=active)
            done = np.nonzero(res.game_done)[0]
            assert len(finished) == done.size
            for slot, record in zip(done.tolist(), finished):
                records[ids[slot]] = record
        scores[ids] = state.scores
    return records, scores


BH_CONFIGS = {
    "bh3-short": BobsHatConfig(players=3, hands=4),
    "bh4-default": BobsHatConfig(players=4),
    "bh5-negative-random-dealer": BobsHatConfig(players=5, negative_scoring=True, first_dealer=-1),
    "bh4-all-options-renege": BobsHatConfig(
        players=4,
        hands=6,
        first_dealer=2,
        double_fewest=True,
        no_bid=True,
        secret_bidding=True,
        negative_scoring=True,
        renege_mode=True,
    ),
    "bh3-renege": BobsHatConfig(players=3, hands=5, renege_mode=True, no_bid=True),
}
OH_CONFIGS = {
    "oh4-short-high-low": OhHellConfig(players=4, deal_style="short_high_low"),
    "oh3-long-negative": OhHellConfig(players=3, deal_style="short_low", scoring="negative", first_dealer=2),
    "oh7-neutral-random-dealer": OhHellConfig(players=7, deal_style="short_high", scoring="neutral", first_dealer=-1),
}
ALL = {**{k: (bobs_hat, c) for k, c in BH_CONFIGS.items()}, **{k: (oh_hell, c) for k, c in OH_CONFIGS.items()}}


@pytest.fixture(scope="module")
def played():
    """Records and final core scores of a few games of every configuration."""
    out = {}
    for name, (mod, cfg) in ALL.items():
        renege = 0.04 if getattr(cfg, "renege_mode", False) else 0.0
        nobid = 0.15 if getattr(cfg, "no_bid", False) else 0.0
        out[name] = play(mod, cfg, 5, seed=len(name), renege_p=renege, nobid_p=nobid)
    return out


# --------------------------------------------------------------------------
# Valid records
@pytest.mark.parametrize("name", list(ALL))
def test_recorded_games_replay_without_faults(played, name, tmp_path):
    mod, cfg = ALL[name]
    records, scores = played[name]
    path = tmp_path / "games.jsonl"
    assert write_jsonl(path, records) == len(records)
    back = list(read_jsonl(path))
    assert [n for n, _ in back] == list(range(1, len(records) + 1))
    assert [r for _, r in back] == records  # the round trip loses nothing
    for i, (line, record) in enumerate(back):
        report = replay_report(record, i, line)
        assert report.faults == [], [str(f) for f in report.faults]
        assert report.totals == record["totals"] == scores[i].tolist()  # rules = record = the engine
    assert replay_file(path) == (len(records), [])


@pytest.mark.parametrize("name", list(ALL))
def test_record_shape_follows_records_md(played, name):
    mod, cfg = ALL[name]
    record = played[name][0][0]
    P = cfg.players
    assert list(record) == ["game", "format", "config", "seed", "agents", "hands", "totals"]
    assert record["format"] == 1 and record["agents"] == [f"random{p}" for p in range(P)]
    assert 0 <= record["config"]["first_dealer"] < P
    if mod is bobs_hat:
        assert record["game"] == "bobs_hat"
        keys = ["players", "hands", "first_dealer", "double_fewest", "no_bid", "secret_bidding", "negative_scoring"]
        assert list(record["config"]) == keys + (["renege_mode"] if cfg.renege_mode else [])
        hand_keys = ["number", "hand_size", "dealer", "trump", "deal", "hat", "bids", "tricks", "hat_holder", "taken"]
    else:
        assert record["game"] == "oh_hell"
        assert record["config"] == {
            "players": P,
            "deal_style": cfg.deal_style,
            "scoring": cfg.scoring,
            "first_dealer": record["config"]["first_dealer"],
        }
        hand_keys = ["number", "hand_size", "dealer", "trump_card", "deal", "bids", "tricks", "taken"]
    parse = bh_parse_card if mod is bobs_hat else oh_parse_card
    for hand in record["hands"]:
        assert list(hand)[: len(hand_keys)] == hand_keys and list(hand)[len(hand_keys)] == "scores"
        for cards in hand["deal"]:
            ids = [parse(c) for c in cards]
            assert ids == sorted(ids) and len(ids) == hand["hand_size"]
        trick = hand["tricks"][0]
        assert trick["cards"][0] in hand["deal"][trick["leader"]]
    assert json.loads(json.dumps(record)) == record


def test_records_share_no_mutable_objects(played):
    """Editing one part of a record (as tools and these tests do) must not change another."""
    seen: set[int] = set()

    def walk(obj):
        if isinstance(obj, (list, dict)):
            assert id(obj) not in seen
            seen.add(id(obj))
            for v in obj.values() if isinstance(obj, dict) else obj:
                walk(v)

    for records, _ in played.values():
        walk(records)


def test_bobs_hat_hand_fields():
    cfg = BobsHatConfig(players=4, hands=3, no_bid=True, double_fewest=True)
    records, _ = play(bobs_hat, cfg, 6, seed=5, nobid_p=0.3)
    for record in records:
        for hand in record["hands"]:
            assert hand["trump"] in ("blue", "red", "black", "none")
            assert hand["hat"] in (10, -10)
            assert hand["hat_holder"] is None or 0 <= hand["hat_holder"] < 4
            assert all(set(b) <= {"most_blue", "most_red", "most_black", "fewest"} for b in hand["bids"])
            assert sum(map(sum, hand["taken"])) == 4 * hand["hand_size"]
            assert len(hand["tricks"]) == hand["hand_size"]
    assert any(b == [] for r in records for h in r["hands"] for b in h["bids"])


def _keyed_actions(mod, cfg, state, counter, renege=False):
    """Actions that depend only on each game (its key and its own step count), not on the batch."""
    mask = mod.legal_action_mask(cfg, state)
    if renege:  # every 9th card decision of a game: any held card
        use = (state.phase == mod.PLAY) & (counter % 9 == 4)
        held = np.zeros_like(mask)
        held[:, : mod.N_CARDS] = state.hands[np.arange(state.batch_size), state.cur]
        mask = np.where(use[:, None], held, mask)
    pick = rng.uniform_ints(rng.combine(state.key, counter), np.maximum(mask.sum(axis=1), 1))
    return np.argmax(np.cumsum(mask, axis=1) > pick[:, None], axis=1)


@pytest.mark.parametrize("name", ["bh3-renege", "oh4-short-high-low"])
def test_batch_size_does_not_change_records(name):
    """Games finish at different steps in a batch; each record equals the one of the game played alone."""
    mod, cfg = ALL[name]
    renege = getattr(cfg, "renege_mode", False)

    def run(ids):
        state = mod.init(cfg, rng.game_keys(11, ids, 0))
        rec = Recorder(cfg, state, agents=["a"] * cfg.players)
        counter = np.zeros(ids.size, dtype=np.int64)
        while not (state.phase == mod.DONE).all():
            active = state.phase != mod.DONE
            rec.step(state, _keyed_actions(mod, cfg, state, counter, renege), active=active)
            counter += active
        return rec.records(), counter

    batch, steps = run(np.arange(6))
    if renege:
        assert len(set(steps.tolist())) > 1  # reneges make the games finish at different steps
    alone = [run(np.array([i]))[0][0] for i in range(6)]
    assert sorted(batch, key=lambda r: r["seed"]) == sorted(alone, key=lambda r: r["seed"])
    if renege:
        assert any("renege" in h for r in alone for h in r["hands"])


def test_explicit_deals():
    """A driver that deals each hand itself (auto_deal=False) records the deals it gave."""
    cfg = BobsHatConfig(players=3, hands=2)
    state = bobs_hat.init(cfg, np.arange(2, dtype=np.uint64), auto_deal=False)
    rec = Recorder(cfg, state)
    gen = np.random.default_rng(2)
    given, records = [], []
    while len(records) < 2:
        waiting = np.nonzero(state.phase == bobs_hat.DEAL)[0]
        if waiting.size:
            keys = np.array([99 + len(given)] * waiting.size, dtype=np.uint64)
            trump, hands = bobs_hat.random_deal(cfg, keys, state.hand_no[waiting], state.attempt[waiting])
            bobs_hat.deal(cfg, state, waiting, trump, hands)
            given.append(hands[0])
        active = (state.phase != bobs_hat.DONE) & (state.phase != bobs_hat.DEAL)
        records += rec.step(state, _actions(gen, bobs_hat, cfg, state), active=active, auto_deal=False)[1]
    assert all(replay_record(r) == [] for r in records)
    assert [bh_parse_card(c) for c in records[0]["hands"][0]["deal"][1]] == np.nonzero(given[0][1])[0].tolist()


def test_seed_redeals_the_first_hand(played):
    for name, (mod, cfg) in ALL.items():
        record = played[name][0][0]
        state = mod.init(cfg, np.array([record["seed"]], dtype=np.uint64))
        hand = record["hands"][0]
        parse = bh_parse_card if mod is bobs_hat else oh_parse_card
        for p, cards in enumerate(hand["deal"]):
            assert np.nonzero(state.hands[0, p])[0].tolist() == [parse(c) for c in cards]


def test_renege_entries(played):
    records = played["bh4-all-options-renege"][0] + played["bh3-renege"][0]
    reneges = 0
    for record in records:
        hands = record["hands"]
        P = record["config"]["players"]
        for i, hand in enumerate(hands):
            if "renege" not in hand:
                continue
            reneges += 1
            seat, card = hand["renege"]["seat"], hand["renege"]["card"]
            last = hand["tricks"][-1]
            assert last["cards"][-1] == card and last["winner"] is None
            assert (last["leader"] + len(last["cards"]) - 1) % P == seat
            assert hand["scores"] == [-15 if p == seat else 0 for p in range(P)]
            led = bh_parse_card(last["cards"][0]) // 20
            assert bh_parse_card(card) // 20 != led
            nxt = hands[i + 1]
            assert (nxt["number"], nxt["dealer"], nxt["hand_size"]) == (
                hand["number"],
                hand["dealer"],
                hand["hand_size"],
            )
        assert sum("renege" not in h for h in hands) == record["config"]["hands"]
    assert reneges > 0


def test_vector_env_style_slot_reset_and_late_start():
    """A slot reset to a new game keeps recording; a recorder that joins mid-game skips that game."""
    cfg = BobsHatConfig(players=3, hands=2)
    state = bobs_hat.init(cfg, rng.game_keys(3, np.arange(2), 0))
    gen = np.random.default_rng(0)
    for _ in range(7):  # play into the first hand before recording starts
        bobs_hat.step(cfg, state, _actions(gen, bobs_hat, cfg, state))
    rec = Recorder(cfg, state, agents=["a", "b", "c"])
    games = np.zeros(2, dtype=np.int64)
    out = []
    while len(out) < 4:
        res, finished = rec.step(state, _actions(gen, bobs_hat, cfg, state))
        out += finished
        done = np.nonzero(res.game_done)[0]
        if done.size:  # same-step autoreset, as the vector env does
            games[done] += 1
            state.put(done, bobs_hat.init(cfg, rng.game_keys(3, done, games[done])))
            rec.start(done, seeds=[int(g) for g in games[done]], agents=[["x", "y", "z"]] * done.size)
    assert all(replay_record(r) == [] for r in out)
    assert all(r["agents"] == ["x", "y", "z"] for r in out)  # the joined-late first games were skipped
    assert {r["seed"] for r in out} <= {1, 2}


def test_arena_hook_and_agent_check():
    cfg = OhHellConfig(players=3, deal_style="short_high")
    ids = np.arange(4) + 10
    state = oh_hell.init(cfg, rng.game_keys(9, ids, 0))
    rec = Recorder(cfg, state, ids, seed=9, agents=["a", "b", "c"])
    gen = np.random.default_rng(1)
    active = np.ones(4, dtype=bool)
    while active.any():
        actions = _actions(gen, oh_hell, cfg, state)
        before = (state.phase.copy(), state.cur.copy())
        res = oh_hell.step(cfg, state, actions, active=active)
        rec.observe_step(before, actions, active, res, state)
        active &= state.phase != oh_hell.DONE
    records = rec.records()
    assert len(records) == 4 and rec.records() == []
    assert all(replay_record(r) == [] for r in records)
    with pytest.raises(ValueError, match="one agent per seat"):
        Recorder(cfg, state, agents=["a"])


# --------------------------------------------------------------------------
# JSON Lines files
def test_write_append_and_overwrite_safely(played, tmp_path):
    records = played["bh3-short"][0]
    path = tmp_path / "r.jsonl"
    write_jsonl(path, records[:2])
    path.write_bytes(path.read_bytes().rstrip(b"\n"))  # a user's file without a final newline
    write_jsonl(path, records[2:], append=True)
    assert [r for _, r in read_jsonl(path)] == records
    before = path.read_bytes()
    with pytest.raises(TypeError):
        write_jsonl(path, [records[0], {"bad": {1, 2}}])
    with pytest.raises(TypeError):
        write_jsonl(path, [{"bad": object()}], append=True)
    assert path.read_bytes() == before  # a failed write keeps the old file whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.jsonl"]  # no temp file left behind
    path.chmod(0o640)
    write_jsonl(path, [{"n": np.int64(3), "a": np.arange(2)}])
    assert path.stat().st_mode & 0o777 == 0o640
    assert list(read_jsonl(path)) == [(1, {"n": 3, "a": [0, 1]})]


def test_read_names_the_bad_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"game": "bobs_hat"}\n\n{"game": "bobs_hat", \n[1, 2]\n')
    it = read_jsonl(path)
    assert next(it) == (1, {"game": "bobs_hat"})
    with pytest.raises(RecordFormatError, match="line 3 is not valid JSON"):
        next(it)
    n, faults = replay_file(path)
    assert n == 3
    assert [f.line for f in faults if "not valid JSON" in f.message] == [3]
    assert [f.line for f in faults if "not a record" in f.message] == [4]


# --------------------------------------------------------------------------
# Corrupt records: one fault at a time
@pytest.fixture(scope="module")
def bh_record():
    """A Bob's Hat record with the no-bid option, where some seat used its no-bid before the last hand."""
    cfg = BobsHatConfig(players=4, hands=6, no_bid=True)
    records, _ = play(bobs_hat, cfg, 8, seed=21, nobid_p=0.3)
    for r in records:
        if any(b == [] for h in r["hands"][:-1] for b in h["bids"]):
            return r
    raise AssertionError("no record with an early no-bid")


@pytest.fixture(scope="module")
def renege_record(played):
    for r in played["bh4-all-options-renege"][0] + played["bh3-renege"][0]:
        if any("renege" in h for h in r["hands"]):
            return r
    raise AssertionError("no renege")


@pytest.fixture(scope="module")
def oh_record(played):
    return played["oh4-short-high-low"][0][0]


def _only(faults, text):
    """The faults whose message contains ``text``; at least one."""
    hits = [f for f in faults if text in f.message]
    assert hits, f"no fault mentions {text!r}: {[str(f) for f in faults]}"
    assert all("could not go on" not in f.message for f in faults), [str(f) for f in faults]
    return hits


def _suit(card):
    return bh_parse_card(card) // 20


def _illegal_swap(record):
    """Swap a follower's card with an off-suit card it plays later: a follow-suit violation.

    Returns (hand number, trick number, seat, card now played, led suit).
    """
    P = record["config"]["players"]
    for hand in record["hands"]:
        tricks = hand["tricks"]
        for t, trick in enumerate(tricks):
            led = _suit(trick["cards"][0])
            for i in range(1, P):
                seat = (trick["leader"] + i) % P
                if _suit(trick["cards"][i]) != led:
                    continue
                for later in tricks[t + 1 :]:
                    j = (seat - later["leader"]) % P
                    if _suit(later["cards"][j]) != led:
                        trick["cards"][i], later["cards"][j] = later["cards"][j], trick["cards"][i]
                        return hand["number"], t + 1, seat, trick["cards"][i], led
    raise AssertionError("no swap found")


def test_illegal_card(bh_record):
    r = copy.deepcopy(bh_record)
    number, trick, seat, card, led = _illegal_swap(r)
    (f,) = _only(replay_record(r), "must follow")
    assert (f.hand, f.trick) == (number, trick)
    led_name = ("blue", "red", "black")[led]
    assert f.message == f"seat {seat} played {card} but must follow {led_name}"
    assert str(f) == f"hand {number}, trick {trick}: seat {seat} played {card} but must follow {led_name}"


def test_card_not_held(bh_record):
    r = copy.deepcopy(bh_record)
    hand = r["hands"][1]
    other = hand["deal"][(hand["tricks"][0]["leader"] + 1) % 4][0]
    hand["tricks"][0]["cards"][0] = other
    (f,) = _only(replay_record(r), "does not hold it")
    assert (f.hand, f.trick) == (2, 1) and "dealt to seat" in f.message


def test_wrong_trick_winner(bh_record):
    r = copy.deepcopy(bh_record)
    trick = r["hands"][2]["tricks"][3]
    right = trick["winner"]
    trick["winner"] = (right + 1) % 4
    faults = replay_record(r)
    (f,) = _only(faults, "winner")
    assert (f.hand, f.trick) == (3, 4)
    assert f.message == f"winner is {(right + 1) % 4} but the rules give seat {right}"
    assert len(faults) == 1


def test_wrong_score(bh_record):
    r = copy.deepcopy(bh_record)
    hand = r["hands"][3]
    right = list(hand["scores"])
    hand["scores"][1] += 3
    faults = replay_record(r)
    assert len(faults) == 1
    assert faults[0].hand == 4 and faults[0].trick is None
    assert faults[0].message == f"scores {hand['scores']} but the rules give {right}"


def test_wrong_totals(bh_record):
    r = copy.deepcopy(bh_record)
    right = list(r["totals"])
    r["totals"][0] -= 1
    faults = replay_record(r, index=7)
    assert len(faults) == 1 and faults[0].hand is None
    assert str(faults[0]) == f"record 7: totals {r['totals']} but the rules give {right}"


def test_unknown_card(bh_record):
    r = copy.deepcopy(bh_record)
    r["hands"][4]["tricks"][2]["cards"][1] = "green7"
    (f,) = _only(replay_record(r), "unknown card 'green7'")
    assert (f.hand, f.trick) == (5, 3)
    r = copy.deepcopy(bh_record)
    r["hands"][0]["deal"][2][0] = "red21"
    (f,) = _only(replay_record(r), "unknown card 'red21'")
    assert (f.hand, f.trick) == (1, None) and "seat 2" in f.message


def test_card_dealt_twice(bh_record):
    r = copy.deepcopy(bh_record)
    hand = r["hands"][2]
    card = hand["deal"][0][0]
    hand["deal"][3][1] = card
    (f,) = _only(replay_record(r), "dealt twice")
    assert f.hand == 3 and f.message == f"card {card} is dealt twice (to seats 0 and 3)"


def test_no_bid_used_twice(bh_record):
    r = copy.deepcopy(bh_record)
    first, seat = next((h["number"], s) for h in r["hands"][:-1] for s, b in enumerate(h["bids"]) if b == [])
    later = r["hands"][-1]
    later["bids"][seat] = []
    (f,) = _only(replay_record(r), "already used its no-bid")
    assert f.hand == later["number"] > first and f"seat {seat}" in f.message


def test_bid_options_enforced(bh_record):
    r = copy.deepcopy(bh_record)
    r["hands"][1]["bids"][2] = ["fewest", "fewest"]
    (f,) = _only(replay_record(r), "double_fewest option is off")
    assert f.hand == 2
    r["config"]["no_bid"] = False
    faults = replay_record(r)
    assert _only(faults, "no_bid option is off")[0].hand == next(h["number"] for h in r["hands"] if [] in h["bids"])
    r = copy.deepcopy(bh_record)
    r["hands"][0]["bids"][0] = ["most_red", "most_red"]
    assert _only(replay_record(r), "most_red 2 times")[0].hand == 1
    r["hands"][0]["bids"][0] = ["most_green"]
    assert _only(replay_record(r), "'most_green'")[0].hand == 1


@pytest.mark.parametrize("key", ["tricks", "scores", "hat", "deal"])
def test_missing_hand_key(bh_record, key):
    r = copy.deepcopy(bh_record)
    del r["hands"][2][key]
    (f,) = _only(replay_record(r), f"missing key(s) {key}")
    assert f.hand == 3


@pytest.mark.parametrize("key", ["totals", "config", "hands", "agents", "seed"])
def test_missing_record_key(bh_record, key):
    r = copy.deepcopy(bh_record)
    del r[key]
    (f,) = _only(replay_record(r), f"missing key(s) {key}")
    assert f.hand is None


@pytest.mark.parametrize(
    "change, text, hand, trick",
    [
        (lambda r: r.update(game="chess"), "unknown game 'chess'", None, None),
        (lambda r: r.update(format=2), "unknown format 2", None, None),
        (lambda r: r["config"].update(players=6), "players must be 3, 4 or 5", None, None),
        (lambda r: r["config"].update(first_dealer=-1), "first_dealer", None, None),
        (lambda r: r["config"].pop("no_bid"), "config is missing key(s) no_bid", None, None),
        (lambda r: r["config"].update(colour="red"), "unknown option(s) colour", None, None),
        (lambda r: r.update(agents=["a"]), "agents must be a list of 4 names", None, None),
        (lambda r: r.update(seed="seven"), "seed must be an integer", None, None),
        (lambda r: r["hands"].pop(), "the record has 5 hand(s) but the config plays 6", None, None),
        (lambda r: r["hands"].append(r["hands"][-1]), "after the last hand", None, None),
        (lambda r: r["hands"][1].update(dealer=3), "dealer is 3 but the rules give seat 1", 2, None),
        (lambda r: r["hands"][1].update(number=5), "number is 5 but this entry is hand 2", 2, None),
        (lambda r: r["hands"][1].update(hand_size=7), "hand_size is 7 but hand 2 deals 6", 2, None),
        (lambda r: r["hands"][1]["deal"][1].pop(), "seat 1 is dealt 5 cards", 2, None),
        (lambda r: r["hands"][3].update(trump="green"), "unknown trump 'green'", 4, None),
        (lambda r: r["hands"][3].update(hat=5), "hat is 5", 4, None),
        (lambda r: r["hands"][3].update(hat_holder=9), "hat_holder is 9", 4, None),
        (lambda r: r["hands"][3]["taken"][0].__setitem__(0, 99), "taken", 4, None),
        (
            lambda r: r["hands"][2]["tricks"][4].update(leader=(r["hands"][2]["tricks"][4]["leader"] + 1) % 4),
            "leader is",
            3,
            5,
        ),
        (lambda r: r["hands"][2]["tricks"].pop(), "complete trick(s) but the hand has 7", 3, None),
        (lambda r: r["hands"][2]["tricks"][1]["cards"].pop(), "the trick has 3 cards; a trick has 4", 3, 2),
        (lambda r: r["hands"][2].update(renege={"seat": 0, "card": "red1"}), "renege_mode option", 3, None),
    ],
)
def test_structural_faults(bh_record, change, text, hand, trick):
    r = copy.deepcopy(bh_record)
    change(r)
    f = _only(replay_record(r), text)[0]
    assert (f.hand, f.trick) == (hand, trick)


def test_renege_faults(renege_record):
    e = next(i for i, h in enumerate(renege_record["hands"]) if "renege" in h)
    number = renege_record["hands"][e]["number"]
    ntricks = len(renege_record["hands"][e]["tricks"])
    r = copy.deepcopy(renege_record)
    P = r["config"]["players"]
    r["hands"][e]["renege"]["seat"] = (r["hands"][e]["renege"]["seat"] + 1) % P
    (f,) = _only(replay_record(r), "the renege entry names")
    assert (f.hand, f.entry, f.trick) == (number, e, ntricks)
    r = copy.deepcopy(renege_record)
    del r["hands"][e]["renege"]
    (f,) = _only(replay_record(r), "has no renege entry")
    assert (f.hand, f.trick) == (number, ntricks)
    r = copy.deepcopy(renege_record)
    r["hands"][e]["scores"] = [0] * P
    assert _only(replay_record(r), "scores")[0].hand == number
    r = copy.deepcopy(renege_record)
    r["config"]["renege_mode"] = False
    assert _only(replay_record(r), "renege_mode option")[0].hand == number
    r = copy.deepcopy(renege_record)
    r["hands"] = r["hands"][: e + 1]
    assert _only(replay_record(r), "ends with a renege")


def test_oh_hell_faults(oh_record):
    P = 4
    r = copy.deepcopy(oh_record)
    hand = next(h for h in r["hands"] if h["hand_size"] - sum(h["bids"]) + h["bids"][h["dealer"]] >= 0)
    d = hand["dealer"]
    forbidden = hand["hand_size"] - (sum(hand["bids"]) - hand["bids"][d])
    hand["bids"][d] = forbidden
    (f,) = _only(replay_record(r), "hook rule")
    assert f.hand == hand["number"] and f.message.startswith(f"seat {d} (the dealer) bid {forbidden}")

    r = copy.deepcopy(oh_record)
    hand = r["hands"][1]
    hand["trump_card"] = hand["deal"][2][0]
    assert _only(replay_record(r), "is also dealt to seat 2")[0].hand == 2

    r = copy.deepcopy(oh_record)
    trick = r["hands"][0]["tricks"][1]
    trick["winner"] = (trick["winner"] + 1) % P
    assert (_only(replay_record(r), "winner")[0].trick, len(replay_record(r))) == (2, 1)

    r = copy.deepcopy(oh_record)
    r["hands"][0]["taken"] = [9, 9, 9, 9]
    assert _only(replay_record(r), "taken [9, 9, 9, 9] but the rules give")[0].hand == 1
    r["hands"][0]["bids"][0] = 99
    assert _only(replay_record(r), "a bid is 0 to the hand size")[0].hand == 1

    r = copy.deepcopy(oh_record)
    r["hands"][2]["trump_card"] = "1X"
    assert _only(replay_record(r), "unknown card '1X'")[0].hand == 3


def _oh_swap(record, led_char):
    """In a trick led in suit ``led_char``, swap a follower's card of that suit with an off-suit card it plays
    later; returns (trick, seat, card now played) or None if the record has no such trick."""
    P = record["config"]["players"]
    for hand in record["hands"]:
        tricks = hand["tricks"]
        for t, trick in enumerate(tricks):
            if trick["cards"][0][1] != led_char:
                continue
            for i in range(1, P):
                seat = (trick["leader"] + i) % P
                if trick["cards"][i][1] != led_char:
                    continue
                for later in tricks[t + 1 :]:
                    j = (seat - later["leader"]) % P
                    if later["cards"][j][1] != led_char:
                        trick["cards"][i], later["cards"][j] = later["cards"][j], trick["cards"][i]
                        return t + 1, seat, trick["cards"][i]
    return None


@pytest.mark.parametrize(("char", "suit"), [("C", "clubs"), ("D", "diamonds"), ("H", "hearts"), ("S", "spades")])
def test_oh_hell_replay_names_the_suit_led(played, char, suit):
    """Issue 13.5: the suit named is the one led (it said spades for hearts: names were C-D-H-S, ids C-D-S-H)."""
    for name in OH_CONFIGS:
        for record in played[name][0]:
            r = copy.deepcopy(record)
            found = _oh_swap(r, char)
            if found is None:
                continue
            trick, seat, card = found
            (f,) = replay_record(r)
            assert (f.trick, f.message) == (trick, f"seat {seat} played {card} but must follow {suit}")
            return
    raise AssertionError(f"no trick led in {suit} to break")


def test_corrupt_records_never_raise(bh_record, oh_record, renege_record):
    """Random damage (deleted keys, odd values) becomes faults, never an exception."""
    rnd = random.Random(0)
    odd = [None, True, -1, 10**30, "x", [], {}, [None], 3.5, "blue99", ["AS"]]

    def paths(obj, here=()):
        yield here
        items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else []
        for k, v in items:
            yield from paths(v, (*here, k))

    for base in (bh_record, oh_record, renege_record):
        small = copy.deepcopy(base)
        small["hands"] = small["hands"][:2]  # fewer hands: faster, and the count fault is expected
        all_paths = [p for p in paths(small) if p]
        for _ in range(40):
            r = copy.deepcopy(small)
            path = rnd.choice(all_paths)
            parent = r
            for k in path[:-1]:
                parent = parent[k]
            if isinstance(parent, dict) and rnd.random() < 0.3:
                del parent[path[-1]]
            else:
                parent[path[-1]] = rnd.choice(odd)
            faults = replay_record(r)
            assert faults and all(isinstance(f, Fault) for f in faults)
            assert not [f for f in faults if "could not go on" in f.message], (path, [str(f) for f in faults])
    assert replay_record("not a record")[0].message == "a record is a JSON object, got str"


# --------------------------------------------------------------------------
# The command
def test_replay_main(played, bh_record, tmp_path):
    good = tmp_path / "good.jsonl"
    write_jsonl(good, played["bh3-short"][0][:2])
    out = io.StringIO()
    assert replay_main(str(good), out) == 0
    text = out.getvalue()
    assert "record 1 (line 1): bobs_hat, 3 players" in text and "2 record(s), all valid" in text

    bad = tmp_path / "bad.jsonl"
    r = copy.deepcopy(bh_record)
    number, trick, seat, card, _ = _illegal_swap(r)
    write_jsonl(bad, [bh_record, r])
    with open(bad, "a") as f:
        f.write("{oops\n")
    out = io.StringIO()
    assert replay_main(str(bad), out) == 1
    text = out.getvalue()
    assert f"  line 2, hand {number}, trick {trick}: seat {seat} played {card} but must follow" in text
    assert "line 3 is not valid JSON" in text
    assert "3 record(s): 1 valid, 2 with faults" in text

    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert replay_main(str(empty), io.StringIO()) == 1
    assert replay_main(str(tmp_path / "missing.jsonl"), io.StringIO()) == 2


def test_card_notation_roundtrip_in_records(played):
    for record in played["bh4-default"][0]:
        for hand in record["hands"]:
            for trick in hand["tricks"]:
                assert all(bh_card_str(bh_parse_card(c)) == c for c in trick["cards"])


def test_replay_header_shows_the_records_own_totals(bh_record, tmp_path):
    """An edited total: the header shows the record's, the fault line what the rules give; no contradiction."""
    r = copy.deepcopy(bh_record)
    right = list(r["totals"])
    r["totals"][0] -= 1
    path = tmp_path / "edited.jsonl"
    write_jsonl(path, [r])
    out = io.StringIO()
    assert replay_main(str(path), out) == 1
    head, fault = out.getvalue().splitlines()[:2]
    assert f"totals {r['totals']}: 1 fault(s)" in head and str(right) not in head
    assert fault == f"  line 1: totals {r['totals']} but the rules give {right}"

    del r["totals"]  # none recorded: the header's totals are the rules', and it says so
    write_jsonl(path, [r])
    out = io.StringIO()
    assert replay_main(str(path), out) == 1
    assert f"totals {right} (recomputed): 1 fault(s)" in out.getvalue().splitlines()[0]


def test_replay_header_counts_hand_entries_in_words(played, tmp_path):
    path = tmp_path / "one.jsonl"
    rec = copy.deepcopy(played["bh3-short"][0][0])
    rec["hands"] = rec["hands"][:1]  # one entry: a fault (too few hands), and "1 hand entry"
    write_jsonl(path, [rec])
    out = io.StringIO()
    replay_main(str(path), out)
    assert "3 players, 1 hand entry," in out.getvalue() and "1 hand entries" not in out.getvalue()


# --------------------------------------------------------------------------
# The package's shape (bobshat_env/records/: a job per module, a file per game)
def _package_trees():
    import bobshat_env.records as package

    return [(path.name, ast.parse(path.read_text())) for path in sorted(Path(package.__file__).parent.glob("*.py"))]


def test_records_modules_share_only_public_names():
    """Each module works through the others' public names: no private import, no ``x._name`` of another object
    (the Bob's Hat adapter once wrote the recorder's arrays), and each game's description names a public adapter."""
    from bobshat_env.games import DESCRIPTIONS

    bad = []
    for name, tree in _package_trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                bad += [f"{name}:{node.lineno} imports {a.name}" for a in node.names if a.name.startswith("_")]
            elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
                if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                    bad.append(f"{name}:{node.lineno} reads {ast.unparse(node)}")
    bad += [d.record_rules for d in DESCRIPTIONS if d.record_rules.rpartition(":")[2].startswith("_")]
    assert bad == []


def test_records_functions_stay_short():
    """No function of the package runs over 100 lines (a long one is doing several jobs)."""
    long = [
        f"{name}: {node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for name, tree in _package_trees()
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and node.end_lineno - node.lineno + 1 > 100
    ]
    assert long == []

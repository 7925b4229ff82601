"""The external yardstick: our Oh Hell agents against OpenSpiel's ISMCTS (benchmarks/vs_ismcts.py).

The harness runs our engine and OpenSpiel's in lockstep and refuses any
disagreement, so these tests pin that the check bites, that the sides sit
where the layout says, that a game does not depend on which other deals run
with it, and that the command refuses bad input in one line and keeps what
it finished.
"""

from __future__ import annotations

import json
import os
import re

import numpy as np
import pytest

pytest.importorskip("pyspiel")

from benchmarks import vs_ismcts


def test_sides_sit_where_the_layout_says_and_scores_match_openspiel():
    """ISMCTS (60 simulations) beats uniform random play by far over 3 deals; with the sides
    swapped in the seating map the sign would flip. The harness has compared OpenSpiel's returns with
    our scores on each of the 18 games (it raises otherwise)."""
    res = vs_ismcts.play("random", np.arange(3), seed=3, sims=60)
    assert res["seating"].shape == (6, 4)
    assert (np.sort(res["seating"], axis=1) == [0, 0, 1, 1]).all()  # every 2v2 seating once
    assert len({tuple(r) for r in res["seating"]}) == 6
    assert res["scores"].shape == (18, 4)
    assert res["decisions"] == {"ours": 3 * 6 * 2 * 11, "ismcts": 3 * 6 * 2 * 11}  # a bid and 10 cards a seat
    # ISMCTS does not repeat from its seed: six runs gave deal means of -4.2 to -6.2 per hand (single deals
    # -1.7 to -8.5), so the bound leaves room; swapping the sides gives about +6
    assert res["diff"].mean() < -2, res["diff"]
    # the difference is our seats' mean minus ISMCTS's, averaged over the seatings of a deal
    s, seat = res["scores"].reshape(3, 6, 4), res["seating"][None]
    mine = np.where(seat == 0, s, 0).sum(2) / 2 - np.where(seat == 1, s, 0).sum(2) / 2
    assert np.allclose(res["diff"], mine.mean(1))


def test_a_deal_does_not_depend_on_the_other_deals(monkeypatch):
    """Deal 5 gets the same size, dealer, cards and trump card alone or after deal 4 (what --first-deal
    relies on to split a run), and the dealer rotates with the deal id."""
    real, seen = vs_ismcts.openspiel_state, []

    def noting(os_game, size, dealer, hands, trump_card):
        seen.append((size, dealer, hands.tobytes(), trump_card))
        return real(os_game, size, dealer, hands, trump_card)

    monkeypatch.setattr(vs_ismcts, "openspiel_state", noting)
    vs_ismcts.play("strong", np.array([5]), seed=1, sims=2, resampler="openspiel")  # (the C++ bot: quicker)
    alone = seen[:]
    seen.clear()
    vs_ismcts.play("strong", np.array([4, 5]), seed=1, sims=2, resampler="openspiel")
    assert seen[6:] == alone and len(set(alone)) == 1  # one deal, the same in each of its 6 seatings
    assert seen[0] != alone[0]
    assert (alone[0][0], alone[0][1], seen[0][1]) == (10, 1, 0)


def test_engines_that_disagree_are_refused(monkeypatch):
    """Give OpenSpiel seat 0's and seat 1's cards swapped: the first decision of a swapped seat differs."""
    real = vs_ismcts.openspiel_state

    def swapped(os_game, size, dealer, hands, trump_card):
        return real(os_game, size, dealer, hands[[1, 0, 2, 3]], trump_card)

    monkeypatch.setattr(vs_ismcts, "openspiel_state", swapped)
    with pytest.raises(RuntimeError, match="the engines disagree"):
        vs_ismcts.play("random", np.arange(1), sims=10)


def test_scores_that_disagree_are_refused(monkeypatch):
    """OpenSpiel with its off-bid penalty scores a missed bid below zero (not one of our scorings)."""
    import pyspiel

    real = pyspiel.load_game
    monkeypatch.setattr(pyspiel, "load_game", lambda name, params: real(name, {**params, "off_bid_penalty": True}))
    with pytest.raises(RuntimeError, match="are not our hand scores"):
        vs_ismcts.play("random", np.arange(2), sims=5)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--sims", "0"], "want 1 to 1,000,000"),
        (["--sims", "1e9"], "want a whole number"),
        (["--deals", "-3"], "want 1 to 1,000,000"),
        (["--uct-c", "nan"], "above 0"),
        (["--uct-c", "inf"], "above 0"),
        (["--world-samples", "0"], "--world-samples"),
        (["--hand-size", "14"], "--hand-size 14"),
        (["--layout", "2v2v"], "--layout"),
        (["--layout", "5v5"], "players must be 3 to 7"),
        (["--resampler", "uniform"], "invalid choice: 'uniform'"),
        (["--agent", "nosuch"], "unknown agent 'nosuch'"),
        (["--agent", "ppo:policy=nosuch.pt"], "no checkpoint at 'policy=nosuch.pt'"),
        (["--json", "."], "it is a folder"),
    ],
)
def test_bad_input_is_one_line_exit_2(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        vs_ismcts.main(["--deals", "1", "--sims", "5", *argv])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_json_is_rewritten_per_chunk_and_kept_when_a_later_chunk_fails(tmp_path, monkeypatch, capsys):
    path = tmp_path / "r.json"
    assert (
        vs_ismcts.main(["--agent", "strong", "--sims", "5", "--deals", "2", "--chunk", "1", "--json", str(path)]) == 0
    )
    done = json.loads(path.read_text())
    assert done["deals"] == 2 and len(done["per_deal"]) == 2
    assert done["diff_per_hand"] == pytest.approx(np.mean(done["per_deal"]))
    assert "strong vs ISMCTS (5 simulations), 2v2, 10-card hands" in capsys.readouterr().out

    real, calls = vs_ismcts.play, []

    def second_fails(*args, **kw):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kw)

    monkeypatch.setattr(vs_ismcts, "play", second_fails)
    assert (
        vs_ismcts.main(["--agent", "strong", "--sims", "5", "--deals", "3", "--chunk", "1", "--json", str(path)]) == 130
    )
    assert f"interrupted; the 1 deals finished are in {path}" in capsys.readouterr().err
    kept = json.loads(path.read_text())
    assert kept["deals"] == 1 and len(kept["per_deal"]) == 1


def test_a_full_disk_mid_run_is_one_line_and_keeps_the_last_json(tmp_path, monkeypatch, capsys):
    """Found by filling a small tmpfs during a run: the write's error was a traceback."""
    import errno

    from bobshat_env import paths

    path, real, writes = tmp_path / "r.json", paths.replace_bytes, []

    def second_write_fails(target, data):
        writes.append(1)
        if len(writes) == 2:
            raise paths.OutputWriteError(str(target), OSError(errno.ENOSPC, "No space left on device"))
        real(target, data)

    monkeypatch.setattr(paths, "replace_bytes", second_write_fails)
    assert (
        vs_ismcts.main(["--agent", "strong", "--sims", "5", "--deals", "3", "--chunk", "1", "--json", str(path)]) == 2
    )
    err = capsys.readouterr().err
    assert "error: " in err and "No space left on device" in err and "Traceback" not in err
    assert json.loads(path.read_text())["deals"] == 1


def test_a_fifo_as_json_is_refused_before_play(tmp_path, capsys):
    """The JSON is replaced whole after every chunk, so it must be a regular file.

    A FIFO passed the up-front check and then blocked the run at its first
    write. A reader is held open here so that, were the check missing, the
    write would go through and the test fail on the exit code, not hang.
    """
    fifo = tmp_path / "r.json"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        with pytest.raises(SystemExit) as exc:
            vs_ismcts.main(["--agent", "strong", "--deals", "1", "--sims", "5", "--json", str(fifo)])
    finally:
        os.close(reader)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "not a regular file" in err and "Traceback" not in err


def _part(first: int, diffs: list[float], **settings) -> dict:
    base = {"agent": "strong", "opponent": "ISMCTS 5", "layout": "2v2", "hand_size": 10, "seed": 7}
    n = len(diffs)
    return {
        **base,
        **settings,
        "first_deal": first,
        "deals": n,
        "per_deal": diffs,
        "ms_per_decision": {"ours": 1.0, "ismcts": 4.0},
        "decisions": {"ours": 10 * n, "ismcts": 30 * n},
        "seconds": 2.0 * n,
    }


def test_merge_joins_disjoint_ranges_in_deal_order():
    late, early = _part(5, [3.0, 5.0]), _part(0, [1.0, -1.0, 0.0])
    late["ms_per_decision"] = {"ours": 4.0, "ismcts": 1.0}
    out = vs_ismcts.merge([late, early], ["late.json", "early.json"])
    assert out["per_deal"] == [1.0, -1.0, 0.0, 3.0, 5.0]  # deals 0, 1, 2, then 5, 6
    assert out["deal_ranges"] == [[0, 3], [5, 2]] and out["first_deal"] == 0 and out["deals"] == 5
    assert out["diff_per_hand"] == pytest.approx(1.6)
    sd = np.std([1.0, -1.0, 0.0, 3.0, 5.0], ddof=1)
    assert out["ci95"] == pytest.approx(2.7764451 * sd / np.sqrt(5))  # Student t, 4 degrees of freedom
    # time per decision: each side's total time over its total decisions (ours: 30 x 1 ms + 20 x 4 ms over 50)
    assert out["ms_per_decision"]["ours"] == pytest.approx((30 * 1.0 + 20 * 4.0) / 50)
    assert out["ms_per_decision"]["ismcts"] == pytest.approx((90 * 4.0 + 60 * 1.0) / 150)
    assert out["decisions"] == {"ours": 50, "ismcts": 150} and out["seconds"] == 10.0
    # a merged result merges again, its gap kept
    again = vs_ismcts.merge([out, _part(3, [2.0, 2.0])], ["all.json", "gap.json"])
    assert again["deal_ranges"] == [[0, 7]] and again["per_deal"] == [1.0, -1.0, 0.0, 2.0, 2.0, 3.0, 5.0]


@pytest.mark.parametrize(
    "second, message",
    [
        (_part(2, [1.0, 1.0]), "a.json and b.json both hold deal 2"),
        (_part(9, [1.0], seed=8), "b.json: seed 8 differs from a.json's 7"),
        (_part(9, [1.0], opponent="ISMCTS 6"), "b.json: opponent"),
        ({**_part(9, [1.0]), "deals": 2}, "b.json: not a whole vs_ismcts result"),
        ({"agent": "strong"}, "b.json: not a whole vs_ismcts result (missing opponent"),
        ({**_part(9, [1.0]), "deal_ranges": [[9, 10**12]]}, "b.json: its deal_ranges hold 1000000000000 deals"),
        (_part(9, [1.0, float("nan")]), "b.json: deal 10's difference is nan"),
    ],
)
def test_merge_refuses_other_settings_and_shared_deals(second, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        vs_ismcts.merge([_part(0, [1.0, 2.0, 3.0]), second], ["a.json", "b.json"])


def test_merge_from_the_command_line_and_its_bad_files(tmp_path, capsys):
    paths = []
    for first in (0, 1):  # two real one-deal runs, as two processes would split a range
        paths.append(str(tmp_path / f"p{first}.json"))
        argv = ["--agent", "strong", "--sims", "5", "--deals", "1", "--first-deal", str(first), "--json", paths[-1]]
        assert vs_ismcts.main(argv) == 0
    parts = [json.loads(open(p).read()) for p in paths]
    assert vs_ismcts.main(["--merge", *paths, "--json", str(tmp_path / "all.json")]) == 0
    joined = json.loads((tmp_path / "all.json").read_text())
    assert joined["per_deal"] == [parts[0]["per_deal"][0], parts[1]["per_deal"][0]] and joined["deals"] == 2
    (tmp_path / "bad.json").write_text("{not json")
    for argv, message in (
        ([paths[0], str(tmp_path / "bad.json")], "cannot read"),
        ([paths[0], str(tmp_path / "missing.json")], "cannot read"),
        ([paths[0], paths[0]], "both hold deal 0"),
        # a measurement's flag would be silently ignored: refused, named (the settings come from the files)
        ([*paths, "--uct-c", "10"], "drop --uct-c"),
        ([*paths, "--seed", "3", "--sims=50"], "drop --sims, --seed"),
    ):
        capsys.readouterr()
        with pytest.raises(SystemExit) as exc:
            vs_ismcts.main(["--merge", *argv])
        err = capsys.readouterr().err
        assert exc.value.code == 2 and message in err and "Traceback" not in err


def _mid_hand(seed: int = 0, steps: int = 4 + 4 * 5):
    """A 4-player 10-card deal played at random for ``steps`` actions (the bids and five tricks), our
    engine and OpenSpiel's in lockstep, the public void record kept: (game, state, OpenSpiel state, dispatch,
    worlds, true hands)."""
    import pyspiel

    from bobshat_env.games import make_game
    from bobshat_env.seating import SeatDispatch

    game = make_game("oh_hell", players=4)
    state, dealer, trump_card, hands = vs_ismcts._deal(game, seed, np.array([3]), game.config.hand_sizes.index(10))
    os_game = pyspiel.load_game("oh_hell", {"players": 4})
    s = vs_ismcts.openspiel_state(os_game, 10, int(dealer[0]), hands[0], int(trump_card[0]))
    worlds = vs_ismcts._HonestWorlds(game, os_game, seed, 200, 10)
    seats = SeatDispatch(game, 1, [worlds])
    gen = np.random.default_rng(seed)
    for _ in range(steps):
        mask = game.legal_action_mask(state)
        a = np.array([gen.choice(np.flatnonzero(mask[0]))])
        s.apply_action(int(a[0]))
        seats.before_step(state, a)
        res = game.step(state, a, auto_deal=False, legal=mask)
        seats.after_step(res.new_hand)
    return game, state, s, seats, worlds, hands[0]


def _os_hands(world, players: int = 4, size: int = 10) -> np.ndarray:
    """(P, 52) what each seat holds now in OpenSpiel state ``world`` (dealt, less what it played)."""
    held = np.zeros((players, 52), dtype=bool)
    history = world.full_history()
    for k, step in enumerate(history[2 : 2 + players * size]):
        held[k % players, step.action] = True
    for step in history[2 + players * size + 1 :]:
        if step.action < 52:
            held[step.player, step.action] = False
    return held


def test_openspiel_own_resampler_knows_which_cards_were_left_out():
    """Why --resampler honest is the default: every world OpenSpiel's oh_hell ResampleFromInfostate draws
    deals the other seats exactly the cards the real deal gave them, so the 11 cards left out of a 4-player
    10-card deal are known to its ISMCTS. (If OpenSpiel stops doing this, this test fails: look again.)"""
    game, state, s, _, _, real = _mid_hand()
    p = s.current_player()
    gen = np.random.default_rng(0)
    held = np.stack([_os_hands(s.resample_from_infostate(p, lambda: gen.random())) for _ in range(30)])
    others = np.delete(np.arange(4), p)
    truth = _os_hands(s)[others].any(axis=0)
    assert (held[:, others].any(axis=1) == truth).all()  # the same set of cards in the others' hands, every time
    assert len({h.tobytes() for h in held}) > 20  # only shuffled among them


def test_honest_worlds_keep_what_the_seat_knows_and_not_what_it_does_not():
    """Each honest world keeps the seat's own hand, every card played by whom, the hand sizes, and the
    voids the play showed; which cards the other seats hold varies over cards left out of the real deal."""
    game, state, s, seats, worlds, real = _mid_hand(seed=2)  # four voids shown by then
    p = s.current_player()
    obs = game.observe(state)
    public = seats.tracker.rows(np.array([0]))
    void = public["void"][0]  # (P, 4): seats known to hold no card of a suit
    assert void.any(), "the test wants a position with a void shown"
    draw = worlds.resampler(s, obs[0], p, public)
    truth, key = _os_hands(s), s.information_state_string(p)
    others = np.delete(np.arange(4), p)
    sets = set()
    for _ in range(60):
        w = draw(s, p)
        assert w.information_state_string(p) == key  # its own cards, the bids and plays, as it saw them
        assert w.history()[2 + 40 :] == s.history()[2 + 40 :]  # the trump card and every action after the deal
        h = _os_hands(w)
        assert (h[p] == truth[p]).all() and (h.sum(1) == truth.sum(1)).all()
        suits = np.stack([h[:, game.deck.suit_of == k].any(axis=1) for k in range(4)], axis=1)  # (P, 4)
        assert not (suits & void).any()  # no card of a suit a seat showed void in
        sets.add(h[others].any(axis=0).tobytes())
    assert len(sets) > 50  # the cards in the others' hands are not the real deal's set


def test_the_honest_bot_plays_whole_hands(monkeypatch):
    """One deal at 20 simulations with the default resampler: ISMCTS still beats random play, and every
    world of every searched decision comes from the honest callback (one check world, then one a simulation)."""
    real, calls = vs_ismcts._HonestWorlds.resampler, []

    def counting(self, *args):
        draw = real(self, *args)

        def counted(state, player):
            calls.append(player)
            return draw(state, player)

        return counted

    monkeypatch.setattr(vs_ismcts._HonestWorlds, "resampler", counting)
    res = vs_ismcts.play("random", np.arange(1), seed=3, sims=20)
    assert res["decisions"]["ismcts"] == 6 * 2 * 11
    assert res["diff"][0] < 0
    assert len(calls) >= 20 * 6 * 2 * 5  # (the last card of a hand, and some others, are forced: no search)


def test_random_rollouts_play_to_the_end_of_the_hand():
    """From the first bid, one rollout's returns are a whole hand's: the 10 tricks, plus 10 per bid made."""
    _, _, s, _, _, _ = _mid_hand(steps=0)
    values = vs_ismcts._RandomRollouts(1, seed=1).evaluate(s)
    assert values.sum() >= 10 and (values.sum() - 10) % 10 < 1e-9


def test_random_rollouts_vary_from_one_state():
    """Rollouts choose at random among the legal actions: from one state, 40 rollouts end in many different
    hands (a rollout that always took the same action would end in one)."""
    _, _, s, _, _, _ = _mid_hand(steps=0)
    rollouts = vs_ismcts._RandomRollouts(1, seed=1)
    ends = {tuple(rollouts.evaluate(s)) for _ in range(40)}
    assert len(ends) >= 10


def test_a_deal_with_a_seat_short_of_cards_is_refused():
    """OpenSpiel's deal order needs every seat to hold the hand size: a seat one card short is a clear error
    naming the size, not a deal of some other card."""
    import pyspiel

    _, _, _, _, _, hands = _mid_hand(steps=0)
    short = hands.copy()
    short[1, np.flatnonzero(short[1])[0]] = False
    with pytest.raises(ValueError, match="must hold 10 cards"):
        vs_ismcts.openspiel_state(pyspiel.load_game("oh_hell", {"players": 4}), 10, 0, short, 51)

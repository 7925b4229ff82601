"""Terminal play (``bobshat play``): whole games driven by scripted input, invalid input, records, the CLI."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable

import numpy as np
import pytest

from agents import available
from bobshat.cli import main
from bobshat.terminal import TerminalGame, default_opponent, play
from bobshat_env.core import bobs_hat as bh
from bobshat_env.core.cards import BH_IS_HAT_CARD, bh_card_str, bh_parse_card
from bobshat_env.games import make_game
from bobshat_env.records import replay_file, replay_report
from bobshat_env.text import MoveError
from bobshat_env.text.bobs_hat import PlayText as BobsHatText


class Oracle(io.TextIOBase):
    """An input stream that answers each prompt by looking at the live game.

    ``decide(game, state, legal)`` returns the lines to type for one decision
    (invalid ones first, the legal move last); they are fed one per readline.
    """

    def __init__(self, decide: Callable[..., list[str]]) -> None:
        self.decide = decide
        self.tg: TerminalGame | None = None
        self.pending: list[str] = []
        self.typed: list[str] = []

    def readable(self) -> bool:
        return True

    def readline(self, size: int = -1) -> str:  # TextIOBase signature
        if not self.pending:
            st = self.tg.state
            self.pending = list(self.decide(self.tg, st, self.tg.game.legal_action_mask(st)[0]))
        line = self.pending.pop(0)
        self.typed.append(line)
        return line + "\n"


def run_game(game, decide, seat=0, opponents=("random",), seed=0, save=None):
    oracle = Oracle(decide)
    out = io.StringIO()
    tg = TerminalGame(game, seat, list(opponents), seed=seed, input=oracle, output=out, save=save)
    oracle.tg = tg
    result = tg.run()
    return result, out.getvalue(), oracle


def typed_moves(seed: int = 0, numbers: bool = False):
    """A decide function typing a random legal move by its name (or its number)."""
    gen = np.random.default_rng(seed)

    def decide(tg, state, legal):
        acts = np.flatnonzero(legal)
        i = int(gen.integers(len(acts)))
        if numbers and tg.text.number_is_index(state):
            return [str(i + 1)]
        return [tg.text.move_label(int(acts[i]))]

    return decide


def assert_valid_record(result, game):
    assert result.completed and result.how == "finished" and result.exit_code == 0
    rec = result.record
    assert rec is not None and rec["game"] == game.name
    assert rec["agents"].count("human") == 1
    report = replay_report(json.loads(json.dumps(rec)))
    assert report.ok, [str(f) for f in report.faults]
    assert rec["totals"] == result.totals
    assert len([h for h in rec["hands"] if "renege" not in h]) == game.config.hands


# --------------------------------------------------------------------------
# Whole games of Where's Bob's Hat?
def bh_invalid_then_legal(gen: np.random.Generator):
    """Every decision: a batch of inputs that are wrong in this phase, then a legal move typed by name."""

    def decide(tg, state, legal):
        seat = tg.seat
        ph = int(state.phase[0])
        lines = ["", "   ", "xyz", "0", "999", "help", "t", "m"]
        if ph == bh.HAT:
            lines += ["blue3", "blue+fewest", "hat+11"]
        elif ph == bh.BID:
            own = int(np.flatnonzero(state.hands[0, seat])[0])
            lines += [bh_card_str(own), "hat+10", "purple", "blue+blue", "fewest+fewest+fewest"]
            if not legal[bh.BID_BASE]:
                lines.append("none")
            if not legal[bh.BID_BASE + 16]:
                lines.append("fewest+fewest")
        else:
            others = np.flatnonzero(state.hands[0].any(axis=0) & ~state.hands[0, seat])
            if others.size:
                lines.append(bh_card_str(int(others[0])))
            held_illegal = np.flatnonzero(state.hands[0, seat] & ~legal[: bh.N_CARDS])
            if held_illegal.size:
                lines.append(bh_card_str(int(held_illegal[0])))
            lines += ["blue+fewest", "hat-10", "black21"]
        acts = np.flatnonzero(legal)
        return [*lines, tg.text.move_label(int(acts[int(gen.integers(len(acts)))]))]

    return decide


def test_whole_game_with_every_kind_of_invalid_input():
    game = make_game("bobs_hat", players=3, hands=2)
    result, out, oracle = run_game(game, bh_invalid_then_legal(np.random.default_rng(1)), seed=4)
    assert_valid_record(result, game)
    assert "Traceback" not in out
    # each wrong input got its own clear answer
    for text in (
        "Type a move",  # empty line
        "'xyz' is not",
        "No move 999: choose a number from 1 to",
        "No move 0",
        "Type your move as its number in the list",  # help
        "Your moves:",
        "you are the dealer and choose Bob's Hat first",
        "is not a hat choice",
        "it is the bidding, not a card",
        "only the dealer chooses Bob's Hat",
        "'purple' is not a bid card",
        "it can be bid once",
        "fewest can be bid twice at most",
        "bidding nothing needs the no-bid option",
        "needs the --double-fewest option",
        "you do not hold",
        "the bidding is over: now play a card",
        "Bob's Hat was chosen at the start of the hand",
        "'black21' is not a card",
    ):
        assert text in out, text
    assert "--- Hand scoring" in out and "=== Game over" in out


def test_must_follow_suit_is_explained():
    game = make_game("bobs_hat", players=4, hands=3)
    seen = []

    def decide(tg, state, legal):
        held_illegal = np.flatnonzero(state.hands[0, tg.seat] & ~legal[: bh.N_CARDS])
        lines = []
        if int(state.phase[0]) == bh.PLAY and held_illegal.size:
            seen.append(True)
            lines.append(bh_card_str(int(held_illegal[0])))
        return [*lines, "1"]

    result, out, _ = run_game(game, decide, seat=2, seed=11)
    assert_valid_record(result, game)
    assert seen, "no deal in this seed made the human unable to follow suit; pick another seed"
    assert "you must follow the suit led" in out


@pytest.mark.parametrize(
    "options",
    [
        {"players": 3, "hands": 2},
        {"players": 4, "hands": 2, "double_fewest": True, "no_bid": True},
        {"players": 5, "hands": 1, "secret_bidding": True, "negative_scoring": True},
        {"players": 4, "hands": 2, "first_dealer": -1, "no_bid": True, "secret_bidding": True},
        {"players": 3, "hands": 2, "renege_mode": True},
    ],
)
@pytest.mark.parametrize("numbers", [False, True])
def test_every_option_plays_to_a_valid_record(options, numbers):
    game = make_game("bobs_hat", **options)
    result, out, _ = run_game(game, typed_moves(7, numbers), seat=1, opponents=["random"], seed=3)
    assert_valid_record(result, game)
    assert "Traceback" not in out


def test_no_bid_and_double_fewest_typed():
    game = make_game("bobs_hat", players=3, hands=3, no_bid=True, double_fewest=True)
    bids: list[str] = []

    def decide(tg, state, legal):
        if int(state.phase[0]) == bh.BID:
            # 'none' the first time; the later refusals come with the reason
            bid = "none" if not bids else "fewest+fewest"
            bids.append(bid)
            return ["none", "fewest+fewest"] if len(bids) > 1 else [bid]
        return ["1"]

    result, out, _ = run_game(game, decide, seed=2)
    assert_valid_record(result, game)
    hands = result.record["hands"]
    assert hands[0]["bids"][0] == [] and hands[0]["scores"][0] == 0
    assert hands[1]["bids"][0] == ["fewest", "fewest"]
    assert "you have already used your no-bid this game" in out
    assert "no bid this hand: scores 0" in out
    assert "double fewest:" in out


def test_secret_bidding_hides_bot_bids_until_all_have_bid():
    game = make_game("bobs_hat", players=4, hands=1, secret_bidding=True, first_dealer=1)
    result, out, _ = run_game(game, typed_moves(0), seat=3, seed=5)
    assert_valid_record(result, game)
    before_reveal = out.split("Bids revealed:")[0]
    assert "player_1 has bid (secret)." in before_reveal
    assert "(secret)" in before_reveal
    assert "player_1 bids" not in before_reveal


def test_renege_mode_asks_before_reneging():
    game = make_game("bobs_hat", players=4, hands=2, renege_mode=True)
    reneged = []

    def decide(tg, state, legal):
        held_illegal = np.flatnonzero(state.hands[0, tg.seat] & ~legal[: bh.N_CARDS])
        if int(state.phase[0]) == bh.PLAY and held_illegal.size and not reneged:
            reneged.append(int(held_illegal[0]))
            card = bh_card_str(int(held_illegal[0]))
            return [card, "n", card, "y"]  # decline once, then confirm
        return ["1"]

    result, out, _ = run_game(game, decide, seat=0, seed=11)
    assert reneged
    assert "Renege anyway?" in out and "reneged with" in out
    assert result.completed
    report = replay_report(json.loads(json.dumps(result.record)))
    assert report.ok, [str(f) for f in report.faults]
    entries = [h for h in result.record["hands"] if "renege" in h]
    assert len(entries) == 1 and entries[0]["renege"]["seat"] == 0
    assert entries[0]["scores"][0] == bh.RENEGE_PENALTY


def test_hand_summary_explains_every_bid_and_the_hat():
    game = make_game("bobs_hat", players=3, hands=1)
    result, out, _ = run_game(game, lambda tg, st, legal: ["hat+10"] if legal[bh.HAT_PLUS] else ["1"], seed=3)
    assert_valid_record(result, game)
    summary = out.split("--- Hand scoring")[1]
    hand = result.record["hands"][0]
    for p in range(3):
        assert f"hand {hand['scores'][p]:+d}, total {result.totals[p]}" in summary
        for bid in hand["bids"][p]:
            assert bid.replace("_", " ") in summary
    if hand["hat_holder"] is not None:
        assert "Bob's Hat: held at the end of the hand: +10" in summary


# --------------------------------------------------------------------------
# Leaving, saving
class Interrupting(io.TextIOBase):
    def __init__(self, n: int) -> None:
        self.n = n

    def readline(self, size: int = -1) -> str:
        self.n -= 1
        if self.n < 0:
            raise KeyboardInterrupt
        return "1\n"


@pytest.mark.parametrize(
    ("stream", "how", "code"),
    [
        (lambda: io.StringIO("1\n1\n1\n"), "eof", 0),  # a pipe that runs out ends the game quietly
        (lambda: io.StringIO("1\nquit\n"), "quit", 0),
        (lambda: Interrupting(4), "interrupt", 130),
    ],
)
def test_leaving_early_saves_nothing(tmp_path, stream, how, code):
    path = tmp_path / "games.jsonl"
    out = io.StringIO()
    result = play(make_game("bobs_hat", players=3, hands=2), 0, ["random"], input=stream(), output=out, save=str(path))
    assert not result.completed and result.how == how and result.exit_code == code
    assert result.record is None
    assert not path.exists()
    assert "nothing saved" in out.getvalue()
    assert list(tmp_path.iterdir()) == []  # no temporary file left behind either


def test_save_appends_one_record_per_game(tmp_path):
    path = tmp_path / "games.jsonl"
    game = make_game("bobs_hat", players=3, hands=1)
    for seed in (0, 1):
        result, out, _ = run_game(game, typed_moves(seed), seed=seed, save=str(path))
        assert result.saved == str(path)
        assert f"Game saved to {path}" in out
    n, faults = replay_file(path)
    assert n == 2 and faults == []


def test_seed_fixes_the_deals_and_the_bots():
    game = make_game("bobs_hat", players=4, hands=2)
    a, _, _ = run_game(game, typed_moves(3), seed=9)
    b, _, _ = run_game(game, typed_moves(3), seed=9)
    assert a.record == b.record


def test_opponent_agents_and_counts():
    game = make_game("bobs_hat", players=4, hands=1)
    result, _, _ = run_game(game, typed_moves(0), seat=2, opponents=["random", "random", "random"])
    assert result.record["agents"] == ["random", "random", "human", "random"]
    with pytest.raises(ValueError, match="opponents"):
        TerminalGame(game, 0, ["random", "random"])
    with pytest.raises(ValueError, match="seat must be 0-3"):
        TerminalGame(game, 4, ["random"])


def test_save_path_is_checked_before_the_game(tmp_path):
    game = make_game("bobs_hat", players=3, hands=1)
    with pytest.raises(ValueError, match="does not exist"):
        TerminalGame(game, 0, ["random"], save=str(tmp_path / "no" / "such" / "dir.jsonl"))
    with pytest.raises(ValueError, match="it is a folder"):
        TerminalGame(game, 0, ["random"], save=str(tmp_path))


# --------------------------------------------------------------------------
# Parsing
@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("blue", 1),
        ("Blue + Fewest", 9),
        ("most_blue,fewest", 9),
        ("bid:most_red+most_black", 6),
        ("fewest fewest", 16),
        ("double_fewest+black", 20),
        ("bl", None),  # blue or black?
        ("none", 0),
        ("blu+bla+red+f", 15),
    ],
)
def test_bid_parsing(text, code):
    if code is None:
        with pytest.raises(MoveError):
            BobsHatText._parse_bid(text.lower())
    else:
        assert BobsHatText._parse_bid(text.lower()) == code


@pytest.mark.parametrize(
    ("text", "card"),
    [("blue14", 13), ("red 3", 22), ("bla20", 59), ("r1", 20), ("bl14", None), ("blue0", None), ("blue21", None)],
)
def test_card_parsing(text, card):
    assert BobsHatText._parse_card(text) == card


@pytest.mark.parametrize("text", ["hat+10", "+10", "+", "hat +10", "plus", "hat plus"])
def test_hat_parsing(text):
    assert BobsHatText._parse_hat(text) == bh.HAT_PLUS
    assert BobsHatText._parse_hat(text.replace("+", "-").replace("plus", "minus")) == bh.HAT_MINUS


def test_every_move_label_parses_back():
    game = make_game("bobs_hat", players=4, double_fewest=True, no_bid=True)
    text = BobsHatText(game)
    state = game.init(np.zeros(1, dtype=np.uint64))
    for phase in (bh.HAT, bh.BID):
        state.phase[0] = phase
        legal = game.legal_action_mask(state)[0]
        for a in np.flatnonzero(legal):
            assert text.parse(text.move_label(int(a)), state, int(state.cur[0]), legal) == a


# --------------------------------------------------------------------------
# Oh Hell


def oh_invalid_then_legal(gen: np.random.Generator):
    def decide(tg, state, legal):
        from bobshat_env.core import oh_hell as oh
        from bobshat_env.core.cards import oh_card_str

        seat = tg.seat
        lines = ["", "xyz", "help"]
        if int(state.phase[0]) == oh.BID:
            size = int(state.hand_size[0])
            lines += [oh_card_str(int(np.flatnonzero(state.hands[0, seat])[0])), str(size + 1), "bid many"]
            forbidden = [b for b in range(size + 1) if not legal[oh.BID_BASE + b]]
            lines += [str(b) for b in forbidden]
            ok = [b for b in range(size + 1) if legal[oh.BID_BASE + b]]
            return [*lines, f"bid {ok[int(gen.integers(len(ok)))]}"]
        others = np.flatnonzero(state.hands[0].any(axis=0) & ~state.hands[0, seat])
        if others.size:
            lines.append(oh_card_str(int(others[0])).lower())
        held_illegal = np.flatnonzero(state.hands[0, seat] & ~legal[: oh.N_CARDS])
        if held_illegal.size:
            lines.append(oh_card_str(int(held_illegal[0])))
        lines += ["bid 2", "99"]
        acts = np.flatnonzero(legal)
        card = oh_card_str(int(acts[int(gen.integers(len(acts)))]))
        return [*lines, card.replace("T", "10")]

    return decide


@pytest.mark.parametrize("scoring", ["positive", "neutral", "negative"])
def test_oh_hell_whole_game_with_invalid_input(scoring):
    game = make_game("oh_hell", players=3, deal_style="short_high", scoring=scoring)
    result, out, _ = run_game(game, oh_invalid_then_legal(np.random.default_rng(2)), seat=1, seed=6)
    assert_valid_record(result, game)
    assert "Traceback" not in out
    for text in ("'xyz' is not", "it is the bidding, not a card", "a bid is 0 to the hand size", "you do not hold"):
        assert text in out, text
    assert "the bidding is over" in out
    assert f"--- Hand scoring ({scoring}" in out


@pytest.mark.parametrize("style", ["long", "long_inverted", "short_high_low", "short_low"])
def test_oh_hell_deal_styles(style):
    game = make_game("oh_hell", players=7, deal_style=style, first_dealer=-1)
    result, out, _ = run_game(game, typed_moves(1, numbers=True), seat=6, seed=1)
    assert_valid_record(result, game)


# --------------------------------------------------------------------------
# The command line
def test_cli_play_and_save(tmp_path, monkeypatch, capsys):
    path = tmp_path / "me.jsonl"
    monkeypatch.setattr("sys.stdin", io.StringIO("1\n" * 500))
    code = main(["play", "--players", "3", "--hands", "1", "--opponents", "random", "--seed", "4", "--save", str(path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "=== Game over" in out and "Game saved to" in out
    n, faults = replay_file(path)
    assert n == 1 and faults == []


def test_cli_play_all_options(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO("1\n" * 500))
    argv = ["play", "--players", "5", "--hands", "1", "--seat", "4", "--opponents", "random,random,random,random"]
    argv += ["--double-fewest", "--no-bid", "--secret-bidding", "--negative-scoring", "--renege-mode"]
    argv += ["--first-dealer", "-1", "--seed", "1"]
    assert main(argv) == 0


def test_cli_play_end_of_input_exits_cleanly(tmp_path, monkeypatch, capsys):
    path = tmp_path / "me.jsonl"
    monkeypatch.setattr("sys.stdin", io.StringIO("1\n"))
    code = main(["play", "--players", "3", "--opponents", "random", "--save", str(path)])
    captured = capsys.readouterr()
    assert code == 0  # the end of piped input is a way to stop, not a failure (it exited 130, as for Ctrl-C)
    assert "End of input: the game stops here: nothing saved." in captured.out
    assert "Traceback" not in captured.out + captured.err
    assert not path.exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--seat", "3", "--players", "3"], "--seat must be 0-2"),
        (["--opponents", "random,random"], "--opponents names 2 bots but 4 players need 3"),
        (["--opponents", "nosuchbot"], "unknown agent 'nosuchbot'"),
        (["--players", "9"], "players must be 3, 4 or 5"),
    ],
)
def test_cli_play_bad_arguments(argv, message, capsys):
    assert main(["play", *argv]) == 2
    assert message in capsys.readouterr().err


class PublicProbe:
    """A bot that asks for the public void record, as search bots do, and checks it gets one."""

    needs_public = True

    def __init__(self, game=None, seed=None):
        self.name = "public_probe"
        self.gen = np.random.default_rng(seed)
        self.calls = 0

    def act(self, obs, mask, seat, public=None):
        assert public is not None and public["void"].shape[0] == obs.shape[0]
        self.calls += 1
        return np.array([int(self.gen.choice(np.flatnonzero(m))) for m in mask])


def test_bots_that_need_public_facts_get_them():
    game = make_game("bobs_hat", players=3, hands=2)
    probe = PublicProbe(seed=0)
    result, _, _ = run_game(game, typed_moves(0), opponents=[probe, "random"])
    assert_valid_record(result, game)
    assert probe.calls > 0


@pytest.mark.parametrize(
    "game_name, options",
    [("bobs_hat", ["--hands", "2"]), ("oh_hell", ["--deal-style", "short_low", "--players", "7"])],
)
def test_default_opponent_plays_the_game(game_name, options, tmp_path, monkeypatch, capsys):
    """`bobshat play` without --opponents seats the strongest bot (`strong` in both games) and plays it out."""
    game = make_game(game_name)
    assert default_opponent(game) == "strong"
    path = tmp_path / "me.jsonl"
    monkeypatch.setattr("sys.stdin", io.StringIO("1\n" * 500))
    code = main(["play", "--game", game_name, *options, "--seed", "3", "--save", str(path)])
    out = capsys.readouterr().out
    assert code == 0, out
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(records) == 1
    agents = records[0]["agents"]
    assert agents[0] == "human" and agents[1:] == ["strong"] * (len(agents) - 1), agents
    n, faults = replay_file(path)
    assert n == 1 and faults == []


def test_default_opponent_falls_back_when_strong_is_missing(monkeypatch):
    import agents

    game = make_game("oh_hell")
    registered = agents.available()
    monkeypatch.setattr(agents, "available", lambda: [n for n in registered if n != "strong"])
    assert default_opponent(game) == "simple"
    monkeypatch.setattr(agents, "available", lambda: [n for n in registered if n not in ("strong", "simple")])
    assert default_opponent(game) == "random"


@pytest.mark.parametrize("spec", ["strong", "simple", "bid=strong+play=simple", "pimc:worlds=4"])
def test_heuristic_and_search_bots_as_opponents(spec):
    if spec.split(":")[0] not in available() and not spec.startswith("bid="):
        pytest.skip(f"{spec} is not registered")
    game = make_game("bobs_hat", players=4, hands=1)
    result, out, _ = run_game(game, typed_moves(0), opponents=[spec])
    assert_valid_record(result, game)
    assert result.record["agents"].count(spec) == 3


GARBAGE = [
    "²",
    "٣",
    "🎩",
    "\x00",
    "blue" * 200,
    "9" * 40,
    "-1",
    "+-",
    "hat",
    "bid:",
    "bid 3 4",
    "red14!",
    "  QS  ",
    "fewest+",
    "+blue",
    "most",
    "none+blue",
    "\t",
    "1.5",
    "0x10",
    "b l u e 1 4",
    "ÿ",
    "../../etc",
    "%s%d{}",
]


@pytest.mark.parametrize("name", ["bobs_hat", "oh_hell"])
def test_garbage_input_never_crashes(name):
    gen = np.random.default_rng(0)
    game = make_game(name, players=3, **({"hands": 1} if name == "bobs_hat" else {"deal_style": "short_low"}))

    def decide(tg, state, legal):
        junk = list(gen.choice(GARBAGE, size=6))
        acts = np.flatnonzero(legal)
        return [*junk, tg.text.move_label(int(acts[int(gen.integers(len(acts)))]))]

    result, out, oracle = run_game(game, decide, seed=1)
    assert_valid_record(result, game)
    assert out.count("Not allowed") + out.count("No move") + out.count("Type a move") >= 6


# --------------------------------------------------------------------------
# Issue 13: saving where it cannot, a fresh seed, stdin closed
def test_unwritable_save_is_refused_before_the_first_deal(tmp_path, monkeypatch, capsys):
    """Issue 13.4: a path no file can have is refused before anyone plays (it used to play the game, then lose it)."""
    game = make_game("bobs_hat", players=3, hands=1)
    bad = tmp_path / ("x" * 300 + ".jsonl")  # too long a name: unwritable, even for root
    with pytest.raises(ValueError, match="--save: cannot write .*too long"):
        TerminalGame(game, 0, ["random"], save=str(bad))
    monkeypatch.setattr("sys.stdin", io.StringIO("1\n" * 500))
    assert main(["play", "--players", "3", "--hands", "1", "--opponents", "random", "--save", str(bad)]) == 2
    captured = capsys.readouterr()
    assert "bobshat play: error: --save: cannot write" in captured.err and "too long" in captured.err
    assert "=== Hand" not in captured.out  # no game was dealt


def test_read_only_save_folder_is_refused_before_the_first_deal(tmp_path):
    from test_paths import read_only_folder

    folder = read_only_folder(tmp_path / "ro")
    try:
        with pytest.raises(ValueError, match="--save: cannot write .*Permission denied"):
            TerminalGame(make_game("bobs_hat", players=3, hands=1), 0, ["random"], save=str(folder / "g.jsonl"))
    finally:
        folder.chmod(0o700)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs a device that is always full")
def test_save_failing_at_the_end_goes_to_a_fallback_file(tmp_path, monkeypatch):
    """Issue 13.4: the check passes but the write fails (disk full): the record lands in the current folder."""
    monkeypatch.chdir(tmp_path)
    game = make_game("bobs_hat", players=3, hands=1)
    result, out, _ = run_game(game, typed_moves(0), seed=5, save="/dev/full")
    assert "Could not save the game to /dev/full: No space left on device." in out
    (saved,) = tmp_path.iterdir()
    assert result.saved == str(saved) and saved.name.startswith("bobshat-game-") and saved.name.endswith("-seed5.jsonl")
    assert f"Saved it to {saved} instead (check it with: bobshat replay {saved})." in out
    assert replay_file(saved) == (1, [])


def test_fallback_goes_to_the_temp_folder_when_the_current_one_is_gone(tmp_path, monkeypatch):
    here, spare = tmp_path / "here", tmp_path / "spare"
    here.mkdir()
    spare.mkdir()
    target = here / "games.jsonl"
    game = make_game("bobs_hat", players=3, hands=1)
    tg = TerminalGame(
        game, 0, ["random"], seed=2, input=io.StringIO("1\n" * 500), output=io.StringIO(), save=str(target)
    )
    monkeypatch.chdir(here)
    monkeypatch.setattr(tempfile, "tempdir", str(spare))
    here.rmdir()  # the save folder and the current folder vanish during the game
    result = tg.run()
    (saved,) = spare.iterdir()
    assert result.saved == str(saved) and replay_file(saved) == (1, [])
    assert f"Saved it to {saved} instead" in tg.out.getvalue()


def test_play_draws_a_fresh_seed_and_prints_it():
    """Issue 13.12: no seed, a new deal each game; the printed seed deals the same game again."""
    game = make_game("bobs_hat", players=3, hands=1)
    a, out_a, _ = run_game(game, typed_moves(1), seed=None)
    b, _, _ = run_game(game, typed_moves(1), seed=None)
    assert a.seed != b.seed  # two draws from 10**9 seeds
    assert f"Seed {a.seed} (play these deals again with --seed {a.seed})." in out_a
    again, _, _ = run_game(game, typed_moves(1), seed=a.seed)
    assert again.record == a.record
    assert a.record["hands"][0]["deal"] != b.record["hands"][0]["deal"]


def test_cli_play_prints_its_seed(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO("1\n" * 500))
    assert main(["play", "--players", "3", "--hands", "1", "--opponents", "random"]) == 0
    out = capsys.readouterr().out
    seed = int(out.split("Seed ", 1)[1].split(" ", 1)[0])
    assert f"play these deals again with --seed {seed})" in out


@pytest.mark.parametrize("stdin", [None, "closed"])
def test_cli_play_with_stdin_closed(stdin, monkeypatch, capsys):
    """Issue 13.6: `bobshat play <&-` was `RuntimeError: input(): lost sys.stdin`."""
    if stdin == "closed":
        stdin = io.StringIO()
        stdin.close()
    monkeypatch.setattr("sys.stdin", stdin)
    assert main(["play", "--players", "3", "--opponents", "random"]) == 2
    captured = capsys.readouterr()
    assert captured.err == (
        "bobshat play: error: standard input is closed: play reads your moves from it (run it in a terminal)\n"
    )


@pytest.mark.skipif(sys.platform == "win32", reason="closes fd 0 before exec")
def test_cli_play_with_stdin_closed_in_a_real_process():
    proc = subprocess.run(
        [sys.executable, "-m", "bobshat.cli", "play", "--players", "3"],
        preexec_fn=lambda: os.close(0),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    )
    assert proc.returncode == 2
    assert "standard input is closed" in proc.stderr and "Traceback" not in proc.stderr


# --------------------------------------------------------------------------
# Narration: counts in words, Bob's Hat taken or kept
def test_counts_are_told_in_the_right_number():
    from bobshat_env.text import plural

    assert [plural(n, "card") for n in (0, 1, 2)] == ["0 cards", "1 card", "2 cards"]
    assert plural(1, "hand entry", "hand entries") == "1 hand entry" and plural(3, "hand entry", "hand entries") == (
        "3 hand entries"
    )
    # Oh Hell short_high deals 1 card in its first hand: its heading, the table and the scoring say so
    game = make_game("oh_hell", players=3, deal_style="short_high")
    result, out, _ = run_game(
        game, lambda tg, st, legal: ["quit"] if int(st.hand_no[0]) >= 1 else ["1"], opponents=("random",), seed=0
    )
    assert result.how == "quit"
    assert "=== Hand 1 of 10: 1 card each," in out and "(1 card each), dealer" in out
    assert "--- Hand scoring" in out
    assert not re.search(r"(?<![-\d])1 (cards|tricks)\b", out) and "(s)" not in out  # "0-1 tricks" is a range


def test_bobs_hat_is_taken_or_kept_as_the_holder_changes():
    """A trick with a hat card: its winner takes Bob's Hat, or keeps it when it already held it."""
    seen = set()
    for seed in range(6):
        game = make_game("bobs_hat", players=3, hands=2)
        _, out, _ = run_game(game, typed_moves(seed), seed=seed)
        holder = None
        for line in out.splitlines():
            if line.startswith("=== Hand"):
                holder = None  # every hand starts with Bob's Hat in the centre
            m = re.search(r"Trick \d+: (.*) -> (player_\d)(?: \(you\))? wins with \w+(?: and (\w+) Bob's Hat)?", line)
            if not m:
                continue
            cards = [bh_parse_card(part.split()[-1]) for part in m.group(1).split(", ")]
            if any(BH_IS_HAT_CARD[c] for c in cards):
                want = "keeps" if m.group(2) == holder else "takes"
                assert m.group(3) == want, line
                seen.add(want)
                holder = m.group(2)
            else:
                assert m.group(3) is None, line
    assert seen == {"takes", "keeps"}
    text = BobsHatText(make_game("bobs_hat", players=3))
    cards = np.array([13, 0, 1])  # blue14, a hat card, wins for seat 0
    assert "keeps Bob's Hat" in text.trick_line(cards, 0, 0, -1, 1, holder=0)
    assert "takes Bob's Hat" in text.trick_line(cards, 0, 0, -1, 1, holder=2)

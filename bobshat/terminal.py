"""Play in the terminal against the bots: ``bobshat play``.

One human seat, every other seat a bot (any agent spec). Each time it is the
human's turn the table is drawn (trump, Bob's Hat and who holds it, bids, the
current trick, cards taken, scores; only the human's hand is shown) with the
legal moves numbered. A move is typed as its number or in card notation
(docs/rules.md): ``blue14`` / ``QS`` for cards, ``hat+10`` / ``hat-10``
for the dealer's hat choice, ``blue+fewest`` / ``none`` for Bob's Hat bids and
the number of tricks for an Oh Hell bid. Anything else is answered with a
clear message and the question again. After every hand the scoring is
explained bid by bid; at the end the game can be saved as a record
(docs/records.md) that ``bobshat replay`` checks. The words are the game's
(:mod:`bobshat_env.text`: move names, parsing, each step told); this module
is the game loop, the prompts and the headings' rules.

Each game draws a fresh seed unless one is given, and prints it first, so
any game can be dealt again with ``--seed``. A ``save`` file is checked
before the first deal (a path that cannot be written is refused before
anyone plays); if saving still fails at the end (a full disk, a folder
removed meanwhile), the record goes to a new file in the current folder or
the temporary folder, and the message says where.

End of input (Ctrl-D) or Ctrl-C ends the game at once and saves nothing.

The input and output streams are parameters, so tests drive a whole game with
scripted input::

    from io import StringIO
    result = play(make_game("bobs_hat", players=3, hands=1), seat=0,
                  opponents=["random", "random"], input=StringIO("1\\n1\\n..."), output=StringIO())
"""

from __future__ import annotations

import json
import os
import re
import secrets
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TextIO

import numpy as np

from bobshat_env.core import rng
from bobshat_env.games import Game
from bobshat_env.paths import check_writable
from bobshat_env.seating import SeatDispatch
from bobshat_env.text import GameText, MoveError, RenegeQuestion, ordinal, plural, render, seat_name, tell_step

HUMAN = "human"
_HELP_COMMON = """\
  table (t)       draw the table again
  moves (m)       list your legal moves again
  help (?)        this help
  quit (q)        leave the game (nothing is saved)"""


class _Quit(Exception):
    """The human asked to leave (``quit``), or the input ended."""

    def __init__(self, how: str) -> None:
        super().__init__(how)
        self.how = how


@dataclass
class PlayResult:
    """How a terminal game ended.

    completed: the game was played to its end. totals: the final (or, when
    abandoned, current) totals by seat. record: the game record (docs/records.md),
    None when abandoned. saved: the file the record was appended to, if any
    (a fallback file when the ``save`` path failed at the end). how:
    ``"finished"``, ``"quit"``, ``"eof"`` or ``"interrupt"``. hands: hands
    scored. seed: the seed the game was dealt with (``--seed`` replays it).
    """

    completed: bool
    totals: list[int]
    record: dict | None = None
    saved: str | None = None
    how: str = "finished"
    hands: int = 0
    seed: int | None = None

    @property
    def exit_code(self) -> int:
        """0 for a finished game, ``quit`` or the end of the input (a pipe that ran out: a way to stop, not a
        failure); 130 for Ctrl-C, as the shell gives for SIGINT."""
        return 130 if self.how == "interrupt" else 0


# ==========================================================================
# The game loop
class TerminalGame:
    """One game between a human at ``seat`` and bots, over text streams.

    Args:
        game: the game and its options (:func:`~bobshat_env.games.make_game`).
        seat: the human's seat.
        opponents: one agent per other seat, in seat order (agents or specs
            such as ``"strong"`` or ``"ppo:runs/x/policy.pt"``).
        seed: seed of the deals (and of the bots built from specs); None
            draws a fresh one (:func:`new_seed`). It is printed first.
        input, output: text streams (default the terminal).
        save: JSON Lines file to append the finished game's record to;
            checked here, before any deal (``OutputPathError`` if it cannot
            be written).
    """

    def __init__(
        self,
        game: Game,
        seat: int = 0,
        opponents: Sequence[Any] | None = None,
        seed: int | None = None,
        input: TextIO | None = None,  # the natural name, mirrors print(file=)
        output: TextIO | None = None,
        save: str | None = None,
    ) -> None:
        P = game.players
        if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < P:
            raise ValueError(f"seat must be 0-{P - 1} for {P} players, got {seat!r}")
        opponents = list(opponents) if opponents is not None else ["random"] * (P - 1)
        if len(opponents) == 1 and P > 2:
            opponents = opponents * (P - 1)
        if len(opponents) != P - 1:
            raise ValueError(f"name {P - 1} opponents (one per other seat) or one for all, got {len(opponents)}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
            raise ValueError(f"seed must be a non-negative integer or None (a fresh one), got {seed!r}")
        self.game = game
        self.seat = int(seat)
        self.seed = new_seed() if seed is None else int(seed)
        self.input = input
        self.out = output if output is not None else sys.stdout
        if save is not None:
            from bobshat_env.records.io import check_records_output

            check_writable(save, "--save", append=True)
            check_records_output(save, "--save")  # a records file, new or empty: never a checkpoint
        self.save = save
        self.text: GameText = game.play_text()  # the class the game's description names
        self.state: Any = None  # the game being played (B = 1), set by run()
        self.agents: list[Any] = []
        self.names: list[str] = []
        it = iter(opponents)
        for p in range(P):
            if p == self.seat:
                self.agents.append(None)
                self.names.append(HUMAN)
                continue
            spec = next(it)
            if isinstance(spec, str):
                from agents import make_agent  # agents sit above the env package

                self.agents.append(make_agent(spec, game, seed=self.seed * 1000 + p))
                self.names.append(spec)
            else:
                self.agents.append(spec)
                self.names.append(str(getattr(spec, "name", type(spec).__name__)))

    # -- io
    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def ask(self, prompt: str) -> str:
        """One line of input; raises _Quit at the end of the input."""
        if self.input is None:
            if sys.stdin is None or sys.stdin.closed:  # started with stdin closed (`bobshat play <&-`)
                raise _Quit("eof")
            try:
                return input(prompt)
            except EOFError:
                raise _Quit("eof") from None
        self.out.write(prompt)
        self.out.flush()
        line = self.input.readline()
        if not line:
            raise _Quit("eof")
        return line.rstrip("\r\n")

    # -- the human's turn
    def _moves_text(self, legal: np.ndarray, state: Any) -> str:
        acts = np.flatnonzero(legal)
        if not self.text.number_is_index(state):  # Oh Hell bids: the number is the bid
            base = self.game.module.BID_BASE
            bids = " ".join(str(a - base) for a in acts)
            note = self.text.moves_note(state, legal)
            return f"Legal bids: {bids}" + (f" ({note})" if note else "")
        items = [f"{i + 1:>2}) {self.text.move_label(int(a)):<20}" for i, a in enumerate(acts)]
        per_row = 4
        rows = ["".join(items[i : i + per_row]).rstrip() for i in range(0, len(items), per_row)]
        return "Your moves:\n" + "\n".join(rows)

    def _table(self, state: Any) -> None:
        self.say()
        self.say(render(self.game, state, 0, show_hands=self.seat))

    def human_move(self, state: Any) -> int:
        """Show the table and ask until a legal move is typed."""
        legal = self.game.legal_action_mask(state)[0]
        acts = np.flatnonzero(legal)
        self._table(state)
        self.say(self._moves_text(legal, state))
        hint = "number or name, ? for help" if self.text.number_is_index(state) else "? for help"
        prompt = f"{self.text.question(state)} [{hint}]: "
        example = self.text.move_label(int(acts[-1]))
        while True:
            raw = self.ask(prompt)
            t = raw.strip().lower()
            if not t:
                self.say(f"Type a move: its number in the list or its name (e.g. {example}), or ? for help.")
                continue
            if t in ("q", "quit", "exit"):
                raise _Quit("quit")
            if t in ("?", "h", "help"):
                self.say(self.text.help + _HELP_COMMON)
                continue
            if t in ("t", "table"):
                self._table(state)
                continue
            if t in ("m", "moves"):
                self.say(self._moves_text(legal, state))
                continue
            if re.fullmatch(r"[0-9]+", t) and self.text.number_is_index(state):
                n = int(t)
                if 1 <= n <= len(acts):
                    return int(acts[n - 1])
                self.say(f"No move {n}: choose a number from 1 to {len(acts)}, or type the move's name.")
                continue
            try:
                return self.text.parse(raw, state, self.seat, legal)
            except RenegeQuestion as err:
                if not err.allowed:
                    self.say(f"Not allowed: {err}.")
                    continue
                self.say(
                    f"{self.text.move_label(err.card)} breaks follow suit ({err}). With the renege option that is a "
                    f"renege: {self.game.module.RENEGE_PENALTY} points and the hand is dealt again."
                )
                if self.ask("Renege anyway? [y/N]: ").strip().lower() in ("y", "yes"):
                    return err.card
            except MoveError as err:
                self.say(f"Not allowed: {err}.")

    # -- the game
    def run(self) -> PlayResult:
        """Play the game to its end (or until the human leaves)."""
        from bobshat_env.records import Recorder  # only a played game needs it

        game, P, human = self.game, self.game.players, self.seat
        state = self.state = game.init(rng.game_keys(self.seed, np.zeros(1, dtype=np.int64), 0))
        recorder = Recorder(game, state, agents=self.names)
        record: dict | None = None
        seats = ", ".join(f"player_{p}: {'you' if p == human else self.names[p]}" for p in range(P))
        self.say(f"{_title(game)} - {P} players ({seats}). Type ? at any prompt for help.")
        self.say(f"Seed {self.seed} (play these deals again with --seed {self.seed}).")
        self.say(ruled(self.text.hand_header(state, human), "==="))
        hands = 0
        # Bots that declare ``needs_public`` also get the public void record (as in the arena and training).
        dispatch = SeatDispatch(game, 1, self.agents)
        try:
            while not bool(game.done(state)[0]):
                p = int(state.cur[0])
                if p == human:
                    action = self.human_move(state)
                else:
                    legal = game.legal_action_mask(state)
                    obs = game.observe(state)
                    seat = state.cur.astype(np.int64)
                    action = int(dispatch.act_rows(self.agents[p], obs, legal, seat, np.zeros(1, dtype=np.int64))[0])
                snap = state.copy()
                dispatch.before_step(state, np.array([action]))
                res = game.step(state, np.array([action]))
                dispatch.after_step(res.new_hand)
                finished = recorder.record(snap.phase, snap.cur, np.array([action]), res, state)
                if finished:
                    record = finished[0]
                hands += self._report(snap, action, res, state)
        except _Quit as q:
            self.say()
            left = {"quit": "You left the game", "eof": "End of input: the game stops here"}
            self.say(f"{left.get(q.how, 'Game abandoned')}: nothing saved.")
            return PlayResult(False, state.scores[0].astype(int).tolist(), how=q.how, hands=hands, seed=self.seed)
        except KeyboardInterrupt:
            self.say()
            self.say("Interrupted: game abandoned, nothing saved.")
            return PlayResult(False, state.scores[0].astype(int).tolist(), how="interrupt", hands=hands, seed=self.seed)
        totals = state.scores[0].astype(int).tolist()
        self._final(totals)
        saved = self._save(record) if self.save and record is not None else None
        return PlayResult(True, totals, record, saved, hands=hands, seed=self.seed)

    def _save(self, record: dict) -> str | None:
        """Append the record to ``save``; if that fails, to a new file nearby. Returns where it went."""
        from bobshat_env.records import write_jsonl
        from bobshat_env.records.io import check_records_output

        try:
            check_records_output(self.save)  # still records: the game may have taken a while
            write_jsonl(self.save, [record], append=True)
        except (OSError, ValueError) as err:  # ValueError: the file is no longer records
            self.say(f"Could not save the game to {self.save}: {getattr(err, 'strerror', None) or err}.")
        else:
            self.say(f"Game saved to {self.save} (check it with: bobshat replay {self.save}).")
            return self.save
        name = f"bobshat-game-{time.strftime('%Y%m%d-%H%M%S')}-seed{self.seed}.jsonl"
        for folder in (os.getcwd, tempfile.gettempdir):
            try:
                path = os.path.join(folder(), name)
                write_jsonl(path, [record], append=True)
            except OSError:
                continue
            self.say(f"Saved it to {path} instead (check it with: bobshat replay {path}).")
            return path
        self.say("No folder could take it either; here is the record, one JSON line to keep:")
        self.say(json.dumps(record, separators=(",", ":")))
        return None

    def _report(self, snap: Any, action: int, res: Any, state: Any) -> int:
        """Print what one step did; returns 1 if it ended a hand."""
        story = tell_step(self.game, self.text, snap, action, res, state, self.seat)
        for line in story.events:
            self.say(line)
        if story.summary:
            self.say()
            self.say(ruled(story.summary[0], "---"))
            for line in story.summary[1:]:
                self.say(line)
        if story.header:
            if story.summary:
                self.say()
            self.say(ruled(story.header, "==="))
        return int(story.hand_scored)

    def _final(self, totals: list[int]) -> None:
        P = len(totals)
        best = max(totals)
        order = sorted(range(P), key=lambda p: -totals[p])
        self.say()
        self.say("=== Game over: final totals ===")
        for p in order:
            mark = "  <- winner" if totals[p] == best else ""
            name = self.names[p] if len(self.names[p]) <= 24 else "..." + self.names[p][-21:]
            self.say(f"{seat_name(p, self.seat):<18}{name:<25}{totals[p]:>6}{mark}")
        winners = [p for p in range(P) if totals[p] == best]
        mine = totals[self.seat]
        if self.seat in winners:
            others = plural(len(winners) - 1, "other")
            self.say("You win!" if len(winners) == 1 else f"You share the win with {others}!")
        else:
            place = 1 + sum(t > mine for t in totals)
            self.say(f"You finished {ordinal(place)} of {P}.")


def ruled(heading: str, rule: str) -> str:
    """A heading as the terminal sets it off: ``=== Hand 1 of 2: ... ===``, ``--- Hand scoring (...) ---``."""
    return f"{rule} {heading} {rule}"


def _title(game: Game) -> str:
    return game.title


def new_seed() -> int:
    """A fresh seed for a terminal game: 0 to 999,999,999, short enough to type back."""
    return secrets.randbelow(10**9)


def play(
    game: Game,
    seat: int = 0,
    opponents: Sequence[Any] | None = None,
    seed: int | None = None,
    input: TextIO | None = None,
    output: TextIO | None = None,
    save: str | None = None,
) -> PlayResult:
    """Play one game in the terminal (or over the given streams); see :class:`TerminalGame`."""
    return TerminalGame(game, seat, opponents, seed, input=input, output=output, save=save).run()


def default_opponent(game: Game) -> str:
    """The strongest bot registered that plays ``game``: ``strong``, else ``simple``, else ``random``."""
    from agents import available, make_agent

    names = available()
    for name in ("strong", "simple"):
        if name in names:
            try:
                make_agent(name, game, seed=0)
            except ValueError:  # registered, but not for this game
                continue
            return name
    return "random"


__all__ = [
    "HUMAN",
    "PlayResult",
    "TerminalGame",
    "default_opponent",
    "new_seed",
    "play",
]

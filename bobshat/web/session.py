"""Games in progress for ``bobshat serve``: one :class:`GameSession` per game, a :class:`SessionStore` for all.

Nothing here knows HTTP (the routes are in :mod:`bobshat.web.app`), and
nothing here knows a game by name: every game-specific word, card face and
fact comes from the :class:`~bobshat_env.games.Game` and the play text its
description names (:mod:`bobshat_env.text`), the rules from the batched core.
A session steps one game (B = 1) move by move:

- a bot moves only when the page asks (:meth:`GameSession.advance`), so the
  page sets the pace and an abandoned game costs no CPU;
- a human move arrives as its notation (``blue14``, ``hat+10``,
  ``blue+fewest``, ``none``, ``QS``, ``3``) and is read by the same parser as
  the terminal game, so a bad one gets the same reason; it changes nothing;
- each step is told as the terminal tells it (:func:`bobshat_env.text.tell_step`);
- the finished game is recorded by :class:`bobshat_env.records.Recorder`
  and handed to the store, which appends it to the records folder.

Each session has its own lock, state, agents and recorder: games never share
anything mutable, so many can run at once from the server's thread pool.
"""

from __future__ import annotations

import dataclasses
import os
import re
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bobshat.terminal import HUMAN, new_seed
from bobshat_env.core import rng
from bobshat_env.core.config import ConfigError
from bobshat_env.core.tricks import IllegalActionError
from bobshat_env.games import DESCRIPTIONS, Game, describe, make_game
from bobshat_env.paths import check_writable, sidecar
from bobshat_env.records import Recorder, write_jsonl
from bobshat_env.records.io import check_records_output
from bobshat_env.seating import SeatDispatch
from bobshat_env.text import GameText, MoveError, RenegeQuestion, ordinal, seat_name, tell_step

RECORDS_FILE = "games.jsonl"
FINISHED_PER_GAME = 10  # finished games kept (for their record and replay) per game in play: memory stays bounded
MAX_SEED = 2**63 - 1  # as the command line's --seed: game keys are 64-bit


class WebError(Exception):
    """A request the server refuses: ``status`` is the HTTP status, the message says what is wrong."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


# ==========================================================================
# What the page draws
def deck_faces(game: Game, text: GameText) -> dict[str, dict[str, Any]]:
    """Every card's face (notation, rank, suit, symbol, hat) by notation: sent once, drawn by name."""
    return {(face := text.card_face(c))["name"]: face for c in range(game.deck.n_cards)}


def table_view(
    game: Game,
    text: GameText,
    state: Any,
    names: Sequence[str],
    viewer: int | None,
    last_trick: dict | None = None,
    dealt: Any = None,
) -> dict[str, Any]:
    """The table of game 0 of ``state`` as JSON for the page.

    viewer: the seat whose hand is shown face up (and whose secret bid is
    visible), None to show every hand (watching bots, replays). dealt: for a
    hand just finished (``state`` after its last card, which the core has
    already moved on to the next hand's number and dealer), a state of that
    hand: the number, size, dealer and trump shown are its.
    """
    mod = game.module
    P = game.players
    phase = int(state.phase[0])
    done = phase == mod.DONE
    waiting = done or dealt is not None  # nobody is to act in a finished hand
    hand = state if dealt is None else dealt
    cur = int(state.cur[0])
    dealer = int(hand.dealer[0])
    me = -1 if viewer is None else viewer
    facts = text.table_facts(state, viewer, dealt)
    seats = []
    for p in range(P):
        held = np.flatnonzero(state.hands[0, p])
        shown = viewer is None or viewer == p
        seats.append(
            {
                "seat": p,
                "label": seat_name(p, me),
                "agent": names[p],
                "bid": facts["bids"][p],
                "taken": facts["taken"][p],
                "total": int(state.scores[0, p]),
                "marks": facts["marks"][p],
                "count": int(held.size),
                "cards": [game.card_str(int(c)) for c in held] if shown else None,
                "to_act": not waiting and cur == p,
                "dealer": p == dealer,
            }
        )
    lead = int(state.leader[0])
    in_trick = [(lead + i) % P for i in range(int(state.n_in_trick[0]))]
    return {
        "hand": {
            "number": int(hand.hand_no[0]) + 1,
            "of": int(game.config.hands),
            "size": int(hand.hand_size[0]),
            "dealer": dealer,
        },
        "phase": "hand over" if dealt is not None and not done else str(mod.PHASE_NAMES[phase]),
        "to_act": None if waiting else cur,
        "info": facts["info"],
        "taken_label": facts["taken_label"],
        "seats": seats,
        "trick": {
            "number": int(state.tricks_done[0]) + 1,
            "leader": lead,
            "cards": [{"seat": p, "card": game.card_str(int(state.trick[0, p]))} for p in in_trick],
        },
        "last_trick": last_trick,
        "done": done,
    }


_VERDICT = re.compile(r"\b(made|missed)\b")


def scoring_rows(game: Game, text: GameText, snap: Any, action: int, lines: Sequence[str], human: int) -> list[dict]:
    """A finished hand's scoring as table rows: seat, bid, taken, made or missed, points, total.

    ``snap`` is the state before the hand's last action (the step that
    ``lines``, the terminal's scoring text, tells). The bids, cards taken,
    points and totals are the core's; "made or missed" is read from each
    seat's reasons in ``lines`` (a Bob's Hat seat may make one bid and miss
    another: ``made 1, missed 1``).
    """
    final = snap.copy()  # the hand as it stands after its last trick, not yet redealt (as tell_step does)
    game.step(final, np.array([action], dtype=np.int64), auto_deal=False)
    facts = text.table_facts(final, None)
    P = game.players
    verdicts: list[list[str]] = [[] for _ in range(P)]
    p = -1
    for line in lines[1:]:  # (the first line is the heading) a seat's line, then its reasons indented
        if not line.startswith(" "):
            p += 1
        if 0 <= p < P:
            verdicts[p] += _VERDICT.findall(line)
    rows = []
    for p in range(P):
        made, missed = verdicts[p].count("made"), verdicts[p].count("missed")
        result = "made" if made and not missed else "missed" if missed and not made else "-"
        if made and missed:
            result = f"made {made}, missed {missed}"
        rows.append(
            {
                "seat": p,
                "label": seat_name(p, human),
                "bid": facts["bids"][p],
                "taken": facts["taken"][p],
                "result": result,
                "points": int(final.last_scores[0, p]),
                "total": int(final.scores[0, p]),
            }
        )
    return rows


def trick_of(game: Game, res: Any, hand: int, number: int, line: str) -> dict[str, Any]:
    """The trick a step completed (it leaves the state at once), for the page's "last trick"; ``hand`` from 1."""
    P = game.players
    lead = int(res.trick_leader[0])
    order = [(lead + i) % P for i in range(P)]
    return {
        "hand": hand,
        "number": number,
        "leader": lead,
        "winner": int(res.trick_winner[0]),
        "cards": [{"seat": p, "card": game.card_str(int(res.trick_cards[0, p]))} for p in order],
        "text": line,
    }


def verdict(totals: Sequence[int], seat: int | None) -> str:
    """One line on who won, from the human's side when there is one."""
    best = max(totals)
    winners = [p for p, t in enumerate(totals) if t == best]
    if seat is None:
        who = " and ".join(f"player_{p}" for p in winners)
        return f"{who} win{'s' if len(winners) == 1 else ''} with {best}."
    if seat in winners:
        return "You win!" if len(winners) == 1 else f"You share the win with {len(winners) - 1} other(s)!"
    return f"You finished {ordinal(1 + sum(t > totals[seat] for t in totals))} of {len(totals)}."


# ==========================================================================
# One game
class GameSession:
    """One game between a human seat (or none: bots only, watched) and bots.

    Args:
        game: the game and its options.
        seat: the human's seat, or None to watch bots play every seat.
        agents: one per seat: an agent object, or None at the human's seat.
        names: the agents' names by seat (written in the record).
        seed: the seed of the deals (shown, so the game can be dealt again).
        clock: seconds, for the idle timeout (``time.monotonic``).
    """

    def __init__(
        self,
        game: Game,
        seat: int | None,
        agents: Sequence[Any],
        names: Sequence[str],
        seed: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.id = secrets.token_urlsafe(12)
        self.game = game
        self.seat = seat
        self.agents = list(agents)
        self.names = list(names)
        self.seed = int(seed)
        self.clock = clock
        self.touched = clock()
        self.lock = threading.Lock()
        self.text: GameText = game.play_text()
        self.faces = deck_faces(game, self.text)
        self.state = game.init(rng.game_keys(self.seed, np.zeros(1, dtype=np.int64), 0))
        self.recorder = Recorder(game, self.state, agents=self.names)
        # the bots are called as everywhere else (the public void record for those that ask for it)
        self.seats = SeatDispatch(game, 1, [a for a in self.agents if a is not None])
        self.turn = 0  # actions taken so far: a move names the turn it is for
        self.log: list[dict[str, Any]] = []
        self.summaries: list[dict[str, Any]] = []
        self.last_trick: dict | None = None
        self.record: dict | None = None
        self.saved: dict | None = None  # {"file": name} once appended to the records folder
        self.save_error: str | None = None
        self.on_finish: Callable[[GameSession], None] | None = None
        self._say("header", [self.text.hand_header(self.state, self._me)])

    @property
    def _me(self) -> int:
        return -1 if self.seat is None else self.seat

    @property
    def done(self) -> bool:
        return bool(self.game.done(self.state)[0])

    @property
    def to_act(self) -> int | None:
        return None if self.done else int(self.state.cur[0])

    @property
    def human_turn(self) -> bool:
        return self.seat is not None and self.to_act == self.seat

    def _say(self, kind: str, lines: list[str]) -> None:
        self.log.append({"n": len(self.log), "turn": self.turn, "kind": kind, "lines": lines})

    # -- moves
    def _step(self, action: int) -> None:
        """Apply one legal action, record and tell it."""
        game, state = self.game, self.state
        snap = state.copy()
        actions = np.array([action], dtype=np.int64)
        res = game.step(state, actions)  # checks legality itself; an illegal action changes nothing
        self.seats.before_step(snap, actions)
        self.seats.after_step(res.new_hand)
        self.turn += 1
        finished = self.recorder.record(snap.phase, snap.cur, actions, res, state)
        story = tell_step(game, self.text, snap, action, res, state, self._me)
        if bool(res.trick_done[0]):
            hand, number = int(snap.hand_no[0]) + 1, int(snap.tricks_done[0]) + 1
            self.last_trick = trick_of(game, res, hand, number, story.events[-1])
        if story.events:
            self._say("event", story.events)
        if story.summary:
            self._say("summary", story.summary)
            rows = scoring_rows(game, self.text, snap, action, story.summary, self._me)
            self.summaries.append({"hand": int(snap.hand_no[0]) + 1, "lines": story.summary, "rows": rows})
        if story.header:  # (the last trick stays on show, named by its hand)
            self._say("header", [story.header])
        if finished:
            self.record = finished[0]
            self._say("result", [verdict(self.totals(), self.seat)])
            if self.on_finish is not None:
                self.on_finish(self)

    def totals(self) -> list[int]:
        return self.state.scores[0].astype(int).tolist()

    def advance(self, steps: int = 1, budget: float = 0.5) -> int:
        """Let the bots make up to ``steps`` moves, stopping at the human's turn or the end; how many were made.

        budget: seconds after which no further move is started, so that a page
        asking for "all of them" (speed 0) still redraws as slow bots (pimc)
        think, and a request never holds the game for long.
        """
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
            raise WebError(400, f"steps must be a positive integer, got {steps!r}")
        with self.lock:
            self.touched = self.clock()
            if self.done:
                raise WebError(409, "the game is over")
            if self.human_turn:
                raise WebError(409, "it is your turn: the bots wait for your move")
            made = 0
            start = time.monotonic()
            while made < steps and not self.done and not self.human_turn:
                if made and time.monotonic() - start > budget:
                    break
                state = self.state
                legal = self.game.legal_action_mask(state)
                obs = self.game.observe(state)
                seat = state.cur.astype(np.int64)
                agent = self.agents[int(seat[0])]
                action = int(self.seats.act_rows(agent, obs, legal, seat, np.zeros(1, dtype=np.int64))[0])
                self._step(action)
                made += 1
            return made

    def move(self, move: Any = None, action: Any = None, turn: Any = None, renege: bool = False) -> None:
        """The human's move, as notation (``move``) or an action id (``action``); WebError if refused.

        turn: the turn the page saw (``view()["turn"]``); a move for another
        turn (a page out of date, a second tab) is refused. Nothing changes
        unless the move is legal now.
        """
        with self.lock:
            self.touched = self.clock()
            if self.seat is None:
                raise WebError(409, "this game is watched: every seat is a bot")
            if turn is not None and (isinstance(turn, bool) or not isinstance(turn, int)):
                raise WebError(400, f"turn must be an integer, got {turn!r}")
            if turn is not None and turn != self.turn:
                raise WebError(409, f"that move was for turn {turn}, but the game is at turn {self.turn}: reload")
            if self.done:
                raise WebError(409, "the game is over")
            if not self.human_turn:
                raise WebError(409, f"it is {seat_name(self.to_act, self.seat)}'s turn (a bot), not yours")
            state = self.state
            legal = self.game.legal_action_mask(state)[0]
            if action is not None:
                chosen = self._checked_action(action, legal)
                if move is not None:  # both: they must name one move (a page that sends both and means one)
                    named = self._parsed_move(move, legal, renege) if isinstance(move, str) and move.strip() else None
                    if named != chosen:
                        raise WebError(
                            400,
                            f"action {action} ({self.text.move_name(chosen)}) and move {str(move)[:40]!r} disagree: "
                            "send one of them, or both naming the same move",
                        )
            elif isinstance(move, str) and move.strip():
                chosen = self._parsed_move(move, legal, renege)
            else:
                raise WebError(400, 'send {"move": NOTATION} (e.g. "blue14", "3") or {"action": ID}')
            try:
                self._step(chosen)
            except IllegalActionError as err:  # the core's own check; the state is unchanged
                raise WebError(400, str(err)) from None

    def _checked_action(self, action: Any, legal: np.ndarray) -> int:
        if isinstance(action, bool) or not isinstance(action, int) or not 0 <= action < legal.size:
            raise WebError(400, f"action must be an id 0-{legal.size - 1}, got {action!r}")
        if not legal[action]:
            raise WebError(400, f"{self.text.move_name(action)} (action {action}) is not a legal move now")
        return action

    def _parsed_move(self, move: str, legal: np.ndarray, renege: bool) -> int:
        if len(move) > 100:
            raise WebError(400, "a move is a short notation such as blue14, QS or 3")
        try:
            return int(self.text.parse(move, self.state, self.seat, legal))
        except RenegeQuestion as err:
            if err.allowed:  # renege mode: a card that breaks follow suit is a renege
                if renege:
                    return int(err.card)
                raise WebError(400, f"{err}; playing it anyway is a renege: send renege: true") from None
            raise WebError(400, f"{move.strip()!r}: {err}") from None
        except MoveError as err:
            raise WebError(400, f"{move.strip()!r}: {err}") from None

    # -- what the page draws
    def moves(self) -> tuple[list[dict], list[dict], str | None]:
        """The human's legal moves (notation, action, card or not), reneges (renege mode) and a note."""
        if not self.human_turn:
            return [], [], None
        legal = self.game.legal_action_mask(self.state)[0]
        n_cards = self.game.deck.n_cards
        moves = [
            {"name": self.text.move_name(int(a)), "action": int(a), "card": bool(a < n_cards)}
            for a in np.flatnonzero(legal)
        ]
        reneges = []
        if self.game.renege_mode and legal[:n_cards].any():
            for c in np.flatnonzero(self.state.hands[0, self.seat] & ~legal[:n_cards]):
                reneges.append({"name": self.text.move_name(int(c)), "action": int(c), "card": True})
        return moves, reneges, self.text.moves_note(self.state, legal)

    def view(self, since: int = 0) -> dict[str, Any]:
        """Everything the page draws, with the log entries from number ``since`` on."""
        with self.lock:
            self.touched = self.clock()
            moves, reneges, note = self.moves()
            out = table_view(self.game, self.text, self.state, self.names, self.seat, self.last_trick)
            out.update(
                id=self.id,
                game=self.game.name,
                title=self.game.title,
                players=self.game.players,
                seat=self.seat,
                seed=self.seed,
                turn=self.turn,
                your_turn=self.human_turn,
                question=self.text.question(self.state) if self.human_turn else None,
                moves=moves,
                reneges=reneges,
                moves_note=note,
                log=self.log[max(0, since) :],
                log_size=len(self.log),
                summaries=self.summaries,
                deck=self.faces,
                result=self._result(),
            )
            return out

    def _result(self) -> dict | None:
        if not self.done:
            return None
        totals = self.totals()
        best = max(totals)
        return {
            "totals": totals,
            "winners": [p for p, t in enumerate(totals) if t == best],
            "verdict": verdict(totals, self.seat),
            "saved": self.saved,
            "save_error": self.save_error,
        }


# ==========================================================================
# Agents the server will build
def tables() -> list[tuple[str, int]]:
    """Every table the server can seat: (game name, players)."""
    return [(d.name, n) for d in DESCRIPTIONS for n in d.player_counts()]


class AgentCatalog:
    """Which agent specs a web request may name, and which the start page offers.

    Any spec of the registry whose agents read no file (``random``,
    ``strong``, ``pimc:worlds=16``, ``bid=strong+play=random``) may be named,
    within the request caps (:func:`agents.registry.check_request_spec`).
    A spec that names a file (``ppo:PATH``, ``search:policy=PATH``, nested in
    ``bid=...+play=...`` too) may name only a shipped policy (by its name,
    ``ppo:bobs_hat_4p`` or ``search:policy=bobs_hat_4p``) or a file of a spec
    the server was started with (``--agents``); anything else gets one and the
    same message, whether or not the file exists: a URL must not make the
    server open files of its choosing, nor learn which exist.

    The specs given with ``--agents`` are the operator's: they are not held
    to the request caps, and each is offered at the tables it can play (a
    checkpoint at its own game and player count).
    """

    def __init__(self, preload: Sequence[str] = (), shipped: Path | None = None) -> None:
        self.preloaded: dict[str, list[tuple[str, int]]] = {}  # spec -> the tables it plays
        self.shipped: dict[str, tuple[str, str, int]] = {}  # "ppo:NAME" -> (spec with path, game, players)
        self.files: dict[str, str] = {}  # a file a request may name (a shipped name, a path) -> the path to read
        from agents.shipped import shipped_checkpoints

        folder = shipped_checkpoints() if shipped is None else shipped
        if folder.is_dir():
            import json

            for pt in sorted(folder.glob("*.pt")):
                try:
                    meta = json.loads(Path(sidecar(pt)).read_text())
                    self.shipped[f"ppo:{pt.stem}"] = (f"ppo:{pt}", str(meta["game"]), int(meta["players"]))
                except (OSError, ValueError, KeyError, TypeError):
                    continue  # no readable sidecar: not offered
                self.files[pt.stem] = str(pt)
                self.files[os.path.abspath(pt)] = str(pt)
        for spec in preload:
            self.preload(spec)

    def preload(self, spec: str) -> None:
        """Allow ``spec`` (``--agents``) at every table where it builds, so a bad one fails at start."""
        from agents import make_agent
        from agents.registry import spec_files

        errors: dict[str, str] = {}
        played = []
        for name, players in tables():
            try:
                make_agent(self._expand(spec), make_game(name, players=players), seed=0)
            except (ValueError, ConfigError, OSError) as err:
                errors.setdefault(str(err), f"{name} {players}p: {err}")
                continue
            played.append((name, players))
        if not played:
            raise ConfigError(f"--agents: {spec!r} makes no agent ({'; '.join(errors.values())})")
        self.preloaded[spec] = played
        for path in spec_files(self._expand(spec)):
            self.files[os.path.abspath(path)] = path
            self.files.setdefault(path, path)

    def _expand(self, spec: str) -> str:
        return self.shipped[spec][0] if spec in self.shipped else spec

    def public(self, message: str) -> str:
        """``message`` with every file path this catalog reads shown by its file name alone.

        An agent's error (a policy trained for other rules, say) names the
        file it read: the server's own absolute path of its checkpoints
        folder, which a page has no business learning. Longest paths first,
        so a path is never cut by one of its own prefixes.
        """
        paths = {os.path.abspath(p) for p in self.files.values()} | set(self.files.values())
        for path in sorted(paths, key=len, reverse=True):
            if os.sep in path:
                message = message.replace(path, os.path.basename(path))
        return message

    def _refused(self, spec: str) -> WebError:
        offered = ", ".join([*self.shipped, *self.preloaded]) or "none"
        return WebError(
            400,
            f"agent {spec!r} names a file this server does not offer: it plays only the shipped policies and "
            f"the specs it was started with (--agents): {offered}",
        )

    def resolve(self, spec: str) -> str:
        """The spec to build for a requested one; WebError for one the server will not build."""
        from agents.registry import check_request_spec, map_spec_files

        spec = spec.strip()
        if not spec:
            raise WebError(400, "an empty agent spec")
        if spec == HUMAN:
            raise WebError(400, "'human' is the seat you play: name bots for the other seats")
        if spec in self.shipped or spec in self.preloaded:
            return self._expand(spec)
        try:
            check_request_spec(spec)

            def allowed(path: str) -> str:
                known = self.files.get(path) or self.files.get(os.path.abspath(path))
                if known is None:
                    raise self._refused(spec)
                return known

            return map_spec_files(spec, allowed)
        except ValueError as err:
            raise WebError(400, f"bad agent spec {spec!r}: {err}") from None

    def offered(self, game: Game) -> list[dict[str, str]]:
        """The bots the start page lists for ``game``: the registry's, the shipped policies, the preloaded specs."""
        names = ["random", *dict(game.description.agents)]
        out = [{"spec": n, "label": n} for n in names]
        for alias, (_, g, players) in self.shipped.items():
            if g == game.name and players == game.players:
                out.append({"spec": alias, "label": f"{alias} (shipped policy)"})
        table = (game.name, game.players)
        out += [{"spec": s, "label": f"{s} (preloaded)"} for s, where in self.preloaded.items() if table in where]
        return out


# ==========================================================================
# Every game of the server
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")
SESSION_KEYS = ("game", "seat", "opponents", "agents", "seed")


def _option_value(name: str, default: Any, raw: Any) -> Any:
    """A game option from JSON or a URL parameter (a string), typed like its default."""
    if not isinstance(raw, str):
        return raw
    text = raw.strip().lower()
    if isinstance(default, bool):
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise WebError(400, f"{name} is a switch: 1/true/yes/on or 0/false/no/off, got {raw!r}")
    if isinstance(default, int) or default is None:
        if re.fullmatch(r"-?[0-9]{1,6}", text):
            return int(text)
        raise WebError(400, f"{name} must be an integer, got {raw!r}")
    return raw.strip()


def game_options(params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The game's name and options from a request's parameters (everything but the session's own keys)."""
    name = params.get("game", DESCRIPTIONS[0].name)
    if not isinstance(name, str):
        raise WebError(400, f"game must be a game's name, got {name!r}")
    try:
        description = describe(name)
    except ConfigError as err:
        raise WebError(400, str(err)) from None
    defaults = {f.name: f.default for f in dataclasses.fields(description.config_cls)}
    options = {}
    for key, raw in params.items():
        if key in SESSION_KEYS:
            continue
        if key not in defaults:
            known = ", ".join(sorted(defaults))
            raise WebError(400, f"unknown option {key!r} for {description.title}; its options: {known}")
        options[key] = _option_value(key, defaults[key], raw)
    return name, options


class SessionStore:
    """The games of one server: create, find, clean up, and save finished ones to the records folder.

    records_dir: where finished games are appended (``games.jsonl``, the
    format ``bobshat replay`` checks) and replays are listed from.
    idle_timeout: seconds after which a game nobody has asked about is
    dropped (an abandoned tab). max_games: games in play at once; when they
    are all held, a new game takes the place of the one idle longest that
    never got a move (turn 0), and only when every game is under way is it
    refused (503).
    """

    def __init__(
        self,
        records_dir: str | Path,
        catalog: AgentCatalog | None = None,
        idle_timeout: float = 1800.0,
        max_games: int = 100,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.records_dir = Path(records_dir)
        self.records_file = self.records_dir / RECORDS_FILE
        self.catalog = catalog if catalog is not None else AgentCatalog()
        self.idle_timeout = float(idle_timeout)
        self.max_games = int(max_games)
        self.clock = clock
        self._games: dict[str, GameSession] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._games)

    def create(self, params: dict[str, Any]) -> GameSession:
        """A new game from the start page's (or a ``/play`` link's) parameters; WebError naming a bad one."""
        from agents import make_agent  # agents sit on a lower floor, loaded with the first game
        from agents.registry import split_specs

        name, options = game_options(params)
        try:
            game = make_game(name, **options)
        except ConfigError as err:
            raise WebError(400, str(err)) from None
        P = game.players
        seat = params.get("seat", 0)
        if seat is None or (isinstance(seat, str) and seat.strip().lower() in ("", "none", "watch")):
            seat = None
        elif isinstance(seat, str) and re.fullmatch(r"[0-9]{1,2}", seat.strip()):
            seat = int(seat)
        if seat is not None and (isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < P):
            raise WebError(400, f"seat must be 0-{P - 1} for {P} players (or none, to watch bots), got {seat!r}")
        raw = params.get("opponents") if seat is not None else params.get("agents", params.get("opponents"))
        wanted = P - 1 if seat is not None else P
        if raw is None:
            raw = ",".join(["random"] * wanted)
        specs = split_specs(raw) if isinstance(raw, str) else raw
        if not isinstance(specs, list) or not all(isinstance(s, str) for s in specs):
            raise WebError(400, f"opponents must be agent specs separated by commas, got {raw!r}")
        if len(specs) == 1 and wanted > 1:
            specs = specs * wanted
        if len(specs) != wanted:
            who = "opponents (one per other seat)" if seat is not None else "agents (one per seat, to watch)"
            raise WebError(400, f"{P} players need {wanted} {who} or one for all; got {len(specs)}: {raw!r}")
        seed = params.get("seed")
        if isinstance(seed, str) and seed.strip():
            if not re.fullmatch(r"[0-9]{1,19}", seed.strip()):
                raise WebError(400, f"seed must be an integer from 0 to {MAX_SEED}, got {seed[:40]!r}")
            seed = int(seed)
        elif seed in (None, ""):
            seed = new_seed()
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
            raise WebError(400, f"seed must be an integer from 0 to {MAX_SEED}, got {str(seed)[:40]!r}")
        agents: list[Any] = []
        names: list[str] = []
        it = iter(specs)
        for p in range(P):
            if p == seat:
                agents.append(None)
                names.append(HUMAN)
                continue
            spec = next(it).strip()
            try:
                agents.append(make_agent(self.catalog.resolve(spec), game, seed=seed * 1000 + p))
            except (ValueError, ConfigError, OSError) as err:
                raise WebError(400, f"agent {spec!r}: {self.catalog.public(str(err))}") from None
            names.append(spec)
        self.sweep()
        session = GameSession(game, seat, agents, names, seed, clock=self.clock)
        session.on_finish = self._save
        with self._lock:
            if self.in_play() >= self.max_games:
                # full: the game idle longest that never got a move (a tab opened and left, or a client that
                # only creates games) makes room, so such games cannot lock the person at the page out
                unmoved = [(s.touched, gid) for gid, s in self._games.items() if s.record is None and s.turn == 0]
                if not unmoved:
                    raise WebError(
                        503,
                        f"the server holds {self.max_games} games in play already, each under way: finish or leave one",
                    )
                del self._games[min(unmoved)[1]]
            finished = sorted((s.touched, gid) for gid, s in self._games.items() if s.record is not None)
            for _, gid in finished[: max(0, len(finished) - FINISHED_PER_GAME * self.max_games + 1)]:
                del self._games[gid]  # the finished games asked about least recently make room (records are saved)
            self._games[session.id] = session
        return session

    def in_play(self) -> int:
        """Games not over yet: a finished game (kept for its record and replay) does not count against max_games."""
        return sum(1 for s in self._games.values() if s.record is None)

    def get(self, game_id: str) -> GameSession:
        with self._lock:
            session = self._games.get(game_id)
        if session is None:
            raise WebError(404, f"no game {game_id!r} here: it ended long ago (games idle for "
                                f"{self.idle_timeout:.0f} s are dropped) or the server restarted")  # fmt: skip
        return session

    def remove(self, game_id: str) -> None:
        with self._lock:
            if self._games.pop(game_id, None) is None:
                raise WebError(404, f"no game {game_id!r} here")

    def sweep(self) -> list[str]:
        """Drop the games idle longer than the timeout; their ids."""
        now = self.clock()
        with self._lock:
            old = [gid for gid, s in self._games.items() if now - s.touched > self.idle_timeout]
            for gid in old:
                del self._games[gid]
        return old

    def _save(self, session: GameSession) -> None:
        """Append a finished game's record to the records folder (whole lines, under a lock)."""
        try:
            check_writable(self.records_file, "records", append=True)
            check_records_output(self.records_file)  # still records (checked at start, and now)
            write_jsonl(self.records_file, [session.record], append=True)
        except (OSError, ValueError) as err:
            session.save_error = f"could not save the game to {self.records_file}: {err}; download it instead"
            return
        session.saved = {"file": self.records_file.name}

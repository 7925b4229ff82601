"""The contract of a game's records adapter, and how to find a game's adapter.

Recording and replaying are the same for every trick-taking game but for a
few pieces: the config's record form, trump notation, what comes before the
first card (Bob's Hat's hat and bid cards, Oh Hell's numeric bids) and what
a seat takes. :class:`RecordRules` names those pieces; each game fills them
in a module named after it (``records/bobs_hat.py``, ``records/oh_hell.py``)
that its description (:mod:`bobshat_env.games`, ``record_rules``) points to,
so adding a game adds a file here and one entry point, no branch on a name.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ..config import ConfigError, GameConfig
from ..games import GAMES, Game, GameDescription, describe, describe_config, load
from .faults import FaultSink, HandFaults

FORMAT = 1  # the version of docs/records.md this package writes and reads


def is_int(x: Any) -> bool:
    """An integer of JSON (``bool`` is an ``int`` to Python, not to a record)."""
    return isinstance(x, int) and not isinstance(x, bool)


def is_int_list(x: Any, n: int) -> bool:
    """A list of exactly ``n`` integers (scores, totals, bids by seat)."""
    return isinstance(x, list) and len(x) == n and all(is_int(v) for v in x)


class PreludeStore(Protocol):
    """Where an adapter stores a step's non-card actions (the recorder is one), per open hand entry."""

    def set_extra(self, games: np.ndarray, values: np.ndarray) -> None:
        """The game's own number of the hand (Bob's Hat: the hat, 10 or -10) in games ``games``."""

    def set_bids(self, games: np.ndarray, seats: np.ndarray, bids: np.ndarray) -> None:
        """Seat ``seats[i]``'s bid (an action's bid code) in game ``games[i]``."""


@dataclass(frozen=True)
class Entries:
    """The hand entries of one finished game (n of them) as the recorder kept them, for its adapter.

    trump: (n,) what :meth:`RecordRules.trump_of` gave. extra: (n,) what
    :meth:`PreludeStore.set_extra` stored (0 if nothing). bids: (n, P) bid
    codes (-1: none). plays: (n, T * P) card ids in play order (-1 after the
    last). winners: (n, T) each trick's winner (-1: not completed). taken,
    holder: the hand's closing facts as the core's step reported them (the
    state's ``taken`` at the hand's end; the role holder, -1 for none).
    """

    players: int
    trump: np.ndarray
    extra: np.ndarray
    bids: np.ndarray
    plays: np.ndarray
    winners: np.ndarray
    taken: np.ndarray
    holder: np.ndarray


class RecordRules:
    """What the recorder and the replay need to know about one game.

    The shared parts (deal, tricks, scores, totals) are written once in the
    :class:`~bobshat_env.records.recorder.Recorder` and in
    :mod:`~bobshat_env.records.validate`; a subclass, in the module named
    after its game and named by the game's description (``record_rules``),
    supplies the rest: the config's record form, the trump's notation, what
    happens before the first card (hat, bids) and what is taken. Adapters
    hold no state: one instance serves every recorder and replay.
    """

    name: str
    module: Any
    config_cls: type[GameConfig]
    config_keys: tuple[str, ...]
    hand_keys: tuple[str, ...]
    names: np.ndarray  # (N,) object: notation of every card id, for fancy indexing
    n_cards: int
    deck: Any

    # -- notation
    def parse_card(self, text: Any) -> int:
        """The card id of a card's notation; ValueError (naming the text) if it is no card of the game."""
        raise NotImplementedError

    def suit_name(self, suit: int) -> str:
        """A suit's name in fault messages (what a seat must follow)."""
        raise NotImplementedError

    # -- shape of a game
    def hand_size(self, cfg: Any, hand_no: int) -> int:
        """Cards dealt to each seat in hand ``hand_no`` (0-based)."""
        raise NotImplementedError

    def max_tricks(self, cfg: Any) -> int:
        """The most tricks any hand of the game has (sizes the recorder's arrays)."""
        raise NotImplementedError

    def config_record(self, cfg: Any, first_dealer: int) -> dict[str, Any]:
        """The record's ``config`` object (docs/records.md), with the seat that dealt first."""
        raise NotImplementedError

    def config_from_record(self, data: Any, sink: FaultSink) -> Any:
        """The config of a record, or None after adding a fault."""
        if not isinstance(data, dict):
            sink.add(f"config must be an object, got {type(data).__name__}")
            return None
        missing = [k for k in self.config_keys if data.get(k) is None]
        if missing:
            sink.add(f"config is missing key(s) {', '.join(missing)}")
            return None
        try:
            cfg = self.config_cls.from_dict(dict(data))
        except (ConfigError, TypeError) as err:
            sink.add(f"bad config: {err}")
            return None
        if cfg.first_dealer < 0:
            sink.add(f"config first_dealer must be the seat that dealt first (0-{cfg.players - 1}), not -1")
            return None
        return cfg

    # -- recorder hooks
    def trump_of(self, state: Any, g: np.ndarray) -> np.ndarray:
        """(n,) the trump of games ``g`` as the record keeps it (a trump id or the turned-up card)."""
        raise NotImplementedError

    def at_hand_start(self, prev_phase: np.ndarray, state: Any, g: np.ndarray) -> np.ndarray:
        """(n,) bool: the step just taken in games ``g`` was a hand's first action."""
        raise NotImplementedError

    def record_prelude(self, rec: PreludeStore, phase: np.ndarray, cur: np.ndarray, actions: np.ndarray) -> None:
        """Store the non-card actions (hat, bids) of this step in ``rec``; games not acting have phase -1."""
        raise NotImplementedError

    def hand_records(self, entries: Entries, common: list[dict[str, Any]], tricks: list[list[dict]]) -> list:
        """The hand entries of a finished game from its ``entries`` and the shared parts (``common``, ``tricks``)."""
        raise NotImplementedError

    # -- replay hooks
    def new_context(self, cfg: Any) -> dict[str, Any]:
        """What a replay carries from hand to hand (see :meth:`after_hand`); nothing by default."""
        return {}

    def parse_trump(self, hand: dict, fault: HandFaults) -> int | None:
        """The trump of a hand entry, or None after a fault."""
        raise NotImplementedError

    def check_trump_vs_deal(self, trump: int, owner: np.ndarray, fault: HandFaults) -> bool:
        """False (after a fault) if the trump contradicts the deal (a turned-up card also dealt)."""
        return True

    def start_hand(self, cfg: Any, hand_no: int, dealer: int, trump: int, hands: np.ndarray, ctx: dict) -> Any:
        """A B = 1 state at the start of the hand, dealt explicitly."""
        raise NotImplementedError

    def replay_prelude(self, cfg: Any, state: Any, hand: dict, ctx: dict, fault: HandFaults) -> bool:
        """Step the hat choice and bids; False (after a fault) if the hand cannot go on."""
        raise NotImplementedError

    def check_outcome(self, cfg: Any, state: Any, hand: dict, fault: HandFaults) -> None:
        """Compare what the record says was taken (and the hat) with the rules."""
        raise NotImplementedError

    def after_hand(self, cfg: Any, state: Any | None, hand: dict, scored: bool, ctx: dict) -> None:
        """Carry what later hands need (no-bid use) to the next hand."""


def bid_order(state: Any, P: int) -> list[int]:
    """The seats in the order they bid, from the seat to act in a B = 1 state."""
    first = int(state.cur[0])
    return [(first + i) % P for i in range(P)]


def rules_for(game: Game | GameConfig) -> tuple[RecordRules, Any]:
    """The adapter and config of a Game or of a game config."""
    cfg = getattr(game, "config", game)
    try:
        description = describe_config(cfg)
    except TypeError:
        got = type(game).__name__
        raise TypeError(f"expected a game (bobshat_env.games.Game) or a game config, got {got}") from None
    return adapter(description), cfg


def rules_named(name: Any) -> RecordRules | None:
    """The adapter of the game a record names, or None for an unknown game."""
    return adapter(describe(name)) if isinstance(name, str) and name in GAMES else None


@functools.cache
def adapter(description: GameDescription) -> RecordRules:
    """One (stateless) instance of the adapter class the game's description names."""
    return load(description.record_rules)()


def variant_record(cfg: Any, names: tuple[str, ...]) -> dict[str, Any]:
    """The small-variant options ``names`` of ``cfg`` for a record's ``config``: those whose value is not
    what the option's default gives with the other options as they are, so that a full game's record
    is as it always was and a variant's record rebuilds its config."""
    out = {}
    for f in dataclasses.fields(cfg):
        if f.name not in names:
            continue
        try:
            default = getattr(dataclasses.replace(cfg, **{f.name: f.default}), f.name)
        except ConfigError:  # the default does not fit the other options: the value is not the default
            default = None
        if getattr(cfg, f.name) != default:
            out[f.name] = getattr(cfg, f.name)
    return out

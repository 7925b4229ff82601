"""OpenSpiel adapter: both games as OpenSpiel Python games, ``python_bobs_hat`` and ``python_oh_hell``.

Importing this module registers them, OpenSpiel's convention for Python
games (``open_spiel/python/games``)::

    import pyspiel
    import bobshat_env.openspiel  # registers python_bobs_hat and python_oh_hell
    game = pyspiel.load_game("python_oh_hell", {"players": 3, "single_hand": 19})

It imports ``pyspiel`` (the ``open-spiel`` package, in the dev extra) at module
level, so nothing else in the package imports it at module level. The rules
stay in the batched core (:mod:`bobshat_env.core`), played with a batch of one
game as :mod:`bobshat_env.aec` does; this module only adds OpenSpiel's chance
nodes, strings, tensors and returns around it.

=====================  ======================================================
Parameters             every option of the game's configuration
                       (:mod:`bobshat_env.core.config`) under its own name, with
                       its default (``hands=0``: the rulebook's number for the
                       player count), and ``single_hand``: 0 plays the whole
                       game; k plays only hand k of it (its size and dealer as
                       in the whole game, scores from 0), the game exact
                       methods want; and ``variant``: "" (none) or the name
                       of a small variant (``tiny``, ``small``:
                       the config class's ``VARIANTS``), whose options
                       the other parameters override where they are not at
                       their defaults (pyspiel fills in every default, so
                       a default cannot be told from a given one). Bob's Hat's
                       ``renege_mode`` is refused:
                       OpenSpiel hands algorithms the legal actions, and the
                       re-deals a renege brings make the game unbounded
Chance                 the first dealer, if ``first_dealer=-1`` (a seat, each
                       1/P); then per hand: Bob's Hat's trump card (0-3:
                       blue, red, black, none; each 1/4; a small variant
                       offers its deck's suits and none), one node per card
                       dealt (card ``k`` of the deal to seat ``k % P``, seat 0
                       first whatever the dealer, each remaining card of the
                       deck equally likely, as OpenSpiel's ``oh_hell``), then
                       Oh Hell's turned trump card (any card of the deck not
                       dealt)
Actions                the core's flat space (``N_ACTIONS``: cards first)
Returns                the sum of the hands' scores so far; ``rewards()`` is
                       the scores of the hand the last decision ended, kept
                       through the next deal's chance nodes (OpenSpiel sums
                       rewards at decision nodes and at the end); general
                       sum, per-hand bounds from the core's ``score_bounds``
=====================  ======================================================

What each string and tensor gives (``make_py_observer``):

- **information state string** (perfect recall): per hand, its number,
  dealer, trump and the player's own dealt cards (as a set: the order in which
  cards arrive is nobody's decision), then every public action in order:
  hat choices, bids (another seat's secret bid shows as ``bid`` until
  everybody has bid), cards. Every earlier hand of the game is there too;
- **information state tensor** (perfect recall within the current hand): the
  core's private observation (:mod:`bobshat_env.core.observe`: hand, bids,
  hat, trump, scores, the current trick, ...), the cards dealt to the player
  this hand, and every card played this hand by trick and relative seat (so
  the play order is kept). Earlier hands are summed up by the totals (and
  Bob's Hat's no-bid flags), not replayed: a tensor of whole games would
  grow with every hand;
- **observation tensor**: the core's private observation, which forgets the
  play order of finished tricks (not perfect recall); the **observation
  string** lists the same facts (the core's ``decode``).

Public-only and all-players observers are the ``public`` and ``full`` views.

What OpenSpiel's algorithms find here: CFR, exploitability and best
responses walk the whole tree, which at full size is far beyond reach
(the deal alone); they need the small variants (``variant=tiny``;
:func:`tree_size` counts a tree, docs/rules.md lists the variants' sizes). Sampling methods (outcome
and external sampling MCCFR; external sampling walks every action of the
traverser, so only small hands suit it), NFSP and the Python ISMCTS bot run
as they are.
The Python ISMCTS bot needs ``resample_from_infostate``, which the Python
game API has no slot for: :class:`CardGameState` provides it as a Python
method (a uniform deal consistent with the player's cards, the cards played
and the seats known to be void; unseen secret bids drawn uniformly), which
the Python bot calls; OpenSpiel's C++ ``ISMCTSBot`` cannot reach it.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from types import SimpleNamespace
from typing import Any

import numpy as np
import pyspiel

from .core.config import ConfigError
from .core.resample import sample_hands, void_tracker
from .core.tricks import rotate_dealer
from .games import DESCRIPTIONS, Game, GameDescription, make_game

WHOLE_GAME = 0  # ``single_hand``: play the whole game
NO_VARIANT = ""  # ``variant``: the options as given
PREFIX = "python_"  # OpenSpiel's prefix for games written in Python
_DEALER, _TRUMP, _CARD, _TURNED = "dealer", "trump", "card", "turned trump card"


# --------------------------------------------------------------------------
# Parameters and the game's facts
def parameter_specification(description: GameDescription) -> dict[str, Any]:
    """OpenSpiel parameters of a game: each configuration option with its default, ``single_hand`` and
    ``variant``.

    An option whose default is None (Bob's Hat's ``hands``: the rulebook's
    number for the player count; Oh Hell's ``start_size`` and ``hands``)
    takes 0 for it: OpenSpiel parameters are typed by their defaults and
    have no None.
    """
    spec = {f.name: 0 if f.default is None else f.default for f in dataclasses.fields(description.config_cls)}
    spec["single_hand"] = WHOLE_GAME
    spec["variant"] = NO_VARIANT
    return spec


@dataclasses.dataclass(frozen=True)
class Rules:
    """What one loaded OpenSpiel game is: the bobshat :class:`Game` and which hands it plays.

    Immutable and shared by every state of the game (a state's deep copy keeps it).
    """

    game: Game
    single_hand: int  # 0: the whole game; k: hand k alone

    @property
    def hand_nos(self) -> tuple[int, ...]:
        """The 0-based numbers of the hands played."""
        return (self.single_hand - 1,) if self.single_hand else tuple(range(len(self.game.config.hand_sizes)))

    @property
    def sizes(self) -> tuple[int, ...]:
        """Cards per seat in each hand played."""
        return tuple(self.game.config.hand_sizes[h] for h in self.hand_nos)

    def __deepcopy__(self, memo: dict) -> Rules:
        return self


def rules_from_parameters(description: GameDescription, params: dict[str, Any]) -> Rules:
    """The :class:`Rules` of OpenSpiel parameters; ConfigError naming a bad option."""
    spec = parameter_specification(description)
    unknown = sorted(set(params) - set(spec))
    if unknown:
        raise ConfigError(f"unknown parameter(s) {', '.join(unknown)}; known: {', '.join(sorted(spec))}")
    values = {**spec, **params}
    single_hand, variant = values.pop("single_hand"), values.pop("variant")
    if not isinstance(variant, str):
        raise ConfigError(f"variant must be a variant's name or empty, got {variant!r}")
    # pyspiel hands the game every parameter, defaults filled in: with a variant, only a value other than
    # the default overrides the variant's own
    values = {k: v for k, v in values.items() if not variant or v != spec[k]}
    defaults = {f.name: f.default for f in dataclasses.fields(description.config_cls)}
    options = {k: None if defaults[k] is None and v == 0 else v for k, v in values.items()}
    game = make_game(description.name, variant=variant or None, **options)
    if game.renege_mode:
        raise ConfigError(
            "renege_mode is not offered in OpenSpiel: its algorithms play legal actions only, and the "
            "re-deals a renege brings would make the game unbounded"
        )
    n_hands = len(game.config.hand_sizes)
    if isinstance(single_hand, bool) or not isinstance(single_hand, int) or not 0 <= single_hand <= n_hands:
        raise ConfigError(f"single_hand must be 0 (the whole game) or a hand 1-{n_hands}, got {single_hand!r}")
    return Rules(game, single_hand)


def game_type(description: GameDescription) -> pyspiel.GameType:
    """OpenSpiel's description of the game type (its name, players and parameters)."""
    players = description.player_counts()
    return pyspiel.GameType(
        short_name=PREFIX + description.name,
        long_name=f"Python {description.title}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.GENERAL_SUM,
        reward_model=pyspiel.GameType.RewardModel.REWARDS,
        max_num_players=max(players),
        min_num_players=min(players),
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=parameter_specification(description),
    )


def game_info(rules: Rules) -> pyspiel.GameInfo:
    """OpenSpiel's sizes of a loaded game: actions, chance outcomes, utility bounds, length."""
    game, P = rules.game, rules.game.players
    bounds = [game.module.score_bounds(game.config, s) for s in rules.sizes]
    return pyspiel.GameInfo(
        num_distinct_actions=game.n_actions,
        max_chance_outcomes=max(game.module.N_CARDS, game.module.N_TRUMPS, P),
        num_players=P,
        min_utility=float(sum(lo for lo, _ in bounds)),
        max_utility=float(sum(hi for _, hi in bounds)),
        # per hand: every card and every bid, and one more decision (Bob's Hat's hat choice)
        max_game_length=sum(P * s + P + 1 for s in rules.sizes),
    )


# --------------------------------------------------------------------------
# The game
class CardGame(pyspiel.Game):
    """One of our games as an OpenSpiel game; a subclass per game sets ``description`` (see :func:`register`)."""

    description: GameDescription

    def __init__(self, params: dict[str, Any] | None = None):
        self.rules = rules_from_parameters(self.description, dict(params or {}))
        super().__init__(game_type(self.description), game_info(self.rules), dict(params or {}))

    def new_initial_state(self) -> CardGameState:
        """The state before the first chance node."""
        return CardGameState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> CardGameObserver:
        """The observer of ``iig_obs_type`` (default: a player's observation, not perfect recall)."""
        return CardGameObserver(self.rules, iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), params)


# --------------------------------------------------------------------------
# The play of one game: the engine state and what the strings need
@functools.lru_cache(maxsize=256)
def _first_state(rules: Rules, first_dealer: int) -> tuple[Any, Any]:
    """The config with its first dealer and the engine waiting for the first hand's deal. Cached: every
    state OpenSpiel clones begins as a new initial state (which a deep copy then overwrites)."""
    cfg = dataclasses.replace(rules.game.config, first_dealer=first_dealer)
    eng = rules.game.module.init(cfg, np.zeros(1, dtype=np.uint64), auto_deal=False)
    if rules.single_hand:  # the game starts at hand k, dealt by whoever deals it in the whole game
        hand_no = rules.single_hand - 1
        eng.hand_no[0] = hand_no
        eng.dealer[0] = rotate_dealer(eng.first_dealer, hand_no, rules.game.players)[0]
    return cfg, eng


class HandRecord:
    """One hand as the information-state strings tell it: its chance outcomes and its actions in order."""

    __slots__ = ("hand_no", "dealer", "size", "trump", "dealt", "deal_order", "actions", "bidding_over")

    def __init__(self, hand_no: int, dealer: int, size: int, players: int, n_cards: int):
        self.hand_no, self.dealer, self.size, self.trump = hand_no, dealer, size, -1
        self.dealt = np.zeros((players, n_cards), dtype=bool)  # cards dealt to each seat so far
        self.deal_order: list[int] = []  # the cards dealt, in order (card k to seat k % P)
        self.actions: list[tuple[int, int, int]] = []  # (seat, action, phase when taken)
        self.bidding_over = False  # every seat has bid: secret bids are revealed

    def copy(self) -> HandRecord:
        new = HandRecord.__new__(HandRecord)
        new.hand_no, new.dealer, new.size, new.trump = self.hand_no, self.dealer, self.size, self.trump
        new.bidding_over = self.bidding_over
        new.dealt, new.deal_order, new.actions = self.dealt.copy(), self.deal_order[:], self.actions[:]
        return new


class Table:
    """The mutable part of a state: the engine (a batch of one game), the hands' records, the rewards.

    Its deep copy copies arrays directly (a state's ``clone`` deep-copies its attributes).
    """

    def __init__(self, rules: Rules):
        self.rules = rules
        self.cfg = rules.game.config  # first_dealer set once it is drawn
        self.P, self.N = rules.game.players, rules.game.module.N_CARDS
        self.eng: Any = None  # the engine state, from the first dealer on
        self.hands: list[HandRecord] = []
        self.rewards = np.zeros(self.P)
        self.returns = np.zeros(self.P)
        self.terminal = False
        self._mask: np.ndarray | None = None
        self._result: Any = None
        if self.cfg.first_dealer >= 0:
            self.start(self.cfg.first_dealer)

    def __deepcopy__(self, memo: dict) -> Table:
        new = Table.__new__(Table)
        new.__dict__.update(self.__dict__)
        new.eng = None if self.eng is None else self.eng.copy()
        new.hands = self.hands[:-1] + [h.copy() for h in self.hands[-1:]]  # earlier hands never change
        new.rewards, new.returns, new._mask, new._result = self.rewards.copy(), self.returns.copy(), None, None
        return new

    @property
    def module(self) -> Any:
        """The game's core module (not an attribute: a module does not pickle)."""
        return self.rules.game.module

    # -- chance
    def start(self, first_dealer: int) -> None:
        """Begin the game with its first dealer: the engine waits for the first hand's deal."""
        self.cfg, eng = _first_state(self.rules, first_dealer)
        self.eng = eng.copy()  # the cached state is never changed
        self.new_hand()

    def new_hand(self) -> None:
        hand_no = int(self.eng.hand_no[0])
        self.hands.append(HandRecord(hand_no, int(self.eng.dealer[0]), self.cfg.hand_sizes[hand_no], self.P, self.N))

    def chance_kind(self) -> str | None:
        """Which chance node this is (None: a player's node or the end)."""
        if self.eng is None:
            return _DEALER
        if self.terminal or self.eng.phase[0] != self.module.DEAL:
            return None
        hand = self.hands[-1]
        if hand.trump < 0 and not self.module.TRUMP_TURNED:
            return _TRUMP
        if len(hand.deal_order) < self.P * hand.size:
            return _CARD
        return _TURNED

    def chance_outcomes(self) -> list[tuple[int, float]]:
        kind = self.chance_kind()
        if kind == _DEALER:
            return [(s, 1.0 / self.P) for s in range(self.P)]
        if kind == _TRUMP:
            trumps = self.cfg.trumps  # a small variant's deck suits and none
            return [(t, 1.0 / len(trumps)) for t in trumps]
        left = np.flatnonzero(~self.hands[-1].dealt.any(axis=0) & self.cfg.deck_mask).tolist()
        return [(c, 1.0 / len(left)) for c in left]

    def apply_chance(self, outcome: int) -> None:
        kind = self.chance_kind()
        if outcome not in dict(self.chance_outcomes()):
            raise ValueError(f"{outcome} is not an outcome of this chance node ({kind})")
        if kind == _DEALER:
            self.start(outcome)
            return
        hand = self.hands[-1]
        if kind == _CARD:
            hand.dealt[len(hand.deal_order) % self.P, outcome] = True
            hand.deal_order.append(outcome)
        else:
            hand.trump = outcome
        if len(hand.deal_order) == self.P * hand.size and hand.trump >= 0:
            self.module.deal(self.cfg, self.eng, np.zeros(1, dtype=np.int64), np.array([hand.trump]), hand.dealt[None])
            self._mask = None

    # -- decisions
    def legal_mask(self) -> np.ndarray:
        if self._mask is None:
            self._mask = self.module.legal_action_mask(self.cfg, self.eng)
        return self._mask

    def apply_decision(self, action: int) -> None:
        """One player's action, through the engine (which refuses an illegal one, changing nothing)."""
        if self._result is None:
            self._result = self.module.new_result(self.cfg, 1)
        seat, phase = int(self.eng.cur[0]), int(self.eng.phase[0])
        res = self.module.step(
            self.cfg, self.eng, np.array([action], dtype=np.int64), auto_deal=False, legal=self.legal_mask(),
            result=self._result,
        )  # fmt: skip
        self._mask = None
        hand = self.hands[-1]
        hand.actions.append((seat, int(action), phase))
        if phase == self.module.BID and self.eng.phase[0] != self.module.BID:
            hand.bidding_over = True
        self.rewards = res.rewards[0].astype(np.float64)
        self.returns = self.returns + self.rewards
        if res.game_done[0] or (res.hand_done[0] and self.rules.single_hand):
            self.terminal = True
        elif res.new_hand[0]:
            self.new_hand()

    def current_player(self) -> int:
        if self.terminal:
            return pyspiel.PlayerId.TERMINAL
        if self.chance_kind() is not None:
            return pyspiel.PlayerId.CHANCE
        return int(self.eng.cur[0])

    # -- what a player knows
    def hidden(self, hand: HandRecord, seat: int, phase: int, player: int) -> bool:
        """Whether ``player`` cannot see ``seat``'s action yet: a secret bid before everybody has bid."""
        return self.rules.game.secret_bids and phase == self.module.BID and not hand.bidding_over and seat != player

    def history_string(self, player: int, shown: list[int]) -> str:
        """The perfect-recall story of the game for ``player``, with the dealt cards of the seats ``shown``."""
        m = self.module
        lines = [f"p{player}"]
        for hand in self.hands:
            head = f"hand {hand.hand_no + 1} dealer p{hand.dealer}"
            if hand.trump >= 0:
                head += f" trump {m.card_str(hand.trump) if m.TRUMP_TURNED else m.suit_name(hand.trump)}"
            for s in shown:
                head += f" p{s}:" + ",".join(m.card_str(int(c)) for c in np.flatnonzero(hand.dealt[s]))
            acts = [
                f"p{seat}:" + ("bid" if self.hidden(hand, seat, phase, player) else m.action_str(a))
                for seat, a, phase in hand.actions
            ]
            lines.append(" ".join([head, *(["|", *acts] if acts else [])]))
        return "\n".join(lines)

    def tricks(self, player: int) -> list[tuple[int, int]]:
        """(relative seat, card) of every card played this hand, in order."""
        plays = [(seat, a) for seat, a, phase in self.hands[-1].actions if phase == self.module.PLAY]
        return [((seat - player) % self.P, a) for seat, a in plays]


# --------------------------------------------------------------------------
# The state
class CardGameState(pyspiel.State):
    """A state of one of our games, for OpenSpiel (module docstring)."""

    def __init__(self, game: CardGame):
        super().__init__(game)
        self._table = Table(game.rules)

    def current_player(self) -> int:
        return self._table.current_player()

    def _legal_actions(self, player: int) -> list[int]:
        t = self._table
        if t.terminal or player != self.current_player():
            return []
        return np.flatnonzero(t.legal_mask()[0]).tolist()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return self._table.chance_outcomes()

    def _apply_action(self, action: int) -> None:
        if self.is_chance_node():
            self._table.apply_chance(int(action))
        else:
            self._table.apply_decision(int(action))

    def _action_to_string(self, player: int, action: int) -> str:
        t = self._table
        if player == pyspiel.PlayerId.CHANCE:
            kind = t.chance_kind()
            if kind == _DEALER:
                return f"first dealer p{action}"
            if kind == _TRUMP:
                return f"trump {t.module.suit_name(action)}"
            what = t.module.card_str(action)
            return f"turn {what}" if kind == _TURNED else f"deal {what} to p{len(t.hands[-1].deal_order) % t.P}"
        return t.module.action_str(action)

    def is_terminal(self) -> bool:
        return self._table.terminal

    def rewards(self) -> list[float]:
        return self._table.rewards.tolist()

    def returns(self) -> list[float]:
        return self._table.returns.tolist()

    def __str__(self) -> str:
        t = self._table
        return t.history_string(-1, list(range(t.P))) + "\nreturns " + " ".join(f"{r:g}" for r in t.returns)

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> CardGameState:
        """A state ``player_id`` cannot tell from this one, drawn uniformly (what ISMCTS asks for).

        The current hand's unseen cards are dealt at random to the other seats
        as :func:`bobshat_env.core.resample.sample_hands` does (their counts,
        the voids their play showed); an unseen secret bid is drawn uniformly
        from the legal bids. Earlier hands were played out, so every card of
        theirs is known and kept. ``probability_sampler`` (OpenSpiel's
        ``UniformProbabilitySampler``, or any callable giving a float in
        [0, 1)) seeds the draw.
        """
        gen = np.random.default_rng([int(probability_sampler() * 2**32) for _ in range(2)])
        return _resample(self, player_id, gen)

    def agent_inputs(self, public: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """What a bobshat agent acting here is handed, as the arena hands it: the acting seat's private
        observation (1, D), the legal mask (1, A), the seat (1,) and the public record of the hand
        (:class:`bobshat_env.core.resample.VoidTracker`'s ``rows``), rebuilt by replaying the game
        (``public=False``: an empty record, for the agents that do not ask for it).

        Everything in it is known to the acting seat, so an agent's answer depends on its information
        state only (``train/exact.py`` turns agents into OpenSpiel policies with it).
        """
        t = self._table
        if t.terminal or t.chance_kind() is not None:
            raise ValueError("agent inputs exist only at a player's decision")
        seat = int(t.eng.cur[0])
        tracker = void_tracker(t.rules.game, 1)
        replay = self.get_game().new_initial_state()
        for action in self.history() if public else ():
            if replay.is_chance_node():
                replay.apply_action(action)
                continue
            hands = len(replay._table.hands)
            tracker.before_step(replay._table.eng, np.array([action]))
            replay.apply_action(action)
            tracker.after_step(SimpleNamespace(new_hand=np.array([len(replay._table.hands) > hands])))
        obs = t.module.observe(t.cfg, t.eng, seat=np.array([seat]), view="private")
        record = tracker.rows(np.array([0])) if public else {}
        return obs, t.legal_mask().copy(), np.array([seat], dtype=np.int64), record


def _sampled_deal(t: Table, player: int, gen: np.random.Generator) -> np.ndarray:
    """(P, N) the current hand's dealt cards in a world ``player`` cannot tell from the real one."""
    hand, m, P = t.hands[-1], t.module, t.P
    plays = [(seat, a) for seat, a, phase in hand.actions if phase == m.PLAY]
    played = np.zeros((P, t.N), dtype=bool)
    void = np.zeros((P, m.DECK.n_suits), dtype=bool)
    for i, (seat, card) in enumerate(plays):
        played[seat, card] = True
        led = m.DECK.suit_of[plays[i - i % P][1]]
        void[seat, led] |= m.DECK.suit_of[card] != led
    held = hand.dealt & ~played  # what each seat holds now
    unseen = ~(played.any(axis=0) | hand.dealt[player]) & t.cfg.deck_mask
    if m.TRUMP_TURNED and hand.trump >= 0:
        unseen[hand.trump] = False
    world = sample_hands(
        held[player][None], np.array([player]), unseen[None], held.sum(axis=1)[None], void[None], m.DECK, 1, gen
    )[0, 0]
    return world | played


def _resample(state: CardGameState, player: int, gen: np.random.Generator) -> CardGameState:
    """Replay ``state``'s game with the current hand's hidden cards and bids drawn anew (see the method)."""
    t = state._table
    new = state.get_game().new_initial_state()
    if new._table.eng is None and t.eng is not None:  # the first dealer was drawn
        new.apply_action(t.cfg.first_dealer)
    for i, hand in enumerate(t.hands):
        last = i == len(t.hands) - 1
        dealt = _sampled_deal(t, player, gen) if last else hand.dealt
        per_seat = [np.flatnonzero(dealt[s]).tolist() for s in range(t.P)]
        order = [per_seat[k % t.P][k // t.P] for k in range(len(hand.deal_order))]
        trump_first = hand.trump >= 0 and not t.module.TRUMP_TURNED
        outcomes = ([hand.trump] if trump_first else []) + order
        if hand.trump >= 0 and t.module.TRUMP_TURNED:
            outcomes.append(hand.trump)
        for outcome in outcomes:
            new.apply_action(outcome)
        for seat, action, phase in hand.actions:
            if last and t.hidden(hand, seat, phase, player):
                action = int(gen.choice(new.legal_actions()))
            new.apply_action(action)
    return new


# --------------------------------------------------------------------------
# Observations
class CardGameObserver:
    """OpenSpiel's PyObserver of one of our games (module docstring: what each type gives).

    ``tensor`` is one flat float32 vector; ``dict`` names its pieces:
    ``observation`` (the core's observation in the view the type asks for),
    and with perfect recall ``dealt`` (cards dealt this hand: the player's,
    or every seat's by relative seat in the all-players view) and ``tricks``
    (tricks x relative seats x cards: every card played this hand).
    """

    _VIEWS = {
        pyspiel.PrivateInfoType.SINGLE_PLAYER: "private",
        pyspiel.PrivateInfoType.NONE: "public",
        pyspiel.PrivateInfoType.ALL_PLAYERS: "full",
    }

    def __init__(self, rules: Rules, iig_obs_type: Any, params: Any = None):
        if params:
            raise ValueError(f"the observer takes no parameters, got {params!r}")
        if not iig_obs_type.public_info:
            raise ValueError("observers without the public information are not offered")
        self.rules = rules
        self.view = self._VIEWS[iig_obs_type.private_info]
        self.perfect_recall = iig_obs_type.perfect_recall
        game, P, N = rules.game, rules.game.players, rules.game.module.N_CARDS
        pieces: list[tuple[str, tuple[int, ...]]] = [("observation", (game.obs_size(self.view),))]
        if self.perfect_recall:
            if self.view != "public":
                pieces.append(("dealt", (N,) if self.view == "private" else (P, N)))
            pieces.append(("tricks", (max(rules.sizes), P, N)))
        self.tensor = np.zeros(sum(int(np.prod(shape)) for _, shape in pieces), dtype=np.float32)
        self.dict: dict[str, np.ndarray] = {}
        at = 0
        for name, shape in pieces:
            size = int(np.prod(shape))
            self.dict[name] = self.tensor[at : at + size].reshape(shape)
            at += size

    def set_from(self, state: CardGameState, player: int) -> None:
        """Fill ``tensor`` with ``player``'s view of ``state``."""
        t = state._table
        self.tensor.fill(0.0)
        if t.eng is None:
            return  # before the first dealer is drawn nothing has happened
        t.module.observe(t.cfg, t.eng, seat=np.array([player]), view=self.view, out=self.dict["observation"][None])
        if not self.perfect_recall:
            return
        dealt = t.hands[-1].dealt
        if "dealt" in self.dict:
            self.dict["dealt"][:] = dealt[player] if self.view == "private" else np.roll(dealt, -player, axis=0)
        for i, (rel, card) in enumerate(t.tricks(player)):
            self.dict["tricks"][i // t.P, rel, card] = 1.0

    def string_from(self, state: CardGameState, player: int) -> str:
        """``player``'s view of ``state`` as text: the story of the game (perfect recall) or the observation's facts."""
        t = state._table
        if self.perfect_recall:
            shown = {"private": [player], "public": [], "full": list(range(t.P))}[self.view]
            return t.history_string(player, shown)
        if t.eng is None:
            return f"p{player}"
        vec = t.module.observe(t.cfg, t.eng, seat=np.array([player]), view=self.view)[0]
        facts = t.module.decode(t.cfg, vec, view=self.view)
        return f"p{player} " + " ".join(f"{k}={v}" for k, v in facts.items())


# --------------------------------------------------------------------------
# Tree sizes
@dataclasses.dataclass(frozen=True)
class TreeSize:
    """The size of a game's whole tree, as :func:`tree_size` counts it."""

    histories: int  # every node: chance, decision and terminal
    terminal: int  # terminal histories
    decisions: int  # histories where a player acts
    info_states: tuple[int, ...]  # distinct information states (strings) where each player acts


def tree_size(game: pyspiel.Game, max_histories: int = 10_000_000) -> TreeSize:
    """Walk ``game``'s whole tree and count its histories and each player's information states.

    What exact methods (CFR+, exploitability, best responses) walk each
    iteration. Chance nodes count as histories like any other node. Raises
    ValueError once more than ``max_histories`` are met: a tree that large
    is not for walking (the full games' are astronomically larger).
    """
    histories = terminal = decisions = 0
    info: list[set[str]] = [set() for _ in range(game.num_players())]
    stack = [game.new_initial_state()]
    while stack:
        state = stack.pop()
        histories += 1
        if histories > max_histories:
            raise ValueError(f"the tree has more than {max_histories:,} histories")
        if state.is_terminal():
            terminal += 1
            continue
        if state.is_chance_node():
            actions = [a for a, _ in state.chance_outcomes()]
        else:
            decisions += 1
            player = state.current_player()
            info[player].add(state.information_state_string(player))
            actions = state.legal_actions()
        stack.extend(state.child(a) for a in actions)
    return TreeSize(histories, terminal, decisions, tuple(len(s) for s in info))


def tree_bound(game: Any) -> int:
    """An upper bound on the terminal histories of one of our OpenSpiel games, from one probe play of it.

    Chance: the product of the outcome counts met on the probe (the ordered
    deal, the trump, the first dealer: their counts do not depend on the
    play). Decisions other than cards (the hat choice, the bids): at each,
    the most actions any decision of the same hand and phase offers on the
    probe, whose choices never skip a bid (the highest action: a bid, not
    Bob's Hat's empty bid); no bidder has more choices than that (Oh Hell's
    hook and a used empty bid only remove one). Cards: every order of each
    seat's cards, (size!)^players per hand.
    """
    state = game.new_initial_state()
    table = state._table  # this module's own engine state
    n_cards = table.module.N_CARDS
    bound = 1
    most: dict[tuple[int, int], int] = {}  # (hand, phase) -> the most actions a non-card decision offered
    decisions: list[tuple[int, int]] = []
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            bound *= len(outcomes)
            state.apply_action(outcomes[0][0])
            continue
        legal = state.legal_actions()
        if legal[-1] >= n_cards:  # a hat choice or a bid
            key = (len(table.hands), int(table.eng.phase[0]))
            most[key] = max(most.get(key, 0), len(legal))
            decisions.append(key)
            state.apply_action(legal[-1])
        else:
            state.apply_action(legal[0])
    for key in decisions:
        bound *= most[key]
    for size in table.rules.sizes:
        bound *= math.factorial(size) ** table.P
    return bound


# --------------------------------------------------------------------------
# Registration
def _class_name(description: GameDescription) -> str:
    return "".join(part.title() for part in description.name.split("_")) + "Game"


def register() -> dict[str, type[CardGame]]:
    """Register every game with OpenSpiel as ``python_<name>``; returns the game classes by short name.

    Runs once at import; registering a name OpenSpiel already knows is skipped.
    """
    known = set(pyspiel.registered_names())
    classes = {}
    for d in DESCRIPTIONS:
        cls = type(_class_name(d), (CardGame,), {"description": d, "__module__": __name__})
        globals()[cls.__name__] = cls  # a module attribute, as pickle finds classes
        classes[PREFIX + d.name] = cls
        if PREFIX + d.name not in known:
            pyspiel.register_game(game_type(d), cls)
    return classes


GAME_CLASSES = register()

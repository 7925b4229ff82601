"""One description per game: the one place that says what is game-specific.

Every module that needs something particular to a game (its deck and card
notation, its observation layout, the public state a search rebuilds, the
suit-symmetry tables, the record format, the text of terminal play, the
heuristic bots, the bidding report of an evaluation) asks the :class:`Game`,
never ``if name == "bobs_hat"``. What a game says lives in two places, one
per floor:

- its **core module**, ``bobshat_env/core/<name>.py``: the batched rules and
  the core-level answers, under the same names in every game (``NAME``,
  ``DECK``, ``card_str``, ``parse_card``, ``layout`` / ``observe`` /
  ``decode``, ``public_state``, the symmetry tables; the end of
  :mod:`bobshat_env.core.bobs_hat` lists them). Core helpers that cannot import
  this module find it with :func:`bobshat_env.core.game_module`;
- its **description** here, one :class:`GameDescription` in ``DESCRIPTIONS``:
  the configuration class, the command line's options, and where the pieces
  that live on other floors are (text rendering, terminal play, records,
  heuristics, agents, the bidding report) as ``"module:attribute"`` entry
  points, imported when first asked for, as Gymnasium's registry does. So
  this module imports nothing above itself, and ``import bobshat_env.games``
  stays light (no numba) until a game is made.

Adding a game is writing its core module and adding one description (plus
the pieces it names). :func:`make_game` binds a description to a validated
configuration; the vector env, the AEC env, records, the command line and the
agents all go through the resulting :class:`Game`.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from .config import BobsHatConfig, ConfigError, GameConfig, OhHellConfig, variant_options

if TYPE_CHECKING:
    from .core.observe import ObsLayout
    from .core.symmetry import SuitSymmetry


@dataclass(frozen=True)
class GameDescription:
    """What is particular to one game above its core module (module docstring).

    The ``str`` fields are entry points, ``"package.module:attribute"`` (or
    just a module), loaded by :meth:`Game.load`:

    - ``render``: ``f(game, state, g, show_hands) -> str``, the text table;
    - ``play_text``: a class ``T(game)`` with the move names, input parsing
      and explanations of ``bobshat play`` (see :mod:`bobshat_env.text`);
    - ``record_rules``: the records adapter class (:mod:`bobshat_env.records`);
    - ``heuristics``: the module of the heuristic bots, with
      ``simple_state_policy`` / ``strong_state_policy`` playouts on full states;
    - ``agents``: ``(agent name, class)`` pairs, the game's entries for
      :func:`agents.make_agent` beyond the game-independent ones;
    - ``bid_report``: the evaluation's bidding statistics (:mod:`train.evaluate`);
    - ``bid_oracle``: the bidding benchmark's pieces of the game (:mod:`train.bids`).

    ``cli_options`` are the configuration fields the command line's game
    flags set for this game (``players`` and ``first_dealer`` are common).
    """

    name: str
    title: str
    config_cls: type[GameConfig]
    cli_options: tuple[str, ...]
    render: str
    play_text: str
    record_rules: str
    heuristics: str
    agents: tuple[tuple[str, str], ...]
    bid_report: str
    bid_oracle: str

    def player_counts(self) -> list[int]:
        """The player counts the configuration accepts (it says so by refusing the others), ascending."""
        ok = []
        for players in range(1, 11):
            try:
                self.config_cls(players=players)
            except ConfigError:
                continue
            ok.append(players)
        return ok


DESCRIPTIONS: tuple[GameDescription, ...] = (
    GameDescription(
        name="bobs_hat",
        title="Where's Bob's Hat?",
        config_cls=BobsHatConfig,
        cli_options=(
            "hands",
            "double_fewest",
            "no_bid",
            "secret_bidding",
            "negative_scoring",
            "renege_mode",
            "suits",
            "ranks",
            "hand_size_base",
        ),
        render="bobshat_env.text.bobs_hat:render",
        play_text="bobshat_env.text.bobs_hat:PlayText",
        record_rules="bobshat_env.records.bobs_hat:BobsHatRules",
        heuristics="agents.heuristic_bobs_hat",
        agents=(
            ("simple", "agents.heuristic_bobs_hat:SimpleAgent"),
            ("strong", "agents.heuristic_bobs_hat:StrongAgent"),
            ("pimc", "agents.pimc:PIMCAgent"),
        ),
        bid_report="train.evaluate.bobs_hat:BobsHatBids",
        bid_oracle="train.bids.bobs_hat:BobsHatOracle",
    ),
    GameDescription(
        name="oh_hell",
        title="Oh Hell",
        config_cls=OhHellConfig,
        cli_options=("deal_style", "scoring", "suits", "ranks", "start_size", "hands"),
        render="bobshat_env.text.oh_hell:render",
        play_text="bobshat_env.text.oh_hell:PlayText",
        record_rules="bobshat_env.records.oh_hell:OhHellRules",
        heuristics="agents.heuristic_oh_hell",
        agents=(
            ("simple", "agents.heuristic_oh_hell:SimpleAgent"),
            ("strong", "agents.heuristic_oh_hell:StrongAgent"),
            ("pimc", "agents.pimc:PIMCAgent"),
        ),
        bid_report="train.evaluate.oh_hell:OhHellBids",
        bid_oracle="train.bids.oh_hell:OhHellOracle",
    ),
)

GAMES = tuple(d.name for d in DESCRIPTIONS)


def describe(name: str) -> GameDescription:
    """The description of game ``name``; ConfigError naming the known games otherwise."""
    for d in DESCRIPTIONS:
        if d.name == name:
            return d
    raise ConfigError(f"unknown game {name!r}; choose one of {', '.join(GAMES)}")


def describe_config(config: Any) -> GameDescription:
    """The description of the game whose configuration ``config`` is; TypeError for anything else."""
    for d in DESCRIPTIONS:
        if isinstance(config, d.config_cls):
            return d
    raise TypeError(f"expected a game configuration ({', '.join(d.config_cls.__name__ for d in DESCRIPTIONS)}), "
                    f"got {type(config).__name__}")  # fmt: skip


@functools.cache
def load(entry_point: str) -> Any:
    """The object an entry point ``"package.module:attribute"`` (or ``"package.module"``) names."""
    module, _, attr = entry_point.partition(":")
    obj = importlib.import_module(module)
    for part in attr.split(".") if attr else ():
        obj = getattr(obj, part)
    return obj


@dataclass(frozen=True)
class Game:
    """A game's description and configuration, with its batched rules behind one interface."""

    description: GameDescription
    config: Any  # the description's config_cls, validated
    module: ModuleType  # the core module, bobshat_env/core/<name>.py
    # the core module's observation functions, bound once (they are called every step)
    observe_fn: Callable[..., np.ndarray]
    layout_fn: Callable[..., ObsLayout]
    decode_fn: Callable[..., dict]

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickles as its name and configuration (a module does not pickle), for worker processes."""
        return (functools.partial(make_game, config=self.config), (self.name,))

    # -- what the game is
    @property
    def name(self) -> str:
        return self.description.name

    @property
    def title(self) -> str:
        """The game's name for people, e.g. ``Where's Bob's Hat?``."""
        return self.description.title

    @property
    def players(self) -> int:
        return self.config.players

    @property
    def renege_mode(self) -> bool:
        """An illegal card that breaks follow suit is played as a renege (penalty, hand dealt again)
        instead of refused: Bob's Hat's ``renege_mode`` option; never in Oh Hell."""
        return self.config.renege_mode

    @property
    def secret_bids(self) -> bool:
        """No seat sees another's bid until all have bid: Bob's Hat's ``secret_bidding`` option; never in Oh Hell."""
        return self.config.secret_bidding

    @property
    def n_actions(self) -> int:
        return int(self.module.N_ACTIONS)

    @property
    def deck(self) -> Any:
        """The :class:`bobshat_env.core.cards.Deck`: suit and in-suit strength of every card id."""
        return self.module.DECK

    def card_str(self, card: int) -> str:
        """A card id's notation (``blue14``, ``QS``)."""
        return self.module.card_str(card)

    def parse_card(self, text: str) -> int:
        """A card id from its notation; ValueError naming what was expected otherwise."""
        return self.module.parse_card(text)

    def action_str(self, action: int) -> str:
        return self.module.action_str(action)

    # -- the batched rules
    def init(self, keys: np.ndarray, auto_deal: bool = True) -> Any:
        return self.module.init(self.config, keys, auto_deal=auto_deal)

    def step(
        self,
        state: Any,
        actions: np.ndarray,
        active: np.ndarray | None = None,
        auto_deal: bool = True,
        legal: np.ndarray | None = None,
        result: Any = None,
    ) -> Any:
        return self.module.step(
            self.config, state, actions, active=active, auto_deal=auto_deal, legal=legal, result=result
        )

    def new_result(self, batch: int) -> Any:
        """A step result for ``batch`` games, to pass to :meth:`step` again and again (a one-game loop)."""
        return self.module.new_result(self.config, batch)

    def legal_action_mask(self, state: Any, out: np.ndarray | None = None) -> np.ndarray:
        return self.module.legal_action_mask(self.config, state, out=out)

    def done(self, state: Any) -> np.ndarray:
        return state.phase == self.module.DONE

    # -- observations and what a seat knows
    def layout(self, view: str = "private") -> ObsLayout:
        """The named slices of the observation vector in ``view``."""
        return self.layout_fn(self.config, view)

    def obs_size(self, view: str = "private") -> int:
        return self.layout_fn(self.config, view).size

    def observe(
        self, state: Any, seat: np.ndarray | None = None, view: str = "private", out: np.ndarray | None = None
    ) -> np.ndarray:
        return self.observe_fn(self.config, state, seat=seat, view=view, out=out)

    def decode(self, vec: np.ndarray, view: str = "private") -> dict:
        return self.decode_fn(self.config, vec, view=view)

    def public_state(self, obs: np.ndarray, seat: np.ndarray) -> tuple[Any, np.ndarray, np.ndarray]:
        """``(state, counts, unseen)`` a seat knows from its private observations (hidden hands empty)."""
        return self.module.public_state(self.config, obs, seat)

    def symmetry(self, view: str = "private") -> SuitSymmetry:
        """The relabelling of observations and actions that makes trump suit 0 (:mod:`bobshat_env.core.symmetry`)."""
        from .core.symmetry import trump_canonical  # only learners with symmetry need it

        return trump_canonical(self, view=view)

    # -- the pieces on other floors, named by the description
    def load(self, part: str) -> Any:
        """The object the description's entry point ``part`` names (``"render"``, ``"heuristics"``, ...)."""
        return load(getattr(self.description, part))

    def render(self, state: Any, g: int = 0, show_hands: bool | int = True) -> str:
        """Text table of game ``g`` of a batch (:mod:`bobshat_env.text`)."""
        return self.load("render")(self, state, g, show_hands)

    def play_text(self) -> Any:
        """Move names, parsing and explanations, for the terminal and the web (:mod:`bobshat_env.text`)."""
        return self.load("play_text")(self)

    def agent_class(self, name: str) -> str | None:
        """The entry point of this game's agent ``name`` (``"agents.heuristic_bobs_hat:StrongAgent"``), or None."""
        return dict(self.description.agents).get(name)


def make_game(name: str = "bobs_hat", **options: Any) -> Game:
    """A :class:`Game` by name with its options; bad names or options raise ConfigError.

    ``variant="tiny"`` (a name of the config class's ``VARIANTS``) starts from that small
    variant's options; the other options given are laid over them.
    """
    from .core import game_module  # the core (numba) loads with the first game

    description = describe(name)
    variant = options.pop("variant", None)
    if variant:
        options = variant_options(description.config_cls, variant, **options)
    cfg = options.pop("config", None) or description.config_cls.from_dict(options)
    if not isinstance(cfg, description.config_cls):
        raise ConfigError(f"{name} needs a {description.config_cls.__name__}, got a {type(cfg).__name__}")
    module = game_module(name)
    return Game(description, cfg, module, module.observe, module.layout, module.decode)

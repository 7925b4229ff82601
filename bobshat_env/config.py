"""Game options as frozen dataclasses, validated once at construction.

A bad option fails here, with a message that names it, before any game is
built (OpenSpiel's habit of checking parameters up front).

>>> BobsHatConfig(players=4).hands
10
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, ClassVar, Protocol, Self

import numpy as np

from .core.cards import (
    BH_HAND_SIZE_BASE,
    BH_RANKS,
    BH_SUITS,
    OH_RANK_CHARS,
    OH_SUITS,
    bh_deck_mask,
    bh_hand_size,
    oh_deck_mask,
)

BH_DEFAULT_HANDS = {3: 12, 4: 10, 5: 8}
BH_MAX_HANDS = 16  # the observation's hand-number slice counts 16 hands (3 players of the full game)
BH_MIN_RANKS = 3  # the hat ranks 14 and 15 and at least one other
OH_START_SIZE = {3: 10, 4: 10, 5: 10, 6: 8, 7: 7}
OH_MAX_START_SIZE = 10  # bids and the observation's hand-size slice go up to 10
OH_DEAL_STYLES = ("long", "long_inverted", "short_high_low", "short_high", "short_low")
OH_SCORINGS = ("positive", "neutral", "negative")


class ConfigError(ValueError):
    """A game configuration that cannot be played; the message names the option."""


class GameConfig(Protocol):
    """What every game's configuration class offers (:class:`bobshat_env.games.GameDescription` holds one)."""

    VARIANTS: ClassVar[dict[str, dict[str, Any]]]  # named small variants: their options

    def __init__(self, *args: Any, **options: Any) -> None: ...  # a dataclass: players=..., and its options

    @property
    def players(self) -> int: ...

    @property
    def first_dealer(self) -> int: ...

    def to_dict(self) -> dict[str, Any]: ...

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self: ...


def _check_bool(cfg: Any, names: tuple[str, ...]) -> None:
    for name in names:
        if not isinstance(getattr(cfg, name), bool):
            raise ConfigError(f"{name} must be true or false, got {getattr(cfg, name)!r}")


def _check_int(cfg: Any, name: str) -> int:
    """An int option; NumPy integers are accepted and stored as int (and returned)."""
    value = getattr(cfg, name)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ConfigError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    object.__setattr__(cfg, name, int(value))
    return int(value)


def _from_dict(cls: type, data: dict[str, Any]) -> Any:
    if not isinstance(data, dict):
        raise ConfigError(f"a {cls.__name__} is built from a mapping of options, got {type(data).__name__}")
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"unknown option(s) {', '.join(unknown)}; known options: {', '.join(sorted(known))}")
    return cls(**data)


def _default_note(given: Any, players: int) -> str:
    return f" (the default for {players} players)" if given is None else ""


def variant_options(config_cls: type, variant: str, **options: Any) -> dict[str, Any]:
    """The options of the named small variant ``variant`` of a game (its config class's ``VARIANTS``), with
    ``options`` laid over them (an option given explicitly wins). ConfigError naming the known variants for
    an unknown name."""
    known = getattr(config_cls, "VARIANTS", {})
    if variant not in known:
        raise ConfigError(f"unknown variant {variant!r}; choose one of {', '.join(known) or 'none'}")
    return {**known[variant], **options}


@dataclass(frozen=True)
class BobsHatConfig:
    """Options of a game of Where's Bob's Hat? (docs/rules.md).

    players: 3 to 5. hands: number of hands, default 12/10/8 for 3/4/5
    players, at most what the deck allows (``players * (4 + hands) <= 60``).
    first_dealer: a seat, or -1 to draw the first dealer from the game's seed.
    The five switches are the rulebook's options and the renege mode, all off
    by default and combinable.

    Small variants (docs/rules.md): ``suits`` (1-3, the first ones of blue,
    red, black), ``ranks`` (3-20 per suit, always keeping the hat ranks 14
    and 15: :func:`bobshat_env.core.cards.bh_kept_ranks`) and
    ``hand_size_base`` (hand k deals ``hand_size_base + k`` cards, 4 in the
    rulebook); the hands must fit the deck,
    ``players * (hand_size_base + hands) <= suits * ranks``. Card ids stay
    those of the full deck; only the cards of the subset are dealt, the trump
    is drawn among the deck's suits and none, and the most bids of suits
    outside the deck are not offered.
    """

    players: int = 4
    hands: int | None = None
    first_dealer: int = 0
    double_fewest: bool = False
    no_bid: bool = False
    secret_bidding: bool = False
    negative_scoring: bool = False
    renege_mode: bool = False
    suits: int = 3
    ranks: int = BH_RANKS
    hand_size_base: int = BH_HAND_SIZE_BASE

    # Named small variants (docs/rules.md, "Small variants"): option sets, each a whole game of its own. The
    # tiny one is small enough for exact methods (CFR+, exploitability) to walk its whole tree many times over;
    # the small one has real card play (two tricks, a choice of card) and is still walkable.
    VARIANTS: ClassVar[dict[str, dict[str, Any]]] = {
        "tiny": {"players": 3, "suits": 1, "ranks": 4, "hand_size_base": 0, "hands": 1},
        "small": {"players": 3, "suits": 1, "ranks": 6, "hand_size_base": 1, "hands": 1},
    }
    # options that only schedule the hands (how many, who deals first): every hand has the same rules, and the
    # observation holds no count of hands, so a policy trained with other values plays them (agents.checkpoint)
    SCHEDULE_OPTIONS: ClassVar[tuple[str, ...]] = ("hands", "first_dealer")

    def __post_init__(self) -> None:
        _check_int(self, "players")
        if self.players not in BH_DEFAULT_HANDS:
            raise ConfigError(f"players must be 3, 4 or 5 for Where's Bob's Hat?, got {self.players}")
        suits, ranks, base = (_check_int(self, name) for name in ("suits", "ranks", "hand_size_base"))
        if not 1 <= suits <= len(BH_SUITS):
            raise ConfigError(f"suits must be 1 to 3 for Where's Bob's Hat? (blue, red, black), got {suits}")
        if not BH_MIN_RANKS <= ranks <= BH_RANKS:
            raise ConfigError(
                f"ranks must be {BH_MIN_RANKS} to {BH_RANKS} for Where's Bob's Hat? (the hat ranks 14 and 15 "
                f"and at least one more), got {ranks}"
            )
        n_cards = suits * ranks
        if base < 0:
            raise ConfigError(f"hand_size_base must be 0 or more (hand k deals hand_size_base + k cards), got {base}")
        if base > n_cards // self.players - 1:
            raise ConfigError(
                f"hand_size_base={base} does not fit the {n_cards}-card deck (suits={suits} x ranks={ranks}) "
                f"with {self.players} players: hand 1 deals hand_size_base + 1 cards each, so hand_size_base "
                f"must be 0 to {n_cards // self.players - 1}"
            )
        given = self.hands
        if given is None:
            object.__setattr__(self, "hands", BH_DEFAULT_HANDS[self.players])
        hands = _check_int(self, "hands")
        fit = n_cards // self.players - base  # players * (base + hands) <= suits * ranks
        max_hands = min(fit, BH_MAX_HANDS)
        if not 1 <= hands <= max_hands:
            why = f" (the observation counts at most {BH_MAX_HANDS} hands)" if fit > BH_MAX_HANDS else ""
            raise ConfigError(
                f"hands={hands}{_default_note(given, self.players)} does not fit the {n_cards}-card deck with "
                f"{self.players} players: hand k deals {base} + k cards each, so hands must be 1 to {max_hands}{why}"
            )
        _check_int(self, "first_dealer")
        if not -1 <= self.first_dealer < self.players:
            raise ConfigError(
                f"first_dealer must be a seat 0-{self.players - 1} or -1 (random), got {self.first_dealer}"
            )
        _check_bool(self, ("double_fewest", "no_bid", "secret_bidding", "negative_scoring", "renege_mode"))

    @property
    def max_hand_size(self) -> int:
        """Cards dealt to each player in the last (largest) hand."""
        assert self.hands is not None  # __post_init__ replaced the default
        return bh_hand_size(self.hands - 1, self.hand_size_base)

    @property
    def hand_sizes(self) -> tuple[int, ...]:
        """Cards per player in each hand, in order (Oh Hell's config answers the same question)."""
        assert self.hands is not None  # __post_init__ replaced the default
        return tuple(bh_hand_size(h, self.hand_size_base) for h in range(self.hands))

    @property
    def deck_mask(self) -> np.ndarray:
        """(60,) bool, read-only: the card ids in play (all of them in the full game)."""
        return bh_deck_mask(self.suits, self.ranks)

    @property
    def trumps(self) -> tuple[int, ...]:
        """The trump cards chance draws from, each equally likely: the deck's suits (0-2), then 3 (none)."""
        return (*range(self.suits), 3)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BobsHatConfig:
        """Build from a mapping; unknown keys are an error that names them."""
        return _from_dict(cls, data)


@dataclass(frozen=True)
class OhHellConfig:
    """Options of a game of Oh Hell (docs/rules.md).

    players: 3 to 7. deal_style: one of ``OH_DEAL_STYLES``. scoring: one of
    ``OH_SCORINGS``. first_dealer: a seat, or -1 to draw it from the seed.

    Small variants (docs/rules.md): ``suits`` (1-4, the first ones of
    ``C D S H``), ``ranks`` (1-13, the top ones: 3 keep Q K A), ``start_size``
    (the largest hand, from which the deal style builds its sequence; default
    10, 8 or 7 by players, at most 10) and ``hands`` (play only the first
    ``hands`` hands of the sequence; default all of them). The deal and the
    turned trump card must fit the deck: ``players * start_size + 1 <= suits
    * ranks``. Card ids stay those of the full deck; only the subset is dealt.
    """

    players: int = 4
    deal_style: str = "long"
    scoring: str = "positive"
    first_dealer: int = 0
    suits: int = 4
    ranks: int = len(OH_RANK_CHARS)
    start_size: int | None = None
    hands: int | None = None

    # the values each text option takes (a form offers them as a list)
    OPTION_CHOICES: ClassVar[dict[str, tuple[str, ...]]] = {"deal_style": OH_DEAL_STYLES, "scoring": OH_SCORINGS}
    # Named small variants (see BobsHatConfig.VARIANTS)
    VARIANTS: ClassVar[dict[str, dict[str, Any]]] = {
        "tiny": {"players": 3, "suits": 2, "ranks": 3, "start_size": 1},
        "small": {"players": 3, "suits": 1, "ranks": 7, "start_size": 2, "hands": 1},
    }
    # options that only schedule the hands (their sizes, who deals first): every hand has the same rules, so a
    # policy trained with other values plays them (agents.checkpoint.check_compatible)
    SCHEDULE_OPTIONS: ClassVar[tuple[str, ...]] = ("deal_style", "first_dealer", "start_size", "hands")

    def __post_init__(self) -> None:
        _check_int(self, "players")
        if self.players not in OH_START_SIZE:
            raise ConfigError(f"players must be 3 to 7 for Oh Hell, got {self.players}")
        if self.deal_style not in OH_DEAL_STYLES:
            raise ConfigError(f"unknown deal_style {self.deal_style!r}; choose one of {', '.join(OH_DEAL_STYLES)}")
        if self.scoring not in OH_SCORINGS:
            raise ConfigError(f"unknown scoring {self.scoring!r}; choose one of {', '.join(OH_SCORINGS)}")
        _check_int(self, "first_dealer")
        if not -1 <= self.first_dealer < self.players:
            raise ConfigError(
                f"first_dealer must be a seat 0-{self.players - 1} or -1 (random), got {self.first_dealer}"
            )
        self._check_deck()
        given = self.hands
        if given is None:
            object.__setattr__(self, "hands", len(self._sequence()))
        hands, most = _check_int(self, "hands"), len(self._sequence())
        if not 1 <= hands <= most:
            raise ConfigError(
                f"hands={hands} does not fit the {self.deal_style} deal style from start_size={self.start_size}: "
                f"hands must be 1 to {most}"
            )

    def _check_deck(self) -> None:
        """Check suits, ranks and start_size (the default start size first set), naming the option at fault."""
        suits, ranks, P = _check_int(self, "suits"), _check_int(self, "ranks"), self.players
        if not 1 <= suits <= len(OH_SUITS):
            raise ConfigError(f"suits must be 1 to 4 for Oh Hell (clubs, diamonds, spades, hearts), got {suits}")
        if not 1 <= ranks <= len(OH_RANK_CHARS):
            raise ConfigError(f"ranks must be 1 to 13 for Oh Hell (the top ones: 3 keep Q K A), got {ranks}")
        n_cards = suits * ranks
        if n_cards < P + 1:
            raise ConfigError(
                f"the deck of suits={suits} x ranks={ranks} = {n_cards} cards is too small for {P} players: "
                f"a hand of one card each and the turned trump card need {P + 1}"
            )
        given = self.start_size
        if given is None:
            object.__setattr__(self, "start_size", OH_START_SIZE[P])
        size, fit = _check_int(self, "start_size"), min((n_cards - 1) // P, OH_MAX_START_SIZE)
        if not 1 <= size <= fit:
            deck = "" if n_cards == 52 else f" (suits={suits} x ranks={ranks})"
            raise ConfigError(
                f"start_size={size}{_default_note(given, P)} does not fit the {n_cards}-card deck{deck} with {P} "
                f"players: players * start_size + 1 (the turned trump card) must be at most {n_cards}"
                + (f" and bids go up to {OH_MAX_START_SIZE}" if fit == OH_MAX_START_SIZE else "")
                + f", so start_size must be 1 to {fit}"
            )

    @property
    def renege_mode(self) -> bool:
        """False: Oh Hell has no renege rule (an illegal card is refused, never played)."""
        return False

    @property
    def secret_bidding(self) -> bool:
        """False: Oh Hell's bids are always open."""
        return False

    @property
    def hand_sizes(self) -> tuple[int, ...]:
        """Cards per player in each hand, in order: the deal style's sequence, its first ``hands``."""
        return self._sequence()[: self.hands]

    @property
    def deck_mask(self) -> np.ndarray:
        """(52,) bool, read-only: the card ids in play (all of them in the full game)."""
        return oh_deck_mask(self.suits, self.ranks)

    def _sequence(self) -> tuple[int, ...]:
        """The deal style's whole sequence of hand sizes from ``start_size``."""
        s = self.start_size
        assert s is not None  # __post_init__ replaced the default
        down = list(range(s, 0, -1))
        up = list(range(1, s + 1))
        short = min(6, s)
        return tuple(
            {
                "long": down + up[1:],
                "long_inverted": up + down[1:],
                "short_high_low": list(range(short, 0, -1)) + list(range(2, short + 1)),
                "short_high": up,
                "short_low": down,
            }[self.deal_style]
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> OhHellConfig:
        """Build from a mapping; unknown keys are an error that names them."""
        return _from_dict(cls, data)

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

from .core.cards import BH_HAND_SIZE_BASE, BH_N_CARDS, bh_hand_size

BH_DEFAULT_HANDS = {3: 12, 4: 10, 5: 8}
OH_START_SIZE = {3: 10, 4: 10, 5: 10, 6: 8, 7: 7}
OH_DEAL_STYLES = ("long", "long_inverted", "short_high_low", "short_high", "short_low")
OH_SCORINGS = ("positive", "neutral", "negative")


class ConfigError(ValueError):
    """A game configuration that cannot be played; the message names the option."""


class GameConfig(Protocol):
    """What every game's configuration class offers (:class:`bobshat_env.games.GameDescription` holds one)."""

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


@dataclass(frozen=True)
class BobsHatConfig:
    """Options of a game of Where's Bob's Hat? (docs/rules.md).

    players: 3 to 5. hands: number of hands, default 12/10/8 for 3/4/5
    players, at most what the deck allows (``players * (4 + hands) <= 60``).
    first_dealer: a seat, or -1 to draw the first dealer from the game's seed.
    The five switches are the rulebook's options and the renege mode, all off
    by default and combinable.
    """

    players: int = 4
    hands: int | None = None
    first_dealer: int = 0
    double_fewest: bool = False
    no_bid: bool = False
    secret_bidding: bool = False
    negative_scoring: bool = False
    renege_mode: bool = False

    # options that only schedule the hands (how many, who deals first): every hand has the same rules, and the
    # observation holds no count of hands, so a policy trained with other values plays them (agents.checkpoint)
    SCHEDULE_OPTIONS: ClassVar[tuple[str, ...]] = ("hands", "first_dealer")

    def __post_init__(self) -> None:
        _check_int(self, "players")
        if self.players not in BH_DEFAULT_HANDS:
            raise ConfigError(f"players must be 3, 4 or 5 for Where's Bob's Hat?, got {self.players}")
        if self.hands is None:
            object.__setattr__(self, "hands", BH_DEFAULT_HANDS[self.players])
        hands = _check_int(self, "hands")
        max_hands = BH_N_CARDS // self.players - BH_HAND_SIZE_BASE  # players * (4 + hands) <= 60
        if not 1 <= hands <= max_hands:
            raise ConfigError(
                f"hands={self.hands} does not fit the 60-card deck with {self.players} players: "
                f"hand k deals 4 + k cards each, so hands must be 1 to {max_hands}"
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
        return bh_hand_size(self.hands - 1)

    @property
    def hand_sizes(self) -> tuple[int, ...]:
        """Cards per player in each hand, in order (Oh Hell's config answers the same question)."""
        assert self.hands is not None  # __post_init__ replaced the default
        return tuple(bh_hand_size(h) for h in range(self.hands))

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
    """

    players: int = 4
    deal_style: str = "long"
    scoring: str = "positive"
    first_dealer: int = 0

    # the values each text option takes (a form offers them as a list)
    OPTION_CHOICES: ClassVar[dict[str, tuple[str, ...]]] = {"deal_style": OH_DEAL_STYLES, "scoring": OH_SCORINGS}
    # options that only schedule the hands (their sizes, who deals first): every hand has the same rules, so a
    # policy trained with other values plays them (agents.checkpoint.check_compatible)
    SCHEDULE_OPTIONS: ClassVar[tuple[str, ...]] = ("deal_style", "first_dealer")

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

    @property
    def renege_mode(self) -> bool:
        """False: Oh Hell has no renege rule (an illegal card is refused, never played)."""
        return False

    @property
    def secret_bidding(self) -> bool:
        """False: Oh Hell's bids are always open."""
        return False

    @property
    def start_size(self) -> int:
        return OH_START_SIZE[self.players]

    @property
    def hand_sizes(self) -> tuple[int, ...]:
        """Cards per player in each hand, in order, for the deal style."""
        s = self.start_size
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

    @property
    def hands(self) -> int:
        return len(self.hand_sizes)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> OhHellConfig:
        """Build from a mapping; unknown keys are an error that names them."""
        return _from_dict(cls, data)

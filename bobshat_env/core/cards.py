"""Card ids, notation and suit/rank tables for both games.

Where's Bob's Hat? uses 60 cards: three suits (blue, red, black), ranks 1-20.
Card id = ``suit * 20 + (rank - 1)``, so ids 0-19 are blue, 20-39 red, 40-59
black. The 14s and 15s of every suit are the hat cards.

Oh Hell uses a standard 52-card deck laid out exactly as OpenSpiel's
``oh_hell``: card id = ``rank * 4 + suit`` with suits ``C D S H`` (0-3, its
order, so our names match OpenSpiel's ``action_to_string``) and
ranks ``2 3 4 5 6 7 8 9 T J Q K A`` (0-12). Sharing OpenSpiel's ids makes the
differential test a straight comparison of action lists.

Each deck is described by a :class:`Deck` (suit and strength of every card),
which is all the shared trick mechanics in :mod:`tricks` need to know.

Small variants of both games (docs/rules.md, "Small variants") deal from a
subset of the deck: the card ids and every layout stay those of the full
deck, and :func:`bh_deck_mask` / :func:`oh_deck_mask` say which ids are in
play. Cards outside the subset are never dealt, never turned for trump and
never sampled as hidden cards.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Deck:
    """Suit and in-suit strength of every card id of one game's deck."""

    name: str
    n_suits: int
    suit_of: np.ndarray  # (N,) int8: suit index of each card id
    rank_of: np.ndarray  # (N,) int8: strength within the suit, higher wins

    @property
    def n_cards(self) -> int:
        return int(self.suit_of.shape[0])


# --------------------------------------------------------------------------
# Where's Bob's Hat?
BH_SUITS = ("blue", "red", "black")
BH_TRUMPS = ("blue", "red", "black", "none")  # trump index 3 = gray = no trump
BH_RANKS = 20
BH_N_CARDS = 60
BH_NO_TRUMP = 3

_bh_ids = np.arange(BH_N_CARDS)
BOBS_HAT_DECK = Deck(
    name="bobs_hat",
    n_suits=3,
    suit_of=(_bh_ids // BH_RANKS).astype(np.int8),
    rank_of=(_bh_ids % BH_RANKS).astype(np.int8),
)
# True for the 14 and 15 of every suit: taking one of them takes Bob's Hat.
BH_HAT_RANKS = (14, 15)
BH_IS_HAT_CARD = np.isin(_bh_ids % BH_RANKS + 1, BH_HAT_RANKS)
BH_HAND_SIZE_BASE = 4  # hand k (k = 1, 2, ...) deals 4 + k cards to each player (the option hand_size_base)


def bh_hand_size(hand_no: Any, base: Any = BH_HAND_SIZE_BASE) -> Any:
    """Cards dealt to each player in Bob's Hat hand ``hand_no`` (0-based, an int or an integer array):
    hand k = ``hand_no + 1`` deals ``base + k`` (``base`` is the config's ``hand_size_base``, 4 in the
    rulebook). The one statement of the rule: the config, the step kernel (through
    :data:`bobshat_env.core.bobs_hat.hand_size_of`, this function compiled), the records and the bots
    all ask it."""
    return hand_no + (base + 1)


def bh_kept_ranks(ranks: int) -> tuple[int, ...]:
    """The ranks (1-20) of each suit a Bob's Hat deck of ``ranks`` ranks per suit keeps, ascending.

    The hat ranks 14 and 15 always, then the ranks nearest them, one below
    and one above in turn, a lower one first (most of the full deck lies
    below the hat cards), until the top rank 20 is reached, then lower ones
    only: 3 ranks keep 13-15, 4 keep 13-16, 12 keep 9-20, 20 keep all. So
    every deck has hat cards and a card they beat, and from 4 ranks on a card
    that beats them.
    """
    above = min((ranks - 2) // 2, BH_RANKS - BH_HAT_RANKS[1])
    below = ranks - 2 - above
    return tuple(range(BH_HAT_RANKS[0] - below, BH_HAT_RANKS[1] + above + 1))


@functools.cache
def bh_deck_mask(suits: int = 3, ranks: int = BH_RANKS) -> np.ndarray:
    """(60,) bool, read-only: the card ids of a Bob's Hat deck of the first ``suits`` suits (blue, red,
    black) and the ranks :func:`bh_kept_ranks` keeps. The defaults are the full deck."""
    kept = np.isin(_bh_ids % BH_RANKS + 1, bh_kept_ranks(ranks))
    return _read_only(kept & (_bh_ids // BH_RANKS < suits))


def _read_only(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)  # shared by every caller (cached)
    return a


def bh_card(suit: int, rank: int) -> int:
    """Card id of Bob's Hat card ``rank`` (1-20) of ``suit`` (0-2)."""
    return suit * BH_RANKS + rank - 1


def bh_card_str(card: int) -> str:
    """Notation of a Bob's Hat card id, e.g. ``blue14``."""
    if not 0 <= card < BH_N_CARDS:
        raise ValueError(f"no Bob's Hat card has id {card}")
    return f"{BH_SUITS[card // BH_RANKS]}{card % BH_RANKS + 1}"


_BH_RANK_TEXT = {str(r): r for r in range(1, BH_RANKS + 1)}  # "1" ... "20": the only rank spellings


def bh_parse_card(text: str) -> int:
    """Card id of a Bob's Hat card written like ``red3``; ValueError otherwise."""
    if not isinstance(text, str):
        raise ValueError(f"unknown card {text!r}: a card is a string like 'blue14'")
    for s, name in enumerate(BH_SUITS):
        if text.startswith(name):
            digits = text[len(name) :]
            # compared with the ASCII rank texts: str.isdigit() and int() also take '١٤' (Arabic-Indic 14)
            if digits in _BH_RANK_TEXT:
                return bh_card(s, _BH_RANK_TEXT[digits])
    raise ValueError(f"unknown card {text!r}: expected a suit (blue, red, black) and a rank 1-20")


# --------------------------------------------------------------------------
# Oh Hell (OpenSpiel's layout)
OH_SUIT_CHARS = "CDSH"  # OpenSpiel's suit order: id 2 is the 2 of spades, id 3 the 2 of hearts
OH_SUITS = ("clubs", "diamonds", "spades", "hearts")  # names by suit index, in the order of OH_SUIT_CHARS
assert "".join(name[0].upper() for name in OH_SUITS) == OH_SUIT_CHARS
OH_RANK_CHARS = "23456789TJQKA"
OH_N_CARDS = 52

_oh_ids = np.arange(OH_N_CARDS)
OH_HELL_DECK = Deck(
    name="oh_hell",
    n_suits=4,
    suit_of=(_oh_ids % 4).astype(np.int8),
    rank_of=(_oh_ids // 4).astype(np.int8),
)


@functools.cache
def oh_deck_mask(suits: int = 4, ranks: int = 13) -> np.ndarray:
    """(52,) bool, read-only: the card ids of an Oh Hell deck of the first ``suits`` suits (in the order
    ``C D S H``) and the top ``ranks`` ranks (3 keep Q K A). The defaults are the full deck."""
    return _read_only((_oh_ids % 4 < suits) & (_oh_ids // 4 >= len(OH_RANK_CHARS) - ranks))


def oh_card_str(card: int) -> str:
    """Notation of an Oh Hell card id, e.g. ``AS`` or ``TH``."""
    if not 0 <= card < OH_N_CARDS:
        raise ValueError(f"no Oh Hell card has id {card}")
    return OH_RANK_CHARS[card // 4] + OH_SUIT_CHARS[card % 4]


def oh_parse_card(text: str) -> int:
    """Card id of an Oh Hell card written like ``QD``; ValueError otherwise."""
    if not isinstance(text, str) or len(text) != 2 or text[0] not in OH_RANK_CHARS or text[1] not in OH_SUIT_CHARS:
        raise ValueError(f"unknown card {text!r}: expected a rank (2-9, T, J, Q, K, A) and a suit (C, D, S, H)")
    return OH_RANK_CHARS.index(text[0]) * 4 + OH_SUIT_CHARS.index(text[1])

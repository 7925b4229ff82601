"""Where's Bob's Hat? in words: its table (``render``) and its play text (``PlayText``), see :mod:`bobshat_env.text`."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ..core import bobs_hat as bh
from ..core.cards import BH_IS_HAT_CARD, BH_RANKS, BH_SUITS, BH_TRUMPS, bh_card, bh_card_str
from ..games import Game
from . import MoveError, PlayTextBase, RenegeQuestion, plural, seat_name, table_text

HELP = """\
Type your move as its number in the list, or by name:
  blue14, red3    a card: suit (blue, red, black; r, blu, bla will do) and rank 1-20
  hat+10, hat-10  the dealer's choice for Bob's Hat (also +10 / -10)
  blue+fewest     a bid: any of blue, red, black, fewest joined by + (or spaces);
                  fewest+fewest is double fewest, none is the no-bid option
"""


def bid_text(code: int) -> str:
    """A Bob's Hat bid as players type it in ``bobshat play``: ``red+fewest``, ``none``.

    Records keep the rules' names (``most_red``, docs/records.md); the screen
    shows what the player would type, so the table and the prompt agree.
    """
    return "+".join(n.removeprefix("most_") for n in bh.bid_cards(code)) or "none"


def render(game: Game, state: bh.State, g: int = 0, show_hands: bool | int = True) -> str:
    """Table of game ``g``: trump, hat, bids, trick, cards taken, scores.

    show_hands: True shows every hand (spectator), a seat number shows only
    that seat's hand (a player's view), False shows none.
    """
    cfg = game.config
    phase = int(state.phase[g])
    hat = int(state.hat_value[g])
    holder = int(state.hat_holder[g])
    hat_txt = (
        "not chosen yet"
        if hat == 0
        else f"{hat:+d}, " + ("in the centre" if holder < 0 else f"held by player_{holder}")
    )
    secret = cfg.secret_bidding and phase == bh.BID

    def row(p: int) -> str:
        code = int(state.bids[g, p])
        own = show_hands is not True and show_hands is not False and int(show_hands) == p
        if code < 0:
            bid = "-"
        elif secret and not own:  # a player's view still shows the player's own bid
            bid = "(secret)"
        else:
            bid = bid_text(code)
        taken = "/".join(str(int(x)) for x in state.taken[g, p])
        return f"{bid:<29}{taken:<22}{int(state.scores[g, p]):>6}"

    info = f"Trump: {BH_TRUMPS[int(state.trump[g])]}   Bob's Hat: {hat_txt}"
    columns = f"{'bid':<29}{'taken blue/red/black':<22}{'total':>6}"
    return table_text("Where's Bob's Hat?", game, state, g, show_hands, info, columns, row)


class PlayText(PlayTextBase):
    """Move names, input parsing and explanations for Where's Bob's Hat?"""

    help = HELP

    # -- names
    @staticmethod
    def bid_label(code: int) -> str:
        return bid_text(code)  # as the table shows it

    def move_label(self, action: int) -> str:
        if action < bh.N_CARDS:
            return bh_card_str(action)
        if action == bh.HAT_PLUS:
            return "hat+10"
        if action == bh.HAT_MINUS:
            return "hat-10"
        return self.bid_label(action - bh.BID_BASE)

    def move_name(self, action: int) -> str:
        """The move's notation, as typed and as the web page's button is named (``blue14``, ``hat+10``, ``none``)."""
        return self.move_label(action)

    @staticmethod
    def card_face(card: int) -> dict[str, Any]:
        """How a card is drawn: notation, rank and suit (blue, red, black), and whether it carries Bob's Hat."""
        return {
            "name": bh_card_str(card),
            "rank": str(card % BH_RANKS + 1),
            "suit": BH_SUITS[card // BH_RANKS],
            "symbol": "",
            "hat": bool(BH_IS_HAT_CARD[card]),
        }

    def table_facts(self, state: bh.State, viewer: int | None, dealt: bh.State | None = None) -> dict[str, Any]:
        """What the table shows besides the cards and totals (the web page draws it as given).

        viewer: the seat whose view it is (a secret bid of another seat shows
        as ``(secret)`` during the bidding), None for a spectator who sees all.
        dealt: the state that says which hand it is (its trump), when
        ``state`` is a finished hand that the core has already moved past.
        """
        P = self.cfg.players
        dealt = state if dealt is None else dealt
        me = -1 if viewer is None else viewer
        hat, holder = int(state.hat_value[0]), int(state.hat_holder[0])
        where = "in the centre" if holder < 0 else f"held by {seat_name(holder, me)}"
        secret = self.cfg.secret_bidding and int(state.phase[0]) == bh.BID
        bids: list[str | None] = []
        for p in range(P):
            code = int(state.bids[0, p])
            if code < 0:
                bids.append(None)
            elif secret and viewer is not None and p != viewer:
                bids.append("(secret)")
            else:
                bids.append(self.bid_label(code))
        return {
            "info": [
                ["Trump", BH_TRUMPS[int(dealt.trump[0])]],
                ["Bob's Hat", "not chosen yet" if hat == 0 else f"{hat:+d}, {where}"],
            ],
            "taken_label": "Taken (blue/red/black)",
            "bids": bids,
            "taken": ["/".join(str(int(x)) for x in state.taken[0, p]) for p in range(P)],
            "marks": [["holds Bob's Hat"] if p == holder else [] for p in range(P)],
        }

    def moves_note(self, state: bh.State, legal: np.ndarray) -> str | None:
        """A word on moves that are not offered (none in Bob's Hat: every option is in the list)."""
        return None

    def question(self, state: bh.State) -> str:
        ph = int(state.phase[0])
        if ph == bh.HAT:
            return "You deal: Bob's Hat at +10 or -10?"
        if ph == bh.BID:
            return "Your bid (e.g. blue+fewest)"
        return "Your card"

    def number_is_index(self, state: bh.State) -> bool:
        return True

    # -- parsing
    def parse(self, text: str, state: bh.State, seat: int, legal: np.ndarray) -> int:
        """The action typed as ``text`` (card, hat choice or bid); MoveError if not legal now."""
        ph = int(state.phase[0])
        t = text.strip().lower()
        hat = self._parse_hat(t)
        card = self._parse_card(t)
        if ph == bh.HAT:
            if hat is not None:
                return hat
            if card is not None:
                raise MoveError("you are the dealer and choose Bob's Hat first: type hat+10 or hat-10")
            raise MoveError(f"{text.strip()!r} is not a hat choice: type hat+10 or hat-10 (or 1 / 2)")
        if ph == bh.BID:
            if card is not None:
                raise MoveError("it is the bidding, not a card: bid e.g. blue, red+fewest or fewest")
            if hat is not None:
                raise MoveError("only the dealer chooses Bob's Hat, and that is done: now bid (e.g. blue+fewest)")
            code = self._parse_bid(t)
            action = bh.BID_BASE + code
            if not legal[action]:
                if code == 0:
                    if not self.cfg.no_bid:
                        raise MoveError("bidding nothing needs the no-bid option (--no-bid): bid at least one card")
                    raise MoveError("you have already used your no-bid this game: bid at least one card")
                if code // 8 == 2:
                    raise MoveError("fewest twice (double fewest) needs the --double-fewest option")
                raise MoveError(f"the bid {self.bid_label(code)} is not allowed")
            return action
        # Card play
        if card is None:
            if hat is not None:
                raise MoveError("Bob's Hat was chosen at the start of the hand: now play a card (e.g. blue14)")
            if self._looks_like_bid(t):
                raise MoveError("the bidding is over: now play a card (e.g. blue14)")
            raise MoveError(f"{text.strip()!r} is not a card: write a suit and a rank, like blue14 or red3")
        if not state.hands[0, seat, card]:
            raise MoveError(f"you do not hold {bh_card_str(card)}")
        if not legal[card]:
            led = BH_SUITS[int(state.led_suit[0])]
            have = " ".join(bh_card_str(c) for c in np.flatnonzero(legal[: bh.N_CARDS]))
            raise RenegeQuestion(
                card, f"you must follow the suit led, {led}: you hold {have}", allowed=self.cfg.renege_mode
            )
        return card

    @staticmethod
    def _parse_hat(t: str) -> int | None:
        m = re.fullmatch(r"(?:hat\s*)?([+-])\s*(?:10)?|hat\s*(plus|minus)|(plus|minus)", t)
        if not m:
            return None
        sign = m.group(1) or m.group(2) or m.group(3)
        return bh.HAT_PLUS if sign in ("+", "plus") else bh.HAT_MINUS

    @staticmethod
    def _parse_card(t: str) -> int | None:
        m = re.fullmatch(r"([a-z]+)\s*([0-9]{1,2})", t)
        if not m:
            return None
        suits = [s for s, name in enumerate(BH_SUITS) if name.startswith(m.group(1))]
        rank = int(m.group(2))
        if len(suits) != 1 or not 1 <= rank <= BH_RANKS:
            return None
        return bh_card(suits[0], rank)

    @staticmethod
    def _looks_like_bid(t: str) -> bool:
        try:
            PlayText._parse_bid(t)
        except MoveError:
            return False
        return True

    @staticmethod
    def _parse_bid(t: str) -> int:
        t = re.sub(r"^bid\s*:?\s*", "", t)
        if t in ("none", "nothing", "no bid", "no-bid", "no_bid", "nobid", "pass", "[]", "no"):
            return 0
        tokens = [x for x in re.split(r"[+,\s&]+", t) if x]
        if not tokens:
            raise MoveError("type a bid: any of blue, red, black, fewest joined by + (e.g. blue+fewest)")
        most: list[str] = []
        fewest = 0
        for tok in tokens:
            tok = tok.removeprefix("most_").removeprefix("most-").removeprefix("most")
            if tok in ("double_fewest", "double-fewest", "doublefewest", "2fewest", "fewest2"):
                fewest += 2
                continue
            if tok in ("fewest", "few", "f"):
                fewest += 1
                continue
            match = [name for name in BH_SUITS if tok and name.startswith(tok)]
            if len(match) != 1:
                raise MoveError(
                    f"{tok!r} is not a bid card: bid cards are blue, red, black and fewest (e.g. blue+fewest)"
                )
            if "most_" + match[0] in most:
                raise MoveError(f"you have one 'most {match[0]}' bid card: it can be bid once")
            most.append("most_" + match[0])
        if fewest > 2:
            raise MoveError("fewest can be bid twice at most (double fewest)")
        return bh.bid_code(most, fewest)

    # -- events
    def event(self, snap: bh.State, action: int, human: int) -> str | None:
        """One line for what the player to act in ``snap`` just did (None for a card: tricks are shown whole)."""
        p = int(snap.cur[0])
        who = seat_name(p, human)
        ph = int(snap.phase[0])
        if ph == bh.HAT:
            return f"{who}, the dealer, puts Bob's Hat in the centre at {'+10' if action == bh.HAT_PLUS else '-10'}."
        if ph == bh.BID:
            if self.cfg.secret_bidding and p != human:
                return f"{who} has bid (secret)."
            return f"{who} bids {self.bid_label(action - bh.BID_BASE)}."
        return None

    def after_step(self, snap: bh.State, state: bh.State, human: int) -> list[str]:
        """Lines for what a step revealed beyond its own action (secret bids shown together)."""
        if (
            self.cfg.secret_bidding
            and int(snap.phase[0]) == bh.BID
            and int(snap.n_bids[0]) == self.cfg.players - 1
            and int(state.phase[0]) == bh.PLAY
        ):
            bids = ", ".join(
                f"{seat_name(p, human)} {self.bid_label(int(state.bids[0, p]))}" for p in range(self.cfg.players)
            )
            return [f"Bids revealed: {bids}."]
        return []

    def trick_line(
        self, cards: np.ndarray, leader: int, winner: int, human: int, n_trick: int, holder: int = -1
    ) -> str:
        """The trick in play order and who won it; ``holder``: who held Bob's Hat before it (-1: the centre).

        A trick with a hat card moves Bob's Hat to its winner, who "takes"
        it, or "keeps" it when it was already theirs.
        """
        line = self.trick_play(cards, leader, winner, human, n_trick)
        hats = [bh_card_str(int(c)) for c in cards if c >= 0 and BH_IS_HAT_CARD[int(c)]]
        if hats:
            verb = "keeps" if winner == holder else "takes"
            line += f" and {verb} Bob's Hat ({' '.join(hats)} in the trick)"
        return line + "."

    def hand_header(self, state: bh.State, human: int) -> str:
        return f"{self.hand_heading(state, human)}, trump {BH_TRUMPS[int(state.trump[0])]}"

    # -- scoring explained
    def summary(self, snap: bh.State, res: Any, after: bh.State, human: int) -> list[str]:
        """The hand's scoring, bid by bid: ``snap`` the state before the hand's last card, ``res`` that
        step's result (the hand's closing facts), ``after`` the state after it (the totals)."""
        P = self.cfg.players
        taken = res.hand_taken[0].astype(np.int64)  # (P, 3)
        total = taken.sum(axis=1)
        size = int(snap.hand_size[0])
        hat, holder = int(snap.hat_value[0]), int(res.role_holder[0])
        bids = snap.bids[0].astype(np.int64)
        scores = res.rewards[0].astype(np.int64)
        hat_txt = "stayed in the centre" if holder < 0 else f"ends with {seat_name(holder, human)}"
        lines = [f"Hand scoring ({plural(size, 'card')} each; Bob's Hat {hat:+d} {hat_txt})"]
        for p in range(P):
            code = int(bids[p])
            per_suit = ", ".join(f"{int(taken[p, s])} {BH_SUITS[s]}" for s in range(3))
            took = plural(int(total[p]), "card")
            lines.append(f"{seat_name(p, human)}: bid {self.bid_label(code)}; took {took} ({per_suit})")
            if code == 0:
                lines.append("    no bid this hand: scores 0, Bob's Hat included")
            for s in range(3):
                if code >> s & 1:
                    lines.append("    " + self._most_line(p, s, taken, code, human))
            if code // 8:
                lines.append("    " + self._fewest_line(p, total, code // 8, size, human))
            if holder == p and code != 0:
                lines.append(f"    Bob's Hat: held at the end of the hand: {hat:+d}")
            cum = int(after.scores[0, p])
            lines.append(f"    hand {int(scores[p]):+d}, total {cum}")
        return lines

    def _points(self, p: int, code: int, taken: np.ndarray, size: int) -> int:
        """Points of one bid of seat ``p`` alone, by the core's own scoring."""
        bids = np.full((1, self.cfg.players), 1, dtype=np.int64)
        bids[0, p] = code
        pts = bh.score_hand(self.cfg, bids, taken[None], np.zeros(1), np.full(1, -1), np.array([size]))
        return int(pts[0, p])

    def _most_line(self, p: int, s: int, taken: np.ndarray, code: int, human: int) -> str:
        suit = BH_SUITS[s]
        mine = int(taken[p, s])
        others = [(int(taken[q, s]), q) for q in range(self.cfg.players) if q != p]
        best, best_seat = max(others)
        pts = self._points(p, 1 << s, taken, 1)
        if int(taken[:, s].sum()) == 0:
            return f"most {suit}: no {suit} card was dealt this hand, so the bid is made: {pts:+d}"
        if mine > best:
            return f"most {suit}: made, {mine} {suit} against at most {best} for anyone else: +5 + {mine} = {pts:+d}"
        rival = seat_name(best_seat, human)
        why = "ties lose" if best == mine else "more"
        if self.cfg.negative_scoring:
            return f"most {suit}: missed, {mine} {suit} but {rival} took {best} ({why}): -5 - {mine} = {pts:+d}"
        return f"most {suit}: missed, {mine} {suit} but {rival} took {best} ({why}): {pts:+d}"

    def _fewest_line(self, p: int, total: np.ndarray, times: int, size: int, human: int) -> str:
        mine = int(total[p])
        others = [(int(total[q]), q) for q in range(self.cfg.players) if q != p]
        low, low_seat = min(others)
        taken = np.zeros((self.cfg.players, 3), dtype=np.int64)
        taken[:, 0] = total
        pts = self._points(p, 8 * times, taken, size)
        name = "double fewest" if times == 2 else "fewest"
        worth = f"2 x {size} = {pts:+d}" if times == 2 else f"{pts:+d} (the hand size)"
        if mine < low:
            return f"{name}: made, {plural(mine, 'card')} against at least {low} for anyone else: {worth}"
        why = "ties lose" if low == mine else "fewer"
        return f"{name}: missed, {plural(mine, 'card')} but {seat_name(low_seat, human)} took {low} ({why}): {worth}"

    def renege_lines(self, snap: bh.State, card: int, human: int) -> list[str]:
        p = int(snap.cur[0])
        led = BH_SUITS[int(snap.led_suit[0])]
        return [
            f"{seat_name(p, human)} reneged with {bh_card_str(card)} (did not follow {led}): {bh.RENEGE_PENALTY} "
            "points; the same dealer deals the hand again."
        ]

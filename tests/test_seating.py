"""Seat dispatch: one call per agent and step on its rows, and the public void record for those that ask."""

from __future__ import annotations

import numpy as np

from bobshat_env.core import rng
from bobshat_env.core.cards import BOBS_HAT_DECK
from bobshat_env.core.tricks import trick_voids
from bobshat_env.games import make_game
from bobshat_env.seating import SeatDispatch


class Spy:
    """Plays its first legal action and notes what each call got."""

    def __init__(self, needs_public: bool):
        self.needs_public = needs_public
        self.calls: list[tuple[np.ndarray, dict | None]] = []

    def act(self, obs, mask, seat, public=None):
        self.calls.append((seat.copy(), public))
        return np.argmax(mask, axis=1)


def test_each_agent_acts_once_on_its_rows_and_only_public_agents_get_the_record():
    game = make_game("bobs_hat", players=4, hands=2)
    B = 16
    state = game.init(rng.game_keys(3, np.arange(B), 0))
    plain, public = Spy(False), Spy(True)
    agents = [plain, public]
    seats = SeatDispatch(game, B, agents)
    assert seats.tracker is not None and SeatDispatch(game, B, [plain]).tracker is None
    who_of_seat = np.array([0, 1, 1, 0])  # each agent in two seats
    shown = 0
    void = np.zeros((B, 4, 3), dtype=bool)  # the record, kept here from the actions
    while not game.done(state).all():
        active = ~game.done(state)
        mask, obs, seat = game.legal_action_mask(state), game.observe(state), state.cur.astype(np.int64)
        rows = np.nonzero(active)[0]
        out = np.full(B, -1, dtype=np.int64)
        for agent in agents:
            agent.calls.clear()
        seats.act(agents, who_of_seat[seat[rows]], rows, obs, mask, seat, out=out)
        assert (out[rows] >= 0).all() and (out[~active] == -1).all()
        for j, agent in enumerate(agents):
            mine = rows[who_of_seat[seat[rows]] == j]
            assert len(agent.calls) == (1 if mine.size else 0)  # several seats, one call
            if mine.size:
                np.testing.assert_array_equal(agent.calls[0][0], seat[mine])
        assert all(p is None for _, p in plain.calls)
        for _, p in public.calls:  # the voids shown so far this hand, by absolute seat
            mine = rows[who_of_seat[seat[rows]] == 1]
            np.testing.assert_array_equal(p["void"], void[mine])
            shown_now = trick_voids(state.trick, state.led_suit, BOBS_HAT_DECK)[mine]
            assert (p["void"] | ~shown_now).all()  # the current trick's among them
            shown += int(p["void"].sum())
        seats.before_step(state, out, active)
        g = np.nonzero(active & (state.phase == game.module.PLAY) & (state.n_in_trick > 0))[0]
        off = g[BOBS_HAT_DECK.suit_of[out[g]] != state.led_suit[g]]
        void[off, state.cur[off], state.led_suit[off]] = True  # a card off the suit led shows a void
        res = game.step(state, np.where(active, out, 0), active=active, legal=mask)
        void[res.new_hand] = False
        seats.after_step(res.new_hand)
    assert shown > 0

"""PettingZoo AEC environment for Where's Bob's Hat?.

``env(**options)`` is ``raw_env`` wrapped in PettingZoo's order-enforcing
wrapper; the options are those of :class:`~bobshat_env.core.config.BobsHatConfig`
(``players``, ``hands``, ``double_fewest``, ``no_bid``, ``secret_bidding``,
``negative_scoring``, ``renege_mode``, ``first_dealer``) plus
``render_mode`` (``"ansi"`` or ``"human"``) and ``view``. See
:mod:`bobshat_env.aec` for spaces and rewards.
"""

from __future__ import annotations

from typing import Any

from .aec import CardGameEnv, OrderEnforcing


class raw_env(CardGameEnv):  # PettingZoo's naming convention
    metadata = {**CardGameEnv.metadata, "name": "bobs_hat_v0"}

    def __init__(self, render_mode: str | None = None, view: str = "private", **options: Any) -> None:
        super().__init__("bobs_hat", render_mode=render_mode, view=view, **options)


def env(**kwargs: Any) -> OrderEnforcing:
    """The AEC env wrapped as PettingZoo recommends (order enforcing, see
    :class:`~bobshat_env.aec.OrderEnforcing`)."""
    return OrderEnforcing(raw_env(**kwargs))

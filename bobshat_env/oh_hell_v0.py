"""PettingZoo AEC environment for Oh Hell.

``env(**options)`` is ``raw_env`` wrapped in PettingZoo's order-enforcing
wrapper; the options are those of :class:`~bobshat_env.core.config.OhHellConfig`
(``players`` 3-7, ``deal_style``, ``scoring``, ``first_dealer``) plus
``render_mode`` (``"ansi"`` or ``"human"``) and ``view``. Actions: the 52
cards (OpenSpiel's ids) then bids 0-10 at offset 52. See
:mod:`bobshat_env.aec` for spaces and rewards.
"""

from __future__ import annotations

from typing import Any

from .aec import CardGameEnv, OrderEnforcing


class raw_env(CardGameEnv):  # PettingZoo's naming convention
    metadata = {**CardGameEnv.metadata, "name": "oh_hell_v0"}

    def __init__(self, render_mode: str | None = None, view: str = "private", **options: Any) -> None:
        super().__init__("oh_hell", render_mode=render_mode, view=view, **options)


def env(**kwargs: Any) -> OrderEnforcing:
    """The AEC env wrapped as PettingZoo recommends (order enforcing, see
    :class:`~bobshat_env.aec.OrderEnforcing`)."""
    return OrderEnforcing(raw_env(**kwargs))

"""The batched rules core: NumPy and numba only, nothing above it.

Every game is one module here, ``bobshat_env/core/<name>.py``, that holds
its rules and answers, under the same names in every game, what the rest of
the package asks of a game at this floor (``NAME``, ``DECK``, ``card_str``,
``layout`` / ``observe`` / ``decode``, ``public_state``, the suit-symmetry
tables...; see the end of :mod:`.bobs_hat`). :func:`game_module` finds it by
name, so core helpers such as :mod:`.symmetry` never branch on a game's name.
"""

from __future__ import annotations

import importlib
from types import ModuleType


def game_module(name: str) -> ModuleType:
    """The core module of game ``name`` (``bobshat_env.core.<name>``, which sets ``NAME = name``).

    ValueError if there is none: a game module is one that declares its own
    name, so ``"tricks"`` or ``"../x"`` are refused, not imported as games.
    """
    if isinstance(name, str) and name.isidentifier():
        path = f"{__name__}.{name}"
        try:
            module = importlib.import_module(path)
        except ModuleNotFoundError as err:
            if err.name != path:  # the game module exists but something it imports does not
                raise
        else:
            if getattr(module, "NAME", None) == name:
                return module
    raise ValueError(f"no game {name!r} in bobshat_env.core")

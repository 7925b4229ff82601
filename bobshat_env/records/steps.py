"""Every state a replay passes through, for a viewer that steps through a record card by card.

The replay steps its B = 1 states through these functions; only while
:func:`watching` is active (``replay_steps``, used by ``bobshat serve``) do they
keep a copy of each state, so the plain replay pays nothing for it.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class ReplayStep:
    """One action of a replayed record, with the B = 1 states around it (:func:`replay_steps`).

    entry: index into the record's ``hands``. action: None for the deal that
    starts a hand entry (``before`` is then None and ``after`` the fresh
    hand). result: the core's StepResult of the action.
    """

    entry: int
    before: Any
    action: int | None
    result: Any
    after: Any


class _Steps(list):
    """The steps a replay took, kept while :func:`watching` is active (see ``_WATCH``)."""

    entry = 0


# Set only inside watching(): the replay then keeps every state it passes through.
_WATCH: contextvars.ContextVar[_Steps | None] = contextvars.ContextVar("bobshat_replay_steps", default=None)


def step_one(module: Any, cfg: Any, state: Any, action: int) -> Any:
    """Step a B = 1 state by one action with the game's core (no automatic deal); the StepResult."""
    watch = _WATCH.get()
    before = state.copy() if watch is not None else None
    res = module.step(cfg, state, np.array([action], dtype=np.int64), auto_deal=False)
    if watch is not None:
        watch.append(ReplayStep(watch.entry, before, action, res, state.copy()))
    return res


def watch_deal(entry: int, state: Any) -> None:
    """Note the fresh deal of hand entry ``entry`` (when watching)."""
    watch = _WATCH.get()
    if watch is not None:
        watch.entry = entry
        watch.append(ReplayStep(entry, None, None, None, state.copy()))


@contextlib.contextmanager
def watching() -> Iterator[list[ReplayStep]]:
    """Keep, in order, a :class:`ReplayStep` for each deal and action replayed inside the block."""
    steps = _Steps()
    token = _WATCH.set(steps)
    try:
        yield steps
    finally:
        _WATCH.reset(token)

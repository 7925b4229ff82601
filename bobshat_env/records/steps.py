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
    """The steps a replay took, kept while :func:`watching` is active (see ``_WATCH``).

    ``light``: keep only each action (``before``, ``result`` and ``after`` None) and
    each deal's state, and the core module and config the actions were stepped with
    (``module``, ``cfg``): what a caller that steps the actions again itself needs
    (``train.imitate`` steps many records' hands at once through the batched core).
    """

    entry = 0
    light = False
    module: Any = None
    cfg: Any = None


# Set only inside watching(): the replay then keeps every state it passes through.
_WATCH: contextvars.ContextVar[_Steps | None] = contextvars.ContextVar("bobshat_replay_steps", default=None)


def step_one(module: Any, cfg: Any, state: Any, action: int) -> Any:
    """Step a B = 1 state by one action with the game's core (no automatic deal); the StepResult."""
    watch = _WATCH.get()
    if watch is not None and watch.light:
        watch.module, watch.cfg = module, cfg
        watch.append(ReplayStep(watch.entry, None, action, None, None))
        return module.step(cfg, state, np.array([action], dtype=np.int64), auto_deal=False)
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
def watching(light: bool = False) -> Iterator[_Steps]:
    """Keep, in order, a :class:`ReplayStep` for each deal and action replayed inside the block (``light``:
    the actions without the states around them; see :class:`_Steps`)."""
    steps = _Steps()
    steps.light = light
    token = _WATCH.set(steps)
    try:
        yield steps
    finally:
        _WATCH.reset(token)

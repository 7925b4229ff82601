"""Threads of a training process: torch's count set so that it lasts beside numba's.

The engine's kernels run on numba's threads (:mod:`bobshat_env.core.compiled`), the network on torch's; both
use the same OpenMP runtime, so the order in which they are started matters.
"""

from __future__ import annotations

import numba
import torch


def set_torch_threads(n: int) -> None:
    """``torch.set_num_threads(n)`` that lasts: numba's threads are started first.

    They share torch's OpenMP runtime (:mod:`bobshat_env.core.compiled`), and
    starting them (the first parallel kernel, e.g. a step at B >= 512, or
    ``numba.get_num_threads()``) sets the runtime's thread count to numba's,
    undoing an earlier ``torch.set_num_threads``: ``bobshat train``'s
    ``torch_threads: 1`` meant two threads from the engine's first step on,
    more CPU for the same wall time (docs/results/engineering.md, "Torch
    threads after numba's").
    """
    numba.get_num_threads()
    torch.set_num_threads(n)

"""Bots for both games behind one batched interface (:class:`agents.base.Agent`)."""

from pathlib import Path

from bobshat_env.core.compiled import drop_stale_caches

# before any bot kernel loads: their cache must not outlive a change to a helper they compile in
drop_stale_caches(Path(__file__).parent, Path(__file__).parent.parent / "bobshat_env" / "core")

from .base import Agent, RandomAgent, sample_masked  # noqa: E402 - after the cache check
from .registry import available, make_agent, parse_spec, register  # noqa: E402

__all__ = ["Agent", "RandomAgent", "sample_masked", "available", "make_agent", "parse_spec", "register"]

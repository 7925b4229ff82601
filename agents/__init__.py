"""Bots for both games behind one batched interface (:class:`agents.base.Agent`)."""

from .base import Agent, RandomAgent, sample_masked
from .registry import available, make_agent, parse_spec, register

__all__ = ["Agent", "RandomAgent", "sample_masked", "available", "make_agent", "parse_spec", "register"]

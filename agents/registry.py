"""Agents by name, so the command line and configs can say ``random`` or
``pimc:worlds=64``.

A spec is ``NAME`` or ``NAME:key=value,key=value``; values are parsed as int,
float or bool where they look like one. ``register`` adds a factory.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .base import Agent, RandomAgent

_FACTORIES: dict[str, Callable[..., Agent]] = {}


def register(name: str, factory: Callable[..., Agent]) -> None:
    """Make ``factory(game, seed=..., **options)`` available as agent ``name``."""
    _FACTORIES[name] = factory


def available() -> list[str]:
    return sorted(_FACTORIES)


def _parse_value(text: str) -> Any:
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"pimc:worlds=64"`` -> ``("pimc", {"worlds": 64})``; ValueError if malformed."""
    name, _, rest = spec.strip().partition(":")
    options: dict[str, Any] = {}
    if rest and name != "ppo":
        for part in rest.split(","):
            key, eq, value = part.partition("=")
            if not eq or not key:
                raise ValueError(f"bad agent option {part!r} in {spec!r}: expected key=value")
            options[key.strip()] = _parse_value(value.strip())
    elif rest:
        options["path"] = rest
    return name, options


def make_agent(spec: str, game: Any = None, seed: int | None = None) -> Agent:
    """Build an agent from a spec for a game; unknown names list the known ones."""
    name, options = parse_spec(spec)
    if name not in _FACTORIES:
        raise ValueError(f"unknown agent {name!r}; available: {', '.join(available())}")
    try:
        return _FACTORIES[name](game, seed=seed, **options)
    except TypeError as err:
        raise ValueError(f"bad options for agent {name!r}: {err}") from err


register("random", RandomAgent)

"""Agents by name, so the command line and configs can say ``random`` or
``pimc:worlds=64``.

A spec is ``NAME`` or ``NAME:key=value,key=value``; values are parsed as int,
float or bool where they look like one. ``register`` adds a factory.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from bobshat_env.games import DESCRIPTIONS, load

from .base import Agent, RandomAgent

_FACTORIES: dict[str, Callable[..., Agent]] = {}
_HELP: dict[str, tuple[str, str]] = {}  # name -> (spec as typed, what it is)


def register(name: str, factory: Callable[..., Agent], spec: str = "", help: str = "") -> None:  # noqa: A002
    """Make ``factory(game, seed=..., **options)`` available as agent ``name``.

    ``spec`` shows how it is written with its options (default ``name``) and
    ``help`` what it is (default the first line of the factory's docstring);
    :func:`describe` lists them for ``--agents`` help.
    """
    _FACTORIES[name] = factory
    doc = (getattr(factory, "__doc__", None) or "").strip().splitlines()
    _HELP[name] = (spec or name, help or (doc[0].rstrip(".") if doc else ""))


def available() -> list[str]:
    return sorted(_FACTORIES)


def describe() -> list[str]:
    """One line per registered agent, ``spec: what it is``, and the composite form (for help texts)."""
    lines = [f"{_HELP[n][0]}: {_HELP[n][1]}" if _HELP[n][1] else _HELP[n][0] for n in available()]
    return lines + ["bid=SPEC+play=SPEC: one agent's hat choices and bids with another's card play"]


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


_OPTION = re.compile(r"[A-Za-z_]\w*=[^,:+]*")


def split_specs(text: str) -> list[str]:
    """Split a comma-separated list of agent specs, keeping each spec's own options.

    ``"pimc:worlds=32,playout=strong,random"`` -> ``["pimc:worlds=32,playout=strong", "random"]``:
    a ``key=value`` piece that follows a spec with options continues it (a
    composite ``bid=X+play=Y`` always starts a new spec).
    """
    specs: list[str] = []
    for piece in (p.strip() for p in text.split(",")):
        if not piece:
            continue
        continues = specs and ":" in specs[-1] and _OPTION.fullmatch(piece) and not piece.startswith(("bid=", "play="))
        if continues:
            specs[-1] += "," + piece
        else:
            specs.append(piece)
    return specs


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
    from .composite import is_composite, make_composite  # noqa: PLC0415

    if is_composite(spec):  # "bid=strong+play=pimc": bidding and card play by two agents
        return make_composite(spec, game, seed, make_agent)
    name, options = parse_spec(spec)
    if name not in _FACTORIES:
        raise ValueError(f"unknown agent {name!r}; available: {', '.join(available())}")
    try:
        return _FACTORIES[name](game, seed=seed, **options)
    except TypeError as err:
        raise ValueError(f"bad options for agent {name!r}: {err}") from err


register("random", RandomAgent, help="uniformly random legal actions")


def _ppo(game: Any = None, seed: int | None = None, **options: Any) -> Agent:
    """``ppo:PATH``: a trained policy; torch is imported only when one is made."""
    from .ppo_agent import make_ppo_agent  # noqa: PLC0415

    return make_ppo_agent(game, seed=seed, **options)


register(
    "ppo", _ppo, spec="ppo:PATH[,sample=true|false]", help="a trained policy (checkpoint), greedy unless sample=true"
)


def _game_agent(name: str) -> Callable[..., Agent]:
    """A factory for agent ``name`` that builds the class the game's description names (imported on first use)."""

    def factory(game: Any = None, seed: int | None = None, **options: Any) -> Agent:
        entry = game.agent_class(name) if hasattr(game, "agent_class") else None
        if entry is None:
            having = [d.name for d in DESCRIPTIONS if name in dict(d.agents)]
            raise ValueError(f"agent {name!r} needs a game ({', '.join(having)}), got {getattr(game, 'name', None)!r}")
        return load(entry)(game, seed=seed, **options)

    return factory


# The game-specific agents: every name some game's description lists (simple, strong, pimc).
_GAME_AGENT_HELP = {
    "simple": ("simple", "a rule-of-thumb heuristic: bids from card counts"),
    "strong": ("strong", "the stronger heuristic: counts unseen cards and voids, bids by expected tricks"),
    "pimc": (
        "pimc[:worlds=N,playout=P,objective=O,search=S]",
        "Perfect Information Monte Carlo search over sampled deals, slow; options (defaults first): "
        "worlds 16, playout simple|strong|random, objective diff|score, search all|play",
    ),
}
for _name in dict.fromkeys(n for d in DESCRIPTIONS for n, _ in d.agents):
    _spec, _help = _GAME_AGENT_HELP.get(_name, (_name, "an agent of the game's own"))
    register(_name, _game_agent(_name), spec=_spec, help=_help)


def _search(game: Any = None, seed: int | None = None, **options: Any) -> Agent:
    """``search:policy=PATH,...``: determinized playouts with a trained policy (torch imported on use)."""
    from .search import make_search_agent  # noqa: PLC0415

    return make_search_agent(game, seed=seed, **options)


register(
    "search",
    _search,
    spec="search:policy=PATH[,worlds=N,...]",
    help="decision-time search: sampled deals played out by a trained policy at every seat (agents/search.py)",
)

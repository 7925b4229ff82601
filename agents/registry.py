"""Agents by name, so the command line and configs can say ``random`` or
``pimc:worlds=64``.

A spec is ``NAME`` or ``NAME:key=value,key=value``; values are parsed as int,
float or bool where they look like one. ``register`` adds a factory.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from bobshat_env.games import DESCRIPTIONS, load

from .base import Agent, RandomAgent

if TYPE_CHECKING:
    from bobshat_env.games import Game

_FACTORIES: dict[str, Callable[..., Agent]] = {}
_HELP: dict[str, tuple[str, str]] = {}  # name -> (spec as typed, what it is)


def register(name: str, factory: Callable[..., Agent], spec: str = "", help: str = "") -> None:
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


def parse_value(text: str) -> Any:
    """An option's value as written in a spec (``true``/``false``, an integer, a number, else the text)."""
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
            options[key.strip()] = parse_value(value.strip())
    elif rest:
        options["path"] = rest
    return name, options


_RESERVED = ("seed", "game")  # set by the caller (the command's --seed, the table), never by a spec
_UNEXPECTED = re.compile(r"unexpected keyword argument '(\w+)'")
_QUALNAME = re.compile(r"^[\w.<>]+[(][)] ")  # "SimpleAgent.__init__() " at the start of a TypeError


def make_agent(spec: str, game: Game | None = None, seed: int | None = None) -> Agent:
    """Build an agent from a spec for a game; unknown names list the known ones."""
    from .composite import is_composite, make_composite

    if is_composite(spec):  # "bid=strong+play=pimc": bidding and card play by two agents
        return make_composite(spec, game, seed, make_agent)
    name, options = parse_spec(spec)
    if name not in _FACTORIES:
        raise ValueError(f"unknown agent {name!r}; available: {', '.join(available())}")
    for key in FILE_OPTIONS.get(name, ()):  # a shipped policy by its name: ppo:bobs_hat_4p
        if key in options:
            options[key] = _resolve_file(str(options[key]))
    for key in _RESERVED:
        if key in options:
            raise ValueError(f"agent {name!r}: {key} is not an agent option (the command or the table sets it)")
    try:
        return _FACTORIES[name](game, seed=seed, **options)
    except TypeError as err:
        # Python's words name internal functions (factory(), SimpleAgent.__init__()): say it in the spec's terms
        unexpected = _UNEXPECTED.search(str(err))
        if unexpected:
            raise ValueError(f"agent {name!r} has no option {unexpected.group(1)!r}") from err
        raise ValueError(f"bad options for agent {name!r}: {_QUALNAME.sub('', str(err))}") from err


def count_error(flag: str, given: int, players: int) -> str:
    """The message for a list of agent specs of the wrong length (``--agents names 1 agent but ...``)."""
    agents = "agent" if given == 1 else "agents"
    return f"{flag} names {given} {agents} but the game has {players} players (one spec per seat)"


# ==========================================================================
# What a web request may ask for (``bobshat serve``; the command line may ask for more)
#: Every option a web request may set, per agent, with (least, most) for the numeric ones that set the
#: cost of a move (None: any value the agent itself accepts). One bot move at these caps took at most
#: about 3.5 s (pimc, strong playouts, 7-player Oh Hell) and 1.4 s (search, 7-player Oh Hell) on a
#: 2-core machine at load 14; the idle machine is several times faster.
REQUEST_OPTIONS: dict[str, dict[str, tuple[float, float] | None]] = {
    "random": {},
    "simple": {},
    "strong": {},
    "pimc": {"worlds": (1, 256), "max_rows": (1024, 40000), "playout": None, "objective": None, "search": None},
    "search": {
        "policy": None,
        "worlds": (1, 64),
        "top_k": (1, 4),
        "horizon": (0, 16),
        "oversample": (1, 4),
        "max_rows": (1024, 20000),
        "certain": None,
        "z": None,
        "bids": None,
        "playout": None,
        "belief": None,
        "inference": None,
        "temper": None,
        "value_scale": None,
    },
    "ppo": {"path": None, "sample": None},  # (not device: the server's, not the page's, to choose)
    # ISMCTS at 1,000 simulations: 1.8 s of CPU for the first Oh Hell bid, one decision alone (docs/results/ismcts.md)
    "ismcts": {"sims": (1, 1000), "uct_c": None, "objective": None, "depth": None},  # (a depth limit only saves)
    "puct": {  # (not ms: a time budget is the server's to give; not cards: a file the server does not map)
        "policy": None,
        "sims": (1, 256),
        "worlds": (1, 64),
        "parallel": (1, 16),
        "oversample": (1, 4),
        "c_puct": None,
        "leaf": None,
        "bids": None,
        "inference": None,
        "temper": None,
        "value_scale": None,
    },
}
#: A search move plays worlds x top_k playouts: their product is capped too (the default 32 x 3 = 96 fits).
REQUEST_SEARCH_PLAYOUTS = 128
#: The options of an agent that name a file, per agent (ppo:PATH, search:policy=PATH).
FILE_OPTIONS: dict[str, tuple[str, ...]] = {"ppo": ("path",), "search": ("policy",), "puct": ("policy",)}


def _one_part(spec: str) -> tuple[str, dict[str, Any]]:
    name, options = parse_spec(spec)
    if name == "ppo" and "path" in options:  # ppo:PATH,sample=true: the options follow the path
        path, *extra = str(options["path"]).split(",")
        options = {"path": path}
        for piece in extra:
            key, eq, value = piece.partition("=")
            if not eq or not key.strip():
                raise ValueError(f"bad ppo option {piece!r}: expected key=value after the path")
            options[key.strip()] = parse_value(value.strip())
    return name, options


def spec_parts(spec: str) -> list[tuple[str, dict[str, Any]]]:
    """Every agent a spec builds, composites opened (``bid=X+play=Y`` -> X's and Y's); ValueError if malformed.

    A ``ppo:PATH,sample=true`` part is split into ``path`` and its options.
    """
    from .composite import is_composite, parse_composite

    parts = list(parse_composite(spec).values()) if is_composite(spec) else [spec]
    return [_one_part(part) for part in parts]


def _resolve_file(path: str) -> str:
    """A file option as the agent reads it: a path, or a shipped policy's name (``bobs_hat_4p``) as its file.
    The ``ppo:PATH,sample=true`` form keeps its options after the path."""
    from .shipped import resolve_checkpoint

    head, comma, tail = path.partition(",")
    return resolve_checkpoint(head) + comma + tail


def spec_files(spec: str) -> list[str]:
    """The files a spec would read (checkpoints, shipped names resolved), nested parts included; ValueError if
    malformed."""
    parts = spec_parts(spec)
    return [_resolve_file(str(opts[key])) for name, opts in parts for key in FILE_OPTIONS.get(name, ()) if key in opts]


def spec_checkpoints(what: str, text: str | None) -> list[tuple[str, str]]:
    """The checkpoints a comma-separated list of specs reads and their sidecars, each named ``what`` (the
    option, ``--agents``) or ``the sidecar of WHAT``: the inputs no output may be written over
    (:func:`bobshat_env.paths.check_distinct`). A malformed spec adds nothing: it is refused when made."""
    from bobshat_env.paths import checkpoint_files

    found: list[tuple[str, str]] = []
    for spec in split_specs(text) if isinstance(text, str) else []:
        try:
            files = spec_files(spec)
        except ValueError:
            continue
        for path in files:
            found += checkpoint_files(what, path)
    return found


def map_spec_files(spec: str, change: Callable[[str], str]) -> str:
    """``spec`` with every file it names replaced by ``change(file)`` (composites and ppo options kept)."""
    from .composite import is_composite, parse_composite

    def one(part: str) -> str:
        name, options = _one_part(part)
        keys = FILE_OPTIONS.get(name, ())
        if not any(k in options for k in keys):
            return part
        options = {k: change(str(v)) if k in keys else v for k, v in options.items()}
        text = {k: (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in options.items()}
        if name == "ppo":
            return ",".join([f"ppo:{text.pop('path')}", *(f"{k}={v}" for k, v in text.items())])
        return f"{name}:" + ",".join(f"{k}={v}" for k, v in text.items())

    if is_composite(spec):
        return "+".join(f"{role}={one(sub)}" for role, sub in parse_composite(spec).items())
    return one(spec)


def check_request_spec(spec: str) -> None:
    """Refuse (ValueError naming the option and its range) a spec a web request may not ask for.

    An agent or option not in :data:`REQUEST_OPTIONS` is refused (a new
    agent's options must be given caps here before a request can set them);
    a numeric option outside its range, and a search whose worlds x top_k
    exceeds :data:`REQUEST_SEARCH_PLAYOUTS`, too. Files are the caller's to
    check (:func:`spec_files`).
    """
    for name, options in spec_parts(spec):
        allowed = REQUEST_OPTIONS.get(name)
        if name not in _FACTORIES:
            raise ValueError(f"unknown agent {name!r}; available: {', '.join(available())}")
        if allowed is None:
            raise ValueError(f"agent {name!r} cannot be asked for over the web")
        for key, value in options.items():
            if key not in allowed:
                known = ", ".join(allowed) or "none"
                raise ValueError(f"agent {name!r}: option {key!r} cannot be set over the web (its options: {known})")
            bounds = allowed[key]
            if bounds is None:
                continue
            lo, hi = bounds
            if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
                raise ValueError(f"agent {name!r}: {key} must be an integer from {lo:g} to {hi:g} here, got {value!r}")
        if name == "search":
            worlds, top_k = options.get("worlds", 32), options.get("top_k", 3)
            if worlds * top_k > REQUEST_SEARCH_PLAYOUTS:
                raise ValueError(
                    f"agent 'search': worlds x top_k is {worlds} x {top_k} = {worlds * top_k}; "
                    f"at most {REQUEST_SEARCH_PLAYOUTS} playouts per move here"
                )


register("random", RandomAgent, help="uniformly random legal actions")


def _ppo(game: Game | None = None, seed: int | None = None, **options: Any) -> Agent:
    """``ppo:PATH``: a trained policy; torch is imported only when one is made."""
    from .ppo_agent import make_ppo_agent

    return make_ppo_agent(game, seed=seed, **options)


register(
    "ppo", _ppo, spec="ppo:PATH[,sample=true|false]", help="a trained policy (checkpoint), greedy unless sample=true"
)


def _game_agent(name: str) -> Callable[..., Agent]:
    """A factory for agent ``name`` that builds the class the game's description names (imported on first use)."""

    def factory(game: Game | None = None, seed: int | None = None, **options: Any) -> Agent:
        entry = game.agent_class(name) if game is not None else None
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


def _search(game: Game | None = None, seed: int | None = None, **options: Any) -> Agent:
    """``search:policy=PATH,...``: determinized playouts with a trained policy (torch imported on use)."""
    from .search import make_search_agent

    return make_search_agent(game, seed=seed, **options)


register(
    "search",
    _search,
    spec="search:policy=PATH[,worlds=N,...]",
    help="decision-time search: sampled deals played out by a trained policy at every seat (agents/search.py)",
)


def _ismcts(game: Game | None = None, seed: int | None = None, **options: Any) -> Agent:
    """``ismcts:sims=N,...``: information set MCTS (Cowling et al. 2012), random rollouts on the batched core."""
    from .ismcts import make_ismcts_agent

    return make_ismcts_agent(game, seed=seed, **options)


register(
    "ismcts",
    _ismcts,
    spec="ismcts[:sims=N,uct_c=C,objective=score|diff,depth=D]",
    help="single-observer information set MCTS, random rollouts, both games (agents/ismcts.py)",
)


def _puct(game: Game | None = None, seed: int | None = None, **options: Any) -> Agent:
    """``puct:policy=PATH,sims=N,...``: PUCT over determinized worlds, the policy's prior and value head."""
    from .puct import make_puct_agent

    return make_puct_agent(game, seed=seed, **options)


register(
    "puct",
    _puct,
    spec="puct:policy=PATH[,sims=N,c_puct=C,worlds=W,ms=T,leaf=value|playout,bids=true]",
    help="information-set tree search (PUCT) with a trained policy's prior and value head (agents/puct.py)",
)

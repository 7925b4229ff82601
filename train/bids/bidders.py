"""Who bids and who plays in the bidding benchmark: specs, the shipped play policy, seeds, how reports name them."""

from __future__ import annotations

import hashlib
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from agents import make_agent
from bobshat_env.core import rng
from bobshat_env.games import Game

SHIPPED = "shipped"  # the bidder spec of a table's shipped checkpoint
ROOT = Path(__file__).resolve().parents[2]  # the project root: reports show paths inside it relative to it


def _shipped(game: Game) -> tuple[Path, str | None]:
    """The table's shipped checkpoint and why it cannot play this table (None: it can).

    A table whose options change the rules (another scoring, say) is not the
    one the policy learned: :func:`agents.checkpoint.check_compatible` says so.
    """
    from agents.checkpoint import check_compatible, load_checkpoint
    from agents.shipped import table_checkpoint

    path = table_checkpoint(game.name, game.players)
    if not path.is_file():
        return path, f"no shipped policy for {game.name} with {game.players} players"
    try:
        _, meta = load_checkpoint(path)
        check_compatible(meta, game, path)
    except (OSError, ValueError) as err:  # CheckpointError: other options
        return path, f"the shipped policy cannot play this table: {err}"
    return path, None


def shipped_play(game: Game) -> str:
    """The play policy a table gets by default: its shipped checkpoint if there is one that plays the table's
    rules, else ``strong``."""
    path, why = _shipped(game)
    return "strong" if why else f"ppo:{path}"


def resolve_bidder(spec: str, game: Game) -> str:
    """A bidder spec as an agent spec: ``shipped`` names the table's shipped checkpoint (so one
    ``--bidders`` list fits both games of a suite); anything else is itself."""
    if spec != SHIPPED:
        return spec
    path, why = _shipped(game)
    if why:
        raise ValueError(f"bidder 'shipped': {why}")
    return f"ppo:{path}"


def display(spec: str) -> str:
    """A spec as reports write it: a path inside the project relative to its root."""
    name, sep, rest = spec.partition(":")
    if name == "ppo" and sep:
        path, comma, opts = rest.partition(",")
        try:
            path = Path(path).resolve().relative_to(ROOT).as_posix()
        except ValueError:
            pass
        return f"ppo:{path}{comma}{opts}"
    return spec


def spec_sha256(spec: str) -> str | None:
    """The SHA-256 of a ``ppo:`` spec's checkpoint file (the JSON records which policy played), else None."""
    name, sep, rest = spec.partition(":")
    if name != "ppo" or not sep:
        return None
    path = Path(rest.split(",")[0])
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def is_sampling(agent: Any) -> bool:
    """Whether an agent's decisions are random draws (several playouts then average them out)."""
    from agents.base import RandomAgent
    from agents.pimc import PIMCAgent

    if hasattr(agent, "bid") and hasattr(agent, "play"):  # a composite agent
        return is_sampling(agent.bid) or is_sampling(agent.play)
    return isinstance(agent, (RandomAgent, PIMCAgent)) or bool(getattr(agent, "sample", False))


def make_role(spec: str, game: Game, seed: int, role: str) -> Any:
    """The agent ``spec`` for ``role`` (bidder, --play); a bad spec's error names the role and the spec."""
    try:
        return make_agent(spec, game, seed=seed)
    except ValueError as err:
        raise ValueError(f"{role} {display(spec)!r}: {err}") from err


def role_seed(seed: int, chunk: int, spec: str, role: int) -> int:
    """The seed of a role in a (chunk, bidder): from the spec, so a bidder's numbers ignore the other bidders."""
    ss = np.random.SeedSequence([rng.seed_to_base(seed), chunk, zlib.crc32(spec.encode()), role])
    return int(ss.generate_state(1, np.uint32)[0])

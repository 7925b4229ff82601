"""The shipped policies: one resolver for ``checkpoints/<game>_<P>p.pt`` and for a policy named by its name.

Every command that takes an agent spec accepts a shipped policy by name
(``ppo:bobs_hat_4p``, ``search:policy=oh_hell_4p``) as well as by path, so a
user outside the repository needs no absolute path. A file of that name in
the working folder wins: a name is a fallback, never a shadow over a file the
user has. Standard library only: the agent registry imports it and must stay
light (no torch).
"""

from __future__ import annotations

import os
from pathlib import Path

SHIPPED_DIR = Path(__file__).resolve().parents[1] / "checkpoints"


def shipped_checkpoints() -> Path:
    """The folder of the shipped policies (``checkpoints/`` beside the packages, in a source checkout)."""
    return SHIPPED_DIR


def shipped_names() -> list[str]:
    """The names of the shipped policies (``bobs_hat_4p``, ...), sorted."""
    return sorted(p.stem for p in SHIPPED_DIR.glob("*.pt")) if SHIPPED_DIR.is_dir() else []


def shipped_checkpoint_files(what: str = "a shipped checkpoint") -> list[tuple[str, str]]:
    """Every shipped checkpoint and its sidecar as ``(what, path)`` pairs: the inputs of a command that reads
    its table's policy by default, which no output may be written over (:func:`bobshat_env.paths.check_distinct`)."""
    from bobshat_env.paths import checkpoint_files

    files = sorted(SHIPPED_DIR.glob("*.pt")) if SHIPPED_DIR.is_dir() else []
    return [pair for path in files for pair in checkpoint_files(what, path)]


def table_checkpoint(game_name: str, players: int) -> Path:
    """Where a table's shipped policy is (the file may not exist: not every table ships one)."""
    return SHIPPED_DIR / f"{game_name}_{players}p.pt"


def is_bare_name(text: str) -> bool:
    """A policy named by a bare name (no folder, no suffix), which may be a shipped one."""
    return bool(text) and "/" not in text and os.sep not in text and "." not in text


def resolve_checkpoint(path: str) -> str:
    """``path`` as given, or for a bare name that is no file here, the shipped policy of that name.

    Anything else comes back unchanged, so the loader's own error (no
    checkpoint at ...) names what the user wrote.
    """
    if not is_bare_name(path) or os.path.lexists(path):
        return path
    candidate = SHIPPED_DIR / f"{path}.pt"
    return str(candidate) if candidate.is_file() else path

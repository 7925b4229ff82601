"""The kit of the policy commands (``bobshat imitate``, ``expert``, ``exploit``, ``average``): what each needs, once.

- **Options.** A command's settings are one dataclass (:class:`Options`), each
  field an :func:`option` with its default, help, range and choices. The
  dataclass is the flags (:func:`add_flags`: ``--field-name``, the default
  and help from the field), the preset's keys (:func:`read_preset` with the
  alias-safe loader :func:`safe_yaml`, :func:`options_from`: unknown keys
  refused, naming them) and the checks: made from flags, a preset or code, the
  options check every field's type, range and choices in ``__post_init__``,
  one line naming the flag (``--games must be in [1, 10000], got 0``).
- **Outputs.** A checkpoint and its sidecar (:func:`bobshat_env.paths.sidecar`)
  are checked together (:func:`check_checkpoint_out`: each a regular file or
  not there yet, its folder writable); the other checks (an output is no
  input, a folder can be made) are :mod:`bobshat_env.paths`'s.
- **The report.** :func:`write_report`: the text report to stdout (stderr
  when the JSON takes stdout), the JSON to a file (atomically) or stdout.
- **Inference.** :func:`policy_outputs`: the masked logits, their softmax and
  the value of a policy network for NumPy observations and masks, in chunks,
  without gradients.
- **Agreement.** :func:`agreement`: how often a network's greedy move is the
  label (a record's move, an expert's), overall, bids, card plays and the
  decisions with a choice.

Why here: the kit is on the train floor (it uses the policy network of
``agents/`` and the writers of ``bobshat_env/paths``), below the commands
that share it and beside the evaluation code that runs the network too
(:mod:`train.evaluate.variance`). At module level it imports only the standard
library, NumPy and :mod:`bobshat_env.paths`, so that the command line builds
the flags from the options classes (:mod:`train.options`) without loading
torch (``bobshat --help`` stays quick); torch and YAML are imported when used.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import math
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

import numpy as np

from bobshat_env.paths import check_writable, replace_bytes, sidecar

INFERENCE_CHUNK = 65_536  # observations per forward pass: bounds the activations' memory, not the result


# --------------------------------------------------------------------------
# Options: one dataclass is the flags, the preset keys and the checks
def option(
    default: Any = dataclasses.MISSING,
    help: str = "",
    *,
    lo: float | None = None,
    hi: float | None = None,
    ends: str = "[]",
    choices: Sequence[str] | None = None,
    flag: bool = True,
    repr: bool = True,
    **argparse_extra: Any,
) -> Any:
    """A field of an :class:`Options` dataclass: its default (none: required), the help of its flag, its
    range from ``lo`` to ``hi``, both or neither (``ends``: ``"[)"`` leaves out ``hi``; a sequence's items each), its
    choices, whether it is a flag at all, whether ``repr`` shows it, and what else argparse should know
    of the flag (``nargs``, ``metavar``, ``required``)."""
    meta: dict[str, Any] = {"help": help, "lo": lo, "hi": hi, "ends": ends, "choices": choices, "flag": flag}
    meta["argparse"] = argparse_extra
    if isinstance(default, (list, dict)):
        return dataclasses.field(default_factory=functools.partial(type(default), default), repr=repr, metadata=meta)
    return dataclasses.field(default=default, repr=repr, metadata=meta)


def flag_name(name: str) -> str:
    """The flag of a field: ``init_from`` -> ``--init-from``."""
    return "--" + name.replace("_", "-")


_TYPES: dict[str, tuple[type | tuple[type, ...], str]] = {
    "int": (int, "an integer"),
    "float": ((int, float), "a number"),
    "str": (str, "a string"),
}
_TYPES |= {"bool": (bool, "true or false"), "dict": (dict, "a mapping")}


def _kind(f: dataclasses.Field) -> tuple[str, str | None, bool]:
    """(the field's kind: int, float, str, bool, dict or ``seq``; a sequence's items' kind; whether None is
    allowed), read from its annotation (``tuple[int, ...] | None``)."""
    text = str(f.type).replace(" ", "")
    m = re.fullmatch(r"(?:list|tuple)\[(\w+)(?:,\.\.\.)?\]", text.removesuffix("|None"))
    return ("seq", m[1], text.endswith("|None")) if m else (text.removesuffix("|None"), None, text.endswith("|None"))


def _why(flag: str, kind: str, value: Any, meta: Any) -> str | None:
    """Why ``value`` is no valid ``kind`` within the field's range and choices (one line naming ``flag``)."""
    types, what = _TYPES[kind]
    number: Any = value  # a number once the type check passes (lo and hi are only given to numbers)
    if not isinstance(value, types) or (isinstance(value, bool) and kind != "bool"):
        return f"{flag} must be {what}, got {value!r}"
    lo, hi, (left, right) = meta["lo"], meta["hi"], meta["ends"]
    low = lo is not None and (value <= lo if left == "(" else value < lo)
    high = hi is not None and (value >= hi if right == ")" else value > hi)
    if lo is not None and (low or high or not math.isfinite(number)):
        return f"{flag} must be in {left}{lo:g}, {hi:g}{right}, got {value!r}"
    if meta["choices"] is not None and value not in meta["choices"]:
        return f"{flag} must be one of {', '.join(meta['choices'])}, got {value!r}"
    return None


class Options:
    """Base of a command's options (a dataclass of :func:`option` fields): each field's type, range and
    choices are checked when the options are made, from flags, a preset or code alike. ``error``: the
    command's error class, raised with one line naming the flag."""

    error: ClassVar[type[ValueError]] = ValueError

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            kind, item, optional = _kind(f)
            value, flag = getattr(self, f.name), flag_name(f.name)
            if value is None and optional:
                continue
            if kind != "seq":
                why = _why(flag, kind, value, f.metadata)
            elif isinstance(value, (list, tuple)):
                why = next(filter(None, (_why(flag, str(item), v, f.metadata) for v in value)), None)
            else:
                why = f"{flag} must be a list, got {value!r}"
            if why is not None:
                raise self.error(why)


def add_flags(
    parser: argparse.ArgumentParser, cls: type[Options], parse: dict[str, Callable[[str], Any]], preset: bool = False
) -> dict[str, argparse.Action]:
    """One flag per :func:`option` field of ``cls`` with ``flag`` set: ``--field-name``, its help with the
    default, its text read by ``parse[kind]`` (``"int"``, ``"float"``, ``"seq int"``: the command line's
    argparse types; ranges and choices are the options' own checks, made from the flags).

    ``preset``: the command reads a preset (``--config``): every flag's default is then None, so that
    only the flags given are laid over the preset (:func:`options_from`); the help names the options'
    default all the same. Returns the flags' actions by field name (a command may add to a help)."""
    actions = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if f.metadata["flag"]:
            kind, item, _ = _kind(f)
            default = None if f.default is dataclasses.MISSING else f.default
            shown = "" if default is None or default is False or default == "" else str(default)
            shown = f"{default:g}" if isinstance(default, float) else shown
            extra = {"type": parse.get(f"{kind} {item}" if item else kind), **f.metadata["argparse"]}
            if kind == "bool":  # a switch: its action (store_true, BooleanOptionalAction) reads no text
                extra.pop("type")
            help = f.metadata["help"] + (f" ({shown})" if shown else "")
            actions[f.name] = parser.add_argument(
                flag_name(f.name), dest=f.name, default=None if preset else default, help=help, **extra
            )
    return actions


def options_from(cls: type[Options], preset: dict[str, Any], flags: dict[str, Any]) -> Options:
    """The options of a preset (a mapping of field names, already read) with the flags given (not None) laid
    over it; a preset key that is no flag of ``cls`` is refused, naming it (``--config: unknown key(s) x``)."""
    names = {f.name for f in dataclasses.fields(cls) if f.metadata["flag"]}  # type: ignore[arg-type]
    unknown = sorted(set(preset) - names)
    if unknown:
        raise cls.error(f"--config: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(names))}")
    values = {**preset, **{k: v for k, v in flags.items() if v is not None and k in names}}
    return cls(**values)


@functools.cache
def _no_alias_loader() -> type:
    import yaml

    class NoAliasLoader(yaml.SafeLoader):
        """YAML's safe loader, refusing aliases (``*name``): a preset has no use for them, and a few nested
        ones (a "billion laughs") make a 1 KB file expand to billions of entries when it is copied."""

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                mark = self.peek_event().start_mark
                raise yaml.composer.ComposerError(None, None, "aliases (*name) are not allowed in a config", mark)
            return super().compose_node(parent, index)

    return NoAliasLoader


def safe_yaml(text: str) -> Any:
    """``yaml.safe_load`` without aliases; a ``yaml.YAMLError`` for bad text. Every preset is read with it."""
    import yaml

    return yaml.load(text, Loader=_no_alias_loader())  # a SafeLoader subclass


def read_preset(path: str | None, error: type[ValueError] = ValueError) -> dict[str, Any]:
    """The mapping of a YAML preset (``--config``; ``{}`` for None), read with :func:`safe_yaml`; one line
    naming ``--config`` for a file that cannot be read, is not YAML (or not UTF-8) or holds no mapping."""
    if path is None:
        return {}
    import yaml

    try:
        preset = safe_yaml(Path(path).read_text(encoding="utf-8")) or {}
    except OSError as err:
        raise error(f"--config: cannot read {path}: {err.strerror or err}") from None
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        raise error(f"--config: {path} is not valid YAML: {str(err).splitlines()[0]}") from None
    if not isinstance(preset, dict):
        raise error(f"--config: {path} must hold a mapping of options")
    return preset


# --------------------------------------------------------------------------
# Outputs and the report
def check_checkpoint_out(out: str | Path, flag: str = "--out") -> None:
    """Refuse (one line naming ``flag``) a checkpoint path that cannot be written: it and its sidecar must be
    regular files or not exist yet (a FIFO would block the write, and ``ppo:PATH`` reads it back), in a
    folder that takes new files. That it is no input is :func:`bobshat_env.paths.check_distinct`'s."""
    path = Path(out)
    for p in (path, Path(sidecar(path))) if path.name else (path,):  # a nameless path: check_writable refuses it
        check_writable(p, flag, regular=True)


def write_report(
    report: dict[str, Any], path: str | Path | None, text: str | None = None, *, indent: int = 1, wrote: bool = False
) -> None:
    """The report of every command with ``--json``: ``text`` (if any) to stdout, or to stderr when the JSON
    takes stdout (``--json -``, for pipes: the JSON alone there); then the JSON to ``path`` in one atomic
    step (never half a report), to stdout for ``-``, nowhere for None; with ``wrote``, a line saying so
    where the text went."""
    say = sys.stderr if path == "-" else sys.stdout
    if text is not None:
        print(text, file=say)
    if path is None:
        return
    data = json.dumps(report, indent=indent) + "\n"
    if path == "-":
        sys.stdout.write(data)
        return
    replace_bytes(path, data.encode("utf-8"))
    if wrote:
        print(f"wrote {path}", file=say)


# --------------------------------------------------------------------------
# The policy network on NumPy arrays
class PolicyOutput(NamedTuple):
    """A policy network's answer for a batch: masked logits (B, A) and their softmax, and the value (B,)."""

    logits: np.ndarray | None  # float32; None without a mask
    probs: np.ndarray | None  # float32; None without a mask
    value: np.ndarray  # float32


def policy_outputs(
    net: Any, obs: np.ndarray, mask: np.ndarray | None = None, chunk: int = INFERENCE_CHUNK
) -> PolicyOutput:
    """``net`` (a :class:`agents.ppo_agent.PolicyNet`, on any device) on observations (B, D), ``chunk``
    rows at a time, without gradients: the logits masked by ``mask`` (B, A) as the agents play them
    (:func:`agents.ppo_agent.masked_logits`), their softmax, and the value; without a mask, the value alone."""
    import torch

    from agents.ppo_agent import masked_logits

    value = np.empty(obs.shape[0], dtype=np.float32)
    logits, probs = (None, None) if mask is None else (np.empty(mask.shape, np.float32) for _ in range(2))
    with torch.inference_mode():
        for s in range(0, obs.shape[0], chunk):
            rows = slice(s, s + chunk)
            out, v = net(torch.from_numpy(np.ascontiguousarray(obs[rows], dtype=np.float32)))
            value[rows] = v.float().cpu().numpy()
            if mask is not None:
                m = masked_logits(out, torch.from_numpy(np.ascontiguousarray(mask[rows], dtype=bool)).to(out.device))
                logits[rows] = m.float().cpu().numpy()  # type: ignore[index]
                probs[rows] = torch.softmax(m, dim=-1).float().cpu().numpy()  # type: ignore[index]
    return PolicyOutput(logits, probs, value)


def agreement(net: Any, data: Any, chunk: int = 4096) -> dict[str, Any]:
    """How often the network's greedy move (its most probable legal action) is the label: overall, bids (and
    hat choices), card plays, and among the decisions with more than one legal action; with the counts.

    ``data``: labelled decisions (:class:`train.imitate.DecisionSet`, :class:`train.expert.Labels`): ``n``,
    ``games``, ``label``, ``is_card`` and ``batch(idx)``, whose first two are the observations and masks of
    rows ``idx``, decoded ``chunk`` at a time (a compact set is never decoded whole)."""
    hit = np.zeros(data.n, dtype=bool)
    choice = np.zeros(data.n, dtype=bool)
    label = data.label
    for start in range(0, data.n, chunk):
        idx = np.arange(start, min(data.n, start + chunk))
        obs, mask = data.batch(idx)[:2]
        hit[idx] = policy_outputs(net, obs, mask, chunk).logits.argmax(axis=1) == label[idx]  # type: ignore[union-attr]
        choice[idx] = mask.sum(axis=1) > 1

    def share(rows: np.ndarray) -> dict[str, Any]:
        n = int(rows.sum())
        return {"decisions": n, "agreement": float(hit[rows].mean()) if n else None}

    parts = {"bids": ~data.is_card, "cards": data.is_card, "with_choice": choice}  # bids: and hat choices
    return {"games": data.games, **share(np.ones(data.n, dtype=bool)), **{k: share(r) for k, r in parts.items()}}

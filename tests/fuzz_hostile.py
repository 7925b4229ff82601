"""Hostile values for the fuzz suites (tests/test_fuzz_cli.py, tests/test_fuzz_web.py).

One table of value kinds -> hostile values: the CLI suite maps every flag of
the real argparse parsers to a kind (a flag added later is fuzzed without a
change here), the web suite uses the same values for query and JSON fields.
Also: the sandbox folder every CLI example runs in (a regular file, a
read-only one, a link, a dangling link, a folder, a FIFO, a character device
like /dev/null), and its snapshot, to tell whether a refused command changed
anything on disk.

``NEVER_VALID`` are the values no flag of that kind may accept (the README's
ranges: every count, size and seed fits 64 bits; no number is NaN, infinite
or 1e300): a command given one must refuse it (exit 2), not run.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import stat
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st

SCALE = float(os.environ.get("BOBSHAT_FUZZ_EXAMPLES", "1"))


def fuzz_settings(n: int) -> settings:
    """Reproducible in CI (derandomized, no example database); no shrinking: an example is 1-3 values already.
    ``BOBSHAT_FUZZ_EXAMPLES`` scales the number of examples."""
    return settings(
        max_examples=max(1, int(n * SCALE)),
        deadline=None,
        derandomize=True,
        database=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )


HUGE = str(2**64)  # past every 64-bit count and seed
# --------------------------------------------------------------------------
# Kind -> hostile values (strings, as a shell would pass them)
# fmt: off
INT_VALUES = [
    "0", "-0", "-1", "1", "2", str(2**31), str(2**63), HUGE, str(10**30), "9" * 5000,
    "1e300", "1e3", "nan", "inf", "-inf", "", " ", "0x10", "1_0", "1.5", "+3", "\u0663", "\uff17", "7 ",
]
FLOAT_VALUES = [
    "0", "-0", "-0.0", "-1", "1", "1e-9", "5e-324", "1e300", "1e309", "-1e300", "nan", "NaN", "-nan",
    "inf", "-inf", "Infinity", "", "1,5", "\u0663", "0x1p3", "1e", str(10**400),
]
TEXT_VALUES = [
    "", " ", "-", "--", "x" * 10000, "\u00e9\u2603\U0001d11e", "\u202eevil", "a\nb", "\t", "..", "/",
    "%s%n{}", "'\"`$(true)", "\udcff", "none", "null", "true", "0", "-1", "nan", "1e300",
]
# Paths, relative to the sandbox (see make_sandbox); "null" is a character device like /dev/null.
OUTPUT_PATHS = [
    "out.jsonl", "out.json", "out.png", "existing.jsonl", "ro.jsonl", "link.jsonl", "dangling.jsonl",
    "dir", "dir/", "fifo", "null", "missing/sub/out.jsonl", "existing.jsonl/sub", "-", "", ".", "x" * 300,
]
# The path-like values every output path flag gets in turn (tests/test_fuzz_cli.py): a folder, a missing parent,
# a FIFO, a link to a file, a dangling link.
PATH_LIKE = ["dir", "missing/sub/out.jsonl", "fifo", "link.jsonl", "dangling.jsonl"]
# Inputs never name the FIFO: reading one blocks until a writer comes, which is what a FIFO is for.
INPUT_PATHS = [
    "existing.jsonl", "ro.jsonl", "link.jsonl", "dangling.jsonl", "dir", "null", "missing/x", "-", "",
    "laughs.yaml", "bad.yaml", "binary.pt", "empty", "x" * 300, "/etc/passwd",
]
SPECS = [
    "", ",", "random", "nosuch", "human", "random,random,random,random,random,random,random,random",
    "pimc:worlds=100000", "pimc:worlds=100000000", "pimc:worlds=-1", "pimc:worlds=nan", "pimc:max_rows=0",
    "pimc:max_rows=-1", "pimc:playout=nosuch", "pimc:worlds=1e300", "strong:seed=5", "random:x=1",
    "search:policy=existing.jsonl", "search:policy=nosuch", "search:policy=/etc/passwd,z=nan",
    "search:policy=bobs_hat_4p,worlds=100000000", "ppo:/etc/passwd", "ppo:dir", "ppo:binary.pt", "ppo:",
    "ppo:bobs_hat_4p", "ppo:checkpoints/bobs_hat_4p.pt,sample=maybe", "bid=random+play=pimc:worlds=1000000",
    "bid=random+play=ppo:/etc/passwd", "bid=+play=", "bid=strong", "x" * 10000, "\u00e9\u2603",
]
# fmt: on
SWITCH_VALUES = ["true", "false", "yes", "maybe", "", "1", "2", "TRUE", "nan"]

VALUES: dict[str, list[str]] = {
    "int": INT_VALUES,
    "float": FLOAT_VALUES,
    "int_list": INT_VALUES + ["1,2", "1,,2", ",", "1,-1", f"1,{HUGE}", "1," * 1000],
    "text": TEXT_VALUES,
    "choice": TEXT_VALUES,  # plus the flag's own choices (values_for)
    "output_path": OUTPUT_PATHS,
    "input_path": INPUT_PATHS,
    "spec": SPECS,
    "spec_list": SPECS + ["nosuch,strong", "[random]", "{a: 1}"],
    "switch_text": SWITCH_VALUES,
    "yaml": ["{}", "", "nosuch: 1", "[1, 2]", "{hands: nan}", "{hands: 100000000}", "{a: &a [*a]}", "x" * 10000],
    "host": ["", " ", "0.0.0.0", "::", "256.1.1.1", "example.com", "localhost:80", "[::1]", "\u00e9"],
}

# Values no flag of the kind may accept: the command must refuse them (exit 2) before any work.
NEVER_VALID: dict[str, set[str]] = {
    "int": {str(2**64), str(10**30), "9" * 5000, "1e300", "nan", "inf", "-inf"},
    "float": {"1e300", "1e309", "-1e300", "nan", "NaN", "-nan", "inf", "-inf", "Infinity", str(10**400)},
    "int_list": {str(2**64), f"1,{HUGE}"},
}
NEVER_VALID["seed"] = NEVER_VALID["int"] | {"-1"}
# agents that are no agents, options out of range, files that are no checkpoints (issue 24: accepted silently)
NEVER_VALID["spec"] = {"nosuch", "pimc:worlds=-1", "pimc:worlds=nan", "pimc:max_rows=0", "pimc:max_rows=-1",
                       "pimc:playout=nosuch", "pimc:worlds=1e300", "random:x=1", "ppo:/etc/passwd", "ppo:dir",
                       "ppo:binary.pt", "ppo:", "search:policy=/etc/passwd,z=nan", "x" * 10000}  # fmt: skip
NEVER_VALID["spec_list"] = NEVER_VALID["spec"] | {"nosuch,strong"}


# --------------------------------------------------------------------------
# Flag kinds, from the parsers themselves
# Path flags get path-like values (a folder, a missing parent, a FIFO, a link, a device), not plain text: the
# files (--out: a checkpoint) and the folders (--log-dir, --runs-dir) a command writes, the files it reads.
OUTPUT_DESTS = {"records", "json", "plot", "save", "records_dir", "runs_dir", "out", "log_dir"}
INPUT_DESTS = {"file", "config", "init", "init_from", "vr_value", "checkpoints"}
SPEC_DESTS = {"agents", "opponents", "target", "bidders", "play"}
SPEC_LIST_DESTS = {"heuristics", "eval_opponents"}


def kind_of(action: argparse.Action, default: Any = None) -> str:
    """The hostile-value kind of an argparse action (``default``: the train Args field's default, if any)."""
    dest = action.dest
    if dest == "seed":
        return "seed"
    if action.nargs == 0:
        return "switch"
    if action.choices:
        return "choice"
    kind = {"int": "int", "integer": "int", "float": "float", "number": "float", "list": "int_list"}.get(
        getattr(action.type, "__name__", ""), ""
    )
    if kind:
        return kind
    if default is not None:  # train's flags are strings, read as the type of the Args field's default
        if isinstance(default, bool):
            return "switch_text"
        if isinstance(default, int):
            return "int"
        if isinstance(default, float):
            return "float"
        if isinstance(default, dict):
            return "yaml"
        if isinstance(default, list):
            return "spec_list" if dest in SPEC_LIST_DESTS else "int_list"
    if dest == "records" and action.nargs in ("+", "*"):  # imitate --records FILE...: records it reads
        return "input_path"
    if dest in OUTPUT_DESTS:
        return "output_path"
    if dest in INPUT_DESTS:
        return "input_path"
    if dest in SPEC_DESTS:
        return "spec"
    if dest == "host":
        return "host"
    return "text"


def values_for(kind: str, action: argparse.Action | None = None) -> list[str]:
    """The hostile values of a kind; a choice flag's own choices among them (the valid ones too)."""
    if kind == "seed":
        return INT_VALUES
    own = [str(c) for c in (action.choices or ())] if action is not None and action.choices else []
    return own + [v + "x" for v in own[:1]] + VALUES.get(kind, TEXT_VALUES)


def never_valid(kind: str, value: str) -> bool:
    return value in NEVER_VALID.get(kind, set())


def value_strategy(kind: str, action: argparse.Action | None = None) -> st.SearchStrategy[str]:
    """The table's values (the never-valid ones often), and generated ones of the same shape."""
    table = st.sampled_from(values_for(kind, action))
    if kind in NEVER_VALID:  # a third of the draws: the values that must be refused
        table = st.one_of(table, st.sampled_from(sorted(NEVER_VALID[kind])))
    if kind in ("int", "seed", "int_list"):
        return st.one_of(table, st.integers(-(2**70), 2**70).map(str))
    if kind == "float":
        # Subnormals come as the fixed text "5e-324": a library built with -ffast-math (loaded by an earlier test
        # in the same process) can switch the CPU to flush them to zero, and Hypothesis then refuses to draw them.
        floats = st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=False).map(repr)
        return st.one_of(table, floats, st.just("5e-324"))
    if kind in ("text", "choice", "spec", "host"):
        # no NUL: a command line cannot carry one
        return st.one_of(table, st.text(st.characters(blacklist_characters="\x00"), max_size=40))
    return table


# --------------------------------------------------------------------------
# The sandbox every CLI example runs in, and its snapshot
LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True)
)


def make_sandbox(root: Path) -> dict[str, Any]:
    """Fill ``root`` with one of each thing a path flag may name; what could not be made (a device as non-root)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "existing.jsonl").write_text('{"not": "a record"}\n{"game": "bobs_hat"}\n')
    (root / "target.jsonl").write_text('{"kept": true}\n')
    (root / "ro.jsonl").write_text('{"read": "only"}\n')
    (root / "ro.jsonl").chmod(0o444)
    (root / "bad.yaml").write_text("players: [\n")
    (root / "laughs.yaml").write_text(LAUGHS)
    (root / "binary.pt").write_bytes(bytes(range(256)) * 4)
    (root / "empty").write_bytes(b"")
    (root / "dir").mkdir()
    (root / "dir" / "keep.txt").write_text("keep\n")
    os.symlink("target.jsonl", root / "link.jsonl")
    os.symlink("nowhere.jsonl", root / "dangling.jsonl")
    os.mkfifo(root / "fifo")
    made = {"device": True}
    try:  # the same device as /dev/null, inside the sandbox: a command that replaces it harms nothing else
        os.mknod(root / "null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except (PermissionError, OSError):
        (root / "null").write_text("")  # not root: a stand-in, and the device property is not checked
        made["device"] = False
    return made


def snapshot(root: Path) -> dict[str, tuple]:
    """Every entry under ``root``: its kind, permissions and content (bytes' hash, link target, device number)."""
    out: dict[str, tuple] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            st_ = os.lstat(path)
            kind = stat.S_IFMT(st_.st_mode)
            entry: tuple = (kind, stat.S_IMODE(st_.st_mode))
            if stat.S_ISREG(st_.st_mode):
                entry += (hashlib.sha256(Path(path).read_bytes()).hexdigest(),)
            elif stat.S_ISLNK(st_.st_mode):
                entry += (os.readlink(path),)
            elif stat.S_ISCHR(st_.st_mode) or stat.S_ISBLK(st_.st_mode):
                entry += (st_.st_rdev,)
            out[os.path.relpath(path, root)] = entry
    return out


def kind_name(entry: tuple) -> str:
    return {
        stat.S_IFREG: "file",
        stat.S_IFDIR: "folder",
        stat.S_IFLNK: "symlink",
        stat.S_IFIFO: "FIFO",
        stat.S_IFCHR: "device",
    }.get(entry[0], "other")


def changes(before: dict[str, tuple], after: dict[str, tuple]) -> list[str]:
    """What differs between two snapshots, in words."""
    out = []
    for path in sorted(before.keys() | after.keys()):
        a, b = before.get(path), after.get(path)
        if a == b:
            continue
        if a is None:
            out.append(f"{path}: created ({kind_name(b)})")
        elif b is None:
            out.append(f"{path}: removed ({kind_name(a)})")
        elif a[0] != b[0]:
            out.append(f"{path}: a {kind_name(a)} became a {kind_name(b)}")
        else:
            out.append(f"{path}: changed")
    return out

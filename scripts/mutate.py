#!/usr/bin/env python3
"""A mutation check: inject single-line bugs into a module, one at a time, and see which the tests miss.

Usage (from the repository root)::

    python scripts/mutate.py scripts/mutants/search.toml            # every mutant of the list
    python scripts/mutate.py scripts/mutants/bids.toml --only sign   # mutants whose name contains "sign"
    python scripts/mutate.py scripts/mutants/search.toml --tests tests/test_search.py   # other tests
    python scripts/mutate.py --generate agents/search.py > my.toml   # candidate operator flips to curate

A mutant list is a TOML file: the tests it runs, and one ``[[mutant]]`` table
per injected bug, a bug a developer would plausibly write (a flipped sign or
comparison, an off-by-one, a dropped guard, the wrong seat, the wrong
baseline or unit)::

    tests = ["tests/test_search.py", "tests/test_search_decisions.py"]

    [[mutant]]
    name = "playout value with the wrong sign"
    file = "agents/search.py"
    old = "return margin.reshape(n, W, K)"       # must occur exactly once in the file
    new = "return -margin.reshape(n, W, K)"
    # tests = [...]                               # optional: this mutant's own tests

Each mutant is applied to a copy of the repository (the tracked files, with
their modification times, so the compiled kernels' numba cache stays valid
in the copy), the tests run there with ``pytest -x`` (they stop at the first
failure), and the mutant is *killed* when they fail, *survived* when they
pass, *timeout* past ``--timeout``. A mutant whose ``old`` text is no longer
in the file (the code moved on) is *stale*: rewrite it against the code as
it is. The unmutated copy runs first: if its tests fail, nothing is
reported. The checkout itself is never changed.

It is slow (one test run per mutant) and so not part of CI; CI runs the
tests it motivated. ``--json`` writes the outcomes for comparisons.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Mutant:
    """One injected bug: replace ``old`` (found exactly once) by ``new`` in ``file``."""

    name: str
    file: str
    old: str
    new: str
    tests: list[str] = field(default_factory=list)


def load_mutants(path: Path) -> tuple[list[str], list[Mutant]]:
    """The default tests and the mutants of a TOML list; a clear ValueError for a malformed entry."""
    doc = tomllib.loads(path.read_text())
    tests = list(doc.get("tests", []))
    out = []
    for i, m in enumerate(doc.get("mutant", [])):
        missing = [k for k in ("name", "file", "old", "new") if k not in m]
        if missing:
            raise ValueError(f"{path}: mutant {i + 1} lacks {', '.join(missing)}")
        if m["old"] == m["new"]:
            raise ValueError(f"{path}: mutant {m['name']!r} changes nothing")
        if "\n" in m["old"] or "\n" in m["new"]:
            raise ValueError(f"{path}: mutant {m['name']!r} is not a single-line change")
        out.append(Mutant(m["name"], m["file"], m["old"], m["new"], list(m.get("tests", []))))
    return tests, out


def copy_repo(src: Path, dst: Path) -> None:
    """Copy the tracked files of ``src`` (and untracked ones git does not ignore) into ``dst``, with their mtimes,
    and the numba caches beside them, so the copy imports without compiling again."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=src, capture_output=True, check=True,
    ).stdout.decode().split("\0")  # fmt: skip
    for rel in filter(None, listed):
        s = src / rel
        if not s.is_file():
            continue
        d = dst / rel
        d.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(s, d)
    for cache in src.rglob("__pycache__"):
        if ".git" in cache.parts:
            continue
        for f in cache.iterdir():
            if f.suffix in (".nbi", ".nbc"):
                d = dst / cache.relative_to(src) / f.name
                d.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(f, d)


def run_tests(repo: Path, tests: list[str], timeout: float) -> tuple[str, float, str]:
    """(outcome, seconds, last lines of output) of ``pytest -x`` on ``tests`` in ``repo``."""
    env = dict(os.environ, PYTHONPATH=str(repo), PYTHONDONTWRITEBYTECODE="1")
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests]
    t0 = time.perf_counter()
    try:
        res = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", time.perf_counter() - t0, ""
    seconds = time.perf_counter() - t0
    tail = "\n".join((res.stdout + res.stderr).strip().splitlines()[-3:])
    if res.returncode == 0:
        return "survived", seconds, tail
    if res.returncode == 1:
        return "killed", seconds, tail
    return f"error (pytest exit {res.returncode})", seconds, tail  # collection error, usage: counts as killed


def check(args: argparse.Namespace) -> int:
    default_tests, mutants = load_mutants(Path(args.mutants))
    if args.only:
        mutants = [m for m in mutants if any(s.lower() in m.name.lower() for s in args.only)]
    if not mutants:
        print("no mutant to run", file=sys.stderr)
        return 2
    results = []
    with tempfile.TemporaryDirectory(prefix="bobshat-mutate-") as tmp:
        repo = Path(tmp) / "repo"
        copy_repo(Path(args.repo).resolve(), repo)
        base_tests = args.tests or default_tests
        all_tests = sorted({t for m in mutants for t in (args.tests or m.tests or default_tests)})
        print(f"baseline: {' '.join(all_tests)}", flush=True)
        outcome, seconds, tail = ("survived", 0.0, "") if args.no_baseline else run_tests(repo, all_tests, args.timeout)
        if outcome != "killed" and outcome != "survived":
            print(f"the unmutated tests did not finish ({outcome}, {seconds:.0f} s)", file=sys.stderr)
            return 1
        if outcome == "killed":
            print(f"the unmutated tests fail; fix them first:\n{tail}", file=sys.stderr)
            return 1
        print(f"baseline passes in {seconds:.0f} s", flush=True)
        for i, m in enumerate(mutants, 1):
            path = repo / m.file
            text = path.read_text()
            n = text.count(m.old)
            if n != 1:
                results.append({"name": m.name, "file": m.file, "outcome": "stale", "seconds": 0.0,
                                "why": f"old text found {n} times"})  # fmt: skip
                print(f"[{i}/{len(mutants)}] stale     {m.name}: its old text is found {n} times in {m.file}")
                continue
            mutated = text.replace(m.old, m.new)
            try:
                ast.parse(mutated)
            except SyntaxError as err:
                results.append({"name": m.name, "file": m.file, "outcome": "stale", "seconds": 0.0,
                                "why": f"syntax error: {err}"})  # fmt: skip
                print(f"[{i}/{len(mutants)}] stale     {m.name}: the mutated file does not parse ({err})")
                continue
            stat = path.stat()
            path.write_text(mutated)
            try:
                outcome, seconds, tail = run_tests(repo, args.tests or m.tests or base_tests, args.timeout)
            finally:
                path.write_text(text)
                os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
            results.append({"name": m.name, "file": m.file, "outcome": outcome, "seconds": round(seconds, 1),
                            "failed": _failed_test(tail) if outcome == "killed" else None})  # fmt: skip
            label = "SURVIVED" if outcome == "survived" else outcome
            extra = f" ({results[-1]['failed']})" if results[-1].get("failed") else ""
            print(f"[{i}/{len(mutants)}] {label:<9} {m.name} [{seconds:.0f} s]{extra}", flush=True)
    ran = [r for r in results if r["outcome"] != "stale"]
    caught = [r for r in ran if r["outcome"] != "survived"]
    stale = len(results) - len(ran)
    print(f"\ncaught {len(caught)}/{len(ran)}" + (f" ({stale} stale)" if stale else ""))
    for r in ran:
        if r["outcome"] == "survived":
            print(f"  survived: {r['name']}")
    if args.json:
        Path(args.json).write_text(json.dumps({"mutants": args.mutants, "results": results}, indent=2) + "\n")
    return 0


def _failed_test(tail: str) -> str | None:
    m = re.search(r"FAILED (\S+)", tail)
    return m.group(1) if m else None


# ---------------------------------------------------------------------------
# Candidates: operator flips in a module, as a TOML list to curate
FLIPS = [
    (r" < ", " <= "), (r" <= ", " < "), (r" > ", " >= "), (r" >= ", " > "), (r" == ", " != "), (r" != ", " == "),
    (r" \+ ", " - "), (r" - ", " + "), (r" \* ", " / "), (r" / ", " * "), (r" and ", " or "), (r" or ", " and "),
    (r"axis=1", "axis=0"), (r"\bTrue\b", "False"), (r"\bFalse\b", "True"), (r"\bnot ", ""), (r" - 1\b", ""),
    (r"\+ 1\b", "+ 2"), (r"\bmax\(", "min("), (r"\bmin\(", "max("), (r"\[0\]", "[1]"), (r"\[:, 0\]", "[:, 1]"),
]  # fmt: skip


def generate(args: argparse.Namespace) -> int:
    """Print candidate mutants of ``args.generate`` (code lines only, not docstrings or comments) as TOML."""
    path = Path(args.generate)
    text = path.read_text()
    tree = ast.parse(text)
    doc_lines: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        first = body[0] if isinstance(body, list) and body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
            doc_lines.update(range(body[0].lineno, body[0].end_lineno + 1))
    lines = text.splitlines()
    cands = []
    for no, line in enumerate(lines, 1):
        code = line.split("#", 1)[0]
        if no in doc_lines or not code.strip() or code.lstrip().startswith(("import ", "from ", "def ", "class ", "@")):
            continue
        for pat, rep in FLIPS:
            for m in re.finditer(pat, code):
                new_line = line[: m.start()] + rep + line[m.end() :]
                if text.count(line.strip()) != 1 or new_line == line:
                    continue
                try:
                    ast.parse("\n".join(lines[: no - 1] + [new_line] + lines[no:]))
                except SyntaxError:
                    continue
                cands.append(
                    (no, f"{m.group(0).strip()} -> {rep.strip() or '(dropped)'}", line.strip(), new_line.strip())
                )
    if args.sample and len(cands) > args.sample:
        cands = sorted(random.Random(args.seed).sample(cands, args.sample))
    rel = path.resolve().relative_to(ROOT).as_posix() if path.resolve().is_relative_to(ROOT) else str(path)
    print(f"# {len(cands)} candidate mutants of {rel} (operator flips); keep the plausible ones")
    print("tests = []\n")
    for no, what, old, new in cands:
        print(f"[[mutant]]\nname = {json.dumps(f'line {no}: {what}')}\nfile = {json.dumps(rel)}")
        print(f"old = {json.dumps(old)}\nnew = {json.dumps(new)}\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("mutants", nargs="?", help="a TOML list of mutants (scripts/mutants/*.toml)")
    p.add_argument("--only", nargs="+", metavar="TEXT", help="run the mutants whose name contains one of these")
    p.add_argument("--tests", nargs="+", help="test files or node ids to run instead of the list's")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds per test run (default 900)")
    p.add_argument("--json", help="write the outcomes to this file")
    p.add_argument("--repo", default=str(ROOT), help="the checkout to copy and test (default: this one)")
    p.add_argument("--no-baseline", action="store_true", help="skip the unmutated run (tests known to pass)")
    p.add_argument("--generate", metavar="MODULE", help="print candidate operator-flip mutants of MODULE as TOML")
    p.add_argument("--sample", type=int, default=0, help="with --generate: at most this many, drawn at random")
    p.add_argument("--seed", type=int, default=0, help="with --generate --sample: the draw's seed")
    args = p.parse_args(argv)
    if args.generate:
        return generate(args)
    if not args.mutants:
        p.error("name a mutant list (or --generate MODULE)")
    # A kill ends the test run in flight and removes the copy (SystemExit unwinds through both).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        return check(args)
    except (OSError, ValueError, tomllib.TOMLDecodeError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

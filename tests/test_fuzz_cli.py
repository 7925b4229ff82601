"""Property-based fuzzing of every ``bobshat`` subcommand's flags with hostile values (issue 24).

The flags come from the real parsers (``bobshat.cli.build_parser`` and
``train.ppo.build_arg_parser`` for ``bobshat train``): a flag added later is
fuzzed with the values of its kind (tests/fuzz_hostile.py) without a change
here. The contract, for any value:

- the command exits 0 or 2 (``replay`` also 1: a record with a fault; ``play``
  also 130: its input ends at the first prompt), never with a traceback;
- refused (2): one error naming a flag, and nothing on disk changed;
- whatever the exit: a link stays a link, a FIFO a FIFO, a device a device,
  files no flag named are unchanged, and no file named ``-`` appears;
- a value no flag of its kind may take (NaN, inf, 1e300, 2^64, a negative
  seed: ``fuzz_hostile.NEVER_VALID``) is refused, not run.

Three layers, cheapest first: every (flag, value) of the table through the
parsers in-process; generated combinations through the whole command with
its work stubbed out (tests/fuzz_runner.py: everything up to the first game
played, worker process or Ray call, training rollout, benchmark measurement or
server loop runs for real, in a forked child of a warm process); and real,
tiny runs of the commands that write files, with hostile output paths.
Hypothesis runs derandomized with no database, so CI sees the same examples
every time; ``BOBSHAT_FUZZ_EXAMPLES`` scales them.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("hypothesis", reason="the fuzz suite needs hypothesis (the dev extra has it)")

import fuzz_hostile as H
from fuzz_hostile import fuzz_settings
from hypothesis import example, given
from hypothesis import strategies as st

from bobshat.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
SHIPPED_BH = ROOT / "checkpoints" / "bobs_hat_4p.pt"  # expert needs a policy to start from


# --------------------------------------------------------------------------
# The flags, from the parsers
@dataclass(frozen=True)
class Flag:
    command: str
    option: str | None  # None: a positional argument
    kind: str
    action: argparse.Action

    def argv(self, value: str) -> list[str]:
        if self.option is None:
            return [value]
        if self.kind == "switch":
            return [self.option]
        return [f"{self.option}={value}"] if value.startswith("-") else [self.option, value]

    def names(self) -> set[str]:
        """How an error may name it: the flag, its field name (train's checks), or the positional's name."""
        return {*self.action.option_strings, self.action.dest, self.action.dest.replace("_", "-")}


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _train_parser() -> tuple[argparse.ArgumentParser, dict[str, Any]]:
    from dataclasses import asdict

    from train.ppo.config import Args, build_arg_parser  # imports torch

    return build_arg_parser(), asdict(Args())


def all_flags() -> dict[str, list[Flag]]:
    """Every subcommand's flags (train's are train.ppo's own parser's), with their hostile-value kind."""
    out: dict[str, list[Flag]] = {}
    for command, sub in _subparsers(build_parser()).items():
        defaults: dict[str, Any] = {}
        if command == "train":
            sub, defaults = _train_parser()
        flags = []
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            option = max(action.option_strings, key=len) if action.option_strings else None
            flags.append(Flag(command, option, H.kind_of(action, defaults.get(action.dest)), action))
        out[command] = flags
    return out


FLAGS = all_flags()
COMMANDS = sorted(FLAGS)

# The smallest workload of each command, given first (a fuzzed flag after it wins), and the only
# arguments a command needs; paths are inside the example's sandbox.
BASE = {
    "simulate": ["--games", "1", "--hands", "1"],
    "replay": [],
    "eval": ["--deals", "1", "--quiet"],
    "bids": ["--bidders", "random", "--deals", "1", "--worlds", "1", "--playouts", "1", "--play", "random", "--quiet"],
    "play": ["--hands", "1", "--seed", "1"],
    "serve": ["--port", "0", "--records-dir", "served"],
    "bench": ["--quick", "--no-peers", "--quiet", "--batches", "1", "--reps", "1", "--seconds", "0"],
    "train": ["--progress", "false", "--runs-dir", "runs", "--total-decisions", "1", "--num-envs", "2"],
    "exploit": "--target random --quiet --runs-dir runs --total-decisions 1 --final-deals 0 --eval-every 0".split(),
    "imitate": ["--records", "existing.jsonl", "--out", "imitated.pt", "--epochs", "1"],
    "expert": ["--game", "bobs_hat", "--init-from", str(SHIPPED_BH), "--out", "expert.pt", "--games", "1"],
    "average": ["--out", "averaged.pt", str(SHIPPED_BH), str(SHIPPED_BH)],  # positionals last: a fuzzed one joins them
    "infer": ["--games", "1", "--max-hands", "1", "--seats", "0", "--methods", "none", "--worlds", "1", "--quiet"],
    "exact": ["--variant", "tiny", "--agents", "random", "--cfr-iterations", "0", "--time-limit", "10", "--quiet"],
}
EXIT_OK = {"replay": {0, 1, 2}, "play": {0, 2, 130}}  # replay: 1 = a record has a fault; play: input ended


def test_every_command_and_flag_is_known():
    """A new subcommand gets a workload here (a new flag needs nothing: its kind comes from its parser)."""
    assert set(BASE) == set(COMMANDS)
    kinds = {(f.command, f.option): f.kind for c in COMMANDS for f in FLAGS[c]}
    # the kinds drive the values: a flag misread as plain text would be fuzzed with the wrong ones
    assert kinds[("simulate", "--games")] == "int" and kinds[("simulate", "--seed")] == "seed"
    assert kinds[("simulate", "--records")] == "output_path" and kinds[("replay", None)] == "input_path"
    assert kinds[("serve", "--idle-timeout")] == "float" and kinds[("bench", "--batches")] == "int_list"
    assert kinds[("train", "--learning-rate")] == "float" and kinds[("train", "--hidden")] == "int_list"
    assert kinds[("train", "--heuristics")] == "spec_list" and kinds[("exploit", "--target")] == "spec"
    # path flags get paths (a folder, a missing parent, a FIFO, a link), not plain text
    assert kinds[("expert", "--out")] == kinds[("expert", "--log-dir")] == kinds[("imitate", "--out")] == "output_path"
    assert kinds[("imitate", "--records")] == kinds[("eval", "--vr-value")] == "input_path"


# --------------------------------------------------------------------------
# Layer 1: every (flag, value) of the table through the parsers
def _parse(parsers: dict[str, argparse.ArgumentParser], command: str, argv: list[str]) -> tuple[int | None, str]:
    """Parse as the command line does; (None, "") when accepted, else (exit status, stderr)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            parsers[command].parse_args(argv if command == "train" else [command, *argv])
        except SystemExit as exit_:
            return int(exit_.code or 0), err.getvalue()
    return None, ""


def test_every_flag_and_table_value_parses_or_is_refused_naming_the_flag():
    failures = []
    main_parser = build_parser()
    parsers = {c: main_parser for c in COMMANDS} | {"train": _train_parser()[0]}
    for command in COMMANDS:
        for flag in FLAGS[command]:
            if flag.kind == "switch":
                continue
            for value in H.values_for(flag.kind, flag.action):
                argv = [*BASE[command], *flag.argv(value)]
                try:
                    code, err = _parse(parsers, command, argv)
                except Exception as exc:  # any exception here is a traceback for the user
                    failures.append(f"{command} {argv}: {type(exc).__name__}: {exc}")
                    continue
                if code is None:
                    continue
                if code != 2:
                    failures.append(f"{command} {argv}: exit {code}")
                elif not any(n in err for n in flag.names()) and flag.option is not None:
                    failures.append(f"{command} {argv}: refused without naming {flag.option}: {err.strip()[-200:]}")
    assert not failures, f"{len(failures)} failure(s):\n" + "\n".join(failures[:40])


# --------------------------------------------------------------------------
# Layers 2 and 3 run commands in tests/fuzz_runner.py
class Runner:
    """The warm process of tests/fuzz_runner.py; run() sends one request and returns its reply."""

    def __init__(self, log: Path) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        self.log = log.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("fuzz_runner.py"))],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            cwd=ROOT,
            env=env,
            text=True,
        )
        first = self.proc.stdout.readline()
        if first.strip() != "ready":
            self.close()
            pytest.fail(f"the fuzz runner did not start: {first!r}; see {log}")

    def run(self, argv: list[str], cwd: Path, stub: bool, timeout: float = 120) -> dict[str, Any]:
        fifos = [str(p) for p in cwd.rglob("*") if p.is_fifo()]
        self.proc.stdin.write(
            json.dumps({"argv": argv, "cwd": str(cwd), "stub": stub, "timeout": timeout, "fifos": fifos}) + "\n"
        )
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            pytest.fail(f"the fuzz runner died on {argv}")
        return json.loads(line)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


@pytest.fixture(scope="module")
def runner(tmp_path_factory):
    r = Runner(tmp_path_factory.mktemp("fuzz-runner") / "runner.log")
    yield r
    r.close()


@pytest.fixture(scope="module")
def sandboxes(tmp_path_factory):
    """A fresh sandbox per example (Hypothesis runs many examples in one test call)."""
    base = tmp_path_factory.mktemp("fuzz-sandbox")
    counter = itertools.count()

    def make() -> tuple[Path, dict[str, Any]]:
        root = base / f"s{next(counter)}"
        return root, H.make_sandbox(root)

    return make


def _named(argv: list[str], before: dict[str, tuple]) -> set[str]:
    """Sandbox entries a command line names (its outputs may be written), with the targets of named links."""
    named = set()
    for rel, entry in before.items():
        if any(
            rel == v.rstrip("/")
            or v.startswith(rel + "/")
            or rel.startswith(v.rstrip("/") + "/")
            or v.endswith("=" + rel)
            or v.endswith(":" + rel)
            for v in argv
            if v
        ):
            named.add(rel)
            if H.kind_name(entry) == "symlink":
                named.add(os.path.normpath(os.path.join(os.path.dirname(rel), entry[2])))
    return named


def _path_values(command: str, argv: list[str]) -> set[str]:
    """The paths a command line gives (an error may name the file rather than its flag)."""
    kinds = {f.option: f.kind for f in FLAGS[command]}
    pairs = zip(argv, argv[1:])
    return {v for opt, v in pairs if kinds.get(opt) in ("output_path", "input_path") and len(v) > 2}


def _quoted(arg: str) -> str:
    text = repr(arg) if (not arg or " " in arg or not arg.isprintable()) else arg
    return text if len(text) <= 60 else f"{text[:40]}...({len(arg)} chars)"


def check_contract(
    command: str,
    argv: list[str],
    fuzzed: list[tuple[Flag, str]],
    res: dict[str, Any],
    before: dict[str, tuple],
    after: dict[str, tuple],
    device: bool,
) -> None:
    """The contract of one run (module docstring); fails with the command line and what broke."""
    shown = "bobshat " + " ".join(_quoted(a) for a in argv)
    err = res["stderr"]
    assert not res["timed_out"], f"{shown}: still running after the runner's timeout (a hang)"
    assert "Traceback" not in err, f"{shown}: a traceback\n{err[-3000:]}"
    ok = EXIT_OK.get(command, {0, 2})
    assert res["rc"] in ok, f"{shown}: exit {res['rc']} (want {sorted(ok)})\n{err[-1500:]}"
    if res["rc"] == 2:
        changed = H.changes(before, after)
        assert not changed, f"{shown}: refused, but changed the disk: {changed}\n{err[-500:]}"
        # the error names a flag given, or the value it refuses (replay reports on stdout, naming the file)
        names = {n for f, _ in fuzzed for n in f.names()} | {a for a in argv[1:] if a.startswith("--")}
        names |= {v for _, v in fuzzed if len(v) > 2} | _path_values(command, argv)
        text = res["stdout"] + err if command == "replay" else err
        last = err.strip().splitlines()[-1] if err.strip() else ""
        assert "error" in last.lower() or command == "replay", f"{shown}: exit 2 without an error line: {err!r}"
        assert any(n in text for n in names if n), f"{shown}: the error names none of the flags given: {last[:300]}"
    bad = [(f, v) for f, v in fuzzed if H.never_valid(f.kind, v)]
    if bad:
        what = ", ".join(f"{f.option or f.action.dest} {v[:40]!r}" for f, v in bad)
        assert res["rc"] == 2, (
            f"{shown}: {what} is no valid value, yet the command "
            f"{'began its work' if res['accepted'] else 'exited ' + str(res['rc'])}\n{err[-800:]}"
        )
    dash = after.get("-") if "-" not in before else None
    assert dash is None or H.kind_name(dash) != "file", f"{shown}: wrote a file named '-' (a dash is stdout)"
    named = _named(argv, before)
    for rel, entry in before.items():
        now = after.get(rel)
        if H.kind_name(entry) in ("symlink", "FIFO", "device") and not (H.kind_name(entry) == "device" and not device):
            assert now is not None and now[0] == entry[0], (
                f"{shown}: the {H.kind_name(entry)} {rel} became {H.kind_name(now) if now else 'nothing'}"
            )
        if rel not in named and not any(rel.startswith(n + "/") for n in named) and H.kind_name(entry) == "file":
            assert now == entry, f"{shown}: {rel}, which no flag named, changed or went"


def run_example(
    runner: Runner,
    sandboxes: Any,
    command: str,
    fuzzed: list[tuple[Flag, str]],
    stub: bool,
    base: list[str] | None = None,
) -> None:
    root, made = sandboxes()
    argv = [command, *(BASE[command] if base is None else base)]
    for flag, value in sorted(fuzzed, key=lambda fv: fv[0].option is not None):  # a positional next to BASE's
        argv += flag.argv(value)
    if command == "replay" and not any(f.option is None for f, _ in fuzzed):
        argv.append("existing.jsonl")
    before = H.snapshot(root)
    res = runner.run(argv, root, stub=stub)
    check_contract(command, argv, fuzzed, res, before, H.snapshot(root), made["device"])


@st.composite
def flag_values(draw: Any, flags: list[Flag], most: int = 3) -> list[tuple[Flag, str]]:
    """1 to ``most`` distinct flags of a command, each with a hostile value of its kind."""
    chosen = draw(st.lists(st.sampled_from(flags), min_size=1, max_size=most, unique_by=lambda f: f.option or ""))
    return [(f, draw(H.value_strategy(f.kind, f.action))) for f in chosen]


# --------------------------------------------------------------------------
# Layer 2: the whole command, its work stubbed out
@pytest.mark.parametrize("command", COMMANDS)
def test_hostile_flags_are_refused_or_accepted_cleanly(runner, sandboxes, command):
    flags = FLAGS[command]

    @fuzz_settings(5 + len(flags) // 4)  # train has 50-odd flags, the others 5 to 20
    @given(fuzzed=flag_values(flags))
    def prop(fuzzed: list[tuple[Flag, str]]) -> None:
        run_example(runner, sandboxes, command, fuzzed, stub=True)

    prop()


# --------------------------------------------------------------------------
# Layer 3: real, tiny runs of the commands that write files, with hostile output paths
REAL = {  # command -> its smallest real workload (no workers, no Ray, no peers)
    "simulate": ["--games", "2", "--hands", "1"],
    "eval": ["--deals", "1", "--hands", "1", "--quiet"],
    "bids": BASE["bids"] + ["--hands", "1"],
    "bench": BASE["bench"],
    "replay": [],
}


OUTPUTS = [(c, f) for c in sorted(REAL) for f in FLAGS[c] if f.kind in ("output_path", "input_path")]


@pytest.mark.parametrize(("command", "flag"), OUTPUTS, ids=[f"{c} {f.option or f.action.dest}" for c, f in OUTPUTS])
def test_outputs_to_hostile_paths_lose_nothing(runner, sandboxes, command, flag):
    others = [
        f
        for f in FLAGS[command]
        if f.kind in ("int", "float", "seed", "choice", "switch", "output_path") and f is not flag
        and f.action.dest not in ("workers", "deals", "games", "batches", "reps", "seconds", "worlds", "playouts")
        and not (command == "bids" and f.action.dest == "batch_size")  # bids' sizes have no bound yet: real work
    ]  # fmt: skip

    # a link and a FIFO every time (the paths most often written over), then generated ones
    @example(value="link.jsonl", extra=[])
    @example(value="fifo" if flag.kind == "output_path" else "dir", extra=[])
    @fuzz_settings(3)
    @given(
        value=H.value_strategy(flag.kind),
        extra=(st.lists(st.sampled_from(others), max_size=1) if others else st.just([]))
        .flatmap(lambda fs: st.tuples(*[H.value_strategy(f.kind, f.action).map(lambda v, f=f: (f, v)) for f in fs]))
        .map(list),
    )
    def prop(value: str, extra: list[tuple[Flag, str]]) -> None:
        run_example(runner, sandboxes, command, [(flag, value), *extra], stub=False, base=REAL[command])

    prop()


# The output path flags of the commands without a real run above: each path-like value in turn, the work stubbed
STUBBED_PATHS = [(c, f) for c in COMMANDS if c not in REAL for f in FLAGS[c] if f.kind == "output_path"]


@pytest.mark.parametrize(("command", "flag"), STUBBED_PATHS, ids=[f"{c} {f.option}" for c, f in STUBBED_PATHS])
def test_path_flags_get_every_path_like_value(runner, sandboxes, command, flag):
    """A folder, a missing parent, a FIFO, a link, a dangling link (``fuzz_hostile.PATH_LIKE``) at each output
    path flag (``--out``, ``--log-dir``, ``--runs-dir`` ...): refused with one line naming it and nothing changed,
    or accepted with every link, FIFO and file no flag named left as it was."""
    for value in H.PATH_LIKE:
        run_example(runner, sandboxes, command, [(flag, value)], stub=True)


def test_the_sandbox_holds_every_kind_of_path():
    """The properties above are only as good as the sandbox: one of each thing a path flag may name."""
    with tempfile.TemporaryDirectory() as tmp:
        made = H.make_sandbox(Path(tmp) / "s")
        kinds = {H.kind_name(e) for e in H.snapshot(Path(tmp) / "s").values()}
    assert {"file", "folder", "symlink", "FIFO"} <= kinds
    assert made["device"] == ("device" in kinds)
    if os.environ.get("BOBSHAT_CI", "") not in ("", "0"):  # CI runs as root: the device case must be checked there
        assert made["device"], "could not make a character device in the sandbox (mknod needs root)"

"""No command destroys its own inputs (issue 52): an output is never the same file as an input, nor records
written over a file that is not records.

Found by trying, each with a checksum before and after: ``simulate --records`` over a checkpoint (afterwards
"not a torch zip archive"), ``eval --records`` over a checkpoint's sidecar, ``exploit --json`` over the
checkpoint under test (after the whole run), ``imitate --out``/``--json`` over the records it reads or over
each other, ``average --out`` over an input's sidecar, ``imitate``/``expert --out`` over ``--init-from``.

The rule (bobshat_env.paths.check_distinct): an output (``--out`` and its sidecar ``OUT.json``, ``--json``,
``--records``, ``--plot``, ``--save``, a run folder's files) is not the same file on disk as an input (a
checkpoint named by an agent spec, ``--init-from``, ``--target``, ``--vr-value``, ``--config``, records, the
average's inputs; a checkpoint's sidecar counts as the checkpoint) nor as another output, however it is
spelled: the same path, ``./a/../a/x``, a symbolic link, a hard link. Each case here runs the command
in-process with its work stubbed (tests/fuzz_runner.py: the first game played, rollout, fit, write of the
average...), so a command that is not refused is caught as it begins its work, and checks: exit status 2,
one line naming both options, and every file in the folder byte for byte as it was.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import fuzz_runner
import pytest

from bobshat.cli import main

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "checkpoints" / "bobs_hat_4p.pt"
R4 = "random,random,random"  # the other three seats of a 4-player table


@dataclass(frozen=True)
class Case:
    """``argv`` with ``{ALIAS}`` where a spelling of ``target`` goes; the error names ``out`` and ``inp``."""

    id: str
    argv: tuple[str, ...]
    target: str  # relative to the test's folder; exists before the command (a hard link needs a file)
    out: str  # the output's name in the error
    inp: str  # the input's (or the first output's) name in the error


CASES = [
    # simulate: --records over a checkpoint an agent plays, or its sidecar
    Case("simulate-records-ppo", ("simulate", "--hands", "1", "--games", "2", "--agents", f"ppo:in/p.pt,{R4}",
         "--records", "{ALIAS}"), "in/p.pt", "--records", "--agents"),
    Case("simulate-records-sidecar", ("simulate", "--hands", "1", "--games", "2", "--agents", f"ppo:in/p.pt,{R4}",
         "--records", "{ALIAS}"), "in/p.pt.json", "--records", "the sidecar of --agents"),
    Case("simulate-records-search", ("simulate", "--hands", "1", "--games", "2", "--agents",
         f"search:policy=in/p.pt,worlds=2,{R4}", "--records", "{ALIAS}"), "in/p.pt", "--records", "--agents"),
    Case("simulate-records-composite", ("simulate", "--hands", "1", "--games", "2", "--agents",
         f"bid=ppo:in/p.pt+play=random,{R4}", "--records", "{ALIAS}"), "in/p.pt", "--records", "--agents"),
    # eval: --json, --records, --plot
    Case("eval-json-ppo", ("eval", "--hands", "1", "--deals", "1", "--quiet", "--agents", f"ppo:in/p.pt,{R4}",
         "--json", "{ALIAS}"), "in/p.pt", "--json", "--agents"),
    Case("eval-records-sidecar", ("eval", "--hands", "1", "--deals", "1", "--quiet", "--agents",
         f"ppo:in/p.pt,{R4}", "--records", "{ALIAS}"), "in/p.pt.json", "--records", "the sidecar of --agents"),
    Case("eval-json-vr-value", ("eval", "--hands", "1", "--deals", "1", "--quiet", "--variance-reduction",
         "--vr-value", "in/p.pt", "--json", "{ALIAS}"), "in/p.pt", "--json", "--vr-value"),
    Case("eval-json-vr-proxy", ("eval", "--hands", "1", "--deals", "1", "--quiet", "--agents",
         f"ppo:in/q.pt,{R4}", "--variance-reduction", "--vr-proxy", "ppo:in/p.pt,random", "--json", "{ALIAS}"),
         "in/p.pt", "--json", "--vr-proxy"),
    Case("eval-records-is-json", ("eval", "--hands", "1", "--deals", "1", "--quiet", "--json", "in/old.json",
         "--records", "{ALIAS}"), "in/old.json", "--records", "--json"),
    Case("eval-plot-is-json", ("eval", "--hands", "1", "--deals", "1", "--quiet", "--json", "in/old.png",
         "--plot", "{ALIAS}"), "in/old.png", "--plot", "--json"),
    # bids: --json, --plot
    Case("bids-json-bidder", ("bids", "--hands", "1", "--deals", "1", "--quiet", "--bidders", "ppo:in/p.pt",
         "--json", "{ALIAS}"), "in/p.pt", "--json", "--bidders"),
    Case("bids-json-play", ("bids", "--hands", "1", "--deals", "1", "--quiet", "--bidders", "random",
         "--play", "ppo:in/p.pt", "--json", "{ALIAS}"), "in/p.pt.json", "--json", "the sidecar of --play"),
    Case("bids-plot-is-json", ("bids", "--hands", "1", "--deals", "1", "--quiet", "--bidders", "random",
         "--json", "in/old.png", "--plot", "{ALIAS}"), "in/old.png", "--plot", "--json"),
    # play: --save
    Case("play-save-opponent", ("play", "--seed", "1", "--opponents", "ppo:in/p.pt", "--save", "{ALIAS}"),
         "in/p.pt", "--save", "--opponents"),
    # serve: the records folder's games.jsonl, an offered agent's checkpoint (the input spelled)
    Case("serve-records-agent", ("serve", "--port", "0", "--records-dir", "served", "--agents", "ppo:{ALIAS}"),
         "served/games.jsonl", "--records-dir's games.jsonl", "--agents"),
    # train: the run folder's files (the input spelled)
    Case("train-init-from-run-policy", ("train", "--progress", "false", "--runs-dir", "runs", "--run-name", "r",
         "--init-from", "{ALIAS}"), "runs/r/policy.pt", "the run folder's policy.pt", "--init-from"),
    Case("train-config-run-file", ("train", "--progress", "false", "--runs-dir", "runs", "--run-name", "rc",
         "--config", "{ALIAS}"), "runs/rc/ckpt.pt.json", "the run folder's ckpt.pt.json", "--config"),
    # exploit: --json, the run folder
    Case("exploit-json-target", ("exploit", "--quiet", "--runs-dir", "runs", "--run-name", "rx", "--target",
         "ppo:in/p.pt", "--json", "{ALIAS}"), "in/p.pt", "--json", "--target"),
    Case("exploit-json-init", ("exploit", "--quiet", "--runs-dir", "runs", "--run-name", "rx", "--target",
         "random", "--init", "in/p.pt", "--json", "{ALIAS}"), "in/p.pt.json", "--json", "the sidecar of --init"),
    Case("exploit-json-config", ("exploit", "--quiet", "--runs-dir", "runs", "--run-name", "rx", "--target",
         "random", "--config", "in/exploit.yaml", "--json", "{ALIAS}"), "in/exploit.yaml", "--json", "--config"),
    Case("exploit-json-run-report", ("exploit", "--quiet", "--runs-dir", "runs", "--run-name", "rx", "--target",
         "random", "--json", "{ALIAS}"), "runs/rx/exploit.json", "--json", "the run folder's exploit.json"),
    Case("exploit-init-run-policy", ("exploit", "--quiet", "--runs-dir", "runs", "--run-name", "rx", "--target",
         "random", "--init", "{ALIAS}"), "runs/rx/policy.pt", "the run folder's policy.pt", "--init"),
    Case("exploit-target-run-policy", ("exploit", "--quiet", "--runs-dir", "runs", "--run-name", "rx", "--target",
         "ppo:{ALIAS}"), "runs/rx/policy.pt", "the run folder's policy.pt", "--target"),
    # imitate: --out (and its sidecar), --json
    Case("imitate-out-records", ("imitate", "--quiet", "--records", "in/r.jsonl", "--out", "{ALIAS}"),
         "in/r.jsonl", "--out", "--records"),
    Case("imitate-json-records", ("imitate", "--quiet", "--records", "in/r.jsonl", "--out", "o.pt", "--json",
         "{ALIAS}"), "in/r.jsonl", "--json", "--records"),
    Case("imitate-json-out", ("imitate", "--quiet", "--records", "in/r.jsonl", "--out", "in/old.pt", "--json",
         "{ALIAS}"), "in/old.pt", "--json", "--out"),
    Case("imitate-json-out-sidecar", ("imitate", "--quiet", "--records", "in/r.jsonl", "--out", "in/old.pt",
         "--json", "{ALIAS}"), "in/old.pt.json", "--json", "the sidecar of --out"),
    Case("imitate-out-init-from", ("imitate", "--quiet", "--records", "in/r.jsonl", "--init-from", "in/p.pt",
         "--out", "{ALIAS}"), "in/p.pt", "--out", "--init-from"),
    # expert: --out, --json
    Case("expert-out-init-from", ("expert", "--quiet", "--init-from", "in/p.pt", "--out", "{ALIAS}"),
         "in/p.pt", "--out", "--init-from"),
    Case("expert-json-init-sidecar", ("expert", "--quiet", "--init-from", "in/p.pt", "--out", "o.pt", "--json",
         "{ALIAS}"), "in/p.pt.json", "--json", "the sidecar of --init-from"),
    Case("expert-json-config", ("expert", "--quiet", "--config", "in/expert.yaml", "--init-from", "in/p.pt",
         "--out", "o.pt", "--json", "{ALIAS}"), "in/expert.yaml", "--json", "--config"),
    Case("expert-json-out", ("expert", "--quiet", "--init-from", "in/p.pt", "--out", "in/old.pt", "--json",
         "{ALIAS}"), "in/old.pt", "--json", "--out"),
    # average: --out over an input or its sidecar
    Case("average-out-input", ("average", "in/p.pt", "in/q.pt", "--out", "{ALIAS}"), "in/p.pt", "--out", "CKPT"),
    Case("average-out-input-sidecar", ("average", "in/p.pt", "in/q.pt", "--out", "{ALIAS}"), "in/p.pt.json",
         "--out", "the sidecar of CKPT"),
]  # fmt: skip
SPELLINGS = ("same", "other", "symlink", "hardlink")


@pytest.fixture(scope="module")
def records_file(tmp_path_factory) -> Path:
    """A small records file of Bob's Hat, 4 players (what imitate reads)."""
    path = tmp_path_factory.mktemp("records") / "r.jsonl"
    assert main(["simulate", "--hands", "1", "--games", "3", "--records", str(path)]) == 0
    return path


def _setup(folder: Path, records: Path) -> None:
    """Every file a case names, in ``folder``: copies of a shipped checkpoint, records, presets, old outputs."""
    (folder / "in").mkdir()
    for name in ("in/p.pt", "in/q.pt", "in/old.pt", "runs/r/policy.pt", "runs/rx/policy.pt", "served/games.jsonl"):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SHIPPED, folder / name)
        shutil.copyfile(SHIPPED.with_name(SHIPPED.name + ".json"), folder / (name + ".json"))
    shutil.copyfile(records, folder / "in/r.jsonl")
    shutil.copyfile(ROOT / "configs" / "bobs_hat_4p.yaml", folder / "in/exploit.yaml")
    (folder / "in/expert.yaml").write_text("rounds: 1\ngames: 4\n")
    (folder / "in/old.json").write_text("{}\n")
    (folder / "in/old.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (folder / "runs/rc").mkdir(parents=True)
    (folder / "runs/rc/ckpt.pt.json").write_text("seed: 3\n")  # a preset (YAML) where the run's sidecar goes
    (folder / "runs/rx/exploit.json").write_text("{}\n")


def spell(target: str, how: str) -> str:
    """``target`` (a file under the current folder) as another name of the same file."""
    if how == "same":
        return target
    if how == "other":  # ./in/../in/p.pt
        head, _, name = target.rpartition("/")
        return f"./{head}/../{Path(head).name}/{name}" if head else f"./in/../{name}"
    Path("links").mkdir(exist_ok=True)
    alias = Path("links") / Path(target).name
    if how == "symlink":
        os.symlink(Path(target).resolve(), alias)
    else:
        os.link(target, alias)
    return str(alias)


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder``: a regular file's SHA-256, a link's target."""
    seen = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, folder)
            if os.path.islink(path):
                seen[rel] = "link -> " + os.readlink(path)
            else:
                seen[rel] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return seen


# the commands' modules (fuzz_runner.warm imports them too)
WARM = ("bobshat.cli", "agents", "train.evaluate", "train.bids", "train.exploit", "train.imitate",
        "train.expert", "train.average", "train.ppo.run", "benchmarks.throughput",
        "bobshat.web.app")  # fmt: skip


@pytest.fixture
def stubbed(monkeypatch):
    """The commands' work stubbed out (tests/fuzz_runner.py): a command not refused raises WorkStarted."""
    import importlib

    for modname in WARM:  # imported first: a module that imports a stubbed name keeps what it got
        importlib.import_module(modname)
    for modname, attrs in fuzz_runner.WORK.items():
        mod = importlib.import_module(modname)
        for attr in attrs:
            owner, _, name = attr.rpartition(".")
            monkeypatch.setattr(getattr(mod, owner) if owner else mod, name, fuzz_runner._stub)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # play: its input ends at the first prompt


def run_refused(argv: list[str], capsys) -> tuple[int, str]:
    """``bobshat ARGV`` in-process: its exit status and stderr; a command that begins its work fails the test."""
    try:
        code = main(argv)
    except fuzz_runner.WorkStarted:
        pytest.fail(f"bobshat {' '.join(argv)}: began its work (the output was not refused)")
    except SystemExit as err:  # argparse
        code = err.code
    return code, capsys.readouterr().err


@pytest.mark.parametrize("how", SPELLINGS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_an_output_that_is_an_input_is_refused_before_any_work(
    case, how, tmp_path, monkeypatch, capsys, stubbed, records_file
):
    _setup(tmp_path, records_file)
    monkeypatch.chdir(tmp_path)
    alias = spell(case.target, how)
    argv = [a.replace("{ALIAS}", alias) for a in case.argv]
    before = snapshot(tmp_path)
    code, err = run_refused(argv, capsys)
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith(f"bobshat {argv[0]}: error: "), err
    assert f"{case.out} is the same file as {case.inp} (" in lines[0], err
    assert snapshot(tmp_path) == before  # nothing written, nothing made, nothing removed


# --------------------------------------------------------------------------
# What still runs: distinct files, and a command writing its own file again
def test_distinct_outputs_and_inputs_still_run(tmp_path, monkeypatch, capsys, records_file):
    """Outputs beside their inputs (other names, the same folder) are not refused; nor is writing a records
    file again, nor appending to one."""
    monkeypatch.chdir(tmp_path)
    shutil.copyfile(records_file, "r.jsonl")
    for argv in (
        ["simulate", "--hands", "1", "--games", "2", "--records", "r.jsonl"],  # records replaced by records
        ["simulate", "--hands", "1", "--games", "2", "--records", "empty.jsonl"],
        ["eval", "--hands", "1", "--deals", "1", "--quiet", "--json", "r.json", "--records", "e.jsonl",
         "--plot", "r.png"],
    ):  # fmt: skip
        Path("empty.jsonl").write_bytes(b"")
        assert main(argv) == 0, capsys.readouterr().err
    assert len(Path("r.jsonl").read_text().splitlines()) == 2
    assert json.loads(Path("e.jsonl").read_text().splitlines()[0])["game"] == "bobs_hat"


# --------------------------------------------------------------------------
# Records go only to a new or empty file, or one of records
@pytest.mark.parametrize(
    "argv, kind",
    [
        (["simulate", "--hands", "1", "--games", "2", "--records", "in/p.pt"], "a torch checkpoint (zip archive)"),
        (["eval", "--hands", "1", "--deals", "1", "--quiet", "--records", "in/p.pt.json"],
         "JSON that is not a game record"),
        (["play", "--seed", "1", "--save", "in/blob.bin"], "binary data"),
        (["simulate", "--hands", "1", "--games", "2", "--records", "in/expert.yaml"], "text that is not a game record"),
        (["eval", "--hands", "1", "--deals", "1", "--quiet", "--records", "in/old.png"], "a PNG image"),
        (["serve", "--port", "0", "--records-dir", "served"], "a torch checkpoint (zip archive)"),
    ],
    ids=["simulate-checkpoint", "eval-sidecar", "play-binary", "simulate-yaml", "eval-png", "serve-checkpoint"],
)  # fmt: skip
def test_records_are_not_written_over_a_file_that_is_not_records(
    argv, kind, tmp_path, monkeypatch, capsys, stubbed, records_file
):
    """``simulate --records`` over a checkpoint left it "not a torch zip archive"; ``eval --records`` over a
    sidecar left it no longer JSON. Now one line saying what the file appears to be, before any game."""
    _setup(tmp_path, records_file)
    (tmp_path / "in/blob.bin").write_bytes(bytes(range(256)) * 4)
    monkeypatch.chdir(tmp_path)
    before = snapshot(tmp_path)
    code, err = run_refused(argv, capsys)
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and f"appears to be {kind}, not game records" in err, err
    assert snapshot(tmp_path) == before


def test_appending_records_checks_the_file_each_time(tmp_path, monkeypatch, records_file):
    """What appends records (``play --save``, the web server's games.jsonl) checks the file at the start and
    again at each save: a records file replaced by a checkpoint meanwhile is left as it is; play saves the
    game to a new file instead, the server says it could not save it."""
    from types import SimpleNamespace

    from bobshat.terminal import TerminalGame
    from bobshat.web.session import RECORDS_FILE, SessionStore
    from bobshat_env.games import make_game
    from bobshat_env.paths import OutputPathError

    monkeypatch.chdir(tmp_path)
    record = json.loads(records_file.read_text().splitlines()[0])
    checkpoint = tmp_path / "p.pt"
    shutil.copyfile(SHIPPED, checkpoint)
    before = checkpoint.read_bytes()
    game = make_game("bobs_hat", players=4)
    with pytest.raises(OutputPathError, match=r"^--save: .*p.pt appears to be a torch checkpoint \(zip archive\)"):
        TerminalGame(game, 0, ["random"], save=str(checkpoint), output=io.StringIO())
    saves = tmp_path / "saves.jsonl"
    shutil.copyfile(records_file, saves)
    tg = TerminalGame(game, 0, ["random"], save=str(saves), output=io.StringIO())
    shutil.copyfile(SHIPPED, saves)  # replaced while the game went on
    elsewhere = tg._save(record)
    assert elsewhere is not None and Path(elsewhere).parent == tmp_path and elsewhere != str(saves)
    assert saves.read_bytes() == before and json.loads(Path(elsewhere).read_text()) == record
    (tmp_path / "served").mkdir()
    shutil.copyfile(SHIPPED, tmp_path / "served" / RECORDS_FILE)
    session = SimpleNamespace(record=record, save_error=None, saved=None)
    SessionStore(tmp_path / "served")._save(session)
    assert session.saved is None and "appears to be a torch checkpoint" in session.save_error
    assert (tmp_path / "served" / RECORDS_FILE).read_bytes() == before
    shutil.copyfile(records_file, tmp_path / "served" / RECORDS_FILE)  # records: the game goes in
    SessionStore(tmp_path / "served")._save(session)
    assert session.saved == {"file": RECORDS_FILE}
    assert len((tmp_path / "served" / RECORDS_FILE).read_text().splitlines()) == 4


def test_what_a_file_appears_to_be(tmp_path, records_file):
    """records_file_problem: None where records may go (blank lines and a byte-order mark first, a first line
    longer than what is read that begins like a record); otherwise what the file is."""
    from bobshat_env.records.io import HEAD_BYTES, records_file_problem

    line = records_file.read_bytes().splitlines()[0]
    cases = {
        "blank-first.jsonl": (b"\n\n  \n" + line + b"\n", None),
        "bom.jsonl": (b"\xef\xbb\xbf" + line + b"\n", None),
        "no-newline.jsonl": (line, None),
        "long.jsonl": (b'{"game":"oh_hell","format":1,"pad":"' + b"x" * HEAD_BYTES + b'"}\n', None),
        "long-text.txt": (b"x" * (HEAD_BYTES + 10), "text that is not a game record"),
        "one-line-meta.json": (b'{"game":"bobs_hat","players":4}\n', "JSON that is not a game record"),
        "list.json": (b"[1, 2]\n", "JSON that is not a game record"),
        "zip.zip": (b"PK\x03\x04" + b"\x00" * 40 + b"notes.txt", "a zip archive"),
        "pickle.pt": (b"\x80\x02}q\x00.", "a pickle (an old torch checkpoint?)"),
        "latin1.txt": ("café\n".encode("latin-1"), "binary data"),
        "nul.txt": (b"abc\x00def\n", "binary data"),
        "blank.txt": (b"\n\n", None),
    }
    for name, (data, kind) in cases.items():
        (tmp_path / name).write_bytes(data)
        assert records_file_problem(tmp_path / name) == kind, name
    assert records_file_problem(tmp_path / "missing.jsonl") is None
    assert records_file_problem(SHIPPED) == "a torch checkpoint (zip archive)"


# --------------------------------------------------------------------------
# The rule itself
def test_the_same_file_however_spelled(tmp_path, monkeypatch):
    """check_distinct compares files on disk: relative and absolute paths, ``..``, links (also dangling ones, to
    a file still to be made) and hard links are the same file; devices are not files anything is lost from."""
    from bobshat_env.paths import OutputPathError, check_distinct, checkpoint_files, same_file

    monkeypatch.chdir(tmp_path)
    Path("sub").mkdir()
    Path("a.pt").write_bytes(b"a")
    Path("b.pt").write_bytes(b"b")
    os.link("a.pt", "sub/hard.pt")
    os.symlink(tmp_path / "new.json", "sub/dangling.json")
    assert same_file("a.pt", tmp_path / "a.pt") and same_file("./sub/../a.pt", "sub/hard.pt")
    assert same_file("sub/dangling.json", "new.json") and same_file("x/../new.json", "new.json")
    assert not same_file("a.pt", "b.pt") and not same_file(os.devnull, os.devnull)
    check_distinct([("--json", os.devnull), ("--records", os.devnull)])  # both discarded: nothing lost
    check_distinct([("--json", "-"), ("--records", "r.jsonl")], [("--agents", "-")])  # '-' is stdout
    check_distinct(checkpoint_files("--out", "c.pt"), checkpoint_files("--init-from", "a.pt"))
    with pytest.raises(OutputPathError, match=r"^--json is the same file as --out \(new.json\); choose"):
        check_distinct([("--out", "new.json"), ("--json", "sub/dangling.json")])
    Path("c.pt.json").write_text("{}")
    os.link("c.pt.json", "sub/hard.json")
    with pytest.raises(OutputPathError, match=r"^--out is the same file as the sidecar of --init-from \(c.pt.json\)"):
        check_distinct([("--out", "sub/hard.json")], checkpoint_files("--init-from", "c.pt"))
    assert checkpoint_files("--out", None) == [] and checkpoint_files("--out", 5) == []


def test_resume_still_writes_its_own_run_folder(tmp_path):
    """A resumed run reads and writes its own ckpt.pt and ignores init_from: the run folder's files are not
    refused then; a fresh run named after the folder its init_from lies in is."""
    from train.ppo.config import Args
    from train.ppo.rundir import check_run_inputs

    policy = str(tmp_path / "runs" / "r" / "policy.pt")
    check_run_inputs(Args(runs_dir=str(tmp_path / "runs"), run_name="r", resume=True, init_from=policy))
    check_run_inputs(Args(runs_dir=str(tmp_path / "runs"), run_name="other", init_from=policy))
    with pytest.raises(ValueError, match="the run folder's policy.pt is the same file as --init-from"):
        check_run_inputs(Args(runs_dir=str(tmp_path / "runs"), run_name="r", init_from=policy))

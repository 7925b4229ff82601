"""``bobshat bench --train`` (benchmarks/train_speed.py) used roughly: a SIGTERM mid-run, ``--json`` to a
link, a FIFO, a missing folder or ``-``, two runs at once.

The benchmark's real work (a PPO run per measurement) takes minutes, so these tests run the real script
on a stand-in checkout: a copy of benchmarks/train_speed.py beside a stub ``train/ppo`` whose ``train``
returns at once (or sleeps, for the signal test), in the layout the script checks. The tests through
``bobshat bench --train`` replace the benchmark's ``bench`` by one that fails the test at once, so a
refusal that stops working fails here in seconds instead of starting a 1.5M-decision training run.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.procs import alive, kill_all

ROOT = Path(__file__).resolve().parents[1]

_STUB_RUN = """
import os, time
from pathlib import Path


class TrainingRun:
    def run(self):
        pids = os.environ.get("STUB_PIDS")
        if pids:
            with open(pids, "a") as f:
                f.write(f"{os.getpid()}\\n")
        time.sleep(float(os.environ.get("STUB_SLEEP", "0")))


def train(args):
    TrainingRun().run()
    return {"decisions_this_run": 1000, "learner_decisions": 250, "iteration": 1}
"""


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A stand-in checkout: the real benchmark script, the preset's path, and a stub trainer."""
    repo = tmp_path / "repo"
    (repo / "benchmarks").mkdir(parents=True)
    shutil.copy(ROOT / "benchmarks" / "train_speed.py", repo / "benchmarks" / "train_speed.py")
    (repo / "configs").mkdir()
    (repo / "configs" / "bobs_hat_4p.yaml").write_text("# stand-in\n")
    ppo = repo / "train" / "ppo"
    ppo.mkdir(parents=True)
    for init in (repo / "train" / "__init__.py", ppo / "__init__.py"):
        init.write_text("")
    (ppo / "config.py").write_text("def parse_args(argv):\n    return argv\n")
    (ppo / "run.py").write_text(_STUB_RUN)
    return repo


def script(repo: Path, *args: str, **env_vars: str) -> subprocess.Popen:
    """``python benchmarks/train_speed.py --no-split ARGS`` of the stand-in (its own session; output to files)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), **env_vars}  # the parent writes --json with our bobshat_env
    argv = [sys.executable, str(repo / "benchmarks" / "train_speed.py"), "--no-split", "--reps", "1", *args]
    out, err = (open(repo.parent / f"{name}.{time.monotonic_ns()}", "w+b") for name in ("out", "err"))
    proc = subprocess.Popen(argv, cwd=repo.parent, env=env, stdout=out, stderr=err, start_new_session=True)
    proc.out_file, proc.err_file = out, err  # type: ignore[attr-defined]
    return proc


def finish(proc: subprocess.Popen, timeout: float = 120) -> tuple[int, str, str]:
    """Wait for ``proc``: (status, stdout, stderr)."""
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    texts = []
    for f in (proc.out_file, proc.err_file):  # type: ignore[attr-defined]
        f.seek(0)
        texts.append(f.read().decode(errors="replace"))
        f.close()
    return proc.returncode, texts[0], texts[1]


def rows_of(text: str) -> list[dict]:
    rows = json.loads(text)
    assert isinstance(rows, list) and rows and all(r["table_decisions"] == 1000 for r in rows), rows
    return rows


# --------------------------------------------------------------------------
# Through `bobshat bench --train`: refusals before any measurement
@pytest.fixture
def no_bench(monkeypatch):
    """``bobshat bench --train`` with the measurements replaced by a failure: a refusal must come first."""
    from benchmarks import train_speed

    def bench(*args, **kwargs):
        raise AssertionError("the benchmark started: the bad flag was not refused first")

    monkeypatch.setattr(train_speed, "bench", bench)


def _cli(argv: list[str], capsys) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of ``bobshat ARGV`` in this process (valid flags: no argparse exit)."""
    from bobshat.cli import main

    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_folder_that_is_not_a_checkout_is_refused_before_any_run(tmp_path, capsys, no_bench):
    """As tests/test_train_speed.py's refusal test, but a broken refusal fails at once (see the docstring)."""
    code, _, err = _cli(["bench", "--train", "--repo", str(tmp_path)], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "--repo" in lines[0] and "not a bobshat checkout" in lines[0], err


@pytest.mark.parametrize("where", ["missing folder", "a folder"])
def test_json_that_cannot_be_written_is_refused_before_any_run(tmp_path, capsys, no_bench, where):
    path = tmp_path / "no" / "rows.json" if where == "missing folder" else tmp_path
    code, _, err = _cli(["bench", "--train", "--json", str(path)], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("bobshat bench: error: --json: "), err
    assert "Traceback" not in err


def test_json_dash_with_train_is_stdout_or_refused_never_a_file_named_dash(tmp_path, capsys, monkeypatch):
    from benchmarks import train_speed

    row = {"rep": 0, "checkout": 0, "table_decisions": 1000}
    monkeypatch.setattr(train_speed, "bench", lambda *a, **k: ([row], "the summary"))
    monkeypatch.chdir(tmp_path)
    code, out, err = _cli(["bench", "--train", "--json", "-"], capsys)
    assert not (tmp_path / "-").exists(), "wrote a file named '-'"
    assert code == 2 or json.loads(out.split("the summary")[-1]) == [row], (code, out, err)


# --------------------------------------------------------------------------
# The script on the stand-in checkout
def test_json_through_a_link_replaces_the_target_and_keeps_the_link(checkout):
    target = checkout.parent / "target.json"
    target.write_text("old\n")
    link = checkout.parent / "link.json"
    link.symlink_to(target)
    code, out, err = finish(script(checkout, "--json", str(link)))
    assert code == 0, err
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert rows_of(target.read_text())[0]["repo"] == str(checkout)


def test_json_to_a_fifo_goes_to_its_reader(checkout):
    fifo = checkout.parent / "rows.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    code, _, err = finish(script(checkout, "--json", str(fifo)))
    reader.join(timeout=30)
    assert code == 0, err
    assert got and rows_of(got[0].decode())
    assert fifo.is_fifo()


def test_warm_up_runs_come_first_and_are_not_measured(checkout, tmp_path):
    """``--warmup 2``: two runs per checkout before the measured one (a changed kernel compiles in the first
    run after the change), none of them in the rows. Seen red with the warm-up rows kept."""
    marks = tmp_path / "runs.txt"
    code, out, err = finish(script(checkout, "--warmup", "2", "--json", "-", STUB_PIDS=str(marks)))
    assert code == 0, err
    assert len(marks.read_text().split()) == 3 and err.count("warm-up") == 2, err
    assert len(rows_of(out[out.index("\n[\n") + 1 :])) == 1  # the rows after the summary
    code, out, err = finish(script(checkout, "--warmup", "0", "--json", "-", STUB_PIDS=str(tmp_path / "none.txt")))
    assert code == 0 and "warm-up" not in err and len((tmp_path / "none.txt").read_text().split()) == 1, err


def test_script_refuses_a_json_path_in_a_missing_folder_before_running(checkout, tmp_path):
    marks = tmp_path / "runs.txt"
    code, _, err = finish(script(checkout, "--json", str(tmp_path / "no" / "rows.json"), STUB_PIDS=str(marks)))
    assert code == 2 and "Traceback" not in err and "--json" in err, err
    assert not marks.exists(), "measured before refusing"


def test_two_runs_at_once_writing_the_same_json_leave_one_whole_file(checkout):
    """Each run measures in its own temporary runs folder; the rows file is replaced atomically: the last
    writer's rows, whole, and no temporary left beside it."""
    path = checkout.parent / "rows.json"
    procs = [script(checkout, "--json", str(path), STUB_SLEEP="1") for _ in range(2)]
    for proc in procs:
        code, _, err = finish(proc)
        assert code == 0, err
    assert len(rows_of(path.read_text())) == 1
    assert [p.name for p in checkout.parent.iterdir() if p.name.startswith(".rows.json")] == []


def test_a_sigterm_mid_run_ends_the_measuring_subprocess_too(checkout, tmp_path):
    marks = tmp_path / "pids.txt"
    proc = script(checkout, STUB_PIDS=str(marks), STUB_SLEEP="120")
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 120
        while not (marks.exists() and marks.read_text().strip()):
            assert proc.poll() is None and time.monotonic() < deadline, finish(proc, 1)
            time.sleep(0.05)
        workers = {int(x) for x in marks.read_text().split()}
        proc.send_signal(signal.SIGTERM)
        code, _, err = finish(proc, 60)
        assert "Traceback" not in err, err
        deadline = time.monotonic() + 20
        while alive(workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(workers), "the measuring subprocess outlived the benchmark"
    finally:
        kill_all(workers)

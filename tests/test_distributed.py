"""Ray (train/runtime/distributed.py): evaluation over Ray tasks, the connection's errors, and lazy imports.

Ray tests start a small local instance (2 CPUs); they are skipped where Ray
is not installed (``pip install -e ".[ray]"``; CI installs it).
"""

from __future__ import annotations

import http.server
import json
import signal
import socket
import subprocess
import sys
import threading

import pytest
from procs import ray_tmpdir

from bobshat.cli import main
from bobshat_env.games import make_game
from bobshat_env.records import read_jsonl, replay_record
from train.evaluate import evaluate
from train.runtime.distributed import DistributedError, check_address, import_ray, preflight, ray_session

ray = pytest.importorskip("ray")
SPECS = "strong,simple,random,random"


def _without_run(s: dict) -> dict:
    return {k: v for k, v in s.items() if k != "run"}


def test_no_ray_import_without_ray_options() -> None:
    """The single-process paths never import Ray: the CLI, evaluation and training modules load without it."""
    code = (
        "import sys; import bobshat.cli, train.evaluate, train.runtime.distributed, train.ppo, train.ppo.workers; "
        "from bobshat.cli import main; "
        "main(['eval', '--deals', '2', '--quiet', '--agents', 'random,random,random,random']); "
        "assert 'ray' not in sys.modules, 'ray was imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, timeout=300)


def test_ray_not_installed_is_one_line_with_the_install_command(monkeypatch, capsys) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(DistributedError, match=r"pip install -e \"\.\[ray\]\""):
        import_ray()
    assert main(["eval", "--deals", "2", "--quiet", "--ray-address", "local"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("bobshat eval: error: Ray is not installed") and ".[ray]" in err[0]


@pytest.mark.parametrize(
    ("address", "message"),
    [
        ("127.0.0.1:1", "no Ray cluster answers at 127.0.0.1:1"),
        ("foo", "expected local, auto, HOST:PORT"),
        ("host:notaport", "expected local, auto, HOST:PORT"),
        ("", "must be local, auto"),
    ],
)
def test_bad_addresses_are_refused_quickly(address: str, message: str) -> None:
    with pytest.raises(DistributedError, match=message):
        check_address(address)


@pytest.fixture
def not_ray():
    """Two ports that answer but are not Ray: a web server, and a socket that accepts and says nothing."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:  # the test reads stderr
            pass

    web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    mute = socket.socket()
    mute.bind(("127.0.0.1", 0))
    mute.listen(8)
    yield {"web": f"127.0.0.1:{web.server_address[1]}", "mute": f"127.0.0.1:{mute.getsockname()[1]}"}
    web.shutdown()
    web.server_close()
    mute.close()


@pytest.mark.parametrize("kind", ["web", "mute"])
def test_a_port_that_answers_but_is_not_ray_is_refused(not_ray, kind, monkeypatch, capsys) -> None:
    """Ray's client hung for minutes on such a port (a ``bobshat serve`` one); the probe refuses it at once."""
    address = not_ray[kind]
    with pytest.raises(DistributedError, match=f"{address} answers but is not Ray"):
        check_address(address)
    monkeypatch.setattr(ray, "is_initialized", lambda: False)  # as in a fresh process
    monkeypatch.setattr(ray, "init", lambda *a, **k: pytest.fail("ray.init was called"))
    assert main(["eval", "--deals", "2", "--quiet", "--ray-address", address]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"bobshat eval: error: --ray-address {address}: "), err


def test_preflight_before_anything_starts(monkeypatch) -> None:
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    with pytest.raises(DistributedError, match=r"9999 rollout worker\(s\): 9999 CPU\(s\) needed, this machine"):
        preflight("local", 9999, "9999 rollout worker(s)")
    with pytest.raises(DistributedError, match="no Ray cluster answers"):
        preflight("127.0.0.1:1", 1, "x")
    monkeypatch.undo()
    was = ray.is_initialized()
    preflight("local", 1, "one worker")
    assert ray.is_initialized() == was  # it starts nothing


def test_bad_address_on_the_command_line(monkeypatch, capsys) -> None:
    monkeypatch.setattr(ray, "is_initialized", lambda: False)  # as in a fresh process, whatever ran before
    assert main(["eval", "--deals", "2", "--quiet", "--ray-address", "127.0.0.1:1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "bobshat eval: error: --ray-address 127.0.0.1:1: no Ray cluster answers at 127.0.0.1:1 "
        "(Connection refused); start one with `ray start --head` or check the address"
    ]
    assert main(["eval", "--deals", "2", "--quiet", "--ray-address", "local", "--workers", "2"]) == 2
    assert "exclude each other" in capsys.readouterr().err


def test_eval_over_ray_equals_one_worker(tmp_path, capsys) -> None:
    """``--ray-address local`` (a Ray started and stopped by the command) gives the numbers of ``--workers 1``."""
    common = ["eval", "--agents", SPECS, "--deals", "6", "--seed", "4", "--batch-size", "24"]
    one, two = tmp_path / "one.json", tmp_path / "ray.json"
    rec1, rec2 = tmp_path / "one.jsonl", tmp_path / "ray.jsonl"
    assert main(common + ["--json", str(one), "--records", str(rec1), "--quiet"]) == 0
    capsys.readouterr()
    assert not ray.is_initialized()
    args = ["--json", str(two), "--records", str(rec2), "--plot", str(tmp_path / "p.png"), "--ray-address", "local"]
    assert main(common + args) == 0
    out = capsys.readouterr()
    assert not ray.is_initialized()  # the command stopped the Ray it started
    a, b = json.loads(one.read_text()), json.loads(two.read_text())
    assert _without_run(a) == _without_run(b)
    assert b["run"]["ray_address"] == "local" and b["run"]["decisions"] == a["run"]["decisions"]
    assert "on Ray (local," in out.out
    assert out.err.count("games") >= 1 and f"/{a['games']} games" in out.err  # the same progress bar
    assert rec1.read_text() == rec2.read_text()  # records in game order, whatever order the tasks finished in
    assert all(replay_record(r) == [] for _, r in read_jsonl(rec2)) and (tmp_path / "p.png").stat().st_size > 0


@pytest.fixture(scope="module")
def local_ray():
    """A private 2-CPU Ray for this module's remaining tests (its own RAY_TMPDIR; ``address="local"``: never
    another Ray that runs on the machine), stopped at the end."""
    if ray.is_initialized():
        ray.shutdown()
    # ray.init installs a SIGTERM handler (exit status 15) that ray.shutdown leaves: the tests after this module
    # (the pool's SIGTERM test, when -m "not slow" leaves none between) must get the handler they had
    handler = signal.getsignal(signal.SIGTERM)
    with ray_tmpdir():
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
        yield ray
        ray.shutdown()
    signal.signal(signal.SIGTERM, handler)


def test_the_probe_accepts_a_real_ray(local_ray) -> None:
    """The protocol probe passes Ray's own GCS port."""
    gcs = local_ray.get_runtime_context().gcs_address
    assert check_address(gcs) == gcs


def test_eval_in_an_initialized_ray_keeps_it_and_oh_hell_matches(local_ray) -> None:
    game = make_game("oh_hell", players=3)
    specs = ["strong", "random", "simple"]
    one = evaluate(game, specs, 5, seed=9, batch_size=12)
    two = evaluate(game, specs, 5, seed=9, batch_size=12, ray_address="auto")  # an initialized Ray is reused
    assert _without_run(one.summary()) == _without_run(two.summary())
    assert ray.is_initialized()


def test_not_enough_cpus_is_one_clear_error(local_ray) -> None:
    msg = r"this test: 99 free CPU\(s\) needed, the Ray cluster has [0-9.]+ free of 2"
    with pytest.raises(DistributedError, match=msg):
        with ray_session("local", need_cpus=99, what="this test"):
            pass
    assert ray.is_initialized()

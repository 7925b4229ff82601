"""benchmarks/train_speed.py: the time split's bookkeeping and the CLI's refusal of a bad checkout (the
benchmark itself is measured, not tested: no timed assertions)."""

from __future__ import annotations

import threading
import types

from benchmarks import train_speed


def test_split_counts_exclusive_time_and_absorbing_parts_keep_their_calls(monkeypatch):
    """A timed call inside another is taken out of the outer part; inside an absorbing part (the evaluation),
    the wrapped calls count to it."""
    now = [0.0]
    clock = types.SimpleNamespace(perf_counter=lambda: now[0], process_time=lambda: 2 * now[0])
    monkeypatch.setattr(train_speed, "time", clock)

    class Toy:
        def inner(self) -> None:
            now[0] += 1.0

        def outer(self) -> None:
            now[0] += 3.0
            self.inner()

        def evaluate(self) -> None:
            now[0] += 5.0
            self.outer()

    split = train_speed.Split()
    split.wrap(Toy, "inner", "engine")
    split.wrap(Toy, "outer", "update")
    split.wrap(Toy, "evaluate", "evaluation/logging", absorb=True)
    toy = Toy()
    toy.outer()
    assert (split.wall["update"], split.wall["engine"], split.cpu["engine"]) == (3.0, 1.0, 2.0)
    toy.evaluate()
    assert (split.wall["evaluation/logging"], split.wall["update"], split.wall["engine"]) == (9.0, 3.0, 1.0)


def test_split_keeps_each_threads_calls_apart(monkeypatch):
    """overlap_rollout times the rollout on its own thread during the update: a call on one thread is not
    taken out of a call open on another."""
    now = [0.0]
    monkeypatch.setattr(train_speed, "time", types.SimpleNamespace(perf_counter=lambda: now[0], process_time=lambda: 0))
    inside, done = threading.Event(), threading.Event()

    class Toy:
        def update(self) -> None:
            inside.set()
            done.wait(10)
            now[0] += 4.0

        def step(self) -> None:
            now[0] += 1.0

    split = train_speed.Split()
    split.wrap(Toy, "update", "update")
    split.wrap(Toy, "step", "engine")
    t = threading.Thread(target=Toy().update)
    t.start()
    inside.wait(10)
    Toy().step()  # on this thread while the update is open on the other
    done.set()
    t.join()
    assert (split.wall["update"], split.wall["engine"]) == (5.0, 1.0)


def test_bench_train_refuses_a_folder_that_is_not_a_checkout(tmp_path, capsys):
    from bobshat.cli import main

    assert main(["bench", "--train", "--repo", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--repo" in err[0] and "not a bobshat checkout" in err[0]


def test_every_timed_point_exists_in_this_checkout():
    """The split wraps methods by name and skips a missing one (an older checkout may lack it): here every one
    must be found, so a rename fails this test instead of silently emptying its part of the split."""
    found = {(owner.__name__, name) for owner, name, _, _ in train_speed.timed_points()}
    assert found == {(cls, name) for _, cls, name, _, _ in train_speed.TIMED}
    assert all(not name.startswith("_") for _, _, name, _, _ in train_speed.TIMED)
    assert {part for *_, part, _ in train_speed.TIMED} == set(train_speed.PARTS)  # every part has a point

"""Two runs writing the same checkpoint at once, for the tests of every command that writes one.

Each run writes the sidecar, then the checkpoint. :func:`race` holds run A
between the two while run B writes both: without the lock on the folder the
sidecar would be B's and the checkpoint A's; with it, B waits for A.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


def race(monkeypatch: Any, write_a: Callable[[], Any], write_b: Callable[[], Any]) -> None:
    """Run ``write_a`` in thread A, held after its sidecar while ``write_b`` runs in thread B; both must end."""
    import agents.checkpoint as ckpt

    real = ckpt._paths.replace_bytes
    a_wrote_sidecar, b_done = threading.Event(), threading.Event()

    def replace_bytes(path, data):
        real(path, data)
        if threading.current_thread().name == "A":
            a_wrote_sidecar.set()
            b_done.wait(timeout=3)  # B finishes meanwhile, unless a lock makes it wait for A (then A goes on)

    monkeypatch.setattr(ckpt._paths, "replace_bytes", replace_bytes)
    a = threading.Thread(name="A", target=write_a)
    a.start()
    assert a_wrote_sidecar.wait(timeout=60)
    b = threading.Thread(name="B", target=lambda: (write_b(), b_done.set()))
    b.start()
    a.join(timeout=60)
    b.join(timeout=60)
    assert not a.is_alive() and not b.is_alive()

"""A live ``bobshat serve`` app on a free loopback port, in a thread (the load and browser tests)."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any


class LiveServer:
    """Serve ``app`` with uvicorn on 127.0.0.1 at a free port; ``url`` while inside the ``with``."""

    def __init__(self, app: Any) -> None:
        import uvicorn

        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        # keep-alive well past uvicorn's 5 s: on a loaded machine a client that reuses a connection just as the
        # server closes it for idleness gets a ReadError (seen once in the 50-game test at load 15)
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on", timeout_keep_alive=120)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the test server did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=15)
        self.sock.close()

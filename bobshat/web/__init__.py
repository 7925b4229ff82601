"""``bobshat serve``: play, watch and replay in the browser.

A local web app on the app floor (docs/architecture.md): it drives
games through the same :class:`~bobshat_env.games.Game`, agents and records as
everything else, and the page only draws the JSON it is sent and posts the
moves a person clicks. :mod:`.session` holds games in progress,
:mod:`.replay` turns records into frames, :mod:`.app` is the HTTP side
(Starlette, served by uvicorn: ``pip install -e ".[web]"``).
"""

from __future__ import annotations

import ipaddress
import socket
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from bobshat_env.core.config import ConfigError

__all__ = ["serve"]


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _check_port(host: str, port: int) -> None:
    """Refuse a port that is taken (or a host that is not this machine's) before the server starts."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as err:
            raise ConfigError(f"cannot listen on {host}:{port}: {err.strerror or err}") from None


def serve(
    host: str = "127.0.0.1",
    port: int = 8000,
    records_dir: str = "records",
    agents: Sequence[str] = (),
    idle_timeout: float = 1800.0,
    max_games: int = 100,
    max_upload: int = 2 * 1024 * 1024,
    out: TextIO | None = None,
) -> int:
    """Run the web app until Ctrl-C; returns the exit code. Bad options raise ConfigError before it starts."""
    out = sys.stdout if out is None else out
    try:
        import uvicorn

        from .app import create_app  # needs starlette
    except ImportError as err:
        hint = 'pip install -e ".[web]"'
        raise ConfigError(f"bobshat serve needs the web extra ({err.name} is missing): {hint}") from None
    from bobshat_env.paths import check_writable
    from bobshat_env.records.io import check_records_output

    from .session import RECORDS_FILE, AgentCatalog

    if not host.strip():
        raise ConfigError("--host must name an address (127.0.0.1, 0.0.0.0), got ''")
    if not 0 <= port <= 65535:
        raise ConfigError(f"--port must be 0-65535, got {port}")
    if not (isinstance(idle_timeout, (int, float)) and 1.0 <= idle_timeout <= 7 * 86400):  # NaN: False
        raise ConfigError(f"--idle-timeout must be 1 to 604800 seconds, got {idle_timeout}")
    if not 1 <= max_games <= 10_000:
        raise ConfigError(f"--max-games must be 1 to 10,000, got {max_games}")
    if not 1024 <= max_upload <= 1 << 30:
        raise ConfigError(f"--max-upload-mb must be 0.001 to 1024 MB, got {max_upload:,} bytes")
    folder = Path(records_dir)
    if not folder.is_dir():
        if folder.exists():
            raise ConfigError(f"--records-dir: {folder} is not a folder")
        for above in folder.parents:  # the nearest that exists must be a folder: /etc/passwd/sub
            if above.exists() or above.is_symlink():
                if not above.is_dir():
                    raise ConfigError(f"--records-dir: {above} is not a folder")
                break
        if not folder.parent.is_dir():
            raise ConfigError(f"--records-dir: the folder {folder.parent} does not exist")
    # everything else is checked before the records folder is made: a refused command leaves no folder behind
    catalog = AgentCatalog(list(agents))
    _check_port(host, port)
    made = False
    if not folder.is_dir():
        try:
            folder.mkdir()
        except OSError as err:
            raise ConfigError(f"--records-dir: cannot make {folder}: {err.strerror or err}") from None
        made = True
    try:
        check_writable(folder / RECORDS_FILE, "--records-dir", append=True)
        check_records_output(folder / RECORDS_FILE, "--records-dir")  # finished games are appended to it
    except BaseException:
        if made:  # the folder made just now goes again: nothing on disk changed
            folder.rmdir()
        raise
    loopback = _is_loopback(host)
    app = create_app(
        folder,
        catalog=catalog,
        idle_timeout=idle_timeout,
        max_games=max_games,
        max_upload=max_upload,
        allowed_hosts=None if loopback else ["*"],
    )
    shown = f"[{host}]" if ":" in host else host
    if not loopback:
        print(
            f"warning: --host {host} lets other machines reach this server; there is no login, so anyone who "
            "reaches the port can play, watch and upload records",
            file=out,
        )
    print(f"bobshat serve: open http://{shown}:{port}/  (records in {folder}; Ctrl-C stops)", file=out, flush=True)
    stopped = f"bobshat serve: stopped (the records of finished games are in {folder})"

    class Server(uvicorn.Server):
        """Says when it has stopped: a server that just goes quiet looks hung. Said at the end of the graceful
        shutdown, since uvicorn then raises the signal that stopped it again (Ctrl-C: 130, SIGTERM: killed)."""

        async def shutdown(self, sockets: Any = None) -> None:
            await super().shutdown(sockets)
            print(stopped, file=out, flush=True)

    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False)
    Server(config).run()  # until Ctrl-C or SIGTERM, which uvicorn takes for a graceful stop
    return 0

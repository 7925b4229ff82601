"""Small file systems for tests that need a full disk or a read-only place that root cannot write.

Root (as CI runs) writes into folders and files whatever their permission
bits, so a ``chmod`` test of a read-only place proves nothing there; a
read-only mount (a tmpfs remounted ``ro``, a file bind-mounted ``ro``) is
refused to root too. A tmpfs of a few KB is a disk that fills on cue. Where
mounting is not possible (not root, a container without CAP_SYS_ADMIN) the
test skips, naming why; under ``BOBSHAT_CI=1`` it fails instead, because CI
runs as root and a skipped check there is a check that did not run.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

STRICT = os.environ.get("BOBSHAT_CI", "") not in ("", "0")


def skip_or_fail(why: str) -> None:
    """Skip the test (a developer's machine) or fail it (``BOBSHAT_CI=1``), with the reason."""
    if STRICT:
        pytest.fail(f"BOBSHAT_CI is set, so this is a failure, not a skip: {why}", pytrace=False)
    pytest.skip(why)


def is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _mount(*args: str) -> str | None:
    """Run ``mount ARGS``; None when it worked, else why not."""
    try:
        r = subprocess.run(["mount", *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"cannot run mount: {err}"
    return None if r.returncode == 0 else (r.stderr.strip() or f"mount exited with {r.returncode}")


def _umount(path: Path) -> None:
    subprocess.run(["umount", "-l", str(path)], capture_output=True, timeout=30)


@contextlib.contextmanager
def tmpfs(folder: Path, size_kb: int = 64) -> Iterator[Path]:
    """A tmpfs of ``size_kb`` KB mounted on ``folder`` (created) for the block; unmounted after it."""
    if not is_root():
        skip_or_fail("a small tmpfs (a disk that fills) needs root to mount")
    folder.mkdir(parents=True, exist_ok=True)
    why = _mount("-t", "tmpfs", "-o", f"size={size_kb}k,mode=0755", "tmpfs", str(folder))
    if why is not None:
        skip_or_fail(f"cannot mount a tmpfs here: {why}")
    try:
        yield folder
    finally:
        _umount(folder)


def remount_read_only(folder: Path) -> None:
    """Make a tmpfs mounted by :func:`tmpfs` read-only (for root too)."""
    why = _mount("-o", "remount,ro", str(folder))
    if why is not None:
        skip_or_fail(f"cannot remount a tmpfs read-only: {why}")


@contextlib.contextmanager
def read_only_file(path: Path) -> Iterator[Path]:
    """``path`` (an existing file, its folder left writable) made read-only for the block.

    Not root: ``chmod 444``. Root: a read-only bind mount of the file on
    itself, which root cannot write either."""
    if not is_root():
        mode = path.stat().st_mode & 0o777
        path.chmod(0o444)
        try:
            yield path
        finally:
            path.chmod(mode)
        return
    why = _mount("--bind", str(path), str(path))
    if why is not None:
        skip_or_fail(f"cannot bind-mount a file: {why}")
    try:
        why = _mount("-o", "remount,ro,bind", str(path))
        if why is not None:
            skip_or_fail(f"cannot make a bind mount read-only: {why}")
        yield path
    finally:
        _umount(path)


def fill(folder: Path, leave: int = 0) -> Path:
    """Fill the file system of ``folder`` until about ``leave`` bytes (whole pages) are free; the filler."""
    filler = folder / "filler"
    page = os.statvfs(folder).f_frsize
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        while True:
            os.write(fd, b"\0" * page)
    except OSError:  # the disk is full
        pass
    finally:
        os.close(fd)
    with contextlib.suppress(OSError):
        os.truncate(filler, max(0, filler.stat().st_size - -(-leave // page) * page))
    return filler

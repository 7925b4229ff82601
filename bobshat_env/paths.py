"""Output files that are never half-written: check a path up front, append or replace atomically.

Every file the package writes for a user (records, reports, plots,
benchmark rows, checkpoints) goes through here, so that

- a path that cannot be written is refused *before* any game is played
  (:func:`check_writable`), with one line naming the flag and the reason;
- an append adds whole lines only, even with other processes appending to the
  same file at the same time (:func:`append_lines`: ``O_APPEND``, one
  ``write`` per line, under an advisory ``flock``), and one that fails part-way
  (a full disk) cuts the file back to where it began;
- a replacement is written to a temporary file in the same folder, fsynced,
  and renamed over the old file in one step, then the folder is fsynced
  (:func:`replace_bytes`, :class:`AtomicFile`, :func:`save_figure`), so a
  reader sees the old file or the new one, never a mix, a failure leaves the
  old file as it was and no temporary behind, and a crash right after the
  write does not lose it;
- a symbolic link is written through (its target gets the new contents, the
  link stays), and a target that is not a regular file (``/dev/null``, a
  FIFO, a terminal) is written directly, never replaced by a rename;
- an output is never the same file as one of the command's inputs, nor as
  another of its outputs (:func:`check_distinct`: the same file on disk,
  however it is spelled: ``./a/../a/x``, a symbolic link, a hard link), so
  no command writes over what it reads;
- a write that fails raises :class:`OutputWriteError` (an ``OSError`` and a
  ``ValueError``) whose message names the file and the reason ("No space
  left on device"); the command line adds the flag and exits with status 2.

Temporary files are named ``.<name>.<random>.tmp<pid>``: a process killed
while writing (SIGKILL) leaves one behind, and the next write of the same
file removes it once that process is gone (:func:`remove_stale_temporaries`).
The pid is this machine's; a folder shared with writers on other machines
(NFS) should not see two machines write the same file at once.

The lock is advisory: it orders writers that use this module (``bobshat``
commands running side by side), keeps the lines of one append together, and
makes the cut-back after a failed append safe (no other writer's lines after
ours to cut).
"""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
from collections.abc import Iterable
from io import BytesIO
from pathlib import Path
from types import TracebackType
from typing import IO, Any

try:  # POSIX; elsewhere appends rely on O_APPEND alone
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "PLOT_FORMATS",
    "AtomicFile",
    "OutputPathError",
    "OutputWriteError",
    "append_lines",
    "check_distinct",
    "check_folder",
    "check_plot_path",
    "check_writable",
    "checkpoint_files",
    "remove_stale_temporaries",
    "replace_bytes",
    "same_file",
    "save_figure",
    "sidecar",
]

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
# Image formats a --plot file may end with: matplotlib writes each of these with its default backends
# (tests/test_full_disk.py checks them against matplotlib's list).
PLOT_FORMATS = ("png", "pdf", "svg", "svgz", "eps", "ps", "jpg", "jpeg", "tif", "tiff", "webp")


class OutputPathError(ValueError):
    """A file that cannot be written where the user asked; the message names the path and why."""


class OutputWriteError(OutputPathError, OSError):
    """Writing ``path`` failed part-way (a full disk, an I/O error); nothing of the attempt is left.

    An ``OSError`` (with the original ``errno`` and ``strerror``), so code
    that handles failed writes keeps working, and a ``ValueError`` like every
    refused input, so the command line reports it as one line with exit
    status 2. ``path`` is the path as the caller gave it.
    """

    def __init__(self, path: str | os.PathLike, err: OSError) -> None:
        self.path = os.fspath(path)
        self.message = f"cannot write {self.path}: {_reason(err)}"
        super().__init__(self.message)
        self.errno = err.errno
        self.strerror = err.strerror

    def __str__(self) -> str:
        return self.message


def _reason(err: OSError) -> str:
    if err.errno == errno.ENAMETOOLONG:
        return "the file name is too long"
    return err.strerror or str(err)


# --------------------------------------------------------------------------
# Temporary files: named after their target and their writer's pid
def _stem(name: str) -> str:
    """The target's name as it appears in a temporary's name (cut so the temporary's name stays legal)."""
    return name[:200]


_TEMP = re.compile(r"^\.(?P<name>.+?)(?:\.[a-z0-9_]{8})?\.tmp(?P<pid>[0-9]+)$")


def _mkstemp(folder: Path, name: str) -> tuple[int, str]:
    return tempfile.mkstemp(prefix=f".{_stem(name)}.", suffix=f".tmp{os.getpid()}", dir=folder)


def _pid_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    except (OverflowError, ValueError):  # not a pid at all
        return False
    return True


def remove_stale_temporaries(folder: str | os.PathLike[str], name: str | None = None) -> list[Path]:
    """Delete temporaries in ``folder`` left by writers killed part-way; returns what it removed.

    A temporary is ``.<name>.<random>.tmp<pid>`` (or ``.<name>.tmp<pid>``,
    the checkpoint writer's older form); it is removed only when process
    ``pid`` is no longer running, so a writer still at work (here or in
    another ``bobshat`` command) keeps its own. ``name``: only the
    temporaries of that target file. Files that cannot be listed or removed
    are left alone: cleaning up must never stop a write.
    """
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        m = _TEMP.match(entry.name)
        if m is None or (name is not None and m["name"] != _stem(name)):
            continue
        pid = int(m["pid"])
        try:
            if pid == os.getpid() or _pid_running(pid) or not entry.is_file(follow_symlinks=False):
                continue
            os.unlink(entry.path)
        except OSError:
            continue
        removed.append(Path(entry.path))
    return removed


def _fsync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable; file systems that cannot sync a folder are let be."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError as err:
        if err.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF, errno.EROFS):
            raise
    finally:
        os.close(fd)


def _target(path: str | os.PathLike) -> tuple[Path, os.stat_result | None]:
    """The file a write of ``path`` changes (links followed) and its stat, None if it does not exist."""
    target = Path(os.path.realpath(path))
    try:
        return target, os.stat(target)
    except (FileNotFoundError, NotADirectoryError):  # a missing file, or a "folder" that is a file
        return target, None


# --------------------------------------------------------------------------
# Checking up front
def check_writable(path: str | os.PathLike, what: str = "", append: bool = False, regular: bool = False) -> Path:
    """Refuse (:class:`OutputPathError`) an output path that cannot be written; returns it as a Path.

    Checks what the later write will need, without changing anything: the
    folder exists and is a folder, ``path`` is not a folder, and a file can be
    created in that folder (a temporary one, removed at once: replacing a
    file needs exactly that). With ``append`` an existing file must open for
    appending (the folder does not matter then). A link is checked at its
    target; a target that is not a regular file (``/dev/null``, a FIFO) must
    open for writing, unless ``regular``: a file replaced whole and read back
    (a checkpoint and its sidecar) must be a regular file or not exist yet,
    since a FIFO would block the run at its first write, with no reader, and
    could never be read back. ``what`` (e.g. ``"--records"``) starts the message.
    The probes really open and create files rather than trusting
    ``os.access``, which answers yes to root even on a read-only file system.
    """
    p = Path(path)
    head = f"{what}: " if what else ""
    if str(path) == "":
        raise OutputPathError(f"{head}no file name given")
    try:
        target, st = _target(p)
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise OutputPathError(f"{head}cannot write {path}: it is a folder; name a file")
        if st is not None and not stat.S_ISREG(st.st_mode):  # written directly
            if regular:
                raise OutputPathError(f"{head}cannot write {path}: not a regular file (it is read back); name a file")
            if stat.S_ISSOCK(st.st_mode):
                raise OutputPathError(f"{head}cannot write {path}: it is a socket; name a file")
            if stat.S_ISFIFO(st.st_mode):  # opening it to try would hand its reader an end of file
                if not os.access(target, os.W_OK):
                    raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
            else:  # a device (/dev/null, a terminal): it must open
                os.close(os.open(target, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY | _CLOEXEC))
            return p
        folder = target.parent if p.is_symlink() else p.parent
        if not folder.exists():
            raise OutputPathError(f"{head}cannot write {path}: the folder {folder} does not exist")
        if not folder.is_dir():
            raise OutputPathError(f"{head}cannot write {path}: {folder} is not a folder")
        if append and st is not None:
            os.close(os.open(target, os.O_WRONLY | os.O_APPEND | _CLOEXEC))
        else:
            fd, tmp = _mkstemp(target.parent, target.name)
            os.close(fd)
            os.unlink(tmp)
    except OSError as err:
        raise OutputPathError(f"{head}cannot write {path}: {_reason(err)}") from None
    return p


def check_folder(path: str | os.PathLike, what: str = "") -> None:
    """Refuse (:class:`OutputPathError`) an output folder that cannot be made or written: ``path`` is a
    folder, or its nearest existing ancestor is one in which this process can create a file (a probe, as
    :func:`check_writable` makes: ``os.access`` answers yes to root on a read-only mount). Nothing changes."""
    head = f"{what}: " if what else ""
    first = next(q for q in (Path(path), *Path(path).parents) if q.exists() or q.is_symlink())
    if not first.is_dir():
        raise OutputPathError(f"{head}cannot write {path}: {first} is not a folder")
    try:
        fd, probe = _mkstemp(first, ".bobshat-probe")
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        raise OutputPathError(f"{head}cannot write {path}: {_reason(err)}") from None


def check_plot_path(path: str, what: str = "--plot") -> str:
    """Refuse a plot file name without a known image extension (before the run, not after it); returns
    the format (``png``...). A name like ``x`` would otherwise become ``x.png`` behind the user's back."""
    ext = os.path.splitext(os.fspath(path))[1].lower().lstrip(".")
    if ext not in PLOT_FORMATS:
        got = f"'.{ext}'" if ext else "none"
        raise OutputPathError(
            f"{what}: {path} needs an image extension ({', '.join('.' + f for f in PLOT_FORMATS)}); got {got}"
        )
    return ext


# --------------------------------------------------------------------------
# No output over an input
def sidecar(path: str | os.PathLike) -> str:
    """The readable copy of a checkpoint's metadata written beside it: ``X.pt`` -> ``X.pt.json``."""
    return os.fspath(path) + ".json"


def checkpoint_files(what: str, path: str | os.PathLike | None) -> list[tuple[str, str]]:
    """A checkpoint and its sidecar, each with the name an error gives it (``--out``, ``the sidecar of --out``),
    for :func:`check_distinct`; nothing for a path not given (None, empty, not text: refused elsewhere)."""
    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
        return []
    return [(what, os.fspath(path)), (f"the sidecar of {what}", sidecar(path))]


def _identity(path: str | os.PathLike) -> tuple[tuple[int, int] | None, str, bool]:
    """(device and inode or None where nothing is there yet, the path resolved, whether sameness matters).

    Sameness matters for a regular file and for a name with nothing there yet (a file to be made); a
    device or a FIFO (``/dev/null`` for two outputs) is not a file anything could be lost from.
    """
    try:
        resolved = os.path.realpath(path)
    except (OSError, ValueError):  # a NUL in the name: refused by whatever opens it
        return None, os.fspath(path), False
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None, resolved, True
    return (st.st_dev, st.st_ino), resolved, stat.S_ISREG(st.st_mode)


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether ``a`` and ``b`` name one regular file (or one file still to be made), however spelled.

    Two files that exist are the same when their device and inode are (a
    symbolic link, a hard link, ``./x/../x/f``, another case on a
    case-insensitive disk); where one does not exist yet, their resolved
    paths are compared (links followed as far as they go).
    """
    ida, ra, fa = _identity(a)
    idb, rb, fb = _identity(b)
    if not (fa and fb):
        return False
    if ida is not None and idb is not None:
        return ida == idb
    return ra == rb


def check_distinct(
    outputs: Iterable[tuple[str, str | os.PathLike | None]],
    inputs: Iterable[tuple[str, str | os.PathLike | None]] = (),
    advice: str = "choose another output",
) -> None:
    """Refuse (:class:`OutputPathError`) an output that is the same file as an input or as an earlier output.

    ``outputs`` and ``inputs`` are ``(name, path)`` pairs, the name as the
    error gives it (``--json``, ``the sidecar of --agents``; see
    :func:`checkpoint_files`); a path that is None, empty or ``-``
    (standard output) is skipped. Sameness is :func:`same_file`'s. Every
    command calls this before any work: a report written over the checkpoint
    it measured, records appended to a policy, a checkpoint trained over the
    records it was fitted to, each destroyed the only copy of an input.
    The message names both, with the path as the input (or earlier output)
    spelled it: ``--json is the same file as --records (R.jsonl); choose
    another output``.
    """
    given = [(name, os.fspath(p)) for name, p in inputs if isinstance(p, (str, os.PathLike)) and os.fspath(p)]
    seen: list[tuple[str, str]] = []
    for name, path in outputs:
        if not isinstance(path, (str, os.PathLike)) or os.fspath(path) in ("", "-"):
            continue
        path = os.fspath(path)
        for other, where in given + seen:
            if same_file(path, where):
                raise OutputPathError(f"{name} is the same file as {other} ({where}); {advice}")
        seen.append((name, path))


# --------------------------------------------------------------------------
# Appending
def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def append_lines(path: str | os.PathLike, lines: Iterable[bytes], sync: bool = False) -> None:
    """Append ``lines`` (each ending with a newline) to ``path``, created if missing.

    The file is opened with ``O_APPEND`` and held under an exclusive
    ``flock`` while the lines go in, one ``os.write`` each, so writers in
    other processes never cut into a line or interleave with this call's
    lines. If the file does not end with a newline (a user's edit), one is
    added first. If a write fails (a full disk), the file is cut back to the
    size it had, still under the lock: it ends where it began, and
    :class:`OutputWriteError` says why. A link is appended through; a file
    that is not a regular one (``/dev/null``, a FIFO) is written without the
    lock, the newline check or the cut-back.
    ``sync``: fsync before the lock is released. Off by default: the lock and
    ``O_APPEND`` are what keep concurrent records whole; an fsync per append
    made 4 x 200 concurrent appends take 4.4 s instead of 0.2 s here.
    """
    lines = list(lines)
    try:
        target, st = _target(path)
        regular = st is None or stat.S_ISREG(st.st_mode)
        flags = os.O_APPEND | os.O_CREAT | _CLOEXEC
        readable = regular
        try:
            fd = os.open(target, (os.O_RDWR if regular else os.O_WRONLY) | flags, 0o666)
        except PermissionError:  # a write-only file: append without the final-newline check
            fd = os.open(target, os.O_WRONLY | flags, 0o666)
            readable = False
    except OSError as err:
        raise OutputWriteError(path, err) from err
    try:
        if fcntl is not None and regular:
            fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            size = os.fstat(fd).st_size
            try:
                if lines and readable and size > 0 and os.pread(fd, 1, size - 1) != b"\n":
                    lines[0] = b"\n" + lines[0]
                for line in lines:
                    _write_all(fd, line)
                if sync and lines and regular:
                    os.fsync(fd)
            except BaseException as err:
                if regular:
                    try:
                        os.ftruncate(fd, size)  # the lines of this call go, all of them
                    except OSError:
                        pass
                if isinstance(err, OSError):
                    raise OutputWriteError(path, err) from err
                raise
        finally:
            if fcntl is not None and regular:
                fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


# --------------------------------------------------------------------------
# Replacing
def _new_file_mode(st: os.stat_result | None) -> int:
    """The old file's permissions, or what a new file would get under the umask."""
    if st is not None:
        return st.st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _close_quietly(f: IO[bytes]) -> None:
    try:
        f.close()
    except OSError:  # its buffer could not be flushed (a full disk): the data is dropped anyway
        pass


class AtomicFile:
    """Write a file through a temporary one beside it; :meth:`commit` renames it into place.

    ``with AtomicFile(path) as f: f.write(b"...")`` commits when the block
    ends without an exception and otherwise removes the temporary file,
    leaving any old ``path`` untouched. Data can be streamed (records of a
    long tournament go to disk as they come, not into memory). The new file
    keeps the old one's permissions. The temporary lives in the target's own
    folder (a rename cannot cross file systems) and is fsynced before the
    rename, the folder after it. A link is written through: the temporary
    goes beside the link's target, which it replaces. A target that is not a
    regular file is written directly (there is nothing to keep and nothing
    to rename over). Stale temporaries of the same target (their writer was
    killed) are removed first. Every ``OSError`` comes out as
    :class:`OutputWriteError`, with the temporary already gone.
    """

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        self.tmp: str | None = None
        try:
            self.target, st = _target(path)
            if st is not None and stat.S_ISDIR(st.st_mode):
                raise IsADirectoryError(errno.EISDIR, "it is a folder; name a file")
            if st is not None and not stat.S_ISREG(st.st_mode):
                fd = os.open(self.target, os.O_WRONLY | _CLOEXEC)
            else:
                remove_stale_temporaries(self.target.parent, self.target.name)
                fd, self.tmp = _mkstemp(self.target.parent, self.target.name)
        except OSError as err:
            raise OutputWriteError(path, err) from err
        try:
            if self.tmp is not None:
                os.chmod(self.tmp, _new_file_mode(st))
            self.file: IO[bytes] | None = os.fdopen(fd, "wb")
        except BaseException as err:
            os.close(fd)
            self._remove_tmp()
            if isinstance(err, OSError):
                raise OutputWriteError(path, err) from err
            raise

    @property
    def direct(self) -> bool:
        """True when the target is written in place (not a regular file: a device, a FIFO)."""
        return self.tmp is None

    def write(self, data: bytes) -> int:
        """Write ``data`` (to the temporary file); on failure the temporary is removed."""
        if self.file is None:
            raise ValueError(f"{self.path}: the file is already closed")
        try:
            return self.file.write(data)
        except OSError as err:
            self.abort()
            raise OutputWriteError(self.path, err) from err

    def flush(self) -> None:
        """Hand buffered data to the operating system (``torch.save`` calls it); no fsync yet."""
        if self.file is None:
            raise ValueError(f"{self.path}: the file is already closed")
        try:
            self.file.flush()
        except OSError as err:
            self.abort()
            raise OutputWriteError(self.path, err) from err

    def commit(self) -> None:
        """Flush, fsync and rename the temporary file over the target; fsync the folder."""
        if self.file is None:
            raise ValueError(f"{self.path}: the file is already closed")
        f, self.file = self.file, None
        try:
            try:
                f.flush()
                if self.tmp is not None:
                    os.fsync(f.fileno())
            finally:
                _close_quietly(f)
            if self.tmp is not None:
                os.replace(self.tmp, self.target)
                self.tmp = None
                _fsync_folder(self.target.parent)
        except BaseException as err:
            self._remove_tmp()
            if isinstance(err, OSError):
                raise OutputWriteError(self.path, err) from err
            raise

    def abort(self) -> None:
        """Drop what was written; the target stays as it was (a direct write cannot be taken back)."""
        if self.file is not None:
            f, self.file = self.file, None
            _close_quietly(f)
        self._remove_tmp()

    def _remove_tmp(self) -> None:
        if self.tmp is not None:
            try:
                os.unlink(self.tmp)
            except OSError:
                pass
            self.tmp = None

    def __enter__(self) -> AtomicFile:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()


def replace_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Replace ``path`` with ``data`` in one step (see :class:`AtomicFile`)."""
    with AtomicFile(path) as f:
        f.write(data)


def save_figure(fig: Any, path: str | os.PathLike, **savefig: Any) -> None:
    """Write a matplotlib figure to ``path`` through :func:`replace_bytes`, in the format its extension
    names (:func:`check_plot_path`; no extension is added behind the user's back). ``savefig``: passed on
    (``dpi=...``)."""
    fmt = check_plot_path(os.fspath(path), "plot")
    buf = BytesIO()
    fig.savefig(buf, format=fmt, **savefig)
    replace_bytes(path, buf.getvalue())

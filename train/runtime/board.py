"""TensorBoard's writer for a run, whose failures (a full disk) are one-line errors: ``bobshat train`` and ``expert``.

TensorBoard writes its events from a thread of its own. On a full disk that
thread meets the ``OSError``, prints it as a thread's traceback and ends;
tensorboard then raises the same error again in the thread that writes next
(ours), a second traceback. :class:`Board` keeps the first quiet and turns the
second into the error its caller chooses (one line naming the folder or the
flag), so a user sees one line and the exit status of a refused write (2).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any


def _is_board_thread(thread: threading.Thread | None) -> bool:
    """TensorBoard's writer thread (tensorboard.summary.writer.event_file_writer's)."""
    return type(thread).__module__.startswith("tensorboard.")


class Board:
    """A ``SummaryWriter`` on ``log_dir`` whose ``OSError`` s become ``error(log_dir, err)`` (raised).

    The writer's thread meets the error and ends with it; tensorboard raises
    it again in the thread that writes next, here, where it becomes the
    error. The thread's own report of it (a traceback on stderr) is dropped
    while the board is open: :meth:`close` it in a ``finally``. A writer that
    cannot start takes back the folders and the events file it made (nothing
    else has run yet). ``writer_options``: the ``SummaryWriter``'s
    (``purge_step``). The writes: :meth:`add_scalar`, :meth:`add_text`,
    :meth:`flush`, as the writer's.
    """

    def __init__(self, log_dir: str, error: Callable[[str, OSError], Exception], **writer_options: Any) -> None:
        from torch.utils.tensorboard import SummaryWriter

        self.log_dir, self._error = log_dir, error
        self._closed = False
        self._hook = threading.excepthook
        threading.excepthook = self._quiet
        folder = Path(log_dir)
        self._made = [q for q in (folder, *folder.parents) if not q.exists()]  # deepest first
        self._before = set(self._own_events()) if folder.is_dir() else set()
        try:
            self.writer = SummaryWriter(log_dir, **writer_options)
        except OSError as err:
            self._take_back()
            self._restore()
            raise error(log_dir, err) from None

    def _own_events(self) -> list[str]:
        """This process's events files in the folder (their names end ``.HOST.PID.N``)."""
        with contextlib.suppress(OSError):
            names = os.listdir(self.log_dir)
            return [n for n in names if n.startswith("events.out.tfevents.") and f".{os.getpid()}." in n]
        return []

    def _take_back(self) -> None:
        """Remove the events files and the folders this board made (a run that wrote nothing leaves nothing)."""
        for name in set(self._own_events()) - self._before:
            with contextlib.suppress(OSError):
                (Path(self.log_dir) / name).unlink()
        for q in self._made:
            with contextlib.suppress(OSError):
                q.rmdir()

    def _quiet(self, args: Any) -> None:
        if not (isinstance(args.exc_value, OSError) and _is_board_thread(args.thread)):
            self._hook(args)

    def _restore(self) -> None:
        for t in threading.enumerate():  # a writer thread that failed: let it finish reporting, to the quiet hook
            if _is_board_thread(t) and getattr(t, "exception", None) is not None:
                t.join(timeout=5)
        threading.excepthook = self._hook

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        try:
            yield
        except OSError as err:
            raise self._error(self.log_dir, err) from None

    def add_scalar(self, tag: str, value: float, step: int) -> None:
        """One scalar, as ``SummaryWriter.add_scalar``."""
        with self._writing():
            self.writer.add_scalar(tag, value, step)

    def add_text(self, tag: str, text: str) -> None:
        """One text, as ``SummaryWriter.add_text``."""
        with self._writing():
            self.writer.add_text(tag, text)

    def flush(self) -> None:
        """Write what is queued, as ``SummaryWriter.flush``."""
        with self._writing():
            self.writer.flush()

    def close(self, finished: bool, keep: bool = True) -> None:
        """Close the writer (once; later calls do nothing); its error is raised only if the run ``finished``
        (else the run already ends with an error of its own, the one to report). ``keep=False``: the run
        logged nothing worth keeping, so its events file, and the folders the board made, go."""
        if self._closed:
            return
        self._closed = True
        try:
            self.writer.close()
        except OSError as err:
            if finished:
                raise self._error(self.log_dir, err) from None
        finally:
            if not keep:
                self._take_back()
            self._restore()

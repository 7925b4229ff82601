"""Suite-wide settings.

``BOBSHAT_CI=1`` (set by ``.ci/run``) turns a test skipped for a missing
module (``pytest.importorskip``) into a failure. The differential tests need
dev dependencies (OpenSpiel's ``pyspiel`` checks Oh Hell, sb3-contrib runs the
MaskablePPO example, nbclient the notebooks); on a developer's machine without
them those tests skip, but in CI such a skip would hide that a check did not
run at all (a follow-suit bug once passed while the OpenSpiel test was
skipped), so there it fails, naming what is missing. Skips for the machine
itself (a root user who can write into read-only folders) stay skips.

The test functions listed in ``tests/slow_tests.txt`` (the slowest, as
measured) get the ``slow`` marker: ``python -m pytest -q -m "not slow"`` is
the quick check, and CI runs everything.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

STRICT = os.environ.get("BOBSHAT_CI", "") not in ("", "0")


def _import_or_fail(modname: str, *args: Any, **kwargs: Any) -> Any:
    """``pytest.importorskip`` under BOBSHAT_CI: a missing (or too old) module fails the test, or the
    module's collection, with the skip's own reason."""
    try:
        return _importorskip(modname, *args, **kwargs)
    except pytest.skip.Exception as skip:
        why = skip.msg
    pytest.fail(
        f"BOBSHAT_CI is set, so a missing module is a failure, not a skip: {why}\n"
        "CI installs every dependency the suite needs (.ci/run: scripts/install.sh --with-sb3); "
        "a missing one means a check did not run.",
        pytrace=False,
    )


_importorskip = pytest.importorskip
if STRICT:
    # Test modules call pytest.importorskip at import or run time, after this file is loaded.
    pytest.importorskip = _import_or_fail


SLOW_LIST = Path(__file__).with_name("slow_tests.txt")


def slow_tests() -> set[str]:
    """The ``file::function`` ids of ``tests/slow_tests.txt`` (comments and blank lines skipped)."""
    lines = SLOW_LIST.read_text(encoding="utf-8").splitlines()
    return {line.strip() for line in lines if line.strip() and not line.startswith("#")}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    slow = slow_tests()
    for item in items:
        if item.nodeid.split("[")[0] in slow:
            item.add_marker(pytest.mark.slow)



_EXIT_STATUS: list[int] = []


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _EXIT_STATUS.append(int(exitstatus))


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """End the test process with pytest's status once everything is reported, without the interpreter's teardown.

    One CI run in four (1,926 passed, the summary printed) then died with a
    segmentation fault while the interpreter shut down: the suite loads
    several C++ extensions that keep Python objects in static state (pyspiel's
    game registry holds the Python games of :mod:`bobshat_env.openspiel`, and
    Ray, torch and numba keep threads), and their destructors can run after
    Python is gone. Nothing of the suite's runs there; ``BOBSHAT_FULL_EXIT=1``
    keeps the ordinary shutdown, to look for the crash.
    """
    if _EXIT_STATUS and os.environ.get("BOBSHAT_FULL_EXIT", "") in ("", "0"):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_EXIT_STATUS[-1])

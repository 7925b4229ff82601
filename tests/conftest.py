"""Suite-wide settings.

``BOBSHAT_CI=1`` (set by ``.ci/run``) turns a test skipped for a missing
module (``pytest.importorskip``) into a failure. The differential tests need
dev dependencies (OpenSpiel's ``pyspiel`` checks Oh Hell, sb3-contrib runs the
MaskablePPO example, nbclient the notebooks); on a developer's machine without
them those tests skip, but in CI such a skip would hide that a check did not
run at all (a follow-suit bug once passed while the OpenSpiel test was
skipped), so there it fails, naming what is missing. Skips for the machine
itself (a root user who can write into read-only folders) stay skips.
"""

from __future__ import annotations

import os

import pytest

STRICT = os.environ.get("BOBSHAT_CI", "") not in ("", "0")


# what pytest.importorskip says when the module is missing or too old
IMPORT_SKIPS = ("could not import", "required is")


def _fail_skip(report: pytest.TestReport | pytest.CollectReport) -> None:
    """Make a skip for a missing module a failure that says why."""
    if not (STRICT and report.skipped) or hasattr(report, "wasxfail"):
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    if not any(text in reason for text in IMPORT_SKIPS):
        return
    report.outcome = "failed"
    report.longrepr = (
        f"BOBSHAT_CI is set, so a skip for a missing module is a failure: {reason}\n"
        "CI installs every dependency the suite needs (.ci/run: scripts/install.sh --with-sb3); "
        "a missing one means a check did not run."
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):  # noqa: ARG001 - hook signature
    report = yield
    _fail_skip(report)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector):  # noqa: ARG001 - hook signature
    report = yield
    _fail_skip(report)
    return report

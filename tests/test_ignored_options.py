"""Issue 52, part 2: options and inputs that were silently ignored or misreported.

Each test pins one item: an error that names the option, a stated line where
a section is left out, or the fixed behaviour.
"""

from __future__ import annotations

import pytest

from bobshat_env.app.cli import main


def _one_line_error(capsys, flag: str) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert flag in err, err
    return err


# --------------------------------------------------------------------------
# eval: the --vr-* options without --variance-reduction
@pytest.mark.parametrize("vr", [[], ["--no-variance-reduction"]])
@pytest.mark.parametrize(
    "extra, flag",
    [
        (["--vr-fresh", "5"], "--vr-fresh"),
        (["--vr-value", "nope.pt"], "--vr-value"),
        (["--vr-decisions", "all"], "--vr-decisions"),
        (["--vr-proxy", "none"], "--vr-proxy"),
        (["--vr-proxy-fresh", "2"], "--vr-proxy-fresh"),
    ],
)
def test_eval_refuses_vr_options_without_variance_reduction(vr, extra, flag, capsys):
    argv = ["eval", "--agents", "simple,random", "--layout", "2v2", "--deals", "1", "--quiet"]
    assert main([*argv, *vr, *extra]) == 2
    err = _one_line_error(capsys, flag)
    assert "--variance-reduction" in err

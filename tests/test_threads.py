"""The package sets a passive OpenMP wait policy early enough to reach the runtime.

GNU OpenMP reads ``OMP_WAIT_POLICY`` once, when it loads (usually at ``import
torch``, whose runtime numba's OpenMP layer shares), so the package must set it
when any ``bobshat_env`` module is imported, not when the kernels compile
(bobshat_env/core/compiled.py, "OpenMP waits", has the measurement). Each case
runs in a fresh interpreter: the variable and the loaded libraries are
process-wide. No timing is asserted; speed is for benchmarks/.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import os, sys
{imports}
print(os.environ.get("OMP_WAIT_POLICY", "<unset>"))
maps = open("/proc/self/maps").read() if os.path.exists("/proc/self/maps") else None
print(-1 if maps is None else int("gomp" in maps or "iomp" in maps))
print(int("numba" in sys.modules), int("torch" in sys.modules))
"""


def _probe(imports: str, policy: str | None) -> tuple[str, int, tuple[int, int]]:
    """The wait policy a fresh interpreter sees after ``imports``; whether an
    OpenMP runtime was loaded by then; whether numba / torch were imported."""
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    if policy is not None:
        env["OMP_WAIT_POLICY"] = policy
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(imports=imports)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout.split("\n")
    numba_loaded, torch_loaded = map(int, out[2].split())
    return out[0], int(out[1]), (numba_loaded, torch_loaded)


@pytest.mark.parametrize("imports", ["import bobshat_env", "from bobshat_env.vector import VectorEnv"])
def test_importing_the_package_sets_a_passive_wait_before_any_openmp_runtime_loads(imports: str) -> None:
    policy, openmp_loaded, (numba_loaded, torch_loaded) = _probe(imports, None)
    assert policy == "PASSIVE"
    # Early enough: no OpenMP runtime has read the environment yet, so the
    # user's ``import torch`` (or numba's first parallel kernel) after this sees it.
    assert openmp_loaded in (0, -1)
    assert torch_loaded == 0


def test_a_policy_the_user_set_is_left_alone() -> None:
    for user in ("ACTIVE", "passive", ""):
        assert _probe("import bobshat_env", user)[0] == user
    assert _probe("import bobshat_env.core.compiled", "ACTIVE")[0] == "ACTIVE"

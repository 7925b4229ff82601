#!/usr/bin/env bash
# Install bobshat with its dev tools and Ray (the [ray] extra: distributed
# evaluation and rollouts, and their tests). Where no torch is present, take
# the CPU build first (an unpinned torch would pull a multi-GB CUDA build;
# Ray itself pulls no torch).
#   --with-sb3   also the [sb3] extra (Stable-Baselines3, sb3-contrib), which the
#                test of examples/maskable_ppo.py needs; CI (.ci/run) uses it.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
EXTRAS=dev,ray
for arg in "$@"; do
  case "$arg" in
    --with-sb3) EXTRAS="$EXTRAS,sb3" ;;
    *) echo "install.sh: unknown option '$arg' (known: --with-sb3)" >&2; exit 2 ;;
  esac
done
if ! "$PY" -c "import torch" >/dev/null 2>&1; then
  "$PY" -m pip install --quiet "torch==2.13.0"
fi
"$PY" -m pip install --quiet -e ".[$EXTRAS]"

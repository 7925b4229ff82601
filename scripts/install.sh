#!/usr/bin/env bash
# Install bobshat with its dev tools, Ray (the [ray] extra: distributed
# evaluation and rollouts, and their tests) and the documentation site's tools
# (the [docs] extra: `mkdocs serve`). Where no torch is present, take
# the CPU build first (an unpinned torch would pull a multi-GB CUDA build;
# Ray itself pulls no torch).
#   --with-sb3   also the [sb3] extra (Stable-Baselines3, sb3-contrib), which the
#                test of examples/maskable_ppo.py needs; CI (.ci/run) uses it.
# pip runs quietly; each step says what it is doing on one line, and the last
# line says how long the whole install took.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
EXTRAS=dev,ray,docs
for arg in "$@"; do
  case "$arg" in
    --with-sb3) EXTRAS="$EXTRAS,sb3" ;;
    *) echo "install.sh: unknown option '$arg' (known: --with-sb3)" >&2; exit 2 ;;
  esac
done
START=$SECONDS
step() { echo "install.sh: $* ($((SECONDS - START)) s so far)"; }
echo "install.sh: installing bobshat with $PY (pip runs quietly: a few minutes in all)"
step "looking for torch"
if TORCH=$("$PY" -c "import torch; print(torch.__version__)" 2>/dev/null); then
  step "torch $TORCH is installed: keeping it"
else
  step "no torch found: installing torch 2.13.0"
  "$PY" -m pip install --quiet "torch==2.13.0"
fi
step "installing bobshat (editable) with extras $EXTRAS"
"$PY" -m pip install --quiet -e ".[$EXTRAS]"
echo "install.sh: done in $((SECONDS - START)) s"

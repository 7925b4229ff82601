#!/usr/bin/env bash
# The main job: a short train-then-evaluate demo on the default preset.
# Trains PPO (self-play against the pool) for a few million table decisions,
# then plays the new policy in duplicate games against the heuristic bots and
# prints the evaluation table. The training took 29 s on 2 idle cores when timed, 7-19 minutes on a
# loaded machine; the first run also compiles the kernels (15-30 s).
set -euo pipefail
cd "$(dirname "$0")/.."
RUN="demo_$(date +%Y%m%d_%H%M%S)"
DECISIONS="${DEMO_DECISIONS:-3000000}"
DEALS="${DEMO_DEALS:-100}"
bobshat train --config configs/bobs_hat_4p.yaml --run-name "$RUN" --total-decisions "$DECISIONS" --eval-every 0
bobshat eval --game bobs_hat --players 4 --agents "ppo:runs/$RUN/policy.pt,strong,simple,random" \
  --deals "$DEALS" --seed 0 --plot "runs/$RUN/eval.png" --json "runs/$RUN/eval.json"
echo "TensorBoard logs, checkpoints and the evaluation are in runs/$RUN (tensorboard --logdir runs)"

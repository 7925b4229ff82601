#!/usr/bin/env bash
# The main job: a short train-then-evaluate demo on the default preset.
# Trains PPO (self-play against the pool) for a few million table decisions,
# then plays the new policy in duplicate games against the heuristic bots and
# prints the evaluation table. How long the training takes depends on the CPU
# and how busy its cores are: 28 s on 2 idle cores, 103 s at load 2-4 and 15.5
# minutes at load 5-7 on one 2-core machine, 127 s on 2 idle cores of another
# (AMD EPYC, AVX2 only) when measured; the first run also compiles the kernels
# (15-30 s). The last lines say how long this run's training took and at what
# rate (table decisions per second).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
RUN="demo_$(date +%Y%m%d_%H%M%S)"
DECISIONS="${DEMO_DECISIONS:-3000000}"
DEALS="${DEMO_DEALS:-100}"
T0=$SECONDS
# train's last stdout line is a JSON summary (decisions, seconds): kept for the timing line below
SUMMARY=$(bobshat train --config configs/bobs_hat_4p.yaml --run-name "$RUN" --total-decisions "$DECISIONS" --eval-every 0)
WALL=$((SECONDS - T0))
echo "$SUMMARY"
bobshat eval --game bobs_hat --players 4 --agents "ppo:runs/$RUN/policy.pt,strong,simple,random" \
  --deals "$DEALS" --seed 0 --plot "runs/$RUN/eval.png" --json "runs/$RUN/eval.json"
# The training's time and rate: train's own figures (its loop, without start-up and compiling) where
# its summary gives them, else the train command's wall time and the decisions policy.pt.json records.
"$PY" - "runs/$RUN" "$WALL" "$SUMMARY" <<'PYEOF'
import json
import sys
from pathlib import Path

run, wall, summary = Path(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
facts = {}
for line in summary.splitlines():
    try:
        got = json.loads(line)
    except ValueError:
        continue
    if isinstance(got, dict):
        facts = got
decisions = facts.get("global_step")
if not isinstance(decisions, int):
    decisions = json.loads((run / "policy.pt.json").read_text())["global_step"]
seconds = facts.get("seconds")
if isinstance(seconds, (int, float)) and seconds > 0:
    how = f"the train command took {wall:.0f} s in all, with start-up and any compiling of the kernels"
else:
    seconds, how = max(wall, 1.0), "the train command's wall time, with start-up and any compiling of the kernels"
print(f"demo: training took {seconds:.1f} s for {decisions:,} table decisions, {decisions / seconds:,.0f} decisions/s ({how})")
PYEOF
echo "TensorBoard logs, checkpoints and the evaluation are in runs/$RUN (tensorboard --logdir runs)"

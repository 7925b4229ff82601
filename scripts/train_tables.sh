#!/usr/bin/env bash
# Train a policy for every table (Bob's Hat 3-5 players, Oh Hell 3-7) and evaluate each in duplicate play.
#
#   bash scripts/train_tables.sh [MINUTES] [DEALS] [OUT] [TABLE ...]
#
# MINUTES  wall-clock minutes of training per table (default: each preset's own time_limit_min)
# DEALS    duplicate deals against `strong` (default 2000, at least 1000); `simple` and `random` get a quarter
# OUT      where runs, policies and reports go (default runs/tables)
# TABLE    preset names (default all eight: bobs_hat_3p ... oh_hell_7p)
#
# For each table: `bobshat train --config configs/TABLE.yaml` (run OUT/TABLE), then the policy, greedy, in one
# seat against three (or more) copies of each bot on the game it was trained for; writes OUT/TABLE.pt (the
# policy), OUT/TABLE.eval.json (one line per opponent: the report of `bobshat eval --json`) and, at the end,
# OUT/tables.json: per table the training time and decisions and the margin over each bot per hand with its
# 95% CI (WORKERS, default 2, processes play the evaluations). Tables run one after another; a table whose run already finished (OUT/TABLE.eval.json) is skipped,
# so the script can be started again after an interruption.
set -euo pipefail
cd "$(dirname "$0")/.."
MINUTES="${1:-}"
DEALS="${2:-2000}"
OUT="${3:-runs/tables}"
shift $(($# < 3 ? $# : 3))
TABLES=("$@")
if [ ${#TABLES[@]} -eq 0 ]; then
  TABLES=(bobs_hat_3p bobs_hat_4p bobs_hat_5p oh_hell_3p oh_hell_4p oh_hell_5p oh_hell_6p oh_hell_7p)
fi
MIN_DEALS="${MIN_DEALS:-1000}"  # lower it only to try the script out quickly
if [ "$DEALS" -lt "$MIN_DEALS" ]; then
  echo "DEALS must be at least $MIN_DEALS (the margin table needs a tight interval), got $DEALS" >&2
  exit 2
fi
for t in "${TABLES[@]}"; do
  [ -f "configs/$t.yaml" ] || { echo "no preset configs/$t.yaml" >&2; exit 2; }
done
mkdir -p "$OUT"
WORKERS="${WORKERS:-2}"
EVAL_PY=$(cat <<'EOF'
import json, os, sys
from agents.checkpoint import load_checkpoint
from bobshat_env.games import make_game
from train.evaluate import evaluate, format_report

policy, deals, workers, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
_, meta = load_checkpoint(policy)
game = make_game(meta["game"], **meta["config"])  # the game it was trained for
lines = []
for bot, n in (("strong", deals), ("simple", deals // 4), ("random", deals // 4)):
    ev = evaluate(game, [f"ppo:{policy}"] + [bot] * (game.players - 1), n, seed=7, workers=workers, progress=True)
    print(format_report(ev.summary()), flush=True)
    lines.append(json.dumps(ev.summary()))
with open(out + ".tmp", "w") as f:
    f.write("\n".join(lines) + "\n")
os.replace(out + ".tmp", out)
EOF
)

for t in "${TABLES[@]}"; do
  if [ -f "$OUT/$t.eval.json" ]; then
    echo "== $t: done before ($OUT/$t.eval.json), skipped"
    continue
  fi
  echo "== $t: training"
  extra=()
  [ -n "$MINUTES" ] && extra+=(--time-limit-min "$MINUTES")
  if [ -f "$OUT/$t/ckpt.pt" ] && [ ! -f "$OUT/$t.train.json" ]; then
    extra+=(--resume)  # an interrupted run continues
  fi
  if [ ! -f "$OUT/$t.train.json" ]; then
    python -m bobshat.cli train --config "configs/$t.yaml" --runs-dir "$OUT" --run-name "$t" "${extra[@]}" \
      | tee "$OUT/$t.train.log"
    tail -n 1 "$OUT/$t.train.log" > "$OUT/$t.train.json"  # the run's summary line
  fi
  cp "$OUT/$t/policy.pt" "$OUT/$t.pt"
  cp "$OUT/$t/policy.pt.json" "$OUT/$t.pt.json"
  echo "== $t: evaluating against strong ($DEALS deals), simple and random ($((DEALS / 4)) deals)"
  # `python -c`, not a here-document on stdin: the evaluation's worker processes are spawned, and a spawned
  # child re-runs its parent's main file, which `<stdin>` is not.
  python -c "$EVAL_PY" "$OUT/$t.pt" "$DEALS" "$WORKERS" "$OUT/$t.eval.json"
done

python - "$OUT" "${TABLES[@]}" <<'EOF'
import json, sys
from pathlib import Path

out, tables = Path(sys.argv[1]), sys.argv[2:]
rows = {}
for t in tables:
    meta = json.loads((out / f"{t}.pt.json").read_text())  # the policy's metadata: the whole run's progress
    row = {"policy": str(out / f"{t}.pt"), "minutes": round(meta.get("elapsed_s", 0) / 60, 2),
           "table_decisions": meta.get("global_step"), "learner_decisions": meta.get("learner_decisions"),
           "against": {}}
    for line in (out / f"{t}.eval.json").read_text().splitlines():
        s = json.loads(line)
        pair = s["pairwise"][0]
        sign = 1 if pair["a"].startswith("ppo:") else -1
        bot = pair["b"] if sign == 1 else pair["a"]
        row["against"][bot] = {"deals": s["deals"], "games": s["games"], "margin_per_hand": sign * pair["diff_per_hand"],
                               "ci95": pair["ci95"], "win_rate": s["agents"][0]["win_rate"]}
    rows[t] = row
    m = row["against"].get("strong", {})
    print(f"{t:12s} {row['minutes']:6.1f} min  vs strong {m.get('margin_per_hand', float('nan')):+.2f} "
          f"±{m.get('ci95', float('nan')):.2f} per hand")
(out / "tables.json").write_text(json.dumps(rows, indent=1) + "\n")
print(f"wrote {out / 'tables.json'}")
EOF

#!/usr/bin/env bash
# The main job (npm start = spa --size quick on FrozenLake) on 3 seeds x {torch, wasm}, for docs/results/mainjob-v3 (issue 34
# item 5). One bench/compact-quick.sh line per run (wall and CPU seconds, load average, stage times, eval) in OUT; runs whose
# seed and backend already have a line with exit 0 are skipped (resumable). PARALLEL=1 starts all missing runs at once
# (a shared machine gives each process its share; the wall time is then not the quiet machine's).
# DESIGN=baseline runs the main job as npm start does; DESIGN=rule-games (default) adds the best design measured this round
# (docs/results/mainjob-v3/README.md): 1,500 rule-labelled games of up to 4 turns in the paper's reply order, 6,000 drills,
# 8 policy games whose moves are not trained, and RL's tracked Pass@k at steps 0 and 2 on the eval's 8 puzzles (the eval
# prints RL's paired gain over its start).
#   bash bench/mainjob-v3.sh [OUT] [PROJECT_ROOT]
set -u
DESIGN=${DESIGN:-rule-games}
case "$DESIGN" in
  baseline) SETS=() ;;
  rule-games) SETS=(--set stages.selfplay.games=8 --set stages.selfplay.drills=6000 --set stages.selfplay.lookahead=1500
    --set stages.selfplay.lookaheadTurns=4 --set stages.selfplay.lookaheadForm=none --set stages.sft.maskActionSpans=true
    --set stages.rl.passAtKEvery=2 --set stages.rl.passAtKPuzzles=8) ;;
  # session 8: the rule games, then sft.decisionSteps 150 on them alone (moves weighted 20, 16 drills a step beside 32 games)
  teacher) SETS=(--set stages.selfplay.games=8 --set stages.selfplay.drills=6000 --set stages.selfplay.lookahead=1500
    --set stages.selfplay.lookaheadTurns=4 --set stages.selfplay.lookaheadForm=none --set stages.sft.maskActionSpans=true
    --set stages.sft.decisionSteps=150 --set stages.sft.decisionMoveWeight=20 --set stages.sft.decisionDrills=0.5
    --set stages.rl.passAtKEvery=2 --set stages.rl.passAtKPuzzles=8) ;;
  # session 8, after the teacher runs: 32 drills a step beside the 32 games (decisionDrills 1), the spa-teacher preset's setting
  teacher2) SETS=(--set stages.selfplay.games=8 --set stages.selfplay.drills=6000 --set stages.selfplay.lookahead=1500
    --set stages.selfplay.lookaheadTurns=4 --set stages.selfplay.lookaheadForm=none --set stages.sft.maskActionSpans=true
    --set stages.sft.decisionSteps=150 --set stages.sft.decisionMoveWeight=20 --set stages.sft.decisionDrills=1
    --set stages.rl.passAtKEvery=2 --set stages.rl.passAtKPuzzles=8) ;;
  # session 8, after teacher2: quick's own 8,000 drills instead of 6,000 (the dev run that held the world model at 66.7%)
  teacher3) SETS=(--set stages.selfplay.games=8 --set stages.selfplay.drills=8000 --set stages.selfplay.lookahead=1500
    --set stages.selfplay.lookaheadTurns=4 --set stages.selfplay.lookaheadForm=none --set stages.sft.maskActionSpans=true
    --set stages.sft.decisionSteps=150 --set stages.sft.decisionMoveWeight=20 --set stages.sft.decisionDrills=1
    --set stages.rl.passAtKEvery=2 --set stages.rl.passAtKPuzzles=8) ;;
  *) echo "unknown DESIGN $DESIGN (baseline | rule-games | teacher | teacher2 | teacher3)" >&2; exit 2 ;;
esac
OUT=${1:-docs/results/mainjob-v3/runs.jsonl}; ROOT=${2:-/tmp/mainjob-v3}
SEEDS=${SEEDS:-"0 1 2"}; BACKENDS=${BACKENDS:-"torch wasm"}
cd "$(dirname "$0")/.."
mkdir -p "$ROOT" "$(dirname "$OUT")"
for backend in $BACKENDS; do
  for seed in $SEEDS; do
    if [ -f "$OUT" ] && python3 - "$OUT" "$seed" "$backend" <<'PY'
import json, sys
out, seed, backend = sys.argv[1], int(sys.argv[2]), sys.argv[3]
done = any(d.get('seed') == seed and f'backend={backend}' in d.get('set', '') and d.get('exit') == 0 and 'error' not in d
           for d in (json.loads(l) for l in open(out) if l.strip()))
sys.exit(0 if done else 1)
PY
    then echo "skip seed $seed $backend (done)"; continue; fi
    project="$ROOT/$backend-s$seed"; rm -rf "$project"
    cmd=(bash bench/compact-quick.sh "$OUT" "$project" "$seed" --set backend="$backend" "${SETS[@]}")
    if [ "$backend" = torch ]; then export SPA_PYTHON=${SPA_PYTHON:-/usr/bin/python3}; fi
    echo "run seed $seed $backend: ${cmd[*]}"
    if [ "${PARALLEL:-0}" = 1 ]; then NICE=${NICE:-15} "${cmd[@]}" & else NICE=${NICE:-15} "${cmd[@]}"; fi
  done
done
wait

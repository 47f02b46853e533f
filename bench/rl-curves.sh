#!/usr/bin/env bash
# RL learning curves through the product's own run path (issue 34 item 3), CleanRL-style: Pass@1 against episodes on
# 3 seeds, with chance and oracle on the same evaluation puzzles (the final evaluation's reference rows).
#   a  one-step contextual bandit: FrozenLake 4x4, no holes (p 1), random start, the goal next to it (goalDistance 1),
#      one move (maxSteps 1, maxTurns 1); chance 25%. Target: >= 80% within 2,000 episodes.
#   b  the deterministic 4x4 lake with random start and goal (the main job's env, isSlippery false). Target: >= chance + 25.
#   c  FrozenLake with success rate 0.8 (the preset env). Target: >= chance + 15.
# Every curve starts from the shipped base (resources/bases/frozenlake-compact: the main job's model and compact format)
# with vanilla RL at the quick size and the settings below. Resumable: a finished (curve, seed) has its result file and is
# skipped; an interrupted run is resumed (spa-workbench resume). Each result is committed by the caller (one file per run).
# Usage: nice -n 15 bench/rl-curves.sh [CURVES=a] [SEEDS="0 1 2"] [BACKEND=torch|wasm] [TAG=name] [METHOD=vanilla-rl]
#        results: bench/results/rl-curves/<curve>-<tag>-s<seed>.json (bench/rl-curves-table.py tabulates them)
# Extra --set arguments for every run: RL_CURVES_SET="--set stages.rl.lr=3e-4 ..."
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CURVES="${CURVES:-a}"
SEEDS="${SEEDS:-0 1 2}"
BACKEND="${BACKEND:-torch}"
TAG="${TAG:-grpo-lr1e-4}"
METHOD="${METHOD:-vanilla-rl}"   # state-estimation-rl: the compact world-model reply (observation, plan, prediction, answer)
WORK="${RL_CURVES_WORK:-/tmp/rl-curves}"
OUT="$ROOT/bench/results/rl-curves"
mkdir -p "$OUT" "$WORK"

# GRPO (per-puzzle baseline), 32 puzzles x 4 episodes per step, one update per step, lr 1e-4: at lr >= 3e-4 (or 8
# updates per step) the move's marginal collapses within 1-3 steps on this base (bench/results/rl-curves/README.md).
COMMON=(--size quick --set "backend=$BACKEND" --set env.id=frozenlake
  --set model.source=checkpoint --set "model.path=$ROOT/resources/bases/frozenlake-compact"
  --set stages.bootstrap.steps=0 --set stages.bootstrap.gateTurns=0 --set stages.bootstrap.shipped=false --set stages.bootstrap.cache=false
  --set stages.rl.algorithm=grpo --set stages.rl.lr=1e-4 --set stages.rl.groups=32 --set stages.rl.groupSize=4
  --set stages.rl.updatesPerStep=1 --set stages.rl.lossAggregation=seq-mean-token-mean
  --set stages.rl.passAtKEvery=4 --set stages.rl.passAtKPuzzles=64
  --set stages.eval.puzzles=64 --set stages.eval.samples=4 --set stages.eval.worldModelTurns=0 --set stages.eval.perplexityRows=0)

curve_set() {
  case "$1" in
    a) echo "--set env.options.isSlippery=false --set env.options.p=1 --set env.options.goalDistance=1 --set env.options.maxSteps=1 --set stages.rollout.maxTurns=1 --set stages.rl.steps=16" ;;
    b) echo "--set env.options.isSlippery=false --set stages.rl.steps=16" ;;
    c) echo "--set stages.rl.steps=16" ;;
    *) echo "unknown curve $1 (a, b or c)" >&2; exit 2 ;;
  esac
}

for curve in $CURVES; do
  for seed in $SEEDS; do
    result="$OUT/$curve-$TAG-s$seed.json"
    if [ -f "$result" ]; then echo "done: $result"; continue; fi
    project="$WORK/$curve-$TAG-s$seed"
    mkdir -p "$project"
    run=$(ls -1 "$project/runs" 2>/dev/null | head -1 || true)
    # shellcheck disable=SC2046
    if [ -n "$run" ]; then
      SPA_TORCH_THREADS=1 node "$ROOT/bin/spa-workbench.mjs" resume "$run" --project "$project" || true
    else
      SPA_TORCH_THREADS=1 node "$ROOT/bin/spa-workbench.mjs" run "$METHOD" "${COMMON[@]}" $(curve_set "$curve") \
        --set "seeds.base=$seed" --set "seeds.rlStart=$((2000000 + seed * 100000))" ${RL_CURVES_SET:-} \
        --project "$project" --name "rl-curve-$curve-s$seed"
      run=$(ls -1 "$project/runs" | head -1)
    fi
    python3 "$ROOT/bench/rl-curves-table.py" --collect "$project/runs/$run" --curve "$curve" --seed "$seed" --tag "$TAG" --out "$result"
  done
done

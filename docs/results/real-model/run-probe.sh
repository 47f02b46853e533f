#!/usr/bin/env bash
# Issue 20 item 8: SmolLM2-135M-Instruct's world model on FrozenLake before and after SPA's self-play SFT, on the CPU.
# Usage: docs/results/real-model/run-probe.sh WORK_DIR   (needs the GGUF in SPA_MODEL_CACHE, torch in /usr/bin/python3)
set -euo pipefail
cd "$(dirname "$0")/../../.."
work=${1:?work dir}
turns=${TURNS:-16}
games=${GAMES:-24}
cache="${SPA_MODEL_CACHE:-$HOME/.cache/spa-workbench}"
out=docs/results/real-model
mkdir -p "$work"
# probe settings: replies long enough for a whole world-model turn
wm=(--set stages.rollout.maxNewTokens=200 --set stages.rollout.batchSize=8)
[ -d "$work/smollm2" ] || node bin/spa-workbench.mjs model import "$cache/SmolLM2-135M-Instruct.Q4_1.gguf" --out "$work/smollm2"
t0=$(date +%s)
[ -f "$out/probe-base.json" ] || npx tsx "$out/probe.ts" "$work/smollm2" "$out/probe-base.json" "$turns" "${wm[@]}"
echo "base probe: $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
node bin/spa-workbench.mjs run spa --size smoke --project "$work/project" --name smollm2-sft \
  --set env.id=frozenlake --set backend=torch --set model.source=hf-folder --set model.path="$work/smollm2" \
  --set stages.selfplay.games=$games --set stages.rollout.maxTurns=3 --set stages.sft.epochs=1 --set stages.sft.batchSize=4 \
  --set stages.rl.steps=0 --set stages.rl.passAtKEvery=0 \
  --set stages.eval.puzzles=1 --set stages.eval.samples=1 --set 'stages.eval.k=[1]' --set stages.eval.perplexityRows=0 || echo "run ended with $?"
echo "spa run: $(( $(date +%s) - t0 )) s"
sft=$(ls -d "$work"/project/runs/*/checkpoints/sft-epoch-1 | head -1)
t0=$(date +%s)
npx tsx "$out/probe.ts" "$sft" "$out/probe-after-sft.json" "$turns" "${wm[@]}"
echo "after-SFT probe: $(( $(date +%s) - t0 )) s"

#!/usr/bin/env bash
# Issue 20 item 8: SmolLM2-135M-Instruct's world model on FrozenLake before and after SPA's self-play SFT, on the CPU.
# Usage: docs/results/real-model/run-probe.sh WORK_DIR   (needs the GGUF in SPA_MODEL_CACHE, torch in /usr/bin/python3)
# TURNS: the base probe's first turns (16); GAMES: self-play games for SFT (12, <= 2 turns each: 16 train rows, 4 SFT steps);
# AFTER_TURNS: the after-SFT probe's first turns (8: the time this shared CPU had; the base's 0% on 16 holds on any subset).
# SFT runs in 1,024-token micro-batches with gradient checkpointing (the first attempt, 24 games x 3 turns in one
# micro-batch, was killed by the kernel's OOM killer at 10.5 GB RSS on this shared 24 GB machine).
set -euo pipefail
cd "$(dirname "$0")/../../.."
work=${1:?work dir}
turns=${TURNS:-16}
games=${GAMES:-12}
after_turns=${AFTER_TURNS:-8}
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
  --set stages.selfplay.games=$games --set stages.rollout.maxTurns=2 --set stages.sft.epochs=1 --set stages.sft.batchSize=4 \
  --set model.memory.tokensPerMicroBatch=1024 --set model.memory.gradientCheckpointing=true \
  --set stages.rl.steps=0 --set stages.rl.passAtKEvery=0 \
  --set stages.eval.puzzles=1 --set stages.eval.samples=1 --set 'stages.eval.k=[1]' --set stages.eval.perplexityRows=0 || echo "run ended with $?"
echo "spa run: $(( $(date +%s) - t0 )) s"
sft=$(ls -d "$work"/project/runs/*/checkpoints/sft-epoch-1 | head -1)
t0=$(date +%s)
npx tsx "$out/probe.ts" "$sft" "$out/probe-after-sft.json" "$after_turns" "${wm[@]}"
echo "after-SFT probe: $(( $(date +%s) - t0 )) s"

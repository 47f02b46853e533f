#!/usr/bin/env bash
# Runs the cells of study-v3-<lake> (fldet: deterministic FrozenLake; fl08: success rate 0.8; DESIGN.md, pre-registered)
# not yet recorded in docs/results/study-v3/<lake>/runs/, one one-cell study per cell (its own project under WORKDIR),
# recording each as it finishes; for SPA and SPA-masked also the world-model check after SFT (<lake>/wm-check/). Start it
# twice with the same WORKDIR to use two cores: the streams claim cells with mkdir, so no cell runs twice. A stopped cell
# resumes from its checkpoints (and its episode journal) when its project is still there: start the same command again.
#
#   bash docs/results/study-v3/run.sh ~/study-v3 fldet A > ~/study-v3/A.out 2>&1 &
#   bash docs/results/study-v3/run.sh ~/study-v3 fldet B > ~/study-v3/B.out 2>&1 &
#
# CELLS (optional): the cells to consider, e.g. "vanilla-rl:99 spa:99"; OUTDIR (optional): where records go under
# docs/results/study-v3 (default the lake; the pilot uses OUTDIR=pilot). Needs torch in /usr/bin/python3 (SPA_PYTHON).
set -u
WORK=${1:?usage: run.sh WORKDIR LAKE STREAM}; LAKE=${2:?fldet or fl08}; STREAM=${3:-A}
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
OUT=$ROOT/docs/results/study-v3/${OUTDIR:-$LAKE}
BASE=$ROOT/resources/bases/frozenlake-compact
export SPA_TORCH_THREADS=${SPA_TORCH_THREADS:-1} SPA_PYTHON=${SPA_PYTHON:-/usr/bin/python3}
NAME=study-v3-$LAKE
case $LAKE in
  fldet) SET=(--set env.options.isSlippery=false) ;;
  fl08) SET=() ;;
  *) echo "unknown lake $LAKE (fldet or fl08)" >&2; exit 2 ;;
esac
# every arm: the shipped base as a checkpoint (a 0-step bootstrap), torch, the quick size with DESIGN.md's RL and evaluation
SET+=(--set backend=torch --set model.source=checkpoint --set "model.path=$BASE"
  --set stages.bootstrap.steps=0 --set stages.bootstrap.gateTurns=0 --set stages.bootstrap.shipped=false --set stages.bootstrap.cache=false
  --set stages.rl.algorithm=grpo --set stages.rl.lr=1e-4 --set stages.rl.steps=32 --set stages.rl.groups=16 --set stages.rl.groupSize=4
  --set stages.rl.updatesPerStep=1 --set stages.rl.miniBatchSize=8 --set stages.rl.lossAggregation=seq-mean-token-mean
  --set stages.rl.passAtKEvery=8 --set stages.rl.passAtKPuzzles=32
  --set stages.rl.selfImitation.steps=8 --set stages.rl.selfImitation.batch=16 --set stages.rl.selfImitation.lr=2e-3
  --set stages.rl.selfImitation.source=rewarded-turns --set stages.rl.selfImitation.filter=plan-only
  --set env.options.progressReward=0.1
  --set stages.eval.puzzles=128 --set stages.eval.samples=8 --set 'stages.eval.k=[1,8]' --set stages.eval.worldModelTurns=64)
# the registered order: the first seed of every arm, then seeds 1 and 2
CELLS=${CELLS:-"vanilla-rl:0 state-estimation-rl:0 spa:0 spa-mask-state-spans:0 vanilla-rl:1 state-estimation-rl:1 spa:1 spa-mask-state-spans:1
vanilla-rl:2 state-estimation-rl:2 spa:2 spa-mask-state-spans:2"}
cli() { node bin/spa-workbench.mjs "$@"; }
mkdir -p "$WORK/$LAKE/claims" "$OUT/runs" "$OUT/wm-check"
cd "$ROOT" || exit 2
for cell in $CELLS; do
  m=${cell%%:*}; s=${cell##*:}
  [ -f "$OUT/runs/$m-frozenlake-s$s.json" ] && continue
  if ! mkdir "$WORK/$LAKE/claims/$m-s$s" 2>/dev/null; then
    [ "$(cat "$WORK/$LAKE/claims/$m-s$s/stream" 2>/dev/null)" = "$STREAM" ] || continue
  fi
  echo "$STREAM" > "$WORK/$LAKE/claims/$m-s$s/stream"
  P=$WORK/$LAKE/$m-s$s
  echo "$(date -u +%FT%TZ) [$STREAM] start $m seed $s ($P) load $(cut -d' ' -f1-3 /proc/loadavg)"
  cli study run --project "$P" --name "$NAME" --methods "$m" --envs frozenlake --seeds "$s" --size quick "${SET[@]}" \
    --skip-recorded "$OUT" >> "$P.log" 2>&1
  echo "$(date -u +%FT%TZ) [$STREAM] end $m seed $s (exit $?) load $(cut -d' ' -f1-3 /proc/loadavg)"
  cli study record --project "$P" --name "$NAME" --out "$OUT"
  # a stopped cell is not recorded: end the stream, so the next start resumes this cell instead of claiming the next one
  if [ ! -f "$OUT/runs/$m-frozenlake-s$s.json" ]; then
    echo "$(date -u +%FT%TZ) [$STREAM] $m seed $s not recorded (stopped or failed): stream ends; start it again to resume"
    break
  fi
  # the world model after SFT (criterion 1) on the cell's SFT checkpoint, beside the shipped base
  case $m in spa|spa-mask-state-spans)
    f=$OUT/wm-check/$m-s$s-sft.json
    run=$(find "$P/runs" -mindepth 1 -maxdepth 1 -type d -printf "%f\n" 2>/dev/null | sort | head -1)
    ckpt=$(find "$P/runs/$run/checkpoints" -mindepth 1 -maxdepth 1 -type d -name 'sft*' -printf "%f\n" 2>/dev/null | sort | tail -1)
    [ -f "$f" ] || cli probe --project "$P" --run "$run" --checkpoint "$ckpt" --check --base "$BASE" --out "$f" >> "$P.log" 2>&1 \
      || echo "$(date -u +%FT%TZ) [$STREAM] wm check of $m seed $s failed (see $P.log)" ;;
  esac
done
echo "$(date -u +%FT%TZ) [$STREAM] no cell left for this stream"

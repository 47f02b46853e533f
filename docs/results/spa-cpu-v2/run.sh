#!/usr/bin/env bash
# Runs the cells of spa-cpu-v2-<variant> (fldet: deterministic FrozenLake; fl08: success 0.8) not yet recorded in
# docs/results/spa-cpu-v2/<variant>/runs/, one one-cell study per cell (its own project under WORKDIR), recording
# each as it finishes. Start it twice with the same WORKDIR to use two cores: the streams claim cells with mkdir,
# so no cell runs twice. A stopped cell resumes from its checkpoints when its project is still there.
#
#   bash docs/results/spa-cpu-v2/run.sh ~/spa-cpu-v2 fldet A &
#   bash docs/results/spa-cpu-v2/run.sh ~/spa-cpu-v2 fldet B &
set -u
WORK=${1:?usage: run.sh WORKDIR VARIANT STREAM}; VARIANT=${2:?fldet or fl08}; STREAM=${3:-A}
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
OUT=$ROOT/docs/results/spa-cpu-v2/$VARIANT
case $VARIANT in
  # the deterministic lake starts from the same shipped base (the "nothing moves" base knows no dynamics; its descriptor
  # names the success-0.8 lake, so it is loaded as a checkpoint rather than matched)
  fldet) SET=(--set env.options.isSlippery=false --set model.source=checkpoint --set "model.path=$ROOT/resources/bases/frozenlake-compact"
              --set stages.bootstrap.steps=0 --set stages.bootstrap.gateTurns=0 --set stages.bootstrap.shipped=false --set stages.bootstrap.cache=false) ;;
  fl08) SET=() ;;
  *) echo "unknown variant $VARIANT" >&2; exit 2 ;;
esac
# the registered critic: the shared trunk (standard's default then; standard uses a separate critic since 2026-11-27 13:30 UTC,
# docs/results/spa-cpu-v2/format-drift), pinned here so every cell runs as registered
SET+=(--set model.criticMode=shared-trunk)
CELLS="vanilla-rl:0 spa:0 state-estimation-rl:0 spa-mask-state-spans:0 vanilla-rl:1 spa:1 state-estimation-rl:1 spa-mask-state-spans:1
vanilla-rl:2 spa:2 state-estimation-rl:2 spa-mask-state-spans:2"
mkdir -p "$WORK/$VARIANT/claims" "$OUT/runs"
cd "$ROOT"
for cell in $CELLS; do
  m=${cell%%:*}; s=${cell##*:}
  [ -f "$OUT/runs/$m-frozenlake-s$s.json" ] && continue
  if ! mkdir "$WORK/$VARIANT/claims/$m-s$s" 2>/dev/null; then
    [ "$(cat "$WORK/$VARIANT/claims/$m-s$s/stream" 2>/dev/null)" = "$STREAM" ] || continue
  fi
  echo "$STREAM" > "$WORK/$VARIANT/claims/$m-s$s/stream"
  P=$WORK/$VARIANT/$m-s$s
  echo "$(date -u +%FT%TZ) [$STREAM] start $m seed $s ($P) load $(cut -d' ' -f1-3 /proc/loadavg)"
  SPA_TORCH_THREADS=1 nice -n 5 node bin/spa-workbench.mjs study run --project "$P" --name "spa-cpu-v2-$VARIANT" \
    --methods "$m" --envs frozenlake --seeds "$s" --size standard "${SET[@]}" --skip-recorded "$OUT" >> "$P.log" 2>&1
  echo "$(date -u +%FT%TZ) [$STREAM] end $m seed $s (exit $?) load $(cut -d' ' -f1-3 /proc/loadavg)"
  node bin/spa-workbench.mjs study record --project "$P" --name "spa-cpu-v2-$VARIANT" --out "$OUT"
done
echo "$(date -u +%FT%TZ) [$STREAM] no cell left for this stream"

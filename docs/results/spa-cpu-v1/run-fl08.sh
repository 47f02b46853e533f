#!/usr/bin/env bash
# Runs the cells of spa-cpu-v1-fl08 not yet recorded in docs/results/spa-cpu-v1/fl08/runs/, one
# one-cell study per cell (its own project under WORKDIR), recording each as it finishes. Start it
# twice with the same WORKDIR to use two cores: the streams claim cells with mkdir, so no cell runs
# twice. A cell whose run stopped half way resumes from its checkpoints when its project is still
# there (same WORKDIR, same machine); on a fresh machine it starts over.
#
#   bash docs/results/spa-cpu-v1/run-fl08.sh ~/spa-cpu-v1/fl08 A &
#   bash docs/results/spa-cpu-v1/run-fl08.sh ~/spa-cpu-v1/fl08 B &
#   # then commit docs/results/spa-cpu-v1/fl08/runs/*.json as they appear, and rebuild the table:
#   npm run cli -- study table --records docs/results/spa-cpu-v1/fl08 --name spa-cpu-v1-fl08 \
#     --methods vanilla-rl,state-estimation-rl,spa,spa-mask-state-spans --out docs/results/spa-cpu-v1/fl08
set -u
WORK=${1:?usage: run-fl08.sh WORKDIR STREAM}; STREAM=${2:-A}
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
OUT=$ROOT/docs/results/spa-cpu-v1/fl08
CELLS="spa-mask-state-spans:0 state-estimation-rl:1 spa:1 spa-mask-state-spans:1 state-estimation-rl:2 spa:2 spa-mask-state-spans:2
vanilla-rl:0 vanilla-rl:1 vanilla-rl:2 state-estimation-rl:0 spa:0"
mkdir -p "$WORK/claims"
cd "$ROOT"
for cell in $CELLS; do
  m=${cell%%:*}; s=${cell##*:}
  [ -f "$OUT/runs/$m-frozenlake-s$s.json" ] && continue
  if ! mkdir "$WORK/claims/$m-s$s" 2>/dev/null; then
    # claimed before: by the other stream now, or by a stream that stopped; resume only our own
    [ "$(cat "$WORK/claims/$m-s$s/stream" 2>/dev/null)" = "$STREAM" ] || continue
  fi
  echo "$STREAM" > "$WORK/claims/$m-s$s/stream"
  P=$WORK/$m-s$s
  echo "$(date -u +%FT%TZ) [$STREAM] start $m seed $s ($P)"
  SPA_TORCH_THREADS=1 node bin/spa-workbench.mjs study run --project "$P" --name spa-cpu-v1-fl08 \
    --methods "$m" --envs frozenlake --seeds "$s" --size standard --skip-recorded "$OUT" >> "$P.log" 2>&1
  echo "$(date -u +%FT%TZ) [$STREAM] end $m seed $s (exit $?)"
  node bin/spa-workbench.mjs study record --project "$P" --name spa-cpu-v1-fl08 --out "$OUT"
done
echo "$(date -u +%FT%TZ) [$STREAM] no cell left for this stream"

#!/usr/bin/env bash
# Criterion 1 of DESIGN.md, measured as registered, for every recorded cell of spa-cpu-v2-<variant> whose project is
# still in WORKDIR: the eval's world-model check (first turns of the 64 eval puzzles, the run's own template, the same
# sampling seeds; prediction given one action on the turns it changes) beside the run's base, on
#   - the SFT checkpoint (checkpoints/sft-epoch-1, "after SFT"; arms without SFT: the base row is their after-SFT value), and
#   - the final checkpoint (the one the final eval evaluated; a deterministic-lake run starts from the shipped base as a
#     checkpoint, and its eval had no base to compare with before the eval learned to use that checkpoint as the base).
# Writes DIR/wm-check/<method>-s<seed>-{sft,final}.json once each (skips those present). Plain-format arms have no
# world-model reply and are skipped.
#
#   bash docs/results/spa-cpu-v2/wm-checks.sh ~/spa-cpu-v2 fldet
set -u
WORK=${1:?usage: wm-checks.sh WORKDIR VARIANT}; VARIANT=${2:?fldet or fl08}
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
OUT=$ROOT/docs/results/spa-cpu-v2/$VARIANT
mkdir -p "$OUT/wm-check"
cd "$ROOT"
for rec in "$OUT"/runs/*.json; do
  [ -e "$rec" ] || continue
  name=$(basename "$rec" .json); m=${name%-frozenlake-s*}; s=${name##*-s}
  [ "$m" = vanilla-rl ] && continue
  P=$WORK/$VARIANT/$m-s$s
  run=$(ls "$P/runs" 2>/dev/null | head -1)
  [ -n "$run" ] || { echo "skip $m s$s: no project at $P"; continue; }
  final=$(node -e "process.stdout.write(String(require('$P/runs/$run/eval/final.json').model ?? ''))" 2>/dev/null)
  final=$(basename "${final:-}")
  for which in sft final; do
    f=$OUT/wm-check/$m-s$s-$which.json
    [ -f "$f" ] && continue
    if [ $which = sft ]; then ck=sft-epoch-1; else ck=$final; fi
    [ -n "$ck" ] && [ -d "$P/runs/$run/checkpoints/$ck" ] || { echo "skip $m s$s $which: no checkpoint ${ck:-?}"; continue; }
    SPA_TORCH_THREADS=1 node bin/spa-workbench.mjs probe --project "$P" --run "$run" --checkpoint "$ck" --check --out "$f.tmp" && mv "$f.tmp" "$f"
  done
done

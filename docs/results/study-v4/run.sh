#!/usr/bin/env bash
# Runs the cells of study v4 (docs/results/study-v4/README.md, pre-registered) not yet recorded in
# docs/results/study-v4/fldet/runs/, one one-cell study per cell (its own project under WORKDIR), recording each as it
# finishes; for the SFT arms also the world-model check after SFT (fldet/wm-check/<arm>-s<seed>-sft.json). Start it twice
# with the same WORKDIR to use two cores: the streams claim cells with mkdir, so no cell runs twice. A stopped cell
# resumes from its checkpoints when its project is still there (start the same command again).
#
#   nohup nice -n 15 bash docs/results/study-v4/run.sh ~/study-v4 A > ~/study-v4/A.out 2>&1 &
#   nohup nice -n 15 bash docs/results/study-v4/run.sh ~/study-v4 B > ~/study-v4/B.out 2>&1 &
#
# Since the amendment of 2026-12-01 (README) the cells run LoRA rank 2: use a WORKDIR that holds no cell of an earlier
# design (run.sh refuses one). A cell absent from WORKDIR but carried in docs/results/study-v4/carry/ is unpacked first.
#
# Needs the GGUF in SPA_MODEL_CACHE (default ~/.cache/spa-workbench; .ci/install-models.sh) and torch in /usr/bin/python3.
# CELLS (optional): the cells to consider, e.g. "vanilla-rl:0 spa:0" (default: the registered order, all nine).
set -u
WORK=${1:?usage: run.sh WORKDIR STREAM}; STREAM=${2:-A}
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
OUT=$ROOT/docs/results/study-v4/fldet
CACHE=${SPA_MODEL_CACHE:-$HOME/.cache/spa-workbench}
GGUF=$CACHE/SmolLM2-135M-Instruct.Q4_1.gguf
GGUF_SHA256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
export SPA_TORCH_THREADS=${SPA_TORCH_THREADS:-1} MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-2}
NAME=study-v4-fldet
# the registered order (README), as amended 2026-11-30 05:44 (cell order only): SPA and vanilla seed 0 before SPA-masked
# seed 0, whose replies run at the 288-token cap (~39 CPU-h projected); then SPA and SPA-masked seeds 1-2, vanilla seeds 1-2
CELLS=${CELLS:-"spa:0 vanilla-rl:0 spa-mask-state-spans:0 spa:1 spa-mask-state-spans:1 spa:2 spa-mask-state-spans:2 vanilla-rl:1 vanilla-rl:2"}
cli() { node bin/spa-workbench.mjs "$@"; }
# the design a WORKDIR's cells ran: a cell of another design is never resumed into this one
DESIGN=amended-2026-12-01-rank2
if [ -d "$WORK/fldet/claims" ] && [ "$(cat "$WORK/fldet/design" 2>/dev/null)" != "$DESIGN" ]; then
  echo "$WORK holds cells of another design of study v4 ($(cat "$WORK/fldet/design" 2>/dev/null || echo 'the registered one')); use a new WORKDIR" >&2
  exit 2
fi
mkdir -p "$WORK/fldet/claims" "$OUT/runs" "$OUT/wm-check"
# written once and atomically: a second stream started at the same instant must not read it half-written
[ -f "$WORK/fldet/design" ] || { echo "$DESIGN" > "$WORK/fldet/design.$$" && mv "$WORK/fldet/design.$$" "$WORK/fldet/design"; }
cd "$ROOT" || exit 2
# the imported model, once (a second stream waits for the first's import)
if [ ! -f "$WORK/smollm2/config.json" ]; then
  if mkdir "$WORK/import.lock" 2>/dev/null; then
    [ -f "$GGUF" ] || { echo "no $GGUF (run .ci/install-models.sh)" >&2; rmdir "$WORK/import.lock"; exit 2; }
    echo "$GGUF_SHA256  $GGUF" | sha256sum -c --quiet - || { echo "$GGUF is not the registered file" >&2; rmdir "$WORK/import.lock"; exit 2; }
    cli model import "$GGUF" --out "$WORK/smollm2.tmp" && mv "$WORK/smollm2.tmp" "$WORK/smollm2"
    rmdir "$WORK/import.lock"
  else
    while [ ! -f "$WORK/smollm2/config.json" ] && [ -d "$WORK/import.lock" ]; do sleep 5; done
  fi
fi
[ -f "$WORK/smollm2/config.json" ] || { echo "no imported model at $WORK/smollm2" >&2; exit 2; }
# generationRows 8 (README amendment of 2026-11-30, memory only): two cells in RL at once fit this 24 GB machine; rollout
# batchSize 8 (amendment of 2026-11-30 02:52, execution only): each 8 finished episodes are journalled, so a stop loses less
# LoRA rank 2, alpha 32 (README amendment of 2026-12-01): a cell's resume state is ~5 MB and is carried in git (carry.sh)
SET=(--set "model.path=$WORK/smollm2" --set env.options.isSlippery=false --set model.memory.generationRows=8 --set stages.rollout.batchSize=8
  --set model.lora.rank=2)
for cell in $CELLS; do
  m=${cell%%:*}; s=${cell##*:}
  [ -f "$OUT/runs/$m-frozenlake-s$s.json" ] && continue
  if ! mkdir "$WORK/fldet/claims/$m-s$s" 2>/dev/null; then
    [ "$(cat "$WORK/fldet/claims/$m-s$s/stream" 2>/dev/null)" = "$STREAM" ] || continue
  fi
  echo "$STREAM" > "$WORK/fldet/claims/$m-s$s/stream"
  P=$WORK/fldet/$m-s$s
  # a cell carried in git (carry.sh pack at a session's end) and absent here: unpack it (local state is preferred)
  if [ ! -d "$P" ] && [ -f "$ROOT/docs/results/study-v4/carry/$m-s$s/CARRY.json" ]; then
    CARRY_DIR=$ROOT/docs/results/study-v4/carry bash "$ROOT/docs/results/study-v4/carry.sh" unpack "$WORK" "$m-s$s" || {
      echo "$(date -u +%FT%TZ) [$STREAM] the carry of $m seed $s does not unpack: stream ends (nothing started)"; break; }
  fi
  echo "$(date -u +%FT%TZ) [$STREAM] start $m seed $s ($P) load $(cut -d' ' -f1-3 /proc/loadavg)"
  cli study run --project "$P" --name "$NAME" --methods "$m" --envs frozenlake --seeds "$s" --size cpu-real "${SET[@]}" \
    --skip-recorded "$OUT" >> "$P.log" 2>&1
  echo "$(date -u +%FT%TZ) [$STREAM] end $m seed $s (exit $?) load $(cut -d' ' -f1-3 /proc/loadavg)"
  cli study record --project "$P" --name "$NAME" --out "$OUT"
  # a stopped cell (`study run` exits 0 after a stop) is not recorded: end the stream so the next start resumes this cell
  # instead of claiming the next one
  if [ ! -f "$OUT/runs/$m-frozenlake-s$s.json" ]; then
    echo "$(date -u +%FT%TZ) [$STREAM] $m seed $s not recorded (stopped or failed): stream ends; start it again to resume"
    break
  fi
  # the world model after SFT (criterion 1), on the cell's last SFT checkpoint (epoch 2 of cpu-real since the amendment of
  # 2026-11-29 evening), beside the imported base; for SPA also epoch 1's: a point of issue 35 item 3's examples-vs-exact-
  # match curve (67 steps of 8 per epoch)
  if [ "$m" != vanilla-rl ] && [ -f "$OUT/runs/$m-frozenlake-s$s.json" ]; then
    run=$(find "$P/runs" -mindepth 1 -maxdepth 1 -type d -printf "%f\n" 2>/dev/null | sort | head -1)
    last=2; epochs="$last"; [ "$m" = spa ] && epochs="$last 1"
    for k in $epochs; do
      f=$OUT/wm-check/$m-s$s-sft.json; [ "$k" = "$last" ] || f=$OUT/wm-check/$m-s$s-sft-epoch$k.json
      [ -f "$f" ] && continue
      cli probe --project "$P" --run "$run" --checkpoint "sft-epoch-$k" --check --base "$WORK/smollm2" --out "$f" \
        >> "$P.log" 2>&1 || echo "$(date -u +%FT%TZ) [$STREAM] wm check of $m seed $s epoch $k failed (see $P.log)"
    done
  fi
done
echo "$(date -u +%FT%TZ) [$STREAM] no cell left for this stream"

#!/usr/bin/env bash
# Issue 35 item 3: SmolLM2-135M-Instruct learns FrozenLake's world model in the product on this CPU (LoRA, torch, compact
# format, deterministic lake). One seed per call; resumable: a second call with the same WORKDIR and SEED resumes the run
# (from its last finished stage, an epoch checkpoint of SFT, or the batch a `stop` saved when the step in progress ended
# within the engine's 15 s stop grace).
#
#   nohup nice -n 15 bash docs/results/smollm2-wm/run.sh /work/h7 0 > /work/h7/wm-s0.out 2>&1 &
#
# WORKDIR holds the GGUF cache copy's import (WORKDIR/smollm2, made once by `model import`) and one project per seed
# (WORKDIR/wm-s<SEED>). CONFIG (default wm-config.json beside this script) is the run config with MODEL_PATH for the
# imported folder; the seed goes in seeds.base. SPA_TORCH_THREADS (default 1) sets the torch worker's threads.
set -euo pipefail
WORK=${1:?usage: run.sh WORKDIR SEED}; SEED=${2:?usage: run.sh WORKDIR SEED}
HERE=$(cd "$(dirname "$0")" && pwd); ROOT=$(cd "$HERE/../../.." && pwd)
CONFIG=${CONFIG:-$HERE/wm-config.json}
CACHE=${SPA_MODEL_CACHE:-$HOME/.cache/spa-workbench}
export SPA_TORCH_THREADS=${SPA_TORCH_THREADS:-1} MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-2}
mkdir -p "$WORK"
cd "$ROOT"
cli() { node bin/spa-workbench.mjs "$@"; }
[ -f "$WORK/smollm2/config.json" ] || cli model import "$CACHE/SmolLM2-135M-Instruct.Q4_1.gguf" --out "$WORK/smollm2"
P=$WORK/wm-s$SEED
RUN=$(cli list --project "$P" --json 2>/dev/null | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{try{const r=JSON.parse(s);const a=Array.isArray(r)?r:r.runs??[];process.stdout.write(a[0]?.id??"")}catch{}})' || true)
echo "$(date -u +%FT%TZ) seed $SEED project $P run ${RUN:-new} load $(cut -d' ' -f1-3 /proc/loadavg) threads $SPA_TORCH_THREADS"
if [ -n "$RUN" ]; then
  cli resume "$RUN" --project "$P" || echo "resume ended with $?"
else
  node -e 'const f=require("fs");const c=JSON.parse(f.readFileSync(process.argv[1],"utf8"));c.model.path=process.argv[2];c.seeds={...(c.seeds??{}),base:+process.argv[3]};c.name=`${c.name} s${process.argv[3]}`;f.writeFileSync(process.argv[4],JSON.stringify(c,null,2))' \
    "$CONFIG" "$WORK/smollm2" "$SEED" "$WORK/wm-s$SEED.config.json"
  cli run "$WORK/wm-s$SEED.config.json" --project "$P" || echo "run ended with $?"
fi
echo "$(date -u +%FT%TZ) seed $SEED ended, load $(cut -d' ' -f1-3 /proc/loadavg)"

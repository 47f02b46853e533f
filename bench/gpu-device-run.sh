#!/usr/bin/env bash
# The engine's whole run on a GPU machine that has Python + torch but no node (bench/gpu-engine-run.ts). Prepare here:
#   node bench/gpu-engine-bundle.mjs .devcarry                      # the engine as one .mjs (+ wasm files, stubs)
#   xz -T2 -6 -c "$(command -v node)" > .devcarry/node.xz            # a node binary (x86-64, glibc)
#   mkdir -p .devcarry/tokenizer && cp STANDIN/tokenizer_config.json .devcarry/tokenizer/ && gzip -9c STANDIN/tokenizer.json > .devcarry/tokenizer/tokenizer.json.gz
# then, on the GPU machine, from the checkout with .devcarry carried:
#   OUT=/some/dir bash bench/gpu-device-run.sh [BUDGET_S] [--case NAME ...]
# Writes $OUT/gpu-engine-run.json (rewritten after every stage), gpu-engine-run.log, nvidia-smi.txt, standins.txt.
set -u
OUT=${OUT:?set OUT to a folder for the results}
BUDGET=${1:-420}; shift || true
cd "$(dirname "$0")/.."
mkdir -p "$OUT" /tmp/gpu-run
xz -dc .devcarry/node.xz > /tmp/gpu-run/node && chmod +x /tmp/gpu-run/node || { echo "no node: .devcarry/node.xz"; exit 3; }
/tmp/gpu-run/node --version
mkdir -p /tmp/gpu-run/tokenizer && cp .devcarry/tokenizer/tokenizer_config.json /tmp/gpu-run/tokenizer/ \
  && gzip -dc .devcarry/tokenizer/tokenizer.json.gz > /tmp/gpu-run/tokenizer/tokenizer.json
{ nvidia-smi; python3 -c 'import torch, sys; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0), "python", sys.version.split()[0])'; } > "$OUT/nvidia-smi.txt" 2>&1
cat "$OUT/nvidia-smi.txt" | tail -3
t0=$(date +%s)
python3 bench/gpu_standins.py --tokenizer /tmp/gpu-run/tokenizer --out /tmp/gpu-run/models 2>&1 | tee "$OUT/standins.txt"
left=$(( BUDGET - ($(date +%s) - t0) ))
echo "stand-ins in $(( $(date +%s) - t0 )) s; $left s left for the runs"
SPA_TORCH_DEVICE=cuda PYTHONUNBUFFERED=1 /tmp/gpu-run/node .devcarry/gpu-engine-run.mjs --models /tmp/gpu-run/models \
  --out "$OUT/gpu-engine-run.json" --budget-s "$left" "$@" > "$OUT/gpu-engine-run.stdout" 2> >(tee "$OUT/gpu-engine-run.log" >&2)
echo "exit $? after $(( $(date +%s) - t0 )) s"

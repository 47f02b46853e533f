#!/usr/bin/env python3
"""One SFT training step of the torch worker on the Qwen2.5-0.5B stand-in (bench/real-model-memory.ts makes it), driven
from Python: the worker process's RSS and peak RSS (VmHWM) after init, forward, backward, a malloc_trim, and the AdamW
step. Used to see where a stage's peak comes from without a whole run.

    /usr/bin/python3 bench/real-model-memory-step.py [--tokens-per-row 454] [--rows 4] [--standin DIR]

SPA_TORCH_MALLOC=default runs it with glibc's own malloc settings (the worker tunes them otherwise). Prints one JSON line."""
import argparse
import json
import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "resources", "torch-worker"))
import worker as W  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--standin", default=os.path.expanduser("~/.cache/spa-workbench/qwen25-05b-standin"))
ap.add_argument("--rows", type=int, default=4)
ap.add_argument("--tokens-per-row", type=int, default=454)   # the smoke SFT's longest row with the real tokenizer
ap.add_argument("--no-checkpointing", action="store_true")
args = ap.parse_args()


def mem():
    s = open("/proc/self/status").read()
    kb = lambda k: int(next(l for l in s.split("\n") if l.startswith(k)).split()[1]) * 1024  # noqa: E731
    return {"rssBytes": kb("VmRSS:"), "hwmBytes": kb("VmHWM:")}


cfg = json.load(open(os.path.join(args.standin, "config.json")))
wk = W.Worker(W.THREADS)
phases = []


def phase(name, t0):
    phases.append(dict(phase=name, seconds=round(time.time() - t0, 1), **mem()))


t = time.time()
names = [(n, n) for n, _ in W.param_specs(cfg)]
wk.init({"config": cfg, "files": [{"path": os.path.join(args.standin, "model.safetensors"), "names": names}], "trainable": True,
         "gradientCheckpointing": not args.no_checkpointing}, {})
phase("init", t)
B, T = args.rows, args.tokens_per_row
g = torch.Generator().manual_seed(0)
ids = torch.randint(0, cfg["vocab_size"] - 300, (B, T), generator=g, dtype=torch.int32)
mask = torch.ones(B, T, dtype=torch.int32)
score = torch.zeros(B, T, dtype=torch.int32)
score[:, T // 2:] = 1   # the reply half is scored, as SFT's assistant mask
t = time.time()
wk.forward({"logits": True}, {"ids": ids, "mask": mask, "score": score})
phase("forward", t)
t = time.time()
wk.backward({}, {"logprobs": torch.full((B, T), -1e-3), "entropies": torch.zeros(B, T)})
phase("backward", t)
t = time.time()
W.release_memory(wk.device)
phase("trim", t)
t = time.time()
wk.apply({"lr": 1e-5, "totalWeight": 1.0, "maxGradNorm": 1.0}, {})
phase("apply", t)
print(json.dumps({"malloc": os.environ.get("SPA_TORCH_MALLOC", "tuned"), "rows": B, "tokensPerRow": T,
                  "gradientCheckpointing": not args.no_checkpointing, "phases": phases}))

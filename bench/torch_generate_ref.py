#!/usr/bin/env python3
"""Raw transformers beside the product's torch backend on a real Hugging Face folder (bench/torch-generate.ts):
greedy generation with a K/V cache over a left-padded batch (attention mask, position ids from it; a row that emits an
end-of-turn id stops counting and is fed its pad, as transformers' generate() does), and full fine-tuning steps
(full-vocabulary cross-entropy on every token, AdamW betas 0.9/0.95, wd 0.01, global-norm clip 1).
generate() itself is not used: it imports torch.distributed.fsdp, which breaks on Debian's torch 1.13 under Python 3.11.
Usage: torch_generate_ref.py SPEC.json   (SPEC: dir, threads, prompts [[ids]...] per batch, maxNew, eos [ids], pad,
trainRows [[ids]...], trainSteps, reps). Prints one JSON object: per batch the tokens and the median wall and CPU
seconds; the training step's median wall and CPU seconds."""
import json
import os
import statistics
import sys
import time

spec = json.load(open(sys.argv[1]))
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(spec["threads"])

import torch  # noqa: E402
import transformers  # noqa: E402
from transformers import AutoModelForCausalLM  # noqa: E402

torch.set_num_threads(spec["threads"])
model = AutoModelForCausalLM.from_pretrained(spec["dir"], torch_dtype=torch.float32).eval()
eos, pad = set(spec["eos"]), spec["pad"]


def clock():
    return time.perf_counter(), time.process_time()


def generate(prompts, max_new):
    B, P = len(prompts), max(len(p) for p in prompts)
    ids = torch.tensor([[pad] * (P - len(p)) + p for p in prompts])
    mask = torch.tensor([[0] * (P - len(p)) + [1] * len(p) for p in prompts])
    out = [[] for _ in range(B)]
    done = [False] * B
    past = None
    cur = ids
    with torch.no_grad():
        for _ in range(max_new):
            pos = (mask.cumsum(-1) - 1).clamp(min=0)[:, -cur.shape[1]:]
            o = model(input_ids=cur, attention_mask=mask, position_ids=pos, past_key_values=past, use_cache=True)
            past = o.past_key_values
            nxt = o.logits[:, -1].argmax(-1)
            for b in range(B):
                if done[b]:
                    nxt[b] = pad
                    continue
                out[b].append(int(nxt[b]))
                done[b] = int(nxt[b]) in eos
            if all(done):
                break
            cur = nxt[:, None]
            mask = torch.cat([mask, torch.ones(B, 1, dtype=mask.dtype)], 1)
    return out


results = {"torch": torch.__version__, "transformers": transformers.__version__, "threads": spec["threads"], "generate": {}}
for key, prompts in spec["prompts"].items():
    generate(prompts, 4)   # warm-up
    walls, cpus, tokens = [], [], None
    for _ in range(spec["reps"]):
        w0, c0 = clock()
        tokens = generate(prompts, spec["maxNew"])
        w1, c1 = clock()
        walls.append(w1 - w0)
        cpus.append(c1 - c0)
    n = sum(len(t) for t in tokens)
    results["generate"][key] = {"tokens": tokens, "generated": n, "seconds": statistics.median(walls), "cpuSeconds": statistics.median(cpus),
                                "tokensPerSec": n / statistics.median(walls), "tokensPerCpuSec": n / statistics.median(cpus)}

model.train()
opt = torch.optim.AdamW(model.parameters(), lr=1e-5, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.01)
rows = torch.tensor(spec["trainRows"])


def step():
    logits = model(input_ids=rows).logits[:, :-1].float()
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), rows[:, 1:].reshape(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()


step()   # warm-up (AdamW state allocated)
walls, cpus = [], []
for _ in range(spec["trainSteps"]):
    w0, c0 = clock()
    step()
    w1, c1 = clock()
    walls.append(w1 - w0)
    cpus.append(c1 - c0)
tokens = rows.numel()
results["train"] = {"rows": rows.shape[0], "tokensPerRow": rows.shape[1], "seconds": statistics.median(walls), "cpuSeconds": statistics.median(cpus),
                    "tokensPerSec": tokens / statistics.median(walls), "tokensPerCpuSec": tokens / statistics.median(cpus)}
print(json.dumps(results))

#!/usr/bin/env python3
"""CPU thread settings of the torch worker on one LoRA SFT step of SmolLM2-135M (the cpu-real size's shape): wall and CPU
seconds per step for each (intra-op threads, OpenBLAS threads) pair, each pair in its own process (both pools are fixed
when torch starts). Debian's torch 1.13 runs its matmuls in OpenBLAS (pthreads build), whose pool the worker sizes from
SPA_TORCH_THREADS (resources/torch-worker/worker.py); this measures what each choice costs.

    /usr/bin/python3 bench/torch-threads.py MODEL_DIR [--rows 8] [--tokens 160] [--steps 3] [--out bench/results/torch-threads.json]

MODEL_DIR: a SmolLM2 folder made by `spa-workbench model import` (config.json + model.safetensors). Run on a quiet machine:
the JSON records the load average before and after each pair. Steps: forward (scored half of each row), backward with
fixed output gradients, AdamW apply, as one SFT step of the engine; one warm-up step, then the median of --steps."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PAIRS = [(1, 1), (1, 2), (2, 2), (2, 1)]


def child(model_dir, rows, tokens, steps):
    sys.path.insert(0, os.path.join(HERE, "..", "resources", "torch-worker"))
    import torch
    import worker as W
    cfg = json.load(open(os.path.join(model_dir, "config.json")))
    wk = W.Worker(W.THREADS)
    names = [(n, n) for n, _ in W.param_specs(cfg) if not n.startswith("value_head.")]
    if cfg.get("tie_word_embeddings"):
        names = [(n, s) for n, s in names if n != "lm_head.weight"]
    wk.init({"config": cfg, "files": [{"path": os.path.join(model_dir, "model.safetensors"), "names": names}], "trainable": True,
             "zeroValueHead": True, "gradientCheckpointing": False}, {})
    wk.enable_lora({"rank": 16, "alpha": 32, "seed": 0,
                    "targetModules": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]}, {})
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, cfg["vocab_size"] - 300, (rows, tokens), generator=g, dtype=torch.int32)
    mask = torch.ones(rows, tokens, dtype=torch.int32)
    score = torch.zeros(rows, tokens, dtype=torch.int32)
    score[:, tokens // 2:] = 1
    walls, cpus = [], []
    for i in range(steps + 1):
        t, c = time.time(), time.process_time()
        wk.forward({}, {"ids": ids, "mask": mask, "score": score})
        wk.backward({}, {"logprobs": torch.full((rows, tokens), -1e-3), "entropies": torch.zeros(rows, tokens)})
        wk.apply({"lr": 1e-4, "totalWeight": 1.0, "maxGradNorm": 1.0}, {})
        if i > 0:
            walls.append(time.time() - t)
            cpus.append(time.process_time() - c)
    print(json.dumps({"wallSeconds": walls, "cpuSeconds": cpus, "threads": torch.get_num_threads()}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model_dir")
    ap.add_argument("--rows", type=int, default=8)
    ap.add_argument("--tokens", type=int, default=160)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--out", default=None)
    ap.add_argument("--child", action="store_true")
    a = ap.parse_args()
    if a.child:
        return child(a.model_dir, a.rows, a.tokens, a.steps)
    results = []
    for intra, blas in PAIRS:
        env = dict(os.environ, SPA_TORCH_THREADS=str(intra), OMP_NUM_THREADS=str(intra), OPENBLAS_NUM_THREADS=str(blas))
        before = os.getloadavg()[0]
        r = subprocess.run([sys.executable, __file__, a.model_dir, "--child", "--rows", str(a.rows), "--tokens", str(a.tokens),
                            "--steps", str(a.steps)], env=env, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("torch-threads: the pair (%d, %d) failed:\n%s" % (intra, blas, r.stderr[-2000:]))
        m = json.loads(r.stdout.strip().split("\n")[-1])
        row = {"intraOpThreads": intra, "openblasThreads": blas, "medianWallSeconds": round(statistics.median(m["wallSeconds"]), 3),
               "medianCpuSeconds": round(statistics.median(m["cpuSeconds"]), 3), "wallSeconds": m["wallSeconds"],
               "cpuSeconds": m["cpuSeconds"], "loadBefore": before, "loadAfter": os.getloadavg()[0]}
        results.append(row)
        print(json.dumps(row), flush=True)
    base = next(r for r in results if r["intraOpThreads"] == 1 and r["openblasThreads"] == 1)["medianWallSeconds"]
    for r in results:
        r["speedupOverOneThread"] = round(base / r["medianWallSeconds"], 3)
    out = {"bench": "torch-threads", "model": a.model_dir, "rows": a.rows, "tokensPerRow": a.tokens, "lora": "rank 16 on 7 projections",
           "cores": os.cpu_count(), "torch": __import__("torch").__version__, "results": results,
           "measuredAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if a.out:
        json.dump(out, open(a.out, "w"), indent=1)
    print(json.dumps({r["intraOpThreads"] * 10 + r["openblasThreads"]: (r["medianWallSeconds"], r["speedupOverOneThread"]) for r in results}))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The CPU sampler (worker.sample_batch over sorted_descending's numpy values and stable_rank_token) picks the token that
torch's stable descending sort picks (the sampler as it was, kept below as the reference), bit for bit: vocabularies of
49,152 and 7, temperatures 0.5-1.7, top-k, top-p, uniforms at 0 and just under 1, heavy ties (logits on a coarse grid, a
row of one value), -inf entries, NaN entries, +0 and -0. Also: a generate call gives the same tokens and log-probs with the
numpy sort and without it (W._np None), and the two sorts' time on [8, 49152] (reported, not asserted). Prints one JSON line."""
import json
import time

import torch

from tiny_worker import W, tiny_worker

torch.set_num_threads(1)


def reference(logits, u, temperature, top_k, top_p):
    """sample_batch before the numpy sort (worker.py at 93c91b7): every id from torch.sort(stable=True)."""
    B, V = logits.shape
    vals, ids = torch.sort(logits, dim=-1, descending=True, stable=True)
    if 0 < top_k < V:
        vals, ids = vals[:, :top_k], ids[:, :top_k]
    weights = torch.exp((vals - vals[:, :1]) / temperature).double()
    if top_p < 1:
        cum = torch.cumsum(weights / weights.sum(-1, keepdim=True), dim=-1)
        before = torch.cat([torch.zeros(B, 1, dtype=cum.dtype, device=cum.device), cum[:, :-1]], dim=1)
        weights = weights * (before < top_p)
    cum = torch.cumsum(weights, dim=-1)
    j = (cum < (u * cum[:, -1]).unsqueeze(1)).sum(-1).clamp(max=weights.shape[1] - 1)
    return ids.gather(1, j.unsqueeze(1)).squeeze(1)


g = torch.Generator().manual_seed(11)
res = {"cases": 0, "mismatches": [], "tieCases": 0, "tiesHit": 0}


def check(name, logits, settings=((1.0, 0, 1.0), (0.5, 0, 1.0), (1.7, 40, 1.0), (1.0, 0, 0.9), (0.8, 5, 0.5)), draws=6):
    B = logits.shape[0]
    for temperature, top_k, top_p in settings:
        us = [torch.rand(B, generator=g, dtype=torch.float64) for _ in range(draws)]
        us += [torch.zeros(B, dtype=torch.float64), torch.full((B,), 1 - 2 ** -53, dtype=torch.float64)]
        for u in us:
            a = W.sample_batch(logits, u, temperature, top_k, top_p)
            b = reference(logits, u, temperature, top_k, top_p)
            res["cases"] += 1
            if not torch.equal(a, b):
                res["mismatches"].append({"case": name, "temperature": temperature, "topK": top_k, "topP": top_p,
                                          "got": a.tolist()[:4], "want": b.tolist()[:4]})
            if name.startswith("ties"):
                res["tieCases"] += 1
                # the picked token shares its value with another entry (the case the tie rule decides)
                picked = logits.gather(1, b.unsqueeze(1))
                res["tiesHit"] += int(((logits == picked).sum(-1) > 1).sum())


V = 49152
BIG = ((1.0, 0, 1.0), (1.7, 40, 1.0), (0.8, 0, 0.9))   # a 49k vocabulary: fewer draws (each reference draw sorts it with torch)
check("randn", torch.randn(4, V, generator=g) * 3, BIG, 2)
check("peaked", torch.randn(4, V, generator=g) * 12, BIG, 2)
coarse = torch.round(torch.randn(4, V, generator=g) * 2)               # ~15 distinct values: every pick is in a tie group
check("ties-coarse", coarse, BIG, 2)
check("ties-coarse-small", torch.round(torch.randn(8, 300, generator=g) * 2))
check("ties-small", torch.round(torch.randn(8, 7, generator=g)), draws=20)
check("ties-one-value", torch.full((3, 9), 0.25), draws=20)
masked = torch.randn(4, V, generator=g)
masked[:, torch.randperm(V, generator=g)[: V // 2]] = float("-inf")
check("neg-inf", masked, BIG, 2)
nan = torch.round(torch.randn(4, 50, generator=g))
nan[0, 3] = nan[0, 17] = float("nan")
nan[1, :] = float("nan")
check("nan", nan, draws=10)
zeros = torch.zeros(2, 12)
zeros[0, ::3] = -0.0
zeros[1, 5] = -1.0
zeros[1, 1::2] = -0.0
check("signed-zero", zeros, draws=20)
res["greedySame"] = torch.equal(W.sample_batch(coarse, None, 0.0, 0, 1.0), torch.argmax(coarse, dim=-1))

# a generate call: the same tokens and log-probs with the numpy sort and with torch's (W._np None)
wk = tiny_worker(seed=4)
prompts = [torch.randint(4, 97, (n,), generator=g).tolist() for n in (9, 14, 5, 11)]
flat = torch.tensor([t for p in prompts for t in p], dtype=torch.int32)
h = {"lengths": [len(p) for p in prompts], "padTokenId": 0, "maxNewTokens": 24, "temperature": 1.0, "topK": 0, "topP": 1.0,
     "seed": 5, "stopTokenIds": [3], "stop": []}
outs = []
for np_mod in (W._np, None):
    saved, W._np = W._np, np_mod
    try:
        r, t = wk.generate(dict(h), {"prompts": flat})
    finally:
        W._np = saved
    outs.append((t["tokens"].tolist(), t["logprobs"].tolist(), r["lengths"]))
res["generateSame"] = outs[0] == outs[1]
res["generateTokens"] = len(outs[0][0])
res["numpy"] = W._np is not None

x = torch.randn(8, V, generator=g) * 3


def clock(f, n=3):
    f()
    t0 = time.perf_counter()
    for _ in range(n):
        f()
    return (time.perf_counter() - t0) / n * 1000


res["msTorchStableSort"] = clock(lambda: torch.sort(x, dim=-1, descending=True, stable=True))
res["msSortedDescending"] = clock(lambda: W.sorted_descending(x))
print(json.dumps(res))

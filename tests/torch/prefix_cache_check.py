#!/usr/bin/env python3
"""Generation with cache keys (the worker's prefix cache across turns) gives the tokens of generation without them:
three turns of four rows, each turn's prompt = the last prompt + its reply + new tokens (a multi-turn history; one row's
history is cut at its front, as a context budget does, and one row is new at turn 2), at temperature 0 and 1, a GQA
config, in row chunks. Also: the cache is used (tokens reused), a key missing from a call is dropped, an op that changes
the weights empties the cache, and a bad key list is refused. Prints one JSON line."""
import json

import torch

from tiny_worker import tiny_worker


def worker():
    return tiny_worker()


def call(wk, prompts, temperature, seed, keys=None, row_chunk=None):
    flat = torch.tensor([t for p in prompts for t in p], dtype=torch.int32)
    h = {"lengths": [len(p) for p in prompts], "padTokenId": 0, "maxNewTokens": 12, "temperature": temperature, "topK": 0, "topP": 1.0,
         "seed": seed, "stopTokenIds": [3], "stop": []}
    if keys is not None:
        h["cacheKeys"] = keys
    if row_chunk:
        h["rowChunk"] = row_chunk
    r, t = wk.generate(h, {"prompts": flat})
    out, o = [], 0
    for n in r["lengths"]:
        out.append((t["tokens"][o:o + n].tolist(), t["logprobs"][o:o + n]))
        o += n
    return out


res = {"sameTokens": True, "maxLogprobDiff": 0.0}
rng = torch.Generator().manual_seed(5)
for temperature in (0.0, 1.0):
    plain, cached = worker(), worker()
    prompts = [torch.randint(4, 97, (n,), generator=rng).tolist() for n in (9, 14, 5, 11)]
    keys = ["e0", "e1", "e2", "e3"]
    for turn in range(3):
        a = call(plain, prompts, temperature, 7 + turn)
        b = call(cached, prompts, temperature, 7 + turn, keys=keys, row_chunk=3)
        for (ta, la), (tb, lb) in zip(a, b):
            res["sameTokens"] = res["sameTokens"] and ta == tb
            if ta == tb:
                res["maxLogprobDiff"] = max(res["maxLogprobDiff"], float((la - lb).abs().max()) if len(la) else 0.0)
        # the next turn: the history (prompt + reply) and a new user message
        prompts = [p + tok + torch.randint(4, 97, (4,), generator=rng).tolist() for p, (tok, _) in zip(prompts, a)]
        prompts[1] = prompts[1][5:]                                   # row 1: its oldest tokens dropped (context budget)
        if turn == 1:
            keys[2] = "e2-new"                                          # row 2: another episode under a new key
            prompts[2] = torch.randint(4, 97, (7,), generator=rng).tolist()
    res["stats_%g" % temperature] = dict(cached.prefix_stats)
    res["entries_%g" % temperature] = sorted(cached.prefix_cache.keys())
# a plain multi-turn batch (no row cut or replaced): the history of every row is reused from turn 2 on
wk, plain, prompts = worker(), worker(), [torch.randint(4, 97, (n,), generator=rng).tolist() for n in (9, 14, 5, 11)]
for turn in range(3):
    out = call(wk, prompts, 1.0, 3 + turn, keys=["a", "b", "c", "d"])
    res["sameTokens"] = res["sameTokens"] and [t for t, _ in out] == [t for t, _ in call(plain, prompts, 1.0, 3 + turn)]
    prompts = [p + tok + torch.randint(4, 97, (4,), generator=rng).tolist() for p, (tok, _) in zip(prompts, out)]
res["stats_clean"] = dict(wk.prefix_stats)
wk = worker()
call(wk, [[5, 6, 7, 8]], 0.0, 1, keys=["x"])
res["storedOne"] = len(wk.prefix_cache)
call(wk, [[5, 6, 7, 8]], 0.0, 1, keys=["y"])
res["droppedMissing"] = sorted(wk.prefix_cache.keys())
wk.before_op("stats")
res["keptByStats"] = len(wk.prefix_cache)
wk.before_op("apply")
res["clearedByApply"] = len(wk.prefix_cache)
try:
    call(wk, [[5, 6], [7, 8]], 0.0, 1, keys=["only-one"])
    res["badKeys"] = "accepted"
except ValueError as e:
    res["badKeys"] = str(e)
print(json.dumps(res))

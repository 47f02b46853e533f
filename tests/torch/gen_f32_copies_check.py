#!/usr/bin/env python3
"""Generation over a frozen bf16 base (LoRA) with the f32 copies a generate call holds (Decoder.hold_f32_copies) gives the
tokens and log-probs of generation that upcasts every weight at every step (f32CopiesMb 0), bit for bit: temperature 0 and 1,
three multi-turn calls with cache keys, row chunks, a GQA config with LoRA adapters that change the outputs. Also: the copies
are held during the call and dropped after it, a budget smaller than the copies holds none, and autocast never holds any.
Prints one JSON line."""
import json

import torch

from tiny_worker import W, tiny_worker


def worker():
    wk = tiny_worker(trainable=True)
    g = torch.Generator().manual_seed(3)
    wk.enable_lora({"rank": 4, "alpha": 8, "targetModules": ["q_proj", "v_proj", "up_proj"], "seed": 2, "frozenDtype": "bf16"}, {})
    for k in sorted(wk.model.lora_w):   # B is zero when fresh: give the adapters outputs of their own
        wk.model.lora_w[k] = (0.3 * torch.randn(wk.model.lora_w[k].shape, generator=g)).requires_grad_(False)
    return wk


seen = {"during": []}
_orig = W.Worker._generate_rows


def spy(self, *args, **kw):
    seen["during"].append(0 if self.model.f32_copies is None else len(self.model.f32_copies))
    return _orig(self, *args, **kw)


W.Worker._generate_rows = spy


def call(wk, prompts, temperature, seed, mb, keys):
    flat = torch.tensor([t for p in prompts for t in p], dtype=torch.int32)
    h = {"lengths": [len(p) for p in prompts], "padTokenId": 0, "maxNewTokens": 10, "temperature": temperature, "topK": 0, "topP": 1.0,
         "seed": seed, "stopTokenIds": [3], "stop": [], "rowChunk": 2, "cacheKeys": keys, "f32CopiesMb": mb}
    r, t = wk.generate(h, {"prompts": flat})
    out, o = [], 0
    for n in r["lengths"]:
        out.append((t["tokens"][o:o + n].tolist(), t["logprobs"][o:o + n].tolist()))
        o += n
    return out


res = {"sameTokens": True, "sameLogprobs": True, "calls": 0}
bf16 = None
rng = torch.Generator().manual_seed(5)
for temperature in (0.0, 1.0):
    upcast, held = worker(), worker()
    bf16 = sum(1 for t in held.model.w.values() if t.dtype == torch.bfloat16)
    prompts = [torch.randint(4, 97, (n,), generator=rng).tolist() for n in (9, 14, 5)]
    keys = ["e0", "e1", "e2"]
    for turn in range(3):
        a = call(upcast, prompts, temperature, 7 + turn, 0, keys)
        b = call(held, prompts, temperature, 7 + turn, 1024, keys)
        res["calls"] += 1
        for (ta, la), (tb, lb) in zip(a, b):
            res["sameTokens"] = res["sameTokens"] and ta == tb
            res["sameLogprobs"] = res["sameLogprobs"] and la == lb
        prompts = [p + t + torch.randint(4, 97, (3,), generator=rng).tolist() for p, (t, _) in zip(prompts, b)]
    res["heldAfterCall"] = held.model.f32_copies is not None or held.model.head_f32 is not None
    res["heldBytes"] = held.f32_held
# the decode reads the copies (not a fresh upcast): copies scaled by 0.5 change the tokens
probe, plain = worker(), worker()
_hold = probe.model.hold_f32_copies


def halved(budget_mb):
    n = _hold(budget_mb)
    for k in probe.model.f32_copies:
        probe.model.f32_copies[k] = probe.model.f32_copies[k] * 0.5
    return n


probe.model.hold_f32_copies = halved
p0 = [torch.randint(4, 97, (n,), generator=rng).tolist() for n in (9, 14, 5)]
res["readsCopies"] = call(probe, p0, 0.0, 3, 1024, ["a", "b", "c"]) != call(plain, p0, 0.0, 3, 1024, ["a", "b", "c"])
res["bf16Weights"] = bf16
res["copiesDuring"] = sorted(set(seen["during"]))
# a budget below the copies' size holds none (4 bytes per frozen parameter; this model's are ~0.03 MiB)
small = worker()
size = sum(t.numel() for t in small.model.w.values() if t.dtype == torch.bfloat16) * 4
res["frozenBytes"] = size
res["heldWhenTooSmall"] = small.model.hold_f32_copies(0.5 * size / (1024 * 1024))
small.model.drop_f32_copies()
res["heldWhenFits"] = small.model.hold_f32_copies(size / (1024 * 1024))
res["headHeld"] = small.model.head_f32 is not None and small.model.head_f32.dtype == torch.float32
small.model.drop_f32_copies()
small.model.autocast = True
res["heldUnderAutocast"] = small.model.hold_f32_copies(1024)
print(json.dumps(res))

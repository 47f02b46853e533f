#!/usr/bin/env python3
"""AdamW with bf16 moments (model.memory.optimizerDtype bf16) against f32 moments (tests/torch/memory.test.ts):
the same 40 steps on the same data move the weights the same way within a few percent; the stochastic rounding is
unbiased where round-to-nearest is not; a resume point stores the moments as BF16 and loads them back exactly.
Prints one JSON line."""
import json
import os
import struct
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "resources", "torch-worker"))
import worker as W  # noqa: E402

cfg = {"model_type": "qwen2", "vocab_size": 97, "hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 2,
       "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 64, "rms_norm_eps": 1e-6,
       "tie_word_embeddings": True, "attention_bias": True, "rope_theta": 10000.0}
ids = torch.randint(0, 97, (4, 16), generator=torch.Generator().manual_seed(2))
seg = torch.ones(4, 16, dtype=torch.long)


def trained(moments, steps=40):
    wk = W.Worker(1)
    m = W.Decoder(cfg, torch.device("cpu"), False)
    g = torch.Generator().manual_seed(1)
    for n, shape in W.param_specs(cfg):
        m.w[n] = (0.3 * torch.randn(shape, generator=g)).requires_grad_(True)
    wk.model = m
    w0 = torch.cat([m.w[n].detach().reshape(-1).clone() for n, _ in W.param_specs(cfg)])
    wk.optimizer({"weightDecay": 0.01, "momentDtype": moments}, {})
    for _ in range(steps):
        out = m.token_outputs(ids, seg, True, False)
        (-out["logprobs"].sum()).backward()
        wk.apply({"totalWeight": 64.0, "lr": 3e-3, "maxGradNorm": 1.0}, {})
    w = torch.cat([m.w[n].detach().reshape(-1) for n, _ in W.param_specs(cfg)])
    loss = float(-m.token_outputs(ids, seg, True, False)["logprobs"].sum().detach()) / 60
    return wk, w - w0, loss


_, d32, loss32 = trained("f32")
wk16, d16, loss16 = trained("bf16")
res = {"moveRelDiff": float((d16 - d32).norm() / d32.norm()), "moveNorm": float(d32.norm()), "lossF32": loss32, "lossBf16": loss16,
       "momentDtype": str(wk16.opts["main"]["m"]["model.norm.weight"].dtype)}

# stochastic rounding: 1 + 2^-10 sits between two bf16 neighbours (1 and 1 + 2^-7); the mean of many roundings is the value
x = torch.full((200000,), 1.0 + 2 ** -10)
dst = torch.zeros(200000, dtype=torch.bfloat16)
W.store_bf16_stochastic(dst, x, torch.Generator().manual_seed(0))
res["stochasticMeanError"] = float(dst.float().mean() - x[0])
res["nearestError"] = float(x.to(torch.bfloat16).float().mean() - x[0])
res["stochasticValues"] = sorted(set(float(v) for v in dst.float().unique()))

# a resume point: moments written as BF16, read back into a bf16 slot unchanged
with tempfile.TemporaryDirectory() as tmp:
    wk16.save({"weights": os.path.join(tmp, "model.safetensors"), "optimizer": os.path.join(tmp, "optimizer.safetensors")}, {})
    with open(os.path.join(tmp, "optimizer.safetensors"), "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
    res["savedDtypes"] = sorted(set(v["dtype"] for k, v in header.items() if k != "__metadata__"))
    before = {k: t.clone() for k, t in wk16.opts["main"]["v"].items()}
    wk16.opts = {}
    wk16.load_optimizer({"path": os.path.join(tmp, "optimizer.safetensors"), "momentDtype": "bf16"}, {})
    res["reloadedEqual"] = all(torch.equal(before[k], wk16.opts["main"]["v"][k]) for k in before)
    res["reloadedDtype"] = str(wk16.opts["main"]["v"]["model.norm.weight"].dtype)
print(json.dumps(res))

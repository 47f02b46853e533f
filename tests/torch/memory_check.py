#!/usr/bin/env python3
"""The worker's memory techniques give the same numbers as the plain computation (tests/torch/memory.test.ts):
log-probs / entropies in LM-head row chunks (SPA_TORCH_HEAD_CHUNK_MB tiny: 1 row per chunk) vs one chunk, with
their gradients; gradient checkpointing vs none (same gradients); a score mask leaves unscored positions at 0;
generation in row chunks vs all rows at once (same tokens). Prints one JSON line of max abs differences."""
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "resources", "torch-worker"))
import worker as W  # noqa: E402

cfg = {"model_type": "qwen2", "vocab_size": 97, "hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 2,
       "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 64, "rms_norm_eps": 1e-6,
       "tie_word_embeddings": True, "attention_bias": True, "rope_theta": 10000.0}
torch.manual_seed(0)


def model(ckpt=False):
    m = W.Decoder(cfg, torch.device("cpu"), False)
    g = torch.Generator().manual_seed(1)
    for n, shape in W.param_specs(cfg):
        m.w[n] = (0.3 * torch.randn(shape, generator=g)).requires_grad_(True)
    m.grad_ckpt = ckpt
    return m


ids = torch.randint(0, 97, (3, 10), generator=torch.Generator().manual_seed(2))
seg = torch.ones(3, 10, dtype=torch.long)
seg[1, :3] = 0
score = torch.zeros(3, 10, dtype=torch.long)
score[:, 5:] = 1


def run(m, chunk_mb, score=None):
    os.environ["SPA_TORCH_HEAD_CHUNK_MB"] = chunk_mb
    out = m.token_outputs(ids, seg, True, False, score=score)
    (out["logprobs"].sum() + 0.3 * out["entropies"].sum()).backward()
    g = torch.cat([m.w[n].grad.reshape(-1) for n, _ in W.param_specs(cfg)])
    return out["logprobs"].detach(), out["entropies"].detach(), g


lp1, e1, g1 = run(model(), "1000")
lp2, e2, g2 = run(model(), "0.0001")       # one row per chunk
lp3, e3, g3 = run(model(ckpt=True), "1000")
lp4, _, _ = run(model(), "1000", score)
res = {"chunkedLogprobs": float((lp1 - lp2).abs().max()), "chunkedEntropies": float((e1 - e2).abs().max()),
       "chunkedGrads": float((g1 - g2).abs().max()), "checkpointGrads": float((g1 - g3).abs().max()),
       "checkpointLogprobs": float((lp1 - lp3).abs().max()),
       "scoredEqual": float((lp4[:, 5:] - lp1[:, 5:]).abs().max()), "unscoredZero": float(lp4[:, :5].abs().max()),
       "gradNorm": float(g1.norm())}


def shared(min_prefix, ckpt=False, values=False):
    """Rows that share their first 7 tokens (one of them right-padded, one packed with a second segment)."""
    W.SHARED_PREFIX_MIN = min_prefix
    m = model(ckpt)
    m.w["value_head.weight"] = (0.3 * torch.randn(1, cfg["hidden_size"], generator=torch.Generator().manual_seed(5))).requires_grad_(True)
    m.w["value_head.bias"] = torch.zeros(1).requires_grad_(True)
    sid = torch.randint(0, 97, (4, 12), generator=torch.Generator().manual_seed(4))
    sid[:, :7] = sid[0, :7]
    sseg = torch.ones(4, 12, dtype=torch.long)
    sseg[2, 9:] = 0          # right padding
    sseg[3, 10:] = 2         # a second packed segment
    out = m.token_outputs(sid, sseg, True, values, score=None)
    loss = out["logprobs"].sum() + 0.3 * out["entropies"].sum() + (out["values"].pow(2).sum() if values else 0)
    loss.backward()
    names = [n for n, _ in W.param_specs(cfg)] + (["value_head.weight", "value_head.bias"] if values else [])
    g = torch.cat([m.w[n].grad.reshape(-1) for n in names])
    used = W.shared_prefix(sid, sseg)
    W.SHARED_PREFIX_MIN = 16
    return out, g, used


o0, g0, p0 = shared(0, values=True)
o1, g1s, p1 = shared(4, values=True)
o2, g2s, p2 = shared(4, ckpt=True, values=True)
res["sharedPrefixUsed"] = p1
res["sharedPrefixOff"] = p0
res["sharedLogprobs"] = max(float((o0[k] - o1[k]).abs().max()) for k in ("logprobs", "entropies", "values"))
res["sharedGrads"] = float((g0 - g1s).abs().max())
res["sharedCheckpointGrads"] = float((g0 - g2s).abs().max())
res["sharedCheckpointLogprobs"] = float((o0["logprobs"] - o2["logprobs"]).abs().max())

wk = W.Worker(1)
wk.model = model()
prompts = [[5, 6, 7], [8, 9], [10, 11, 12, 13], [1], [2, 3]]
flat = torch.tensor([t for p in prompts for t in p], dtype=torch.int32)
h = {"lengths": [len(p) for p in prompts], "padTokenId": 0, "maxNewTokens": 6, "temperature": 1.0, "topK": 0, "topP": 1.0,
     "seed": 3, "stopTokenIds": [], "stop": []}
a, ta = wk.generate(dict(h), {"prompts": flat})
b, tb = wk.generate(dict(h, rowChunk=2), {"prompts": flat})
res["generateSameTokens"] = ta["tokens"].tolist() == tb["tokens"].tolist() and a["lengths"] == b["lengths"]
res["generateLogprobs"] = float((ta["logprobs"] - tb["logprobs"]).abs().max())
print(json.dumps(res))

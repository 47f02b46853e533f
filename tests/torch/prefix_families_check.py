#!/usr/bin/env python3
"""Rows that start with part of a longer row (an RL episode's turns, each history continuing the last) are computed once per
shared part (worker.prefix_families / Decoder._trunk_families) with the numbers of computing every row whole: log-probs,
entropies, values and the gradients of every weight, with and without gradient checkpointing and a score mask; rows of
two episodes, a row with no family, a row that is a whole prefix of its anchor (it keeps one token of its own), a row
sharing less than half of itself (an anchor of its own), and right padding. Also: the tokens the decoder computed (fewer with the plan), and the rows that get no plan (packed segments,
left padding, too little shared). Prints one JSON line."""
import json

import torch

from tiny_worker import CFG, W

g = torch.Generator().manual_seed(3)


def model(ckpt=False):
    m = W.Decoder(CFG, torch.device("cpu"), False)
    gm = torch.Generator().manual_seed(1)
    for n, shape in W.param_specs(CFG):
        m.w[n] = (0.3 * torch.randn(shape, generator=gm)).requires_grad_(True)
    m.w["value_head.weight"] = (0.3 * torch.randn(1, CFG["hidden_size"], generator=gm)).requires_grad_(True)
    m.w["value_head.bias"] = torch.zeros(1).requires_grad_(True)
    m.grad_ckpt = ckpt
    return m


def rand(n):
    return torch.randint(4, 97, (n,), generator=g).tolist()


def episode(length, cuts):
    """A long row and, per cut, a row with the long row's first `cut` tokens then tokens of its own (a re-tokenized reply)."""
    long = rand(length)
    rows = [long]
    for c in cuts:
        own = rand(3 + c % 4)
        if own[0] == long[c]:
            own[0] = 4 + (own[0] - 3) % 93
        rows.append(long[:c] + own)
    return rows


rows = episode(44, [9, 20, 31]) + episode(37, [12, 25]) + [rand(15)] + [None]
rows[-1] = rows[0][:18]                      # a whole prefix of the first episode's long row
rows.append(rows[0][:10] + rand(30))         # another episode of the same puzzle: shares the first 10, under half: an anchor
T = max(len(r) for r in rows)
B = len(rows)
ids = torch.zeros(B, T, dtype=torch.long)
seg = torch.zeros(B, T, dtype=torch.long)
for b, r in enumerate(rows):
    ids[b, :len(r)] = torch.tensor(r)
    seg[b, :len(r)] = 1
score = seg.clone()
score[:, :6] = 0

computed = []
_orig = W.Decoder._trunk


def spy(self, ids_, *a, **kw):
    computed.append(int(ids_.numel()))
    return _orig(self, ids_, *a, **kw)


W.Decoder._trunk = spy


def run(families, ckpt=False, sc=None):
    W.SHARED_PREFIX_MIN, W.PREFIX_FAMILIES_MIN = 4, (0.1 if families else 0)
    computed.clear()
    m = model(ckpt)
    out = m.token_outputs(ids, seg, True, True, score=sc)
    loss = out["logprobs"].sum() + 0.3 * out["entropies"].sum() + out["values"].pow(2).sum()
    loss.backward()
    names = [n for n, _ in W.param_specs(CFG)] + ["value_head.weight", "value_head.bias"]
    grads = torch.cat([m.w[n].grad.reshape(-1) for n in names])
    return {k: v.detach() for k, v in out.items()}, grads, sum(computed)


res = {}
plain, g_plain, tok_plain = run(False)
fam, g_fam, tok_fam = run(True)
plan = W.prefix_families(ids, seg)
res["plan"] = None if plan is None else {"anchors": plan[0], "tails": plan[1], "tailAnchor": plan[2], "shared": plan[3]}
for k in ("logprobs", "entropies", "values"):
    res[k] = float((plain[k] - fam[k]).abs().max())
res["grads"] = float((g_plain - g_fam).abs().max() / g_plain.abs().max())
res["gradNorm"] = float(g_plain.norm())
res["tokensPlain"], res["tokensFamilies"] = tok_plain, tok_fam
_, g_ck, _ = run(True, ckpt=True)
res["checkpointGrads"] = float((g_plain - g_ck).abs().max() / g_plain.abs().max())
sp, _, _ = run(False, sc=score)
sf, _, _ = run(True, sc=score)
res["scoredLogprobs"] = float((sp["logprobs"] - sf["logprobs"]).abs().max())
res["unscoredZero"] = float(sf["logprobs"][:, :6].abs().max())
# a padding position's outputs are 0 either way
res["paddingSame"] = bool(torch.equal(plain["logprobs"][seg == 0], fam["logprobs"][seg == 0]))

# no plan: packed segments, left padding, too little shared (a 0.9 threshold), one row
W.SHARED_PREFIX_MIN, W.PREFIX_FAMILIES_MIN = 4, 0.1
packed = seg.clone()
packed[1, 5:] = 2
left = torch.zeros_like(seg)
left[:, 1:] = seg[:, :-1]
res["noPlanPacked"] = W.prefix_families(ids, packed) is None
res["noPlanLeftPadded"] = W.prefix_families(ids, left) is None
W.PREFIX_FAMILIES_MIN = 0.9
res["noPlanTooLittle"] = W.prefix_families(ids, seg) is None
W.PREFIX_FAMILIES_MIN = 0.1
res["noPlanOneRow"] = W.prefix_families(ids[:1], seg[:1]) is None
print(json.dumps(res))

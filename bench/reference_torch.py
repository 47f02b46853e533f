#!/usr/bin/env python3
"""PyTorch CPU reference for bench/model.ts: the same Qwen2-style decoder (RMSNorm, RoPE, GQA,
SwiGLU, q/k/v bias, tied embeddings) and the same shapes, timed the same way:
training tokens/s (forward + backward + AdamW) and generated tokens/s with a K/V cache.
Prints one JSON object. Usage: python3 bench/reference_torch.py '<json list of shapes>' [steps] [threads (0 = torch default)] [generation runs]
Times are medians over the steps (and generation runs).

Threads: with N > 0 both torch's OpenMP pool and the BLAS library (OpenBLAS behind Debian's
torch) get N threads, set before torch is imported. Unset, OpenBLAS starts one thread per core
on top of torch's pool, and on a loaded 2-core machine the spinning threads oversubscribe the
cores (measured here: 2 threads ran training 3-4x slower than 1)."""
import json
import math
import os
import statistics
import sys
import time

if len(sys.argv) > 3 and int(sys.argv[3]) > 0:
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = sys.argv[3]

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat([-x[..., h:], x[..., :h]], dim=-1)


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        d, H, KV = c["hidden"], c["heads"], c["kvHeads"]
        self.H, self.KV, self.hd = H, KV, d // H
        self.input_layernorm = RMSNorm(d)
        self.q_proj = nn.Linear(d, d, bias=True)
        self.k_proj = nn.Linear(d, KV * self.hd, bias=True)
        self.v_proj = nn.Linear(d, KV * self.hd, bias=True)
        self.o_proj = nn.Linear(d, d, bias=False)
        self.post_attention_layernorm = RMSNorm(d)
        self.gate_proj = nn.Linear(d, c["intermediate"], bias=False)
        self.up_proj = nn.Linear(d, c["intermediate"], bias=False)
        self.down_proj = nn.Linear(c["intermediate"], d, bias=False)

    def forward(self, x, cos, sin, cache=None):
        B, T, D = x.shape
        h = self.input_layernorm(x)
        q = self.q_proj(h).view(B, T, self.H, self.hd).transpose(1, 2)   # [B, H, T, hd]
        k = self.k_proj(h).view(B, T, self.KV, self.hd).transpose(1, 2)  # [B, KV, T, hd]
        v = self.v_proj(h).view(B, T, self.KV, self.hd).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        if cache is not None:
            if "k" in cache:
                k = torch.cat([cache["k"], k], dim=2)
                v = torch.cat([cache["v"], v], dim=2)
            cache["k"], cache["v"] = k, v
        rep = self.H // self.KV
        if rep > 1:
            k = k.repeat_interleave(rep, dim=1)
            v = v.repeat_interleave(rep, dim=1)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(self.hd)          # [B, H, T, Tk]
        if T > 1:
            Tk = k.shape[2]
            causal = torch.ones(T, Tk, dtype=torch.bool).tril(Tk - T)
            scores = scores.masked_fill(~causal, float("-inf"))
        a = torch.softmax(scores, dim=-1) @ v                             # [B, H, T, hd]
        x = x + self.o_proj(a.transpose(1, 2).reshape(B, T, D))
        h = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


class Model(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.embed_tokens = nn.Embedding(c["vocab"], c["hidden"])
        self.layers = nn.ModuleList([Block(c) for _ in range(c["layers"])])
        self.norm = RMSNorm(c["hidden"])
        hd = c["hidden"] // c["heads"]
        inv = 1.0 / (10000 ** (torch.arange(0, hd, 2).float() / hd))
        ang = torch.outer(torch.arange(c["context"] + 64).float(), inv)
        emb = torch.cat([ang, ang], dim=-1)
        self.register_buffer("cos", emb.cos(), persistent=False)
        self.register_buffer("sin", emb.sin(), persistent=False)
        for p in self.parameters():
            if p.dim() >= 2:
                nn.init.normal_(p, std=0.02)

    def forward(self, ids, start=0, caches=None):
        T = ids.shape[1]
        cos, sin = self.cos[start:start + T], self.sin[start:start + T]
        x = self.embed_tokens(ids)
        for i, layer in enumerate(self.layers):
            x = layer(x, cos, sin, None if caches is None else caches[i])
        return self.norm(x) @ self.embed_tokens.weight.t()   # tied lm_head


def bench_shape(c, steps, gen_runs):
    torch.manual_seed(0)
    model = Model(c)
    B, T = c["batch"], c["context"]
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    ids = torch.randint(0, c["vocab"], (B, T))

    def train_step():
        logits = model(ids)
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, c["vocab"]), ids[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss.item()

    train_step()
    walls, cpus = [], []
    for _ in range(steps):
        t0, c0 = time.perf_counter(), time.process_time()
        train_step()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    train_s = statistics.median(walls)       # median step, like bench/model.ts
    train_cpu = statistics.median(cpus)

    gB, prompt, new = c["genBatch"], c["genPrompt"], c["genTokens"]
    gids = torch.randint(0, c["vocab"], (gB, prompt))

    @torch.inference_mode()
    def gen():
        caches = [dict() for _ in range(c["layers"])]
        logits = model(gids, 0, caches)
        tok = logits[:, -1].argmax(-1, keepdim=True)
        for i in range(new - 1):
            logits = model(tok, prompt + i, caches)
            probs = torch.softmax(logits[:, -1], -1)
            tok = torch.multinomial(probs, 1)
        return tok

    gen()
    walls, cpus = [], []
    for _ in range(gen_runs):
        t0, c0 = time.perf_counter(), time.process_time()
        gen()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    gen_s = statistics.median(walls)
    gen_cpu = statistics.median(cpus)
    params = sum(p.numel() for p in model.parameters())
    return {
        "params": params,
        "train": {"msPerStep": train_s * 1000, "cpuMsPerStep": train_cpu * 1000,
                  "tokensPerSec": B * T / train_s, "tokensPerCpuSec": B * T / train_cpu},
        "generate": {"seconds": gen_s, "cpuSeconds": gen_cpu,
                     "tokensPerSec": gB * new / gen_s, "tokensPerCpuSec": gB * new / gen_cpu},
    }


def main():
    shapes = json.loads(sys.argv[1])
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    threads = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    gen_runs = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    if threads > 0:
        torch.set_num_threads(threads)
    blas = "generic" if "BLAS_INFO=generic" in torch.__config__.show() else "see torch.__config__.show()"
    torch.ones(64, 64) @ torch.ones(64, 64)  # loads the BLAS library
    try:
        with open("/proc/self/maps") as maps:
            libs = sorted({line.split()[-1].rsplit("/", 1)[-1] for line in maps if "blas" in line.lower()})
    except OSError:
        libs = []
    out = {"torch": torch.__version__, "threads": torch.get_num_threads(), "blas": blas, "blasLibraries": libs,
           "openblasThreads": os.environ.get("OPENBLAS_NUM_THREADS", "default (one per core)"), "results": {}}
    for s in shapes:
        out["results"][s["name"]] = bench_shape(s, steps, gen_runs)
    print(json.dumps(out))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Tiny random-weight HF folders of each model family the worker loads, with reference outputs.

Usage: families_ref.py OUT_DIR. Writes OUT_DIR/<case>/ (config.json, model.safetensors, the committed
fixture tokenizer) and prints one JSON line {"cases": {case: {"ids", "logprobs", "greedy", "reference"}}}.
The reference log-probs / greedy tokens come from HF transformers' own class where the installed
transformers has it (LlamaForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM) and runs the config;
otherwise (Qwen3 on transformers < 4.51, Llama 3 rope scaling on < 4.43) from `formula` below, a
float64 decoder written from the published equations (not from worker.py). Where transformers runs,
the formula is checked against it too. Greedy decoding is a loop over forward(), not generate()
(which breaks on Debian's torch 1.13 under Python 3.11)."""
import json
import math
import os
import shutil
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
TOKENIZER = os.path.join(ROOT, "tests", "fixtures", "model", "parity", "qwen2-f32")
sys.path.insert(0, os.path.join(ROOT, "resources", "torch-worker"))
import worker as W  # noqa: E402  (only its safetensors writer)

BASE = {"vocab_size": 300, "hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 2, "max_position_embeddings": 64, "rms_norm_eps": 1e-5, "hidden_act": "silu",
        "bos_token_id": 280, "eos_token_id": 282, "torch_dtype": "float32"}
CASES = {
    # SmolLM2's shape rules: no qkv bias, tied embeddings, rope theta 1e5
    "llama-smollm2": dict(BASE, model_type="llama", architectures=["LlamaForCausalLM"], tie_word_embeddings=True, rope_theta=100000.0),
    # Llama 3.x: untied, theta 5e5, rope_scaling llama3
    "llama3-scaled": dict(BASE, model_type="llama", architectures=["LlamaForCausalLM"], tie_word_embeddings=False, rope_theta=500000.0,
                          rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                        "original_max_position_embeddings": 16}),
    "qwen2": dict(BASE, model_type="qwen2", architectures=["Qwen2ForCausalLM"], tie_word_embeddings=False, rope_theta=1000000.0,
                  use_sliding_window=False),
    # Qwen3: q/k RMSNorm, head_dim (16) != hidden / heads (8), no qkv bias
    "qwen3": dict(BASE, model_type="qwen3", architectures=["Qwen3ForCausalLM"], tie_word_embeddings=False, rope_theta=1000000.0,
                  head_dim=16, attention_bias=False, use_sliding_window=False),
}


def shapes(c):
    D, I, V = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    hd = c.get("head_dim") or D // c["num_attention_heads"]
    q, kv = c["num_attention_heads"] * hd, c["num_key_value_heads"] * hd
    out = {"model.embed_tokens.weight": [V, D], "model.norm.weight": [D]}
    for i in range(c["num_hidden_layers"]):
        p = "model.layers.%d." % i
        out.update({p + "input_layernorm.weight": [D], p + "post_attention_layernorm.weight": [D],
                    p + "self_attn.q_proj.weight": [q, D], p + "self_attn.k_proj.weight": [kv, D], p + "self_attn.v_proj.weight": [kv, D],
                    p + "self_attn.o_proj.weight": [D, q], p + "mlp.gate_proj.weight": [I, D], p + "mlp.up_proj.weight": [I, D],
                    p + "mlp.down_proj.weight": [D, I]})
        if c["model_type"] == "qwen2":
            out.update({p + "self_attn.q_proj.bias": [q], p + "self_attn.k_proj.bias": [kv], p + "self_attn.v_proj.bias": [kv]})
        if c["model_type"] == "qwen3":
            out.update({p + "self_attn.q_norm.weight": [hd], p + "self_attn.k_norm.weight": [hd]})
    if not c["tie_word_embeddings"]:
        out["lm_head.weight"] = [V, D]
    return out


def formula(c, w, ids):
    """Logits [T, V] in float64 from the published decoder equations (RMSNorm, RoPE with rotate-half, GQA softmax
    attention, SwiGLU; Qwen3's per-head q/k RMSNorm; Llama 3's rope scaling)."""
    w = {k: v.double() for k, v in w.items()}
    D, H, KV = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"]
    hd = c.get("head_dim") or D // H
    eps = c["rms_norm_eps"]
    T = len(ids)

    def rms(x, g):
        return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * g

    inv = 1.0 / (c["rope_theta"] ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
    rs = c.get("rope_scaling")
    if rs:   # Llama 3.1: divide low frequencies by factor, keep high ones, interpolate between
        lo_w = rs["original_max_position_embeddings"] / rs["low_freq_factor"]
        hi_w = rs["original_max_position_embeddings"] / rs["high_freq_factor"]
        new = []
        for f in inv.tolist():
            wl = 2 * math.pi / f
            if wl < hi_w:
                new.append(f)
            elif wl > lo_w:
                new.append(f / rs["factor"])
            else:
                s = (rs["original_max_position_embeddings"] / wl - rs["low_freq_factor"]) / (rs["high_freq_factor"] - rs["low_freq_factor"])
                new.append((1 - s) * f / rs["factor"] + s * f)
        inv = torch.tensor(new, dtype=torch.float64)
    ang = torch.arange(T, dtype=torch.float64)[:, None] * inv[None, :]
    cos, sin = torch.cat([ang.cos()] * 2, -1), torch.cat([ang.sin()] * 2, -1)   # [T, hd]

    def rope(x):   # [T, n, hd]
        h = hd // 2
        rot = torch.cat([-x[..., h:], x[..., :h]], -1)
        return x * cos[:, None, :] + rot * sin[:, None, :]

    x = w["model.embed_tokens.weight"][torch.tensor(ids)]
    for i in range(c["num_hidden_layers"]):
        p = "model.layers.%d." % i
        h = rms(x, w[p + "input_layernorm.weight"])
        q = h @ w[p + "self_attn.q_proj.weight"].T + w.get(p + "self_attn.q_proj.bias", 0)
        k = h @ w[p + "self_attn.k_proj.weight"].T + w.get(p + "self_attn.k_proj.bias", 0)
        v = h @ w[p + "self_attn.v_proj.weight"].T + w.get(p + "self_attn.v_proj.bias", 0)
        q, k, v = q.view(T, H, hd), k.view(T, KV, hd), v.view(T, KV, hd)
        if c["model_type"] == "qwen3":
            q, k = rms(q, w[p + "self_attn.q_norm.weight"]), rms(k, w[p + "self_attn.k_norm.weight"])
        q, k = rope(q), rope(k)
        o = torch.zeros(T, H, hd, dtype=torch.float64)
        causal = torch.ones(T, T, dtype=torch.bool).tril()
        for j in range(H):
            g = j // (H // KV)
            s = (q[:, j] @ k[:, g].T) / math.sqrt(hd)
            s = s.masked_fill(~causal, float("-inf"))
            o[:, j] = torch.softmax(s, -1) @ v[:, g]
        x = x + o.reshape(T, H * hd) @ w[p + "self_attn.o_proj.weight"].T
        h = rms(x, w[p + "post_attention_layernorm.weight"])
        a = h @ w[p + "mlp.gate_proj.weight"].T
        x = x + ((a * torch.sigmoid(a)) * (h @ w[p + "mlp.up_proj.weight"].T)) @ w[p + "mlp.down_proj.weight"].T
    head = w["model.embed_tokens.weight"] if c["tie_word_embeddings"] else w["lm_head.weight"]
    return rms(x, w["model.norm.weight"]) @ head.T


def hf_model(c, weights):
    """transformers' own class for the config, or (None, why)."""
    try:
        import transformers
    except Exception as e:  # noqa: BLE001
        return None, "transformers not importable: %s" % e
    name = {"llama": ("LlamaConfig", "LlamaForCausalLM"), "qwen2": ("Qwen2Config", "Qwen2ForCausalLM"),
            "qwen3": ("Qwen3Config", "Qwen3ForCausalLM")}[c["model_type"]]
    if not hasattr(transformers, name[1]):
        return None, "transformers %s has no %s" % (transformers.__version__, name[1])
    try:
        cfg = getattr(transformers, name[0])(**{k: v for k, v in c.items() if k not in ("torch_dtype", "architectures", "model_type")})
        m = getattr(transformers, name[1])(cfg).float().eval()
        missing, unexpected = m.load_state_dict(weights, strict=False)
        missing = [k for k in missing if not (k == "lm_head.weight" and c["tie_word_embeddings"]) and "rotary_emb" not in k]
        if missing or unexpected:
            return None, "state dict mismatch: missing %s unexpected %s" % (missing, unexpected)
        if c["tie_word_embeddings"]:
            m.tie_weights()
        return m, "transformers %s %s" % (transformers.__version__, name[1])
    except Exception as e:  # noqa: BLE001 - e.g. rope_scaling llama3 before transformers 4.43
        return None, "transformers %s %s cannot run this config: %s" % (transformers.__version__, name[1], str(e).split("\n")[0][:160])


def main():
    out_dir = sys.argv[1]
    torch.manual_seed(0)
    results = {}
    for case, c in CASES.items():
        d = os.path.join(out_dir, case)
        os.makedirs(d, exist_ok=True)
        weights = {}
        for name, shape in shapes(c).items():
            if name.endswith("norm.weight") or name.endswith("layernorm.weight"):
                weights[name] = 1 + 0.1 * torch.randn(shape)
            else:
                weights[name] = 0.2 * torch.randn(shape)
        W.write_safetensors(os.path.join(d, "model.safetensors"), weights, {"format": "pt"})
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(c, f, indent=1)
        for fname in ("tokenizer.json", "tokenizer_config.json"):
            shutil.copy(os.path.join(TOKENIZER, fname), os.path.join(d, fname))
        gen = torch.Generator().manual_seed(len(case))
        ids = torch.randint(0, 270, (12,), generator=gen).tolist()
        model, why = hf_model(c, weights)

        def logits_of(seq):
            if model is not None:
                with torch.no_grad():
                    return model(torch.tensor([seq])).logits[0].double()
            return formula(c, weights, seq)

        lg = logits_of(ids)
        check = None
        if model is not None:   # the formula against transformers, where transformers runs
            check = float((formula(c, weights, ids) - lg).abs().max())
        lp = torch.log_softmax(lg, -1)
        logprobs = [0.0] + [float(lp[t - 1, ids[t]]) for t in range(1, len(ids))]
        seq, greedy = list(ids), []
        for _ in range(6):   # greedy: a loop over forward(), argmax of the last position
            nxt = int(logits_of(seq)[-1].argmax())
            greedy.append(nxt)
            seq.append(nxt)
        results[case] = {"ids": ids, "logprobs": logprobs, "greedy": greedy,
                         "reference": why if model is not None else "formula (%s)" % why, "formulaVsTransformers": check}
    print(json.dumps({"torch": torch.__version__, "cases": results}))


if __name__ == "__main__":
    main()

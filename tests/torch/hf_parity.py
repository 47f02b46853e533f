#!/usr/bin/env python3
"""The worker's Qwen2 (resources/torch-worker/worker.py) against Hugging Face transformers' own
Qwen2ForCausalLM on the committed fixtures (tests/fixtures/model/parity/*): logits in float32.
Prints one JSON line: {"transformers": version, "torch": version, "results": {fixture: max_abs_diff}}
or {"skip": reason} when transformers cannot be imported. Used by tests/torch/hf-parity.test.ts."""
import importlib.util
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "model", "parity")

try:
    import torch
    import transformers
    from transformers import Qwen2Config, Qwen2ForCausalLM
except Exception as e:  # noqa: BLE001
    print(json.dumps({"skip": "transformers is not importable by %s: %s" % (sys.executable, e)}))
    sys.exit(0)

spec = importlib.util.spec_from_file_location("spa_worker", os.path.join(ROOT, "resources", "torch-worker", "worker.py"))
worker = importlib.util.module_from_spec(spec)
spec.loader.exec_module(worker)

results = {}
for name in sorted(os.listdir(FIXTURES)):
    d = os.path.join(FIXTURES, name)
    with open(os.path.join(d, "config.json")) as f:
        cfg = json.load(f)
    with open(os.path.join(d, "inputs.json")) as f:
        inputs = json.load(f)
    ids = torch.tensor(inputs["input_ids"] if isinstance(inputs, dict) else inputs, dtype=torch.long)
    if ids.dim() == 1:
        ids = ids.unsqueeze(0)
    weights = {}
    for fname in sorted(os.listdir(d)):
        if fname.startswith("model") and fname.endswith(".safetensors"):
            weights.update(worker.read_safetensors(os.path.join(d, fname))[0])
    # ours
    ours_cfg = dict(cfg)
    ours_cfg.setdefault("attention_bias", True)
    m = worker.Qwen2(ours_cfg, torch.device("cpu"), False)
    for n, _ in worker.param_specs(ours_cfg):
        m.w[n] = weights[n]
    seg = torch.ones_like(ids)
    with torch.no_grad():
        ours = m.lm_head(m.trunk(ids, seg))
    # transformers, from the same f32 numbers (the stored F16/BF16 values upcast)
    hf_cfg = Qwen2Config(**{k: v for k, v in cfg.items() if k not in ("torch_dtype", "architectures")})
    hf_cfg.torch_dtype = torch.float32
    ref = Qwen2ForCausalLM(hf_cfg).float().eval()
    missing, unexpected = ref.load_state_dict(weights, strict=False)
    missing = [k for k in missing if not (k == "lm_head.weight" and cfg.get("tie_word_embeddings"))]
    if missing or unexpected:
        print(json.dumps({"error": "%s: state dict mismatch: missing %s unexpected %s" % (name, missing, unexpected)}))
        sys.exit(1)
    if cfg.get("tie_word_embeddings"):
        ref.tie_weights()
    with torch.no_grad():
        theirs = ref(input_ids=ids).logits.float()
    results[name] = float((ours - theirs).abs().max())
print(json.dumps({"transformers": transformers.__version__, "torch": torch.__version__, "results": results}))

"""docs/results/study-v4/carry.py on checkpoints written by the torch worker's own writer (write_safetensors): a LoRA
resume point (F32 base copy), a final checkpoint (BF16 base copy), a BF16-held base written F32, and a checkpoint whose
value head trained (not rebuildable: carried as it is). Pack, unpack, and the refusals. Prints one JSON line."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "resources", "torch-worker"))
sys.path.insert(0, os.path.join(ROOT, "docs", "results", "study-v4"))
from worker import write_safetensors  # noqa: E402
import carry  # noqa: E402


def files_of(d):
    out = {}
    for root, _dirs, names in os.walk(d):
        for n in names:
            p = os.path.join(root, n)
            out[os.path.relpath(p, d)] = open(p, "rb").read()
    return out


def main():
    g = torch.Generator().manual_seed(0)
    base = {"model.embed_tokens.weight": torch.randn(64, 16, generator=g),
            "model.layers.0.self_attn.q_proj.weight": torch.randn(16, 16, generator=g),
            "model.norm.weight": torch.randn(16, generator=g)}
    base["model.norm.weight"][3] = float("nan")
    tmp = tempfile.mkdtemp()
    try:
        mdir = os.path.join(tmp, "model")
        os.makedirs(mdir)
        write_safetensors(os.path.join(mdir, "model.safetensors"), base, {"format": "pt"})
        proj = os.path.join(tmp, "proj")
        run = os.path.join(proj, "runs", "r1")
        ad = {"a.lora_A.weight": torch.randn(2, 16, generator=g), "a.lora_B.weight": torch.zeros(16, 2)}
        cks = {}
        for ck, tensors, dtype in [
            ("sft-epoch-1", base, "f32"),                                    # resume point: F32 base copy
            ("sft-epoch-2", base, "bf16"),                                   # final checkpoint: BF16 copy
            ("rl-latest", {k: v.to(torch.bfloat16) for k, v in base.items()}, "f32"),   # a BF16-held base, written F32
            ("rl-critic", dict(base, **{"value_head.weight": torch.randn(1, 16, generator=g)}), "f32"),  # trained head
        ]:
            d = os.path.join(run, "checkpoints", ck)
            os.makedirs(d)
            write_safetensors(os.path.join(d, "model.safetensors"), tensors, {"format": "pt"}, dtype)
            write_safetensors(os.path.join(d, "adapter_model.safetensors"), ad, {"format": "pt"})
            cks[ck] = d
        # a full fine-tuning checkpoint (no adapters): its model.safetensors is the trained model, always carried
        full = os.path.join(run, "checkpoints", "full")
        os.makedirs(full)
        write_safetensors(os.path.join(full, "model.safetensors"), base, {"format": "pt"})
        with open(os.path.join(run, "events.jsonl"), "w") as f:
            f.write('{"type":"log"}\n')
        with open(os.path.join(run, "engine.pid.json"), "w") as f:
            json.dump({"pid": 999999999}, f)                               # a dead engine: not carried, no refusal
        before = files_of(proj)
        dest = os.path.join(tmp, "carry", "cell")
        os.makedirs(os.path.dirname(dest))
        assert carry.main(["pack", proj, dest, "--base", mdir]) == 0
        packed = files_of(dest)
        stubbed = sorted(k[:-len(carry.STUB)] for k in packed if k.endswith(carry.STUB))
        kept_whole = sorted(k for k in packed if k.endswith("model.safetensors") and not k.endswith("adapter_model.safetensors"))
        vias = {k: json.loads(packed[k + carry.STUB])["via"] for k in stubbed}
        out = os.path.join(tmp, "unpacked")
        assert carry.main(["unpack", dest, out, "--base", mdir]) == 0
        after = files_of(out)
        expected = {k: v for k, v in before.items() if not k.endswith("engine.pid.json")}
        same = after == expected
        # refusals: DEST exists; another base; a carried file changed; an alive engine; the size limit
        refuse_exists = carry.main(["unpack", dest, out, "--base", mdir])
        other = os.path.join(tmp, "other")
        os.makedirs(other)
        write_safetensors(os.path.join(other, "model.safetensors"), dict(base, **{"model.norm.weight": torch.ones(16)}), {"format": "pt"})
        refuse_base = carry.main(["unpack", dest, os.path.join(tmp, "u2"), "--base", other])
        cli_ok = subprocess.run([sys.executable, os.path.join(ROOT, "docs", "results", "study-v4", "carry.py"), "verify", dest,
                                 "--base", mdir], capture_output=True, text=True)
        ev = os.path.join(dest, "runs", "r1", "events.jsonl")
        with open(ev, "a") as f:
            f.write("x")
        refuse_changed = carry.main(["unpack", dest, os.path.join(tmp, "u3"), "--base", mdir])
        left_behind = [p for p in ("u2", "u3", "u2.unpacking", "u3.unpacking") if os.path.exists(os.path.join(tmp, p))]
        with open(os.path.join(run, "engine.pid.json"), "w") as f:
            json.dump({"pid": os.getpid()}, f)
        refuse_alive = carry.main(["pack", proj, os.path.join(tmp, "c2"), "--base", mdir])
        os.remove(os.path.join(run, "engine.pid.json"))
        refuse_size = carry.main(["pack", proj, os.path.join(tmp, "c3"), "--base", mdir, "--max-mb", "0.001"])
        cli = subprocess.run([sys.executable, os.path.join(ROOT, "docs", "results", "study-v4", "carry.py"), "verify", dest,
                              "--base", mdir], capture_output=True, text=True)
        print(json.dumps({"stubbed": stubbed, "keptWhole": kept_whole, "vias": vias, "roundTripSame": same,
                          "files": len(expected), "refuseExists": refuse_exists, "refuseBase": refuse_base,
                          "refuseChanged": refuse_changed, "leftBehind": left_behind, "refuseAlive": refuse_alive,
                          "refuseSize": refuse_size, "cliVerifyOkRc": cli_ok.returncode, "cliVerifyRc": cli.returncode, "cliVerifyErr": cli.stderr.strip()}))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The torch backend's worker (resources/torch-worker/worker.py) on each device, checked against itself
on the CPU, from Python alone (no node.js needed: for a GPU machine with only Python and torch).

    python3 bench/torch_device_check.py [--devices auto|cpu,cuda,mps] [--quick] [--budget-s 210] [--no-bench]
                                        [--out bench/results/torch-device-check.json] [--python PY] [--verbose]
                                        [--compare-cpu (a second CPU worker as the device under test)]

It starts the worker as the engine does (core/model/torch/worker-client.ts: `python -u worker.py`,
PYTHONUNBUFFERED=1, SPA_TORCH_THREADS passed through) and speaks the same framed protocol
(b"SPAF" + u32 LE header length + JSON header + raw little-endian f32/i32 arrays). One worker
process per run, the device forced with SPA_TORCH_DEVICE; on CUDA two runs: the default (bf16
autocast over f32 weights) and SPA_TORCH_AUTOCAST=off (f32).

1. Correctness, on the committed Qwen2 fixtures (tests/fixtures/model/parity: f32 GQA untied,
   bf16 tied, f16 sharded), the f32 fixture with a value head, and the reference bench shape
   (vocab 64, width 128, 4 layers; random weights): weights loaded identically; per-token
   log-probs / entropies against the CPU run and against the fixtures' float64 logits; padding
   does not change a row; greedy generation (tokens equal, or the first divergence is a near-tie);
   the gradient of an SFT step (the coefficients the engine sends for 'sft': -lossMask / N times
   the chunk's token weight N, entropies 0), read back through `apply`; two AdamW steps as the
   engine sends them; a value-head step; a checkpoint saved on the device and reloaded on the CPU.
2. transformers (when importable): Qwen2ForCausalLM against the worker's model on each device
   (logits, f32), and against the worker processes' log-probs.
3. Throughput: worker train tokens/s (forward, the SFT coefficients computed here, backward,
   AdamW) and generate tokens/s (K/V cache, temperature 1) against raw PyTorch
   (bench/reference_torch.py's model) on the same device, same autocast, at the reference shape
   and (accelerators only, not with --quick) a Qwen2.5-0.5B-like shape; peak GPU memory.

Exit code 0 when every check passed, 1 when one failed (or a run died), 2 for bad arguments.
"""
import argparse
import collections
import contextlib
import ctypes
import gc
import importlib.util
import json
import math
import os
import queue
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WORKER = os.environ.get("SPA_TORCH_WORKER", "").strip() or os.path.join(ROOT, "resources", "torch-worker", "worker.py")   # as worker-client.ts
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "model", "parity")
T_START = time.monotonic()

# Same thread policy as the worker (one pool size for OpenMP and BLAS, set before torch starts them).
_threads_env = int(os.environ.get("SPA_TORCH_THREADS", "0") or 0)
if _threads_env > 0:
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, str(_threads_env))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

if _threads_env > 0:
    torch.set_num_threads(_threads_env)

# Tolerances: max abs differences on per-token log-probs, entropies and values, unless named Rel
# (relative L2 over every weight) or mean. f32: CPU, CUDA with SPA_TORCH_AUTOCAST=off, MPS.
# bf16: CUDA's default bf16 autocast (8-bit mantissa matmuls). Measured with bf16 autocast emulated
# on the CPU (the same casts) against f32 on these cases: log-probs max 0.16 / mean 0.03 (logits
# up to 12, where one bf16 step is 0.06), gradient rel 0.02, first AdamW step rel 0.16 (near-zero
# gradient entries flip sign). So about 2x that: loose, yet a wrong op (RoPE, a bias, a mask, the
# head) moves log-probs by whole units and the gradient by O(1).
TOLERANCES = {
    "f32": {"logprobs": 1e-4, "meanLogprobs": 2e-5, "greedyTie": 2e-4, "expected": 1e-4, "padding": 1e-4, "gradRel": 1e-3, "adamwRel": 2e-2,
            "postTrain": 1e-3, "values": 1e-4, "hf": 1e-4},
    "bf16": {"logprobs": 0.3, "meanLogprobs": 0.06, "greedyTie": 0.5, "expected": 0.3, "padding": 0.3, "gradRel": 0.06, "adamwRel": 0.5,
             "postTrain": 0.35, "values": 0.15, "hf": 0.3},
}
ADAMW = {"lr": 1e-3, "maxGradNorm": 1.0, "beta1": 0.9, "beta2": 0.95, "eps": 1e-8, "weightDecay": 0.01}   # RUNTIME_ADAMW, sft defaults


def elapsed():
    return time.monotonic() - T_START


def log(msg=""):
    print(msg, flush=True)


# ---------------------------------------------------------------- frames (as core/model/torch/worker-client.ts)
class WorkerError(Exception):
    pass


def _buffer(t):
    """A zero-copy view of a contiguous CPU tensor's bytes (keep `t` alive while it is used)."""
    n = t.numel() * t.element_size()
    return memoryview((ctypes.c_char * n).from_address(t.data_ptr())).cast("B") if n else memoryview(b"")


def encode_frame(header, arrays):
    """[header bytes, tensors...]: int tensors go as i32, the rest as f32, in dict order."""
    specs, tensors = [], []
    for name, t in arrays.items():
        t = torch.as_tensor(t).detach().to("cpu")
        code = "i32" if not (t.is_floating_point() or t.is_complex()) else "f32"
        t = t.to(torch.int32 if code == "i32" else torch.float32).contiguous()
        specs.append({"name": name, "dtype": code, "shape": list(t.shape)})
        tensors.append(t)
    raw = json.dumps(dict(header, arrays=specs)).encode("utf-8")
    return b"SPAF" + struct.pack("<I", len(raw)) + raw, tensors


def read_frame(stream):
    """(header, {name: tensor}) or None at the end of the stream. Raises WorkerError on a malformed frame."""
    def exact(n):
        data = stream.read(n) if n else b""
        if n and (data is None or len(data) < n):
            return None
        return data
    head = exact(8)
    if head is None:
        return None
    if head[:4] != b"SPAF":
        raise WorkerError("malformed frame from the worker: expected the magic SPAF, got %r" % head[:8])
    (n,) = struct.unpack("<I", head[4:])
    raw = exact(n)
    if raw is None:
        raise WorkerError("malformed frame from the worker: header cut short")
    header = json.loads(raw.decode("utf-8"))
    arrays = {}
    for spec in header.get("arrays", []):
        if spec["dtype"] not in ("f32", "i32"):
            raise WorkerError("malformed frame from the worker: array %s has dtype %r" % (spec["name"], spec["dtype"]))
        count = 1
        for s in spec["shape"]:
            count *= int(s)
        data = exact(count * 4)
        if data is None:
            raise WorkerError("malformed frame from the worker: array %s cut short" % spec["name"])
        dtype = torch.float32 if spec["dtype"] == "f32" else torch.int32
        t = torch.frombuffer(bytearray(data), dtype=dtype) if count else torch.zeros(0, dtype=dtype)
        arrays[spec["name"]] = t.reshape(spec["shape"])
    return header, arrays


class WorkerClient:
    """One worker process, started as worker-client.ts starts it; `request` sends a frame and waits for its reply."""

    def __init__(self, label, env_extra, python, verbose=False):
        self.label = label
        env = dict(os.environ)
        env.update(env_extra)
        env["PYTHONUNBUFFERED"] = "1"
        self.proc = subprocess.Popen([python, "-u", WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env)
        self.tail = collections.deque(maxlen=30)
        self.replies = queue.Queue()
        self.next_id = 1
        self.verbose = verbose
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stdout(self):
        try:
            while True:
                frame = read_frame(self.proc.stdout)
                self.replies.put(frame)
                if frame is None:
                    return
        except Exception as e:  # noqa: BLE001 - handed to the waiting request
            self.replies.put(e)

    def _read_stderr(self):
        for line in iter(self.proc.stderr.readline, b""):
            text = line.decode("utf-8", "replace").rstrip()
            self.tail.append(text)
            if self.verbose and text.strip():
                sys.stderr.write("[%s worker] %s\n" % (self.label, text))

    def _death(self):
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        time.sleep(0.1)   # let the stderr thread take the last lines
        fatal = [l[len("SPA-WORKER-FATAL: "):] for l in self.tail if l.startswith("SPA-WORKER-FATAL: ")]
        last = " | ".join(l for l in list(self.tail)[-8:] if l.strip())
        why = (": " + fatal[0]) if fatal else ("; its last output: " + last if last else "")
        return WorkerError("the %s worker exited with code %s%s" % (self.label, code, why))

    def request(self, op, header=None, arrays=None, timeout=120.0):
        rid = self.next_id
        self.next_id += 1
        head, tensors = encode_frame(dict(header or {}, id=rid, op=op), arrays or {})
        try:
            self.proc.stdin.write(head)
            for t in tensors:
                self.proc.stdin.write(_buffer(t))
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise self._death()
        deadline = time.monotonic() + timeout
        while True:
            try:
                item = self.replies.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                self.kill()
                raise WorkerError("the %s worker did not answer %s within %.0f s (killed)" % (self.label, op, timeout))
            if item is None:
                raise self._death()
            if isinstance(item, Exception):
                self.kill()
                raise WorkerError("%s: %s" % (self.label, item))
            h, a = item
            if h.get("id") != rid:
                continue
            if not h.get("ok"):
                trace = (h.get("trace") or "").strip().splitlines()
                where = (" [" + trace[-3].strip() + "]") if len(trace) >= 3 else ""
                raise WorkerError("%s worker: %s failed: %s%s" % (self.label, op, h.get("error"), where))
            return h, a

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def close(self):
        if self.proc.poll() is None:
            try:
                self.request("shutdown", timeout=10)
            except WorkerError:
                pass
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()


# ---------------------------------------------------------------- the worker module, imported for its param_specs / Qwen2 / safetensors reader
def load_worker_module():
    spec = importlib.util.spec_from_file_location("spa_torch_worker", WORKER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


W = load_worker_module()


def safetensors_names(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n).decode("utf-8"))
    return [k for k in header if k != "__metadata__"]


# ---------------------------------------------------------------- cases
class Case:
    """A model (config + files or arrays) and the inputs every run feeds it."""

    def __init__(self, name, config, files, arrays, full_ids, train_lengths, loss_from, prompts, new_tokens, expected=None):
        self.name, self.config, self.files, self.arrays = name, config, files, arrays
        self.full_ids = full_ids                                   # [B, T] long, no padding
        B, T = full_ids.shape
        self.lengths = train_lengths                               # real tokens per row of the padded batch
        self.pad_ids = full_ids.clone()
        self.attention = torch.zeros(B, T, dtype=torch.int32)
        self.loss_mask = torch.zeros(B, T, dtype=torch.float32)
        for b, n in enumerate(train_lengths):
            self.pad_ids[b, n:] = 0
            self.attention[b, :n] = 1
            self.loss_mask[b, loss_from:n] = 1.0
        g = torch.Generator().manual_seed(11)
        self.returns = torch.randn(B, T, generator=g) * self.loss_mask
        self.prompts = prompts                                     # list of token lists (different lengths: left padding)
        self.new_tokens = new_tokens
        self.expected = expected                                   # [B, T, V] float64-computed logits of full_ids, or None

    def init_header(self):
        h = {"config": self.config, "trainable": True}
        if self.files:
            h["files"] = self.files
        return h


def fixture_case(name, value_head=False):
    d = os.path.join(FIXTURES, name)
    with open(os.path.join(d, "config.json")) as f:
        cfg = json.load(f)
    cfg = {k: v for k, v in cfg.items() if k not in ("architectures", "transformers_version")}
    cfg.setdefault("attention_bias", True)
    with open(os.path.join(d, "inputs.json")) as f:
        inputs = json.load(f)
    ids = torch.tensor(inputs["input_ids"] if isinstance(inputs, dict) else inputs, dtype=torch.long)
    if ids.dim() == 1:
        ids = ids.unsqueeze(0)
    files = []
    for fname in sorted(os.listdir(d)):
        if fname.startswith("model") and fname.endswith(".safetensors"):
            path = os.path.join(d, fname)
            files.append({"path": path, "names": [[n, n] for n in safetensors_names(path)]})
    expected = W.read_safetensors(os.path.join(d, "expected.safetensors"))[0]["logits"].double()
    arrays = {}
    label = name
    if value_head:
        cfg["value_head"] = True
        g = torch.Generator().manual_seed(5)
        D = cfg["hidden_size"]
        arrays = {"value_head.weight": torch.randn(1, D, generator=g) / math.sqrt(D), "value_head.bias": torch.tensor([0.1])}
        label = name + "+value"
    T = ids.shape[1]
    prompts = [ids[0, :10].tolist(), ids[1 % ids.shape[0], :6].tolist()]
    new = min(20, cfg["max_position_embeddings"] - 12)
    lengths = [T] + [11] * (ids.shape[0] - 1)
    return Case(label, cfg, files, arrays, ids, lengths, 5, prompts, new, expected)


def random_weights(cfg, seed, matrix_std=None, embed_std=None, device="cpu"):
    """Seeded random weights (CPU tensors) for the worker's parameter list (param_specs); drawn on `device` (fast for 0.5B on a GPU)."""
    g = torch.Generator(device=device).manual_seed(seed)
    out = {}
    for name, shape in W.param_specs(cfg):
        t = torch.randn(shape, generator=g, device=device)
        if name.endswith("norm.weight"):
            t = 1.0 + 0.1 * t
        elif name.endswith(".bias"):
            t = 0.1 * t
        elif name in ("model.embed_tokens.weight", "lm_head.weight"):
            t = t * (embed_std if embed_std is not None else 2.0 / math.sqrt(cfg["hidden_size"]))
        else:
            t = t * (matrix_std if matrix_std is not None else 1.0 / math.sqrt(shape[-1]))
        out[name] = t.cpu()
    return out


def shape_config(s):
    """A worker config (the keys the worker reads) for a bench shape."""
    return {"vocab_size": s["vocab"], "hidden_size": s["hidden"], "intermediate_size": s["intermediate"],
            "num_hidden_layers": s["layers"], "num_attention_heads": s["heads"], "num_key_value_heads": s["kvHeads"],
            "max_position_embeddings": max(s["context"], s["genPrompt"] + s["genTokens"]) + 64, "rope_theta": s.get("ropeTheta", 10000.0),
            "rms_norm_eps": 1e-6, "tie_word_embeddings": True, "attention_bias": True}


# The bench shapes: the reference one of bench/torch-backend.ts, and a Qwen2.5-0.5B-like one (random weights).
SHAPES = {
    "reference": {"vocab": 64, "hidden": 128, "intermediate": 352, "layers": 4, "heads": 4, "kvHeads": 4, "context": 256, "batch": 16,
                  "genBatch": 16, "genPrompt": 16, "genTokens": 240},
    "qwen2.5-0.5b-like": {"vocab": 151936, "hidden": 896, "intermediate": 4864, "layers": 24, "heads": 14, "kvHeads": 2, "context": 512,
                          "batch": 8, "genBatch": 8, "genPrompt": 64, "genTokens": 128, "ropeTheta": 1000000.0},
}


def reference_case():
    s = SHAPES["reference"]
    cfg = shape_config(s)
    g = torch.Generator().manual_seed(3)
    ids = torch.randint(0, s["vocab"], (4, 64), generator=g)
    prompts = [ids[0, :16].tolist(), ids[1, :9].tolist(), ids[2, :12].tolist()]
    return Case("reference-shape", cfg, None, random_weights(cfg, 1), ids, [64, 64, 40, 23], 8, prompts, 32)


def all_cases():
    return [fixture_case("qwen2-f32"), fixture_case("qwen2-tied-bf16"), fixture_case("qwen2-sharded-f16"),
            fixture_case("qwen2-f32", value_head=True), reference_case()]


# ---------------------------------------------------------------- the engine's side of a training step
def sft_coefficients(loss_mask):
    """What TorchRuntime.trainStep sends to `backward` for 'sft' on one chunk: d loss/d logprobs = -lossMask / max(N, 1)
    (TF.js, float32), times the chunk's token weight N (lossTokens), rounded to float32; entropies get 0."""
    n = max(1.0, float(loss_mask.sum()))
    g = (-loss_mask / torch.tensor(n, dtype=torch.float32)).double() * n
    return {"logprobs": g.float(), "entropies": torch.zeros_like(loss_mask)}, n


def value_coefficients(values, returns, loss_mask):
    """d/d values of sum(0.5 * mask * (v - R)^2) / N, times N (a plain value regression, as the engine would send for it)."""
    n = max(1.0, float(loss_mask.sum()))
    return {"values": ((values - returns) * loss_mask).float()}, n


def train_step(client, case, apply_header, slot="main", value=False, timeout=120):
    arrays = {"ids": case.pad_ids, "mask": case.attention}
    if value:
        _, out = client.request("forward", {"logits": False, "values": True}, arrays, timeout=timeout)
        coef, n = value_coefficients(out["values"], case.returns, case.loss_mask)
    else:
        _, out = client.request("forward", {"logits": True, "values": False}, arrays, timeout=timeout)
        coef, n = sft_coefficients(case.loss_mask)
    client.request("backward", {}, coef, timeout=timeout)
    h, _ = client.request("apply", dict(apply_header, totalWeight=n, slot=slot), timeout=timeout)
    return h


def generate_header(case, temperature=0.0, seed=0, new_tokens=None, pad=0):
    return {"lengths": [len(p) for p in case.prompts], "padTokenId": pad, "maxNewTokens": new_tokens or case.new_tokens,
            "temperature": temperature, "topK": 0, "topP": 1.0, "seed": seed, "stopTokenIds": [], "stop": []}


def split_generated(h, a):
    rows, o = [], 0
    for n in h["lengths"]:
        rows.append((a["tokens"][o:o + n].tolist(), a["logprobs"][o:o + n].tolist()))
        o += n
    return rows


# ---------------------------------------------------------------- one run: every op on every case
def run_case(client, case, workdir, timeout):
    """Everything one device computes for a case (CPU tensors), in the order the engine would ask."""
    r = {}
    client.request("init", case.init_header(), case.arrays, timeout=timeout)
    r["weights0"] = client.request("weights", {}, timeout=timeout)[1]
    values = bool(case.config.get("value_head"))
    r["stats"] = client.request("stats", {"values": values}, {"ids": case.full_ids, "mask": torch.ones_like(case.full_ids)}, timeout=timeout)[1]
    r["statsPadded"] = client.request("stats", {"values": values}, {"ids": case.pad_ids, "mask": case.attention}, timeout=timeout)[1]
    flat = torch.tensor([t for p in case.prompts for t in p], dtype=torch.int32)
    h, a = client.request("generate", generate_header(case), {"prompts": flat}, timeout=timeout)
    r["greedy"] = split_generated(h, a)
    # The gradient, read back through `apply`: with beta1 = beta2 = 0, eps = 1, lr = 1, no decay, no clipping,
    # AdamW's first step is w -= g / (|g| + 1), so g = -d / (1 - |d|) for the change d of each weight.
    probe = {"lr": 1.0, "maxGradNorm": 0, "beta1": 0.0, "beta2": 0.0, "eps": 1.0, "weightDecay": 0.0}
    r["gradNorm"] = train_step(client, case, probe, timeout=timeout)["gradNorm"]
    w1 = client.request("weights", {}, timeout=timeout)[1]
    r["grads"] = {}
    for n, w in w1.items():
        d = (w.double() - r["weights0"][n].double())
        r["grads"][n] = -d / (1 - d.abs()).clamp(min=1e-12)
    # Two AdamW steps as the engine sends them (a fresh model and optimizer), then the value loss on its own slot.
    client.request("init", case.init_header(), case.arrays, timeout=timeout)
    client.request("optimizer", {"weightDecay": ADAMW["weightDecay"], "slot": "main"}, timeout=timeout)
    r["adamwGradNorms"] = [train_step(client, case, ADAMW, timeout=timeout)["gradNorm"] for _ in range(2)]
    if values:
        vh = dict(ADAMW, weightDecay=0.0)
        r["valueGradNorm"] = train_step(client, case, vh, slot="value", value=True, timeout=timeout)["gradNorm"]
    r["weights2"] = client.request("weights", {}, timeout=timeout)[1]
    r["statsAfter"] = client.request("stats", {"values": values}, {"ids": case.full_ids, "mask": torch.ones_like(case.full_ids)}, timeout=timeout)[1]
    d = os.path.join(workdir, "%s-%s" % (client.label, case.name))
    os.makedirs(d, exist_ok=True)
    h, _ = client.request("save", {"weights": os.path.join(d, "model.safetensors"), "optimizer": os.path.join(d, "optimizer.safetensors")}, timeout=timeout)
    r["saved"] = d
    r["savedStep"] = h.get("optimizerStep")
    return r


# ---------------------------------------------------------------- checks
class Checks:
    def __init__(self):
        self.items = []

    def add(self, run, case, name, value, tol, note="", ok=None):
        """value <= tol passes (ok overrides); value None means the check could not be computed (a failure)."""
        if ok is None:
            ok = value is not None and not (isinstance(value, float) and math.isnan(value)) and value <= tol
        item = {"run": run, "case": case, "check": name, "value": value, "tolerance": tol, "ok": bool(ok), "note": note}
        self.items.append(item)
        mark = "PASS" if ok else "FAIL"
        v = "-" if value is None else ("%.3g" % value if isinstance(value, float) else str(value))
        t = "" if tol is None else (" <= %.3g" % tol if isinstance(tol, float) else " == %s" % tol)
        log("  %s  %-10s %-20s %-44s %s%s%s" % (mark, run, case, name, v, t, ("  (" + note + ")") if note else ""))
        return ok

    def error(self, run, case, name, message):
        self.add(run, case, name, None, None, note=message, ok=False)

    @property
    def failed(self):
        return [c for c in self.items if not c["ok"]]


def plain_json(x):
    """Non-finite floats as strings (JSON has no Infinity / NaN)."""
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    if isinstance(x, dict):
        return {k: plain_json(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain_json(v) for v in x]
    return x


def max_abs(a, b):
    a, b = a.double(), b.double()
    if a.shape != b.shape:
        return float("inf")
    return float((a - b).abs().max()) if a.numel() else 0.0


def rel_l2(a, b):
    """||a - b|| / ||b|| over dicts of tensors (the names of b)."""
    num = sum(float(((a[n].double() - b[n].double()) ** 2).sum()) for n in b)
    den = sum(float((b[n].double() ** 2).sum()) for n in b)
    return math.sqrt(num) / max(math.sqrt(den), 1e-30)


def real_positions(case):
    """[B, T] bool: positions of the padded batch that are real tokens with a prefix (log-prob defined)."""
    m = case.attention.bool().clone()
    m[:, 0] = False
    return m


def check_single_run(checks, run, case, r, tol):
    """Checks that need only this run: the fixture's float64 logits, padding invariance, the saved step."""
    lp = r["stats"]["logprobs"]
    if case.expected is not None:
        ref = torch.log_softmax(case.expected[:, :-1], dim=-1).gather(-1, case.full_ids[:, 1:].unsqueeze(-1)).squeeze(-1)
        checks.add(run, case.name, "logprobs vs fixture float64 logits", max_abs(lp[:, 1:], ref), tol["expected"])
    pos = real_positions(case)
    checks.add(run, case.name, "padding leaves a row unchanged", max_abs(r["statsPadded"]["logprobs"][pos], lp[pos]), tol["padding"])
    checks.add(run, case.name, "grad norm finite and > 0", r["gradNorm"], None, ok=math.isfinite(r["gradNorm"]) and r["gradNorm"] > 0)
    checks.add(run, case.name, "optimizer step saved", r["savedStep"], 2, ok=r["savedStep"] == 2)


def check_against_cpu(checks, run, case, r, ref, tol, cpu_logprob_of):
    """This run against the CPU run of the same case."""
    checks.add(run, case.name, "weights loaded identically", rel_l2(r["weights0"], ref["weights0"]), 0.0)
    checks.add(run, case.name, "logprobs vs cpu", max_abs(r["stats"]["logprobs"], ref["stats"]["logprobs"]), tol["logprobs"])
    checks.add(run, case.name, "logprobs vs cpu (mean abs)", float((r["stats"]["logprobs"] - ref["stats"]["logprobs"]).abs().mean()),
               tol["meanLogprobs"])
    checks.add(run, case.name, "entropies vs cpu", max_abs(r["stats"]["entropies"], ref["stats"]["entropies"]), tol["logprobs"])
    if "values" in ref["stats"]:
        checks.add(run, case.name, "values vs cpu", max_abs(r["stats"]["values"], ref["stats"]["values"]), tol["values"])
    # greedy generation: the same tokens, or the first divergence is a near-tie on the CPU
    exact, worst_lp, ties = True, 0.0, []
    for b, ((toks, lps), (rtoks, rlps)) in enumerate(zip(r["greedy"], ref["greedy"])):
        i = next((k for k in range(min(len(toks), len(rtoks))) if toks[k] != rtoks[k]), None)
        common = len(toks) if i is None else i
        if common:
            worst_lp = max(worst_lp, max(abs(x - y) for x, y in zip(lps[:common], rlps[:common])))
        if i is None and len(toks) == len(rtoks):
            continue
        exact = False
        if i is None:
            ties.append((b, None, float("inf")))
            continue
        cpu_lp = cpu_logprob_of(case, case.prompts[b] + toks[:i + 1])   # the CPU's log-prob of this run's token, same prefix
        ties.append((b, i, rlps[i] - cpu_lp))
    gap = max([t[2] for t in ties], default=0.0)
    note = "tokens equal" if exact else "diverge: " + ", ".join("row %d at %s (cpu log-prob gap %.2g)" % t for t in ties)
    checks.add(run, case.name, "greedy tokens (equal or near-tie)", gap, tol["greedyTie"], note=note)   # two log-prob errors
    checks.add(run, case.name, "greedy logprobs vs cpu (common prefix)", worst_lp, tol["logprobs"])
    checks.add(run, case.name, "gradient vs cpu (rel L2, via apply)", rel_l2(r["grads"], ref["grads"]), tol["gradRel"])
    checks.add(run, case.name, "grad norm vs cpu (rel)", abs(r["gradNorm"] - ref["gradNorm"]) / max(ref["gradNorm"], 1e-30), tol["gradRel"])
    upd = {n: r["weights2"][n].double() - r["weights0"][n].double() for n in r["weights2"]}
    ref_upd = {n: ref["weights2"][n].double() - ref["weights0"][n].double() for n in ref["weights2"]}
    worst = max(max_abs(r["weights2"][n], ref["weights2"][n]) for n in ref["weights2"])
    checks.add(run, case.name, "AdamW updates vs cpu (rel L2, 2 steps)", rel_l2(upd, ref_upd), tol["adamwRel"],
               note="max |w - w_cpu| %.2g, lr %g" % (worst, ADAMW["lr"]))
    checks.add(run, case.name, "logprobs after training vs cpu", max_abs(r["statsAfter"]["logprobs"], ref["statsAfter"]["logprobs"]), tol["postTrain"])
    if "values" in ref["statsAfter"]:
        checks.add(run, case.name, "values after value step vs cpu", max_abs(r["statsAfter"]["values"], ref["statsAfter"]["values"]), tol["postTrain"])


def check_reload_on_cpu(checks, run, case, r, cpu, tol, timeout):
    """The checkpoint this run saved, loaded by the CPU worker: the same weights, log-probs and optimizer step."""
    names = [n for n, _ in W.param_specs(case.config)]
    files = [{"path": os.path.join(r["saved"], "model.safetensors"), "names": [[n, n] for n in names]}]
    cpu.request("init", {"config": case.config, "files": files, "trainable": False}, timeout=timeout)
    w = cpu.request("weights", {}, timeout=timeout)[1]
    checks.add(run, case.name, "checkpoint reloaded on cpu: weights", rel_l2(w, r["weights2"]), 0.0)
    values = bool(case.config.get("value_head"))
    st = cpu.request("stats", {"values": values}, {"ids": case.full_ids, "mask": torch.ones_like(case.full_ids)}, timeout=timeout)[1]
    checks.add(run, case.name, "checkpoint reloaded on cpu: logprobs", max_abs(st["logprobs"], r["statsAfter"]["logprobs"]), tol["logprobs"])
    h, _ = cpu.request("load_optimizer", {"path": os.path.join(r["saved"], "optimizer.safetensors"), "weightDecay": 0.01}, timeout=timeout)
    checks.add(run, case.name, "checkpoint reloaded on cpu: AdamW step", h.get("step"), 2, ok=h.get("step") == 2)


# ---------------------------------------------------------------- transformers
def hf_check(checks, devices, cases, results, modes, report):
    try:
        import transformers
        from transformers import Qwen2Config, Qwen2ForCausalLM
    except Exception as e:  # noqa: BLE001
        report["transformers"] = None
        log("  transformers: not importable (%s): skipped" % str(e).splitlines()[0][:120])
        return
    report["transformers"] = transformers.__version__
    log("  transformers %s" % transformers.__version__)
    fixture_cases = [c for c in cases if c.expected is not None and not c.config.get("value_head")]
    for device in devices:
        dev = torch.device(device)
        for case in fixture_cases:
            try:
                cfg = {k: v for k, v in case.config.items() if k not in ("torch_dtype", "attention_bias", "value_head")}
                theta = float(cfg.pop("rope_theta", 10000.0))
                hf_cfg = None
                fields = getattr(Qwen2Config, "__dataclass_fields__", {}) or {}
                if "rope_parameters" in fields:   # transformers 5: a strict dataclass; RoPE settings live in rope_parameters
                    cfg = {k: v for k, v in cfg.items() if k in fields}
                    try:
                        hf_cfg = Qwen2Config(**cfg, rope_parameters={"rope_type": "default", "rope_theta": theta})
                    except TypeError:
                        hf_cfg = None
                if hf_cfg is None:
                    hf_cfg = Qwen2Config(**cfg, rope_theta=theta)
                got_theta = (getattr(hf_cfg, "rope_parameters", None) or {}).get("rope_theta", getattr(hf_cfg, "rope_theta", None))
                if got_theta is None or abs(float(got_theta) - theta) > 1e-6 * theta:
                    raise ValueError("the transformers config did not take rope_theta %g (it has %r)" % (theta, got_theta))
                try:
                    hf_cfg._attn_implementation = "eager"
                except Exception:  # noqa: BLE001 - the default attention is fine in f32
                    pass
                ref = Qwen2ForCausalLM(hf_cfg).float().eval()
                weights = {}
                for entry in case.files:
                    weights.update(W.read_safetensors(entry["path"])[0])
                missing, unexpected = ref.load_state_dict(weights, strict=False)
                missing = [k for k in missing if not (k == "lm_head.weight" and case.config.get("tie_word_embeddings"))]
                if missing or unexpected:
                    raise ValueError("state dict mismatch: missing %s unexpected %s" % (missing, unexpected))
                if case.config.get("tie_word_embeddings"):
                    ref.lm_head.weight = ref.model.embed_tokens.weight
                ref = ref.to(dev)
                ids = case.full_ids.to(dev)
                with torch.no_grad():
                    theirs = ref(input_ids=ids).logits.float().cpu()
                    ours_model = W.Qwen2(dict(case.config), dev, False)
                    for n, _ in W.param_specs(case.config):
                        ours_model.w[n] = weights[n].to(dev)
                    ours = ours_model.lm_head(ours_model.trunk(ids, torch.ones_like(ids))).float().cpu()
                checks.add(device, case.name, "worker model vs transformers (logits)", max_abs(ours, theirs), TOLERANCES["f32"]["hf"])
                hf_lp = torch.log_softmax(theirs[:, :-1].double(), -1).gather(-1, case.full_ids[:, 1:].unsqueeze(-1)).squeeze(-1)
                for run, res in results.items():
                    if run.split("#")[0].split("-")[0] != device or case.name not in res:
                        continue
                    tol = TOLERANCES[modes[run]]["hf"]
                    checks.add(run, case.name, "worker process logprobs vs transformers", max_abs(res[case.name]["stats"]["logprobs"][:, 1:], hf_lp), tol)
                del ref, ours_model
            except Exception as e:  # noqa: BLE001
                checks.error(device, case.name, "worker model vs transformers", "%s: %s" % (type(e).__name__, e))
        if device == "cuda":
            torch.cuda.empty_cache()


# ---------------------------------------------------------------- throughput
def sync(device):
    if device == "cuda":
        torch.cuda.synchronize()
    elif device == "mps" and hasattr(torch, "mps") and hasattr(torch.mps, "synchronize"):
        torch.mps.synchronize()


def timed_repeats(fn, n, deadline, device):
    """Median wall seconds of up to n calls of fn (at least one), stopping at the deadline."""
    times = []
    for _ in range(n):
        sync(device)
        t0 = time.perf_counter()
        fn()
        sync(device)
        times.append(time.perf_counter() - t0)
        if time.monotonic() + times[-1] > deadline:
            break
    return statistics.median(times), len(times)


class GpuMemoryWatch:
    """Peak GPU memory in use on the device (driver view: every process, CUDA contexts and allocator caches included),
    polled from `start` (which takes the baseline) to `stop`."""

    def __init__(self):
        self.peak, self.baseline, self.done, self.thread = 0, 0, threading.Event(), None

    def _used(self):
        free, total = torch.cuda.mem_get_info()
        return total - free

    def _poll(self):
        while not self.done.is_set():
            self.peak = max(self.peak, self._used())
            time.sleep(0.02)

    def start(self):
        self.baseline = self.peak = self._used()
        self.thread = threading.Thread(target=self._poll, daemon=True)
        self.thread.start()

    def stop(self):
        if self.thread is not None:
            self.done.set()
            self.thread.join()
            self.peak = max(self.peak, self._used())


def bench_worker(client, shape, device, steps, gen_runs, deadline, timeout, watch=None):
    """The worker's train and generate tokens/s; `watch` (a GpuMemoryWatch) runs from its model's init to its reset."""
    s = SHAPES[shape]
    cfg = shape_config(s)
    big = s["hidden"] >= 512
    weights = random_weights(cfg, 7, matrix_std=0.02 if big else None, embed_std=0.02 if big else None,
                             device="cuda" if device == "cuda" else "cpu")
    free_device_memory(device)   # this process's share of drawing them, out of the watch's baseline
    client.request("reset", timeout=timeout)
    if watch is not None:
        watch.start()
    t0 = time.perf_counter()
    client.request("init", {"config": cfg, "trainable": True}, weights, timeout=timeout)
    init_s = time.perf_counter() - t0
    del weights
    g = torch.Generator().manual_seed(1)
    B, T = s["batch"], s["context"]
    ids = torch.randint(0, s["vocab"], (B, T), generator=g)
    mask = torch.ones(B, T, dtype=torch.int32)
    loss_mask = torch.ones(B, T)   # as bench/torch-backend.ts: every token in the loss
    client.request("optimizer", {"weightDecay": ADAMW["weightDecay"]}, timeout=timeout)

    def step():
        _, out = client.request("forward", {"logits": True, "values": False}, {"ids": ids, "mask": mask}, timeout=timeout)
        coef, n = sft_coefficients(loss_mask)
        client.request("backward", {}, coef, timeout=timeout)
        client.request("apply", dict(ADAMW, totalWeight=n, slot="main"), timeout=timeout)
        client.request("weights", {"names": ["model.norm.weight"]}, timeout=timeout)   # a copy to the CPU: waits for the step's kernels

    step()   # warm-up
    train_s, train_n = timed_repeats(step, steps, deadline, "cpu")
    prompts = torch.randint(0, s["vocab"], (s["genBatch"], s["genPrompt"]), generator=g)
    flat = prompts.reshape(-1).to(torch.int32)
    header = {"lengths": [s["genPrompt"]] * s["genBatch"], "padTokenId": 0, "maxNewTokens": s["genTokens"], "temperature": 1.0,
              "topK": 0, "topP": 1.0, "seed": 0, "stopTokenIds": [], "stop": []}
    generated = []

    def gen():
        h, _ = client.request("generate", dict(header, seed=len(generated)), {"prompts": flat}, timeout=timeout)
        generated.append(sum(h["lengths"]))

    gen()   # warm-up
    gen_s, gen_n = timed_repeats(gen, gen_runs, deadline, "cpu")
    if watch is not None:
        watch.stop()
    client.request("reset", timeout=timeout)
    return {"initSeconds": init_s, "train": {"msPerStep": train_s * 1000, "tokensPerSec": B * T / train_s, "steps": train_n},
            "generate": {"seconds": gen_s, "tokensPerSec": generated[-1] / gen_s, "tokens": generated[-1], "runs": gen_n}}


def load_reference_module():
    """bench/reference_torch.py (its argv parsing at import reads sys.argv[3]: give it a neutral argv)."""
    saved = sys.argv
    sys.argv = [saved[0]]
    try:
        spec = importlib.util.spec_from_file_location("spa_reference_torch", os.path.join(HERE, "reference_torch.py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.argv = saved
    return module


class _TorchOn:
    """`torch` for reference_torch.py's module globals, with `ones` (its causal mask) made on a device: its Block.forward
    builds the mask on the default device, and a default-device mode would tax every op of the timed loops."""

    def __init__(self, device):
        self._device = device

    def __getattr__(self, name):
        return getattr(torch, name)

    def ones(self, *a, **k):
        k.setdefault("device", self._device)
        return torch.ones(*a, **k)


def bench_raw(shape, device, autocast, steps, gen_runs, deadline):
    """Raw PyTorch: reference_torch.py's Model (nn.Module, torch.optim.AdamW, loss.backward) on this device, timed with syncs.
    Same autocast as the worker on this device. The caller frees the GPU memory (gc, empty_cache) after it returns."""
    ref = load_reference_module()
    dev = torch.device(device)
    if device != "cpu":
        ref.torch = _TorchOn(dev)
    s = SHAPES[shape]
    c = dict(s)
    c["context"] = max(s["context"], s["genPrompt"] + s["genTokens"])
    amp = (lambda: torch.autocast(device_type="cuda", dtype=torch.bfloat16)) if autocast else contextlib.nullcontext
    torch.manual_seed(0)
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    # built on the device where torch can (a default-device context, 2.0+): 0.5B parameters initialise in a blink there
    build = dev if device != "cpu" and hasattr(torch.device, "__enter__") else contextlib.nullcontext()
    with build:
        model = ref.Model(c)
    model = model.to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=ADAMW["lr"], betas=(ADAMW["beta1"], ADAMW["beta2"]), eps=ADAMW["eps"],
                            weight_decay=ADAMW["weightDecay"])
    B, T, V = s["batch"], s["context"], s["vocab"]
    ids = torch.randint(0, V, (B, T), device=dev)

    def step():
        with amp():
            logits = model(ids)
            loss = F.cross_entropy(logits[:, :-1].float().reshape(-1, V), ids[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), ADAMW["maxGradNorm"])
        opt.step()

    step()
    train_s, train_n = timed_repeats(step, steps, deadline, device)
    gB, prompt, new = s["genBatch"], s["genPrompt"], s["genTokens"]
    gids = torch.randint(0, V, (gB, prompt), device=dev)

    def gen():
        with amp(), W._inference_mode():
            caches = [dict() for _ in range(s["layers"])]
            logits = model(gids, 0, caches)
            tok = logits[:, -1].float().argmax(-1, keepdim=True)
            for i in range(new - 1):
                logits = model(tok, prompt + i, caches)
                tok = torch.multinomial(torch.softmax(logits[:, -1].float(), -1), 1)
        return tok

    gen()
    gen_s, gen_n = timed_repeats(gen, gen_runs, deadline, device)
    out = {"train": {"msPerStep": train_s * 1000, "tokensPerSec": B * T / train_s, "steps": train_n},
           "generate": {"seconds": gen_s, "tokensPerSec": gB * new / gen_s, "tokens": gB * new, "runs": gen_n}}
    if device == "cuda":
        out["peakAllocatedGiB"] = torch.cuda.max_memory_allocated() / 2 ** 30
        out["peakReservedGiB"] = torch.cuda.max_memory_reserved() / 2 ** 30
    return out


def free_device_memory(device):
    gc.collect()
    if device == "cuda":
        torch.cuda.empty_cache()
    elif device == "mps" and hasattr(torch, "mps") and hasattr(torch.mps, "empty_cache"):
        torch.mps.empty_cache()


# ---------------------------------------------------------------- main
def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--devices", default="auto", help="comma list of cpu, cuda, mps (auto: cpu and every available accelerator); "
                                                      "the cpu run is always made: it is the reference")
    p.add_argument("--quick", action="store_true", help="skip the Qwen2.5-0.5B-like shape; fewer repeats")
    p.add_argument("--budget-s", type=float, default=210.0, help="stop starting benchmarks when this many seconds have passed (default 210)")
    p.add_argument("--out", default=os.path.join(HERE, "results", "torch-device-check.json"))
    p.add_argument("--python", default=sys.executable, help="the interpreter that runs the worker (default: this one)")
    p.add_argument("--no-bench", action="store_true", help="correctness only")
    p.add_argument("--compare-cpu", action="store_true", help="also run a second CPU worker as a device under test (checks this harness's "
                                                               "comparison paths on a machine without an accelerator)")
    p.add_argument("--verbose", action="store_true", help="echo the workers' stderr")
    a = p.parse_args(argv)
    known = ("cpu", "cuda", "mps")
    if a.devices == "auto":
        a.devices_list = ["cpu", "cuda", "mps"]
        a.devices_auto = True
    else:
        a.devices_list = [d.strip() for d in a.devices.split(",") if d.strip()]
        a.devices_auto = False
        bad = [d for d in a.devices_list if d not in known]
        if bad:
            p.error("--devices: unknown %s (known: cpu, cuda, mps, or auto)" % ", ".join(bad))
    if a.budget_s <= 0:
        p.error("--budget-s must be > 0")
    return a


def available():
    mps = getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available()
    return {"cpu": True, "cuda": torch.cuda.is_available(), "mps": bool(mps)}


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    budget_end = T_START + args.budget_s
    have = available()
    notes = []
    report = {"bench": "torch-device-check", "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "python": sys.version.split()[0],
              "torch": torch.__version__, "argv": sys.argv[1:], "tolerances": TOLERANCES, "adamw": ADAMW, "runs": {}, "notes": notes}
    if have["cuda"]:
        try:
            report["tf32Matmul"] = bool(torch.backends.cuda.matmul.allow_tf32)
        except Exception as e:  # noqa: BLE001 - newer torch may prefer its fp32_precision settings
            report["tf32Matmul"] = "unknown (%s)" % e
    log("torch %s, Python %s, threads %d; budget %.0f s" % (torch.__version__, report["python"], torch.get_num_threads(), args.budget_s))
    devices = ["cpu"]
    missing = []
    for d in ("cuda", "mps"):
        if not have[d]:
            notes.append("%s: not available" % d)
            if d in args.devices_list and not args.devices_auto:
                missing.append(d)
        elif d in args.devices_list:
            devices.append(d)
        else:
            notes.append("%s: available, not requested (--devices)" % d)
    for n in notes:
        log(n)
    if "cpu" not in args.devices_list:
        log("cpu: run anyway as the reference")
    runs = [("cpu", {"SPA_TORCH_DEVICE": "cpu"})]
    if args.compare_cpu:
        runs.append(("cpu#2", {"SPA_TORCH_DEVICE": "cpu", "SPA_TORCH_THREADS": "2" if torch.get_num_threads() == 1 else "1"}))
    if "cuda" in devices:
        runs += [("cuda", {"SPA_TORCH_DEVICE": "cuda"}), ("cuda-f32", {"SPA_TORCH_DEVICE": "cuda", "SPA_TORCH_AUTOCAST": "off"})]
    if "mps" in devices:
        runs.append(("mps", {"SPA_TORCH_DEVICE": "mps"}))

    checks = Checks()
    for d in missing:
        checks.error(d, "-", "requested device available", "--devices asked for %s; torch %s here has none" % (d, torch.__version__))
    cases = all_cases()
    workdir = tempfile.mkdtemp(prefix="spa-device-check-")
    clients, results, modes = {}, {}, {}
    timeout = 90.0                                   # one correctness request (tiny models; the first CUDA op starts a context)
    bench_timeout = max(90.0, min(args.budget_s, 240.0))   # one benchmark request (the 0.5B init sends 2 GB of weights)
    try:
        # ------------------------------------------------ 1. correctness
        log("\n== correctness (tolerances: f32 %s; bf16 autocast %s)" % (
            ", ".join("%s %g" % kv for kv in TOLERANCES["f32"].items()), ", ".join("%s %g" % kv for kv in TOLERANCES["bf16"].items())))

        def cpu_logprob_of(case, seq):
            cpu = clients["cpu"]
            cpu.request("init", case.init_header(), case.arrays, timeout=timeout)
            ids = torch.tensor([seq], dtype=torch.long)
            out = cpu.request("stats", {}, {"ids": ids, "mask": torch.ones_like(ids)}, timeout=timeout)[1]
            return float(out["logprobs"][0, -1])

        for run, env in runs:
            t0 = time.monotonic()
            try:
                client = WorkerClient(run, env, args.python, args.verbose)
                clients[run] = client
                hello = client.request("hello", timeout=timeout)[0]
            except WorkerError as e:
                checks.error(run, "-", "worker starts", str(e))
                continue
            modes[run] = "bf16" if "bf16 autocast" in str(hello.get("device")) else "f32"
            report["runs"][run] = {"device": hello.get("device"), "torch": hello.get("torch"), "python": hello.get("python"),
                                   "threads": hello.get("threads"), "mode": modes[run], "env": env}
            log("\n-- %s: %s (torch %s, %s threads; %s tolerances)" % (run, hello.get("device"), hello.get("torch"), hello.get("threads"), modes[run]))
            tol = TOLERANCES[modes[run]]
            results[run] = {}
            for case in cases:
                try:
                    r = run_case(client, case, workdir, timeout)
                except WorkerError as e:
                    checks.error(run, case.name, "ops run", str(e))
                    if client.proc.poll() is not None:
                        break
                    continue
                results[run][case.name] = r
                try:
                    check_single_run(checks, run, case, r, tol)
                    if run != "cpu" and case.name in results.get("cpu", {}):
                        check_against_cpu(checks, run, case, r, results["cpu"][case.name], tol, cpu_logprob_of)
                    if "cpu" in clients:
                        check_reload_on_cpu(checks, run, case, r, clients["cpu"], tol, timeout)
                except WorkerError as e:
                    checks.error(run, case.name, "checks", str(e))
            report["runs"][run]["seconds"] = round(time.monotonic() - t0, 2)
            if run in ("cuda-f32", "cpu#2"):
                client.close()
                clients.pop(run)

        # ------------------------------------------------ 2. transformers
        log("\n== transformers' Qwen2ForCausalLM vs the worker's model (f32 logits)")
        hf_check(checks, devices, cases, results, modes, report)

        # ------------------------------------------------ 3. throughput
        report["throughput"] = {}
        if args.no_bench:
            notes.append("throughput: skipped (--no-bench)")
        else:
            log("\n== throughput (median; worker = the frame protocol + this process's SFT coefficients; raw = reference_torch.py's model)")
            steps, gen_runs = (3, 2) if args.quick else (5, 3)
            timed = [d for d in devices if args.devices_auto or d in args.devices_list]   # the cpu reference run is not timed unless asked
            plan = [(d, "reference") for d in timed]
            if args.quick:
                notes.append("qwen2.5-0.5b-like shape: skipped (--quick)")
            else:
                plan += [(d, "qwen2.5-0.5b-like") for d in timed if d != "cpu"]
                if devices == ["cpu"]:
                    notes.append("qwen2.5-0.5b-like shape: accelerators only (no accelerator here)")
            for i, (device, shape) in enumerate(plan):
                left = budget_end - time.monotonic()
                need = 20 if shape == "reference" else 60
                if left < need:
                    notes.append("throughput %s %s: skipped, %.0f s of the budget left (needs ~%d)" % (device, shape, left, need))
                    log("  " + notes[-1])
                    continue
                client = clients.get(device)
                if client is None or client.proc.poll() is not None:
                    notes.append("throughput %s %s: skipped, no live worker" % (device, shape))
                    continue
                share = left / max(1, len(plan) - i)
                entry = report["throughput"].setdefault(device, {})
                autocast = modes.get(device) == "bf16"
                entry[shape] = {"autocast": autocast}
                # raw first: its model is freed before the worker's is built (peak memory of each alone). A raw
                # reference that breaks is a note (this harness's baseline); a worker that breaks is a failed check.
                raw = None
                try:
                    raw = entry[shape]["raw"] = bench_raw(shape, device, autocast, steps, gen_runs, time.monotonic() + share / 2)
                except Exception as e:  # noqa: BLE001
                    entry[shape]["rawError"] = "%s: %s" % (type(e).__name__, e)
                    notes.append("throughput %s %s: the raw PyTorch reference failed: %s" % (device, shape, entry[shape]["rawError"]))
                    log("  " + notes[-1])
                finally:
                    free_device_memory(device)
                watch = GpuMemoryWatch() if device == "cuda" else None
                try:
                    worker = entry[shape]["worker"] = bench_worker(client, shape, device, steps, gen_runs, time.monotonic() + share / 2,
                                                                   bench_timeout, watch)
                except Exception as e:  # noqa: BLE001 - a benchmark that breaks is reported, the checks stand
                    if watch is not None:
                        watch.stop()
                    entry[shape]["workerError"] = "%s: %s" % (type(e).__name__, e)
                    checks.error(device, shape, "worker throughput run", entry[shape]["workerError"])
                    continue
                mem = ""
                if watch:
                    # the device's memory in use, polled: the worker's growth over its idle state (its caching allocator's reserve)
                    worker["peakGpuGiBAdded"] = (watch.peak - watch.baseline) / 2 ** 30
                    worker["peakGpuGiBDeviceInUse"] = watch.peak / 2 ** 30
                    mem = "; peak GPU memory: worker +%.1f GiB (driver view, allocator cache included)" % worker["peakGpuGiBAdded"]
                    if raw:
                        mem += ", raw %.1f GiB allocated / %.1f reserved" % (raw["peakAllocatedGiB"], raw["peakReservedGiB"])
                if raw:
                    ratio = entry[shape]["ratio"] = {"train": worker["train"]["tokensPerSec"] / raw["train"]["tokensPerSec"],
                                                     "generate": worker["generate"]["tokensPerSec"] / raw["generate"]["tokensPerSec"]}
                    log("  %-5s %-18s train %9.0f / %9.0f tok/s (ratio %.2f)   generate %8.0f / %8.0f tok/s (ratio %.2f)%s" % (
                        device, shape, worker["train"]["tokensPerSec"], raw["train"]["tokensPerSec"], ratio["train"],
                        worker["generate"]["tokensPerSec"], raw["generate"]["tokensPerSec"], ratio["generate"], mem))
                else:
                    log("  %-5s %-18s train %9.0f tok/s   generate %8.0f tok/s (no raw reference)%s" % (
                        device, shape, worker["train"]["tokensPerSec"], worker["generate"]["tokensPerSec"], mem))
    except Exception as e:  # noqa: BLE001 - a bug here still leaves the report of what ran
        import traceback
        checks.error("harness", "-", "harness ran to the end", "%s: %s | %s" % (type(e).__name__, e, traceback.format_exc()[-1500:]))
    finally:
        for c in clients.values():
            c.close()
        shutil.rmtree(workdir, ignore_errors=True)

    # ------------------------------------------------ report
    failed = checks.failed
    report["checks"] = checks.items
    report["ok"] = not failed
    report["seconds"] = round(elapsed(), 1)
    log("\n== summary: %d checks, %d failed, %.1f s" % (len(checks.items), len(failed), elapsed()))
    by_check = collections.OrderedDict()   # (run, check) -> worst value over the cases, its tolerance, passes, count
    for c in checks.items:
        if c["run"] == "harness" or not isinstance(c["value"], (int, float)) or isinstance(c["value"], bool):
            continue
        k = (c["run"], c["check"])
        w = by_check.setdefault(k, [float("-inf"), c["tolerance"], 0, 0])
        w[0] = max(w[0], float(c["value"]))
        w[2] += int(c["ok"])
        w[3] += 1
    for (run, name), (worst, tol, ok, n) in by_check.items():
        log("  %-10s %-44s worst %-9.3g tol %-9s %d/%d pass" % (run, name, worst, "%.3g" % tol if isinstance(tol, float) else tol, ok, n))
    for n in notes:
        log("  note: " + n)
    for c in failed:
        log("  FAILED %s %s %s: %s%s" % (c["run"], c["case"], c["check"], c["value"], (" (" + c["note"] + ")") if c["note"] else ""))
    out = args.out
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(plain_json(report), f, indent=1, default=str)
        f.write("\n")
    os.replace(tmp, out)
    log("wrote %s" % out)
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())

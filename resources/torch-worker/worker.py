#!/usr/bin/env python3
"""SPA Workbench PyTorch worker: the engine's `torch` backend (core/model/torch/).

Needs only Python 3 and torch (Debian's python3-torch 1.13 and torch 2.x both work). Started by
the engine; speaks a framed protocol on stdin/stdout (stdout carries frames only; every print
goes to stderr, which the engine logs):

    frame = b"SPAF" + u32 LE header length + JSON header (UTF-8) + raw arrays
    header["arrays"] = [{"name", "dtype": "f32" | "i32", "shape": [...]}, ...] in payload order

Requests carry {"id", "op", ...}; replies {"id", "ok": true, ...} or {"id", "ok": false, "error"}.
The model is Qwen2 with the same math and HF weight names as core/model/transformer.ts (RMSNorm,
RoPE, GQA, SwiGLU, q/k/v bias, tied or untied lm_head) plus our scalar value head. The loss math
is NOT here: `forward` keeps the autograd graph and returns per-token log-probs / entropies /
values, the engine evaluates its registered loss on them (TypeScript) and sends back dLoss/d(each
output) in `backward`; `apply` clips by global norm and takes an AdamW step identical to
core/model/optim.ts. Device: CUDA (bf16 autocast, f32 master weights), Apple MPS, else CPU;
SPA_TORCH_DEVICE=cpu|cuda|mps forces one (an unavailable one is a fatal error), SPA_TORCH_AUTOCAST=off
keeps CUDA in f32 (bench/torch_device_check.py runs the same ops on each and compares them).

LoRA (`enable_lora`, and `init` + `enable_lora` with the adapter file when a folder has adapters) is
the math, init convention and PEFT names of core/model/transformer.ts: on each target linear layer
y = x W^T (+ b) + (alpha / rank) (x A^T) B^T, A [rank, in] uniform in +-1/sqrt(in), B [out, rank]
zero, named `base_model.model.<module>.lora_A.weight` / `.lora_B.weight`. Under LoRA the base
weights are frozen except the value head; only the adapters (and the value head) get AdamW state.
"""
import ctypes
import json
import math
import os
import re
import signal
import struct
import sys
import time
import traceback

def _cpu_threads():
    """SPA_TORCH_THREADS, else every core this process may run on (some torch builds start with 1)."""
    n = int(os.environ.get("SPA_TORCH_THREADS", "0") or 0)
    if n > 0:
        return n
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


THREADS = _cpu_threads()
# One pool size for OpenMP and the BLAS behind torch, set before numpy or torch loads OpenBLAS (it sizes its pool once, when
# loaded: Debian's numpy and torch share libopenblas). Unset, or set after `import numpy`, OpenBLAS runs a thread per core
# beside torch's pool: with SPA_TORCH_THREADS=1 each worker then ran 2 threads, and one SFT step of SmolLM2 cost 21.6
# CPU-seconds instead of 15.4 (bench/results/torch-threads.json), which two workers on two cores pay in wall time
# (docs/results/study-v4, amendment of 2026-12-02 02:15; tests/torch/worker-threads.test.ts).
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, str(THREADS))


try:
    import numpy as _np   # the CPU sampler's sort (sorted_descending); Debian's python3-torch depends on it
except ImportError:   # pragma: no cover
    _np = None
if os.environ.get("SPA_TORCH_SAMPLE_SORT", "").strip() == "torch":
    _np = None   # the CPU sampler sorts with torch.sort(stable=True), as before numpy's sort: the same tokens, slower (bench)

# The process that started this worker: SPA_WORKER_PARENT (the engine's pid, set at spawn: core/model/torch/worker-client.ts),
# else the parent pid read first thing. See _die_with_parent.
_PARENT = int(os.environ.get("SPA_WORKER_PARENT", "0") or 0) or os.getppid()


def _die_with_parent(parent):
    """Linux: have the kernel send SIGTERM to this worker when the process that started it dies (killed with SIGKILL, crashed,
    a CLI stopped mid-operation), so no worker goes on computing with parent 1. Without it a worker notices only at the end
    of its current operation (stdin EOF, or the reply's broken pipe), which on a loaded CPU was minutes of a 135M model's
    generation (docs/results/study-v4, amendment of 09:50). prctl(PR_SET_PDEATHSIG) binds to the thread that spawned the
    worker: the engine spawns it from its main thread (core/model/torch/worker-client.ts). Elsewhere: the stdin EOF path.
    `parent`: the pid of the process that started the worker, known before torch's import (seconds on a loaded CPU): a
    parent that died before the request took effect, even before this interpreter started, is seen here as a changed parent
    pid (tests/torch/worker-orphan.test.ts failed so at load 10, when the parent was read after the import)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)   # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:   # the parent died before the request took effect
        os._exit(0)


if __name__ == "__main__":
    _die_with_parent(_PARENT)   # before torch's import; not when a test or bench imports this file as a module


PROTOCOL_VERSION = 1
MIN_TORCH = (1, 13)


def _tune_malloc():
    """glibc: allocations of 1 MiB or more (activations, logits chunks, gradients) get their own mappings, returned to the
    system when freed, and at most 2 arenas. Without it freed activations stay in fragmented heaps: after the 0.5B SFT
    step's forward the worker held 5.1 GB instead of 2.6 GB, and peaked at 5.9 GB instead of 3.4 GB
    (bench/results/real-model-memory-step.json). SPA_TORCH_MALLOC=default leaves glibc's settings alone."""
    if not sys.platform.startswith("linux") or os.environ.get("SPA_TORCH_MALLOC", "") == "default":
        return
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 1 << 20)   # M_MMAP_THRESHOLD (fixed: no dynamic raise to 32 MiB)
        libc.mallopt(-8, 2)         # M_ARENA_MAX
    except (OSError, AttributeError):
        pass


_tune_malloc()
_out = None   # frames only (set by main: the real stdout; fd 1 then points at stderr)
_in = None

try:
    import torch
    import torch.nn.functional as F
except Exception as e:  # noqa: BLE001 - reported to the engine verbatim
    sys.stderr.write("SPA-WORKER-FATAL: torch is not importable by %s: %s\n" % (sys.executable, e))
    sys.exit(3)


def _version_tuple(v):
    parts = []
    for p in v.split("+")[0].split(".")[:2]:
        digits = "".join(ch for ch in p if ch.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


if sys.byteorder != "little":
    sys.stderr.write("SPA-WORKER-FATAL: the frame protocol is little-endian; this machine is %s-endian\n" % sys.byteorder)
    sys.exit(3)
if _version_tuple(torch.__version__) < MIN_TORCH:
    sys.stderr.write("SPA-WORKER-FATAL: torch %s is too old (need >= %d.%d)\n" % ((torch.__version__,) + MIN_TORCH))
    sys.exit(3)

# ---------------------------------------------------------------- frames
DT = {"f32": (torch.float32, 4), "i32": (torch.int32, 4)}


class FrameError(Exception):
    pass


def _read_exact(n):
    buf = bytearray()
    while len(buf) < n:
        chunk = _in.read(n - len(buf))
        if not chunk:
            return None if not buf else bytes(buf)
        buf += chunk
    return bytes(buf)


def read_frame():
    head = _read_exact(8)
    if head is None:
        return None, None
    if len(head) < 8 or head[:4] != b"SPAF":
        raise FrameError("malformed frame: expected the magic SPAF and a length, got %r" % head[:8])
    (n,) = struct.unpack("<I", head[4:])
    raw = _read_exact(n)
    if raw is None or len(raw) < n:
        raise FrameError("malformed frame: header cut short (%d of %d bytes)" % (0 if raw is None else len(raw), n))
    try:
        header = json.loads(raw.decode("utf-8"))
    except ValueError as e:
        raise FrameError("malformed frame: header is not JSON: %s" % e)
    arrays = {}
    for spec in header.get("arrays", []):
        dtype, size = DT[spec["dtype"]]
        count = 1
        for s in spec["shape"]:
            count *= int(s)
        data = _read_exact(count * size) if count else b""
        if data is None or len(data) < count * size:
            raise FrameError("malformed frame: array %s cut short" % spec["name"])
        t = torch.frombuffer(bytearray(data), dtype=dtype) if count else torch.zeros(0, dtype=dtype)
        arrays[spec["name"]] = t.reshape(spec["shape"])
    return header, arrays


def raw_bytes(t):
    """The little-endian bytes of a CPU tensor, without numpy (torch 2.x does not need it installed)."""
    t = t.contiguous()
    n = t.numel() * t.element_size()
    return ctypes.string_at(t.data_ptr(), n) if n else b""


def write_frame(header, arrays=None):
    specs, blobs = [], []
    for name, t in (arrays or {}).items():
        t = t.detach().to("cpu").contiguous()
        if t.dtype in (torch.float16, torch.bfloat16, torch.float64):
            t = t.float()
        code = "i32" if t.dtype in (torch.int32, torch.int64) else "f32"
        t = t.to(torch.int32 if code == "i32" else torch.float32)
        specs.append({"name": name, "dtype": code, "shape": list(t.shape)})
        blobs.append(raw_bytes(t))
    header = dict(header)
    header["arrays"] = specs
    raw = json.dumps(header).encode("utf-8")
    _out.write(b"SPAF" + struct.pack("<I", len(raw)) + raw)
    for b in blobs:
        _out.write(b)
    _out.flush()


# ---------------------------------------------------------------- safetensors (own reader/writer)
ST_DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16, "F64": torch.float64}


def read_safetensors(path, names=None, keep_low=False):
    """{name: f32 tensor} from one .safetensors file (F32/F16/BF16/F64); keep_low: BF16/F16 tensors stay as stored."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n).decode("utf-8"))
        base = 8 + n
        out = {}
        for name, info in header.items():
            if name == "__metadata__" or (names is not None and name not in names):
                continue
            if info["dtype"] not in ST_DTYPES:
                raise ValueError("%s: tensor %s has dtype %s (readable: F32, F16, BF16, F64)" % (path, name, info["dtype"]))
            start, end = info["data_offsets"]
            f.seek(base + start)
            data = bytearray(f.read(end - start))
            dtype = ST_DTYPES[info["dtype"]]
            if dtype == torch.bfloat16:  # frombuffer has no bf16 in every version: go through int16 bits
                t = torch.frombuffer(data, dtype=torch.int16).view(torch.bfloat16) if data else torch.zeros(0, dtype=dtype)
            else:
                t = torch.frombuffer(data, dtype=dtype) if data else torch.zeros(0, dtype=dtype)
            t = t.reshape(info["shape"])
            out[name] = t if keep_low and dtype in (torch.bfloat16, torch.float16) else t.float()
        return out, header.get("__metadata__", {})


WRITE_DTYPES = {"f32": ("F32", torch.float32, 4), "bf16": ("BF16", torch.bfloat16, 2), "f16": ("F16", torch.float16, 2)}


def write_safetensors(path, tensors, metadata, dtype="f32"):
    """One .safetensors file in `dtype` (f32 | bf16 | f16), written a tensor at a time (never a second copy of them all)."""
    if dtype not in WRITE_DTYPES:
        raise ValueError("save: dtype must be one of %s, got %r" % (", ".join(WRITE_DTYPES), dtype))
    code, tdtype, size = WRITE_DTYPES[dtype]
    header = {"__metadata__": {k: str(v) for k, v in metadata.items()}}
    offset = 0
    for name, t in tensors.items():
        n = t.numel() * size
        header[name] = {"dtype": code, "shape": list(t.shape), "data_offsets": [offset, offset + n]}
        offset += n
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for t in tensors.values():
            f.write(raw_bytes(t.detach().to("cpu", tdtype)))
        f.flush()
        os.fsync(f.fileno())


# ---------------------------------------------------------------- decoders (same names and math as core/model)
FAMILIES = ("qwen2", "qwen3", "llama")


def head_dim(c):
    """The per-head width: config head_dim (Qwen3, some Llamas), else hidden_size / num_attention_heads."""
    return int(c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"])


def check_family(c):
    """Refuse a config this worker does not implement, naming the field and its value (hf-load.ts checks the same first)."""
    mt = c.get("model_type", "qwen2")
    if mt not in FAMILIES:
        raise ValueError("config model_type=%r is not supported (supported: %s)" % (mt, ", ".join(FAMILIES)))
    if c.get("hidden_act", "silu") != "silu":
        raise ValueError("config hidden_act=%r is not supported (only silu)" % (c.get("hidden_act"),))
    if c.get("mlp_bias"):
        raise ValueError("config mlp_bias=%r is not supported (MLP projections without bias only)" % (c.get("mlp_bias"),))
    rs = c.get("rope_scaling")
    if rs:
        kind = rs.get("rope_type", rs.get("type"))
        if kind not in ("default", "llama3") or (kind == "llama3" and mt != "llama"):
            raise ValueError("config rope_scaling.rope_type=%r is not supported for model_type %r (supported: llama3 on llama)" % (kind, mt))


def rope_inv_freq(c, hd):
    """RoPE inverse frequencies [hd / 2] (float64): theta^(-2i/hd), Llama 3's frequency-dependent scaling when
    rope_scaling says llama3 (transformers' _compute_llama3_parameters)."""
    inv = 1.0 / (float(c.get("rope_theta", 10000.0)) ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
    rs = c.get("rope_scaling") or {}
    if rs.get("rope_type", rs.get("type")) == "llama3":
        factor, low, high = float(rs["factor"]), float(rs["low_freq_factor"]), float(rs["high_freq_factor"])
        old = float(rs["original_max_position_embeddings"])
        low_wavelen, high_wavelen = old / low, old / high
        wavelen = 2 * math.pi / inv
        scaled = torch.where(wavelen > low_wavelen, inv / factor, inv)
        smooth = (old / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = (wavelen >= high_wavelen) & (wavelen <= low_wavelen)
        inv = torch.where(medium, smoothed, scaled)
    return inv


def param_specs(c):
    D, I, V = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    hd = head_dim(c)
    q, kv = c["num_attention_heads"] * hd, c["num_key_value_heads"] * hd
    specs = [("model.embed_tokens.weight", [V, D])]
    for i in range(c["num_hidden_layers"]):
        p = "model.layers.%d." % i
        specs += [(p + "input_layernorm.weight", [D]), (p + "self_attn.q_proj.weight", [q, D]),
                  (p + "self_attn.k_proj.weight", [kv, D]), (p + "self_attn.v_proj.weight", [kv, D])]
        if c.get("attention_bias", True):
            specs += [(p + "self_attn.q_proj.bias", [q]), (p + "self_attn.k_proj.bias", [kv]), (p + "self_attn.v_proj.bias", [kv])]
        if c.get("model_type") == "qwen3":
            specs += [(p + "self_attn.q_norm.weight", [hd]), (p + "self_attn.k_norm.weight", [hd])]
        specs += [(p + "self_attn.o_proj.weight", [D, q]), (p + "post_attention_layernorm.weight", [D]),
                  (p + "mlp.gate_proj.weight", [I, D]), (p + "mlp.up_proj.weight", [I, D]), (p + "mlp.down_proj.weight", [D, I])]
    specs.append(("model.norm.weight", [D]))
    if not c.get("tie_word_embeddings", True):
        specs.append(("lm_head.weight", [V, D]))
    if c.get("value_head", False):
        specs += [("value_head.weight", [1, D]), ("value_head.bias", [1])]
    return specs


LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
_LORA_MODULE = re.compile(r"\.(q_proj|k_proj|v_proj|o_proj|gate_proj|up_proj|down_proj)\.weight$")


def lora_stem(base):
    """PEFT key stem of a base weight (core/model/lora-config.ts loraStem)."""
    return "base_model.model." + (base[:-len(".weight")] if base.endswith(".weight") else base)


def lora_problems(rank, alpha, targets):
    """What is wrong with LoRA settings (core/model/lora-config.ts loraConfigProblems); empty = usable."""
    out = []
    if not isinstance(rank, int) or isinstance(rank, bool) or rank < 1:
        out.append("lora.rank: expected a positive integer, got %r" % (rank,))
    if not isinstance(alpha, (int, float)) or isinstance(alpha, bool) or not alpha > 0:
        out.append("lora.alpha: expected a positive number, got %r" % (alpha,))
    if not isinstance(targets, list) or not targets or any(t not in LORA_TARGETS for t in targets) or len(set(targets)) != len(targets):
        out.append("lora.targetModules: expected a non-empty subset of %s (each once), got %r" % (", ".join(LORA_TARGETS), targets))
    return out


def rms_norm(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat([-x[..., h:], x[..., :h]], dim=-1)


def positions_from_segments(seg):
    """Position ids that restart at each new segment (0/1 masks included), as CausalLM.positionsFromSegments."""
    B, T = seg.shape
    start = torch.ones_like(seg, dtype=torch.bool)
    start[:, 1:] = seg[:, 1:] != seg[:, :-1]
    idx = torch.arange(T, device=seg.device).expand(B, T)
    first = torch.where(start, idx, torch.zeros_like(idx))
    first = torch.cummax(first, dim=1).values
    pos = idx - first
    return torch.where(seg != 0, pos, torch.zeros_like(pos))


# Generation across turns: with cache keys (one per row, e.g. an episode's id), each row's K/V of its prompt and reply are kept
# for its next call, whose prompt usually starts with them (the history): only the new tokens are computed. Up to this many MB
# (0: off; a request's cacheMb, which the engine sends from SPA_TORCH_PREFIX_CACHE_MB, wins). Dropped for the keys not in a
# call, by a call without keys, and by every op that may change the weights.
PREFIX_CACHE_MB = int(os.environ.get("SPA_TORCH_PREFIX_CACHE_MB", "2048") or 0)
# MiB of f32 copies of the frozen bf16 weights a generate call may hold outside autocast (Decoder.hold_f32_copies; 0: off)
GEN_F32_MB = int(os.environ.get("SPA_TORCH_GEN_F32_MB", "1024") or 0)
KEEPS_WEIGHTS = {"generate", "hello", "stats", "forward", "backward", "discard", "set_pieces", "weights", "save", "cpu", "lora_info"}

SHARED_PREFIX_MIN = int(os.environ.get("SPA_TORCH_SHARED_PREFIX", "16") or 0)   # 0: off


def shared_prefix(ids, seg):
    """Tokens at the start that every row shares (same ids, same non-padding segment), when there are 2+ rows and at
    least SHARED_PREFIX_MIN of them, leaving at least one token per row; else 0."""
    B, T = ids.shape
    if B < 2 or SHARED_PREFIX_MIN <= 0 or T <= SHARED_PREFIX_MIN:
        return 0
    same = ((ids == ids[:1]) & (seg == seg[:1]) & (seg != 0)).all(0)        # [T]
    P = int(same.long().cumprod(0).sum())
    P = min(P, T - 1)
    return P if P >= SHARED_PREFIX_MIN else 0


# the least share of a batch's tokens that prefix_families must save (as core/model/torch/runtime.ts prefixFamiliesMin); 0: off
PREFIX_FAMILIES_MIN = float(os.environ.get("SPA_TORCH_PREFIX_FAMILIES", "").strip() or "0.1")


def prefix_families(ids, seg):
    """Rows that start with part of a longer row (an RL episode's turns: each history continues the last one's): a plan to
    compute each shared part once. Rows [B, T] of one segment each, right-padded (seg 1 then 0), else None. Rows are taken
    longest first; a row becomes a tail of the earlier anchor it shares the most leading tokens with (at least
    SHARED_PREFIX_MIN and half the row, leaving it one token of its own: tails stay short, as they are padded to the longest
    tail and attend to their shared part), or an anchor itself. None when the tails' shared tokens are under
    PREFIX_FAMILIES_MIN of the rows' tokens. Returns (anchors [nA] row indexes, tails [nR] row indexes, tail_anchor [nR]
    positions in anchors, shared [nR] tokens)."""
    B, T = ids.shape
    if B < 2 or PREFIX_FAMILIES_MIN <= 0 or SHARED_PREFIX_MIN <= 0:
        return None
    n = (seg != 0).sum(1)                                                                  # [B]
    if bool((seg > 1).any()) or bool((seg < 0).any()) or not torch.equal(seg != 0, torch.arange(T, device=seg.device)[None, :] < n[:, None]):
        return None
    real = seg != 0
    same = (ids[:, None, :] == ids[None, :, :]) & real[:, None, :] & real[None, :, :]       # [B, B, T]
    lcp = same.long().cumprod(2).sum(2).tolist()                                            # [B][B]
    lengths = n.tolist()
    order = sorted(range(B), key=lambda b: (-lengths[b], b))
    anchors, tails, tail_anchor, shared = [], [], [], []
    for b in order:
        best, at = 0, -1
        for k, a in enumerate(anchors):
            if lcp[b][a] > best:
                best, at = lcp[b][a], k
        best = min(best, lengths[b] - 1)
        if at >= 0 and best >= SHARED_PREFIX_MIN and 2 * best >= lengths[b]:
            tails.append(b)
            tail_anchor.append(at)
            shared.append(best)
        else:
            anchors.append(b)
    if not tails or sum(shared) < PREFIX_FAMILIES_MIN * sum(lengths):
        return None
    return anchors, tails, tail_anchor, shared


def has_prefix(seg):
    out = torch.zeros_like(seg, dtype=torch.bool)
    out[:, 1:] = (seg[:, 1:] != 0) & (seg[:, 1:] == seg[:, :-1])
    return out


class _GatheredPast:
    """Per layer, each tail row's keys and values from its anchor (_trunk_families): kept [nA, KV, TA, hd] pairs, gathered by
    `slot` [nR] and cut to the first L positions, [nR, KV, L, hd], when the layer asks for them."""

    def __init__(self, kept, slot, L):
        self.kept, self.slot, self.L = kept, slot, L

    def __getitem__(self, i):
        k, v = self.kept[i]
        return k.index_select(0, self.slot)[:, :, :self.L], v.index_select(0, self.slot)[:, :, :self.L]


class Decoder:
    """Qwen2 / Qwen2.5, Qwen3 (q/k RMSNorm, head_dim) and Llama (Llama 3.x rope scaling, SmolLM2): one decoder, the
    family differences switched by the config."""

    def __init__(self, config, device, autocast):
        self.c = config
        self.device = device
        self.autocast = autocast
        self.trainable = True
        self.w = {}
        self.lora = {}           # base weight name -> (lora_A key, lora_B key)
        self.lora_w = {}         # PEFT key -> adapter tensor
        self.lora_cfg = None     # {"rank", "alpha", "targetModules"} when LoRA is on
        self.lora_scale = 0.0
        self.grad_ckpt = bool(config.get("gradient_checkpointing", False))   # recompute each layer in the backward pass
        self.sdpa = os.environ.get("SPA_TORCH_SDPA", "on") != "off"           # torch >= 2: fused attention
        check_family(config)
        self.H, self.KV, self.hd = config["num_attention_heads"], config["num_key_value_heads"], head_dim(config)
        self.qk_norm = config.get("model_type") == "qwen3"
        hd = self.hd
        inv = rope_inv_freq(config, hd)
        ang = torch.outer(torch.arange(config["max_position_embeddings"], dtype=torch.float64), inv)
        emb = torch.cat([ang, ang], dim=-1)
        self.cos = emb.cos().float().to(device)
        self.sin = emb.sin().float().to(device)

    def params(self):
        return [self.w[n] for n, _ in param_specs(self.c)]

    def names(self):
        """The base weights (model.safetensors), HF order."""
        return [n for n, _ in param_specs(self.c)]

    def adapter_names(self):
        return list(self.lora_w.keys())

    def trainable_names(self):
        """What an optimizer updates (the names of its moments): every base weight, or under LoRA the value head and the adapters
        (CausalLM.trainableNames: base weights in HF order, then A and B per target module)."""
        if self.lora_cfg is None:
            return self.names()
        return [n for n in self.names() if n.startswith("value_head.")] + self.adapter_names()

    def tensor(self, name):
        t = self.w.get(name)
        if t is None:
            t = self.lora_w.get(name)
        if t is None:
            raise KeyError("the model has no weight %s" % name)
        return t

    def linear(self, x, name, bias=None):
        """A projection by base weight name, the adapter added when there is one (CausalLM.proj)."""
        wt = self.w[name]
        if wt.dtype != x.dtype and not self.autocast:
            # frozen bf16 weights (reference model, LoRA base) outside autocast: computed in f32, one layer's weight
            # upcast at a time (torch's CPU bf16 matmul is ~50x slower than f32 on CPUs without bf16 units), or the f32
            # copy a generate call holds (f32_copies: the same values, upcast once per call instead of once per token)
            held = self.f32_copies.get(name) if self.f32_copies is not None else None
            w32 = held if held is not None and held.dtype == x.dtype else wt.to(x.dtype)
            y = F.linear(x, w32, None if bias is None else bias.to(x.dtype))
        else:
            y = F.linear(x, wt, bias)
        ad = self.lora.get(name)
        if ad is not None:
            y = y + F.linear(F.linear(x, self.lora_w[ad[0]]), self.lora_w[ad[1]]) * self.lora_scale   # [.., r] then [.., out]
        return y

    def _ctx(self):
        if self.autocast:
            return torch.autocast(device_type="cuda", dtype=torch.bfloat16)
        return _Null()

    def trunk(self, ids, seg, cache=None, positions=None):
        """ids [B, T] -> hidden [B, T, D]. seg: segment ids of the keys (0 = padding) [B, Tk].
        cache (generation): {"cap": longest key length} plus per-layer K/V buffers [B, KV, cap, hd] written in place.
        Without a cache, a prefix every row shares (the same tokens in the same segment: a template's rules line, a system
        prompt) is computed once, for one row, and the rows' remaining tokens attend to its keys and values: the same
        numbers as computing it in every row (causal attention: a prefix does not see what follows it), and gradients
        through it sum over the rows."""
        if positions is None:
            positions = positions_from_segments(seg)
        plan = prefix_families(ids, seg) if cache is None else None
        if plan is not None:
            return self._trunk_families(ids, seg, positions, plan)
        P = shared_prefix(ids, seg) if cache is None else 0
        if P == 0:
            return self._trunk(ids, seg, cache, positions)
        B, T = ids.shape
        kv = []
        pre = self._trunk(ids[:1, :P], seg[:1, :P], None, positions[:1, :P], keep=kv)          # [1, P, D]
        rest = self._trunk(ids[:, P:], seg, None, positions[:, P:], past=kv)                    # [B, T - P, D]
        return torch.cat([pre.expand(B, P, pre.shape[-1]), rest], dim=1)

    def _trunk_families(self, ids, seg, positions, plan):
        """trunk over prefix_families' plan: the anchor rows whole, keeping each layer's keys and values; then each tail row's
        own tokens only, attending to its anchor's keys and values over the shared part. A tail row's hidden states there are
        its anchor's (causal attention: a prefix does not see what follows it), so the numbers are those of computing every
        row whole, up to the order of floating-point sums; gradients through the shared part sum over the rows using it."""
        anchors, tails, tail_anchor, shared = plan
        B, T = ids.shape
        dev = ids.device
        n = (seg != 0).sum(1).tolist()
        TA = max(n[a] for a in anchors)
        ai = torch.tensor(anchors, device=dev)
        kv = []
        hid_a = self._trunk(ids[ai, :TA], seg[ai, :TA], None, positions[ai, :TA], keep=kv)          # [nA, TA, D]
        L = max(shared)
        own = [n[r] - p for r, p in zip(tails, shared)]
        TT = max(own)
        tail_ids = torch.zeros(len(tails), TT, dtype=ids.dtype, device=dev)
        for k, (r, p) in enumerate(zip(tails, shared)):
            tail_ids[k, :own[k]] = ids[r, p:n[r]]
        p_t = torch.tensor(shared, device=dev)
        ar = torch.arange(max(L, TT), device=dev)
        key_seg = torch.cat([(ar[None, :L] < p_t[:, None]), (ar[None, :TT] < torch.tensor(own, device=dev)[:, None])], 1).long()
        tail_pos = (p_t[:, None] + ar[None, :TT]) * key_seg[:, L:]
        slot = torch.tensor(tail_anchor, device=dev)
        past = _GatheredPast(kv, slot, L)
        hid_t = self._trunk(tail_ids, key_seg, None, tail_pos, past=past)                          # [nR, TT, D]
        # each output position's source row in [anchors' hidden; tails' hidden; zeros]
        D = hid_a.shape[-1]
        zero = hid_a.new_zeros(1, D)
        src = torch.cat([hid_a.reshape(-1, D), hid_t.reshape(-1, D), zero], 0)
        pad = src.shape[0] - 1
        index = torch.full((B, T), pad, dtype=torch.long, device=dev)
        t = torch.arange(T, device=dev)
        for k, a in enumerate(anchors):
            index[a, :n[a]] = k * TA + t[:n[a]]
        base = len(anchors) * TA
        for k, (r, p) in enumerate(zip(tails, shared)):
            index[r, :p] = tail_anchor[k] * TA + t[:p]
            index[r, p:n[r]] = base + k * TT + t[:own[k]]
        return src[index]                                                                         # [B, T, D]

    def _trunk(self, ids, seg, cache, positions, keep=None, past=None):
        """The decoder over ids [B, T] whose keys are seg [B, Tk] (Tk - T earlier keys: a cache's, or `past`: per layer the
        shared prefix's (k, v) [1, KV, P, hd]); keep: a list that receives each layer's (k, v)."""
        c, w = self.c, self.w
        B, T = ids.shape
        cos, sin = self.cos[positions].unsqueeze(1), self.sin[positions].unsqueeze(1)   # [B, 1, T, hd]
        x = F.embedding(ids.long(), w["model.embed_tokens.weight"])
        if x.dtype != torch.float32:
            x = x.float()   # a frozen bf16 embedding: the residual stream stays f32
        Tk = seg.shape[1]
        if T == 1 and cache is not None:
            # one new token per row (generation, one segment per row): it sees every real key before it
            allowed = (seg != 0).view(B, 1, 1, Tk)
        else:
            qseg = seg[:, Tk - T:]
            allowed = torch.ones(T, Tk, dtype=torch.bool, device=ids.device).tril(Tk - T).unsqueeze(0)
            allowed = allowed & (qseg.unsqueeze(2) == seg.unsqueeze(1)) & (seg.unsqueeze(1) != 0)       # [B, T, Tk]
            eye = torch.zeros(T, Tk, dtype=torch.bool, device=ids.device)
            eye[torch.arange(T), torch.arange(Tk - T, Tk)] = True
            allowed = (allowed | (~allowed.any(-1, keepdim=True) & eye.unsqueeze(0))).unsqueeze(1)   # padding queries see themselves
        rep = self.H // self.KV
        if rep > 1:   # GQA without repeating K/V: the rep query heads of a K/V head are folded into its query axis
            allowed = allowed.unsqueeze(2).expand(B, 1, rep, T, Tk).reshape(B, 1, rep * T, Tk)   # [B, 1, rep*T, Tk]
        if not (_SDPA is not None and self.sdpa):
            # without fused attention: an additive mask (0 / -inf), built once for every layer; adding it costs what a
            # masked_fill does, and its backward nothing (a masked_fill's backward is a second masked_fill)
            allowed = torch.zeros(allowed.shape, dtype=torch.float32, device=ids.device).masked_fill_(~allowed, float("-inf"))
        ckpt = self.grad_ckpt and cache is None and torch.is_grad_enabled()
        for i in range(c["num_hidden_layers"]):
            pk, pv = past[i] if past is not None else (None, None)
            if ckpt and keep is None:   # keep only the layer's input; recompute its activations in the backward pass
                x = _checkpoint(self._layer, i, x, cos, sin, allowed, None, Tk, pk, pv)
            else:
                x = self._layer(i, x, cos, sin, allowed, cache, Tk, pk, pv, keep)
        return rms_norm(x, w["model.norm.weight"], c["rms_norm_eps"])

    def _layer(self, i, x, cos, sin, allowed, cache, Tk, past_k=None, past_v=None, keep=None):
        """One decoder block: x [B, T, D] -> [B, T, D]. past_k/past_v: a shared prefix's keys and values [1, KV, P, hd],
        before this block's own; keep: a list that receives this block's (k, v)."""
        c, w = self.c, self.w
        eps = c["rms_norm_eps"]
        B, T, _ = x.shape
        p = "model.layers.%d." % i
        bias_attr = c.get("attention_bias", True)
        h = rms_norm(x, w[p + "input_layernorm.weight"], eps)
        q = self.linear(h, p + "self_attn.q_proj.weight", w[p + "self_attn.q_proj.bias"] if bias_attr else None)
        k = self.linear(h, p + "self_attn.k_proj.weight", w[p + "self_attn.k_proj.bias"] if bias_attr else None)
        v = self.linear(h, p + "self_attn.v_proj.weight", w[p + "self_attn.v_proj.bias"] if bias_attr else None)
        q = q.view(B, T, self.H, self.hd)
        k = k.view(B, T, self.KV, self.hd)
        if self.qk_norm:   # Qwen3: RMSNorm over each head's vector, before RoPE
            q = rms_norm(q, w[p + "self_attn.q_norm.weight"], eps)
            k = rms_norm(k, w[p + "self_attn.k_norm.weight"], eps)
        q, k = q.transpose(1, 2), k.transpose(1, 2)                        # [B, H, T, hd], [B, KV, T, hd]
        v = v.view(B, T, self.KV, self.hd).transpose(1, 2)                  # [B, KV, T, hd]
        q = (q * cos + rotate_half(q) * sin).to(v.dtype)
        k = (k * cos + rotate_half(k) * sin).to(v.dtype)
        if cache is not None:
            buf = cache.get(i)
            if buf is None:   # one buffer per layer for the whole generation: written in place, never re-concatenated
                buf = (torch.zeros(B, self.KV, cache["cap"], self.hd, dtype=v.dtype, device=v.device),
                       torch.zeros(B, self.KV, cache["cap"], self.hd, dtype=v.dtype, device=v.device))
                cache[i] = buf
            buf[0][:, :, Tk - T:Tk] = k
            buf[1][:, :, Tk - T:Tk] = v
            k, v = buf[0][:, :, :Tk], buf[1][:, :, :Tk]
        if keep is not None:
            keep.append((k, v))
        if past_k is not None:   # the shared prefix's keys and values, the same for every row (a view, not a copy per row)
            k = torch.cat([past_k.expand(B, -1, -1, -1), k], dim=2)
            v = torch.cat([past_v.expand(B, -1, -1, -1), v], dim=2)
        rep = self.H // self.KV
        qf = q.reshape(B, self.KV, rep * T, self.hd)                         # [B, KV, rep*T, hd]
        if _SDPA is not None and self.sdpa:
            a = _SDPA(qf, k, v, attn_mask=allowed)
        else:
            # the scale on q (hd wide) rather than on the [rep*T, Tk] scores; `allowed` is the additive mask here
            scores = ((qf * (1.0 / math.sqrt(self.hd))) @ k.transpose(-1, -2)).float() + allowed
            a = torch.softmax(scores, dim=-1).to(v.dtype) @ v                   # [B, KV, rep*T, hd]
        a = a.reshape(B, self.H, T, self.hd).transpose(1, 2).reshape(B, T, self.H * self.hd)
        x = x + self.linear(a, p + "self_attn.o_proj.weight")
        h = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
        return x + self.linear(F.silu(self.linear(h, p + "mlp.gate_proj.weight")) * self.linear(h, p + "mlp.up_proj.weight"),
                               p + "mlp.down_proj.weight")

    head_f32 = None     # an f32 copy of a frozen bf16 head, held for the length of one generate call (hold_f32_copies)
    f32_copies = None   # {weight name: f32 copy} of the frozen bf16 weights, held for the length of one generate call

    def hold_f32_copies(self, budget_mb):
        """Upcast the frozen bf16 weights once, for one generate call, when their f32 copies fit `budget_mb` MiB (4 bytes per
        frozen parameter; SPA_TORCH_GEN_F32_MB, default 1024; 0 = never). Without them every decode step upcasts every
        weight again: on a CPU that traffic is a large part of a decode step of a few rows (SmolLM2-135M with LoRA, 8 rows:
        1.45x faster generation with the copies held, bench/results/torch-gen-f32-copies.json). The values are the upcasts'
        own, so the tokens are the same bit for bit. Returns the bytes held (0: none). Never under autocast (no upcasts)."""
        self.f32_copies, self.head_f32 = None, None
        if self.autocast:
            return 0
        names = [n for n, t in self.w.items() if t.dtype == torch.bfloat16]
        size = sum(self.w[n].numel() for n in names) * 4
        if not names or size > budget_mb * 1024 * 1024:
            return 0
        self.f32_copies = {n: self.w[n].float() for n in names}
        head = "model.embed_tokens.weight" if self.c.get("tie_word_embeddings", True) else "lm_head.weight"
        self.head_f32 = self.f32_copies.get(head)
        return size

    def drop_f32_copies(self):
        self.f32_copies, self.head_f32 = None, None

    def head_weight(self):
        return self.w["model.embed_tokens.weight" if self.c.get("tie_word_embeddings", True) else "lm_head.weight"]

    def compute_head_weight(self):
        """The LM head's weight in the dtype it is computed in: a frozen bf16 head outside autocast is upcast (once per call)."""
        if self.head_f32 is not None:
            return self.head_f32
        wt = self.head_weight()
        return wt.float() if wt.dtype != torch.float32 and not self.autocast else wt

    def lm_head(self, hidden):
        return F.linear(hidden, self.compute_head_weight()).float()

    def value(self, hidden):
        return F.linear(hidden, self.w["value_head.weight"], self.w["value_head.bias"]).float().squeeze(-1)

    def token_outputs(self, ids, seg, want_logits=True, want_values=False, score=None, want_entropy=True):
        """Per-token log-prob and entropy of each token given its prefix, and the prefix's value (0 without a prefix).
        Log-probs and entropies are computed only where `score` [B, T] is set (default: every token with a prefix),
        in chunks of rows of the LM head (never a [tokens, vocab] tensor for all tokens; under autograd each chunk's
        [rows, vocab] logits are recomputed in the backward pass instead of kept); elsewhere they are 0."""
        with self._ctx():
            hidden = self.trunk(ids, seg)
            defined = has_prefix(seg)
            B, T = ids.shape
            out = {}
            if want_logits:
                sel = defined[:, 1:] if score is None else defined[:, 1:] & (score[:, 1:] != 0)
                idx = sel.reshape(-1).nonzero().squeeze(1)                              # scored positions, flat
                hs = hidden[:, :-1].reshape(B * (T - 1), -1).index_select(0, idx)        # [N, D]
                tg = ids[:, 1:].reshape(-1).long().index_select(0, idx)                  # [N]
                wt = self.compute_head_weight()
                rows = head_rows(wt.shape[0])
                lps, ents = [], []
                grad = torch.is_grad_enabled()
                for s0 in range(0, hs.shape[0], rows):
                    args = (hs[s0:s0 + rows], wt, tg[s0:s0 + rows])
                    if grad:
                        lp, ent = _checkpoint(self._head_stats, *args)
                    else:
                        lp, ent = self._head_stats(*args)
                    lps.append(lp)
                    ents.append(ent)
                flat = torch.zeros(B * (T - 1), device=ids.device)
                lp_all = flat.index_put((idx,), torch.cat(lps)) if lps else flat
                ent_all = flat.index_put((idx,), torch.cat(ents)) if ents else flat
                zero = torch.zeros(B, 1, device=ids.device)
                out["logprobs"] = torch.cat([zero, lp_all.view(B, T - 1)], dim=1)
                out["entropies"] = torch.cat([zero, ent_all.view(B, T - 1)], dim=1)
            if want_values:
                val = self.value(hidden[:, :-1])
                out["values"] = torch.cat([torch.zeros(B, 1, device=ids.device), val], dim=1) * defined.float()
            return out

    def _head_stats(self, h, wt, targets):
        """Rows h [n, D] of the final hidden state -> (log-prob of each target [n], entropy of the distribution [n]), f32."""
        with self._ctx():
            logits = F.linear(h, wt).float()   # [n, V]
            logz = torch.logsumexp(logits, dim=-1)
            lp = logits.gather(1, targets.unsqueeze(1)).squeeze(1) - logz
            ent = logz - (torch.softmax(logits, dim=-1) * logits).sum(-1)
            return lp, ent


def head_rows(vocab):
    """Rows of the LM head per chunk: SPA_TORCH_HEAD_CHUNK_MB (default 256) MiB of f32 logits, at least 1."""
    mb = float(os.environ.get("SPA_TORCH_HEAD_CHUNK_MB", "256") or 256)
    return max(1, int(mb * 1024 * 1024 // (4 * vocab)))


_SDPA = getattr(F, "scaled_dot_product_attention", None) if _version_tuple(torch.__version__) >= (2, 0) else None


ADAM_SLICE = 1 << 22   # elements per slice of the AdamW update (its temporaries: 2 x 16 MB)
MOMENT_DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16}   # model.memory.optimizerDtype


def store_bf16_stochastic(dst, src, gen):
    """dst (bf16) = src (f32) rounded stochastically: uniform noise below bf16's last bit, then truncation, so the stored
    moment is unbiased (E[dst] = src) and small updates are not lost to round-to-nearest (AdamW with bf16 state)."""
    bits = src.view(torch.int32)
    noise = torch.randint(0, 1 << 16, bits.shape, dtype=torch.int32, device=gen.device, generator=gen)
    dst.copy_(bits.add(noise.to(bits.device)).bitwise_and_(-65536).view(torch.float32))


def release_memory(device):
    """Give freed memory back between phases: the CUDA caching allocator's blocks, and on Linux glibc's free heap
    pages (malloc_trim), so a worker's RSS after a large step falls back instead of staying at its peak."""
    import gc
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except (OSError, AttributeError):
            pass


def _checkpoint(fn, *args):
    """Activation checkpointing (torch.utils.checkpoint, non-reentrant: works with frozen inputs and LoRA)."""
    import torch.utils.checkpoint as cp
    return cp.checkpoint(fn, *args, use_reentrant=False)


def _inference_mode():
    """torch.inference_mode where it exists (faster than no_grad: no version counters), else no_grad."""
    return torch.inference_mode() if hasattr(torch, "inference_mode") else torch.no_grad()


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


# ---------------------------------------------------------------- sampling (the semantics of core/model/generate.ts sampleToken)
def sample_batch(logits, u, temperature, top_k, top_p):
    """One token per row of logits [B, V] (float32, on the CPU or a CUDA device): greedy at temperature 0,
    else top-k, then the smallest top-p set, then a draw with the row's uniform u [B] (float64, on the
    logits' device, drawn beforehand from the row's own CPU generator). No host sync."""
    if temperature <= 0:
        return torch.argmax(logits, dim=-1)
    B, V = logits.shape
    vals, ids = sorted_descending(logits)                                               # ids None: the CPU's values-only sort
    if 0 < top_k < V:
        vals, ids = vals[:, :top_k], None if ids is None else ids[:, :top_k]
    weights = torch.exp((vals - vals[:, :1]) / temperature).double()                 # [B, K], descending
    if top_p < 1:
        cum = torch.cumsum(weights / weights.sum(-1, keepdim=True), dim=-1)
        before = torch.cat([torch.zeros(B, 1, dtype=cum.dtype, device=cum.device), cum[:, :-1]], dim=1)
        weights = weights * (before < top_p)                                             # keep until the mass reaches p
    cum = torch.cumsum(weights, dim=-1)
    j = (cum < (u * cum[:, -1]).unsqueeze(1)).sum(-1).clamp(max=weights.shape[1] - 1)
    if ids is None:
        return stable_rank_token(logits, vals, j)
    return ids.gather(1, j.unsqueeze(1)).squeeze(1)


def sorted_descending(logits):
    """(values, ids) of a stable descending sort of each row of logits [B, V]; on the CPU (values, None): the values from
    numpy's sort, ~10x faster there than torch 1.13's stable sort of a 49k vocabulary (which took 13% of SmolLM2's decode at 8
    rows), the ids left to stable_rank_token. The values are the same either way: a sorted row is unique (NaN first, as
    torch puts it in a descending sort), so every number sample_batch computes from them is the same bit for bit."""
    if logits.device.type == "cpu" and _np is not None:
        a = _np.sort(logits.detach().numpy(), axis=-1)[:, ::-1]   # ascending with NaN last, reversed: descending, NaN first
        return torch.from_numpy(_np.ascontiguousarray(a)), None
    return torch.sort(logits, dim=-1, descending=True, stable=True)


def stable_rank_token(logits, vals, j):
    """The token at position j [B] of each row's stable descending sort of logits [B, V], given its values vals [B, >= j]:
    the (j - n)-th index, in ascending order, of the entries equal to vals[j], n being the entries greater than it.
    torch.sort(stable=True) keeps equal values in index order; this is its answer. A row with a NaN has NaN weights in
    sample_batch, so its j is 0 and vals[j] NaN: the first NaN, as torch's sort puts NaN first."""
    v = vals.gather(1, j.unsqueeze(1))                                                    # [B, 1]
    ahead = (logits > v).sum(-1)                                                          # [B]
    same = (logits == v) | (torch.isnan(logits) & torch.isnan(v))                         # [B, V]
    nth = torch.cumsum(same.int(), dim=-1)
    return ((nth == (j - ahead + 1).unsqueeze(1)) & same).int().argmax(-1)


def generation_chunk(device_type):
    """Decode steps between two looks at the tokens on the host: SPA_TORCH_GEN_CHUNK, else 1 on the CPU (a look
    costs nothing there) and 8 on an accelerator, where each look drains the queue of kernels. A row that stops
    inside a chunk keeps its tokens up to the stop only; so the tokens and log-probs do not depend on the chunk,
    only the work done after the last row stopped (at most chunk - 1 steps) does."""
    raw = os.environ.get("SPA_TORCH_GEN_CHUNK", "").strip()
    if raw:
        if not raw.isdigit() or not 1 <= int(raw) <= 256:
            raise ValueError("SPA_TORCH_GEN_CHUNK=%s: use a whole number from 1 to 256" % raw)
        return int(raw)
    return 1 if device_type == "cpu" else 8


# ---------------------------------------------------------------- the worker
def _device_choice():
    """SPA_TORCH_DEVICE (cpu | cuda | mps; unset or auto: the first available of cuda, mps, cpu), or a fatal error."""
    want = os.environ.get("SPA_TORCH_DEVICE", "").strip().lower() or "auto"
    mps = getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available()
    have = {"cuda": torch.cuda.is_available(), "mps": mps, "cpu": True}
    if want == "auto":
        return next(d for d in ("cuda", "mps", "cpu") if have[d])
    if want not in have:
        sys.stderr.write("SPA-WORKER-FATAL: SPA_TORCH_DEVICE=%s is not a device (use cpu, cuda, mps or auto)\n" % want)
        sys.exit(3)
    if not have[want]:
        sys.stderr.write("SPA-WORKER-FATAL: SPA_TORCH_DEVICE=%s but torch %s here has no %s device\n" % (want, torch.__version__, want))
        sys.exit(3)
    return want


class Worker:
    def __init__(self, threads):
        torch.set_num_threads(threads)
        choice = _device_choice()
        if choice == "cuda":
            self.device = torch.device("cuda")
            bf16 = getattr(torch.cuda, "is_bf16_supported", lambda: False)()
            self.autocast = bool(bf16) and os.environ.get("SPA_TORCH_AUTOCAST", "bf16") != "off"
            self.device_name = "cuda:0 %s%s" % (torch.cuda.get_device_name(0), " (bf16 autocast, f32 weights)" if self.autocast else " (f32)")
        elif choice == "mps":
            self.device, self.autocast = torch.device("mps"), False
            self.device_name = "mps (Apple GPU, f32)"
        else:
            self.device, self.autocast = torch.device("cpu"), False
            self.device_name = "cpu (%d threads)" % torch.get_num_threads()
        self.model = None
        self.opts = {}           # slot -> {"m": {...}, "v": {...}, "step": int, "wd": float}; "main", plus "value" for a value view
        self.graph = None        # outputs of the last `forward`, kept for `backward`
        self._rounding = None    # the generator of the stochastic rounding of bf16 AdamW moments (made on first use)
        self.prefix_cache = {}   # generation: cache key (an episode) -> its token ids and per-layer K/V, for its next turn
        self.prefix_stats = {"rows": 0, "tokens": 0, "reused": 0}   # over all calls: rows, prompt tokens, tokens reused
        self.prefix_budget_mb = PREFIX_CACHE_MB                           # the current call's budget (its cacheMb)
        self.f32_held = 0        # bytes of f32 weight copies the last generate call held (Decoder.hold_f32_copies)

    def reset(self, h, a):
        """Drop the model and optimizers (the engine keeps this process for its next model)."""
        self.model, self.opts, self.graph, self.pieces = None, {}, None, None
        import gc
        gc.collect()
        if self.device.type == "cuda":
            torch.cuda.empty_cache()
        return {}, {}

    def hello(self, h, a):
        return {"protocol": PROTOCOL_VERSION, "torch": torch.__version__, "python": sys.version.split()[0],
                "device": self.device_name, "threads": torch.get_num_threads()}, {}

    def init(self, h, a):
        """The model from safetensors files and/or arrays. A frozen model (trainable false) with frozenDtype bf16 keeps its
        weights in bf16 (the value head in f32): half the memory of the KL reference; outside autocast each weight is upcast
        to f32 where it is used (torch's CPU bf16 matmul is slow). The weights are not copied once more after reading."""
        config = h["config"]
        model = Decoder(config, self.device, self.autocast)
        trainable = bool(h.get("trainable", True))
        frozen_bf16 = not trainable and h.get("frozenDtype", "f32") == "bf16"
        weights = {}
        for entry in h.get("files", []):
            tensors, _ = read_safetensors(entry["path"], set(n for n, _ in entry["names"]), keep_low=frozen_bf16)
            for canonical, stored in entry["names"]:
                weights[canonical] = tensors.pop(stored)
            del tensors
        for name, t in a.items():
            weights[name] = t.float()
        problems, seen = [], set()
        for name, shape in param_specs(config):
            t = weights.get(name)
            if t is None and name.startswith("value_head.") and h.get("zeroValueHead"):
                t = torch.zeros(shape)
            if t is None:
                problems.append("missing %s" % name)
                continue
            if list(t.shape) != shape:
                problems.append("%s: expected shape %s, got %s" % (name, shape, list(t.shape)))
                continue
            want = torch.bfloat16 if frozen_bf16 and not name.startswith("value_head.") else torch.float32
            weights.pop(name, None)
            t = t.to(self.device, want)
            if t.numel() and t.data_ptr() in seen:
                t = t.clone()   # one buffer under two names: each weight owns its memory
            seen.add(t.data_ptr())
            model.w[name] = t.requires_grad_(trainable and t.dtype == torch.float32)
        if problems:
            raise ValueError("weights do not match the config: " + "; ".join(problems[:10]))
        if frozen_bf16:
            sys.stderr.write("torch worker: frozen model weights kept in bf16 (%s)\n" % (
                "computed in bf16 under autocast" if self.autocast else "upcast to f32 per layer where used"))
        model.trainable = trainable
        model.grad_ckpt = bool(h.get("gradientCheckpointing", model.grad_ckpt))
        self.model, self.opts, self.graph = model, {}, None
        return {"parameters": sum(t.numel() for t in model.params())}, {}

    def enable_lora(self, h, a):
        """Freeze the base (the value head stays trainable) and add adapters to the target modules (CausalLM.enableLora).
        The adapters: the arrays sent (PEFT keys), else those of the safetensors file at `path`, else fresh ones (A uniform
        in +-1/sqrt(in) from a generator seeded with `seed`, B zero). Drops the optimizers (they were over the base)."""
        m = self.model
        if m is None:
            raise ValueError("enable_lora before init")
        if m.lora_cfg is not None:
            raise ValueError("LoRA is already enabled on this model")
        rank, alpha, targets = h.get("rank"), h.get("alpha"), h.get("targetModules")
        problems = lora_problems(rank, alpha, targets)
        if problems:
            raise ValueError("; ".join(problems))
        given = {}
        if h.get("path"):
            given, _ = read_safetensors(h["path"])
        for name, t in a.items():
            given[name] = t.float()
        where = h.get("path") or "the adapters sent"
        gen = torch.Generator()
        gen.manual_seed(int(h.get("seed", 0)) * 7919 + 1)
        lora, lora_w, problems = {}, {}, []
        for name in m.names():
            hit = _LORA_MODULE.search(name)
            if not hit or hit.group(1) not in targets:
                continue
            out_dim, in_dim = list(m.w[name].shape)
            stem = lora_stem(name)
            a_name, b_name = stem + ".lora_A.weight", stem + ".lora_B.weight"
            if given:
                for key, shape in ((a_name, [rank, in_dim]), (b_name, [out_dim, rank])):
                    t = given.get(key)
                    if t is None:
                        problems.append("missing tensor %s" % key)
                    elif list(t.shape) != shape:
                        problems.append("tensor %s has shape %s, expected %s" % (key, list(t.shape), shape))
                    else:
                        lora_w[key] = t
            else:
                bound = 1.0 / math.sqrt(in_dim)
                lora_w[a_name] = (torch.rand(rank, in_dim, generator=gen, dtype=torch.float32) * 2 - 1) * bound
                lora_w[b_name] = torch.zeros(out_dim, rank)
            lora[name] = (a_name, b_name)
        if problems:
            raise ValueError("%s: %s" % (where, "; ".join(problems[:10])))
        bf16_base = h.get("frozenDtype", "f32") == "bf16"
        for name in list(m.w):
            if bf16_base and not name.startswith("value_head.") and m.w[name].dtype == torch.float32:
                m.w[name] = m.w[name].detach().to(torch.bfloat16)   # the frozen base in bf16: half its memory
            m.w[name].requires_grad_(m.trainable and name.startswith("value_head."))
        if bf16_base:
            release_memory(self.device)
        m.lora_w = {k: t.to(self.device).clone().requires_grad_(m.trainable) for k, t in lora_w.items()}
        m.lora, m.lora_scale = lora, float(alpha) / rank
        m.lora_cfg = {"rank": rank, "alpha": alpha, "targetModules": list(targets)}
        self.opts, self.graph = {}, None
        return self.lora_info(h, a)[0], {}

    def lora_info(self, h, a):
        """The LoRA settings (null without), and how many values an optimizer updates of how many."""
        m = self.model
        trainable = sum(m.tensor(n).numel() for n in m.trainable_names()) if m.trainable else 0
        return {"lora": m.lora_cfg, "trainable": trainable, "parameters": sum(t.numel() for t in m.params())}, {}

    def _seg(self, a):
        return a["mask"].to(self.device).long()

    def stats(self, h, a):
        """No-grad log-probs, entropies (and values): on the tokens `score` [B, T] marks when sent (0 elsewhere), else on every
        token with a prefix."""
        ids = a["ids"].to(self.device)
        score = a["score"].to(self.device) if "score" in a else None
        with _inference_mode():
            out = self.model.token_outputs(ids, self._seg(a), True, bool(h.get("values")), score=score)
        release_memory(self.device)   # the pass's freed activations go back before the next phase
        return {}, out

    def forward(self, h, a):
        ids = a["ids"].to(self.device)
        score = a["score"].to(self.device) if "score" in a else None   # the loss positions: log-probs only there
        self.graph = self.model.token_outputs(ids, self._seg(a), bool(h.get("logits", True)), bool(h.get("values")), score=score)
        return {}, {k: v.detach() for k, v in self.graph.items()}

    def backward(self, h, a):
        if self.graph is None:
            raise ValueError("backward without a forward")
        outs, grads = [], []
        for name, t in self.graph.items():
            if name in a:
                outs.append(t)
                grads.append(a[name].to(self.device).reshape(t.shape))
        self.graph = None
        if outs:
            torch.autograd.backward(outs, grads)
        return {}, {}

    def discard(self, h, a):
        self.graph = None
        for n in self.model.trainable_names():
            self.model.tensor(n).grad = None
        return {}, {}

    def _ensure_opt(self, wd, slot="main", moment_dtype=None):
        """The slot's AdamW state; moments in f32, or bf16 (model.memory.optimizerDtype: half the bytes, updated in f32
        slices and stored back with stochastic rounding). A dtype different from the slot's converts its moments."""
        dtype = MOMENT_DTYPES[moment_dtype] if moment_dtype is not None else None
        if slot not in self.opts:
            m = self.model
            names = m.trainable_names()
            dtype = dtype or torch.float32
            self.opts[slot] = {"m": {n: torch.zeros_like(m.tensor(n), dtype=dtype) for n in names},
                               "v": {n: torch.zeros_like(m.tensor(n), dtype=dtype) for n in names}, "step": 0, "wd": wd, "dtype": dtype}
        opt = self.opts[slot]
        if dtype is not None and dtype != opt["dtype"]:
            for key in ("m", "v"):
                opt[key] = {n: t.to(dtype) for n, t in opt[key].items()}
            opt["dtype"] = dtype
        return opt

    @property
    def rounding(self):
        """On the device where its generators exist (CUDA, CPU); elsewhere (MPS) the noise is drawn on the CPU."""
        if self._rounding is None:
            try:
                self._rounding = torch.Generator(device=self.device)
            except RuntimeError:
                self._rounding = torch.Generator()
            self._rounding.manual_seed(0)
        return self._rounding

    def optimizer(self, h, a):
        self._ensure_opt(float(h.get("weightDecay", 0.01)), h.get("slot", "main"), h.get("momentDtype"))["wd"] = float(h.get("weightDecay", 0.01))
        return {}, {}

    def drop_optimizer(self, h, a):
        self.opts.pop(h.get("slot", "main"), None)
        return {}, {}

    def load_optimizer(self, h, a):
        tensors, meta = read_safetensors(h["path"])
        opt = self._ensure_opt(float(h.get("weightDecay", 0.01)), h.get("slot", "main"), h.get("momentDtype"))
        problems = []
        for n in self.model.trainable_names():
            for slot, key in (("m", n + ".exp_avg"), ("v", n + ".exp_avg_sq")):
                t = tensors.get(key)
                if t is None or list(t.shape) != list(self.model.tensor(n).shape):
                    problems.append("missing or misshapen %s" % key)
                    continue
                opt[slot][n] = t.to(self.device, opt["dtype"])
        if problems:
            raise ValueError("optimizer state does not match the parameters: " + "; ".join(problems[:10]))
        opt["step"] = int(meta.get("step", h.get("step", 0)))
        return {"step": opt["step"]}, {}

    def apply(self, h, a):
        """Gradients summed over chunks (each already times its token weight) / total weight, clipped, AdamW
        (core/model/optim.ts). A weight the loss did not reach has no gradient and is left alone, moments included."""
        opt = self._ensure_opt(float(h.get("weightDecay", 0.01)), h.get("slot", "main"))
        opt["wd"] = float(h.get("weightDecay", opt["wd"]))
        total = float(h["totalWeight"])
        grads = {}
        for n in self.model.trainable_names():   # in place: no second (or third) copy of the gradients
            p = self.model.tensor(n)
            if p.grad is not None:
                grads[n] = p.grad.div_(total)
            p.grad = None
        names = list(grads.keys())
        acc = torch.float32 if self.device.type == "mps" else torch.float64   # MPS has no float64
        # per-tensor f32 norms, summed in float64: one device sync, and no float64 copy of a whole tensor
        norm = math.sqrt(float((torch.stack([torch.linalg.vector_norm(g).to(acc) for g in grads.values()]) ** 2).sum())) if grads else 0.0
        if not math.isfinite(norm):
            raise ValueError("the gradient norm is %s (not finite): the step was not applied; check the learning rate and the batch" % norm)
        max_norm = float(h.get("maxGradNorm", 1.0))
        if max_norm > 0 and norm > max_norm:
            scale = max_norm / (norm + 1e-6)
            for g in grads.values():
                g.mul_(scale)
        lr = float(h["lr"])
        b1, b2, eps = float(h.get("beta1", 0.9)), float(h.get("beta2", 0.95)), float(h.get("eps", 1e-8))
        opt["step"] += 1
        t = opt["step"]
        bc1, bc2 = 1 - b1 ** t, 1 - b2 ** t
        step_size, sqrt_bc2 = lr / bc1, math.sqrt(bc2)
        decay = 1 - lr * opt["wd"]
        low = opt["dtype"] != torch.float32
        if low:   # the rounding noise is a function of the slot and its step, so a resumed run draws the same (exact resume)
            self.rounding.manual_seed(2 * t + (1 if h.get("slot", "main") == "value" else 0))
        with torch.no_grad():
            for n in names:
                g, p = grads.pop(n), self.model.tensor(n)   # each gradient is freed once its weight is updated
                pf, gf, mf, vf = p.view(-1), g.reshape(-1), opt["m"][n].view(-1), opt["v"][n].view(-1)
                for s0 in range(0, pf.numel(), ADAM_SLICE):   # in slices: the update's temporary is 16 MB, not a whole embedding
                    sl = slice(s0, s0 + ADAM_SLICE)
                    gs = gf[sl]
                    # bf16 moments: this slice's moments in f32 for the update, then stored back rounded stochastically
                    m = (mf[sl].float() if low else mf[sl]).mul_(b1).add_(gs, alpha=1 - b1)
                    v = (vf[sl].float() if low else vf[sl]).mul_(b2).addcmul_(gs, gs, value=1 - b2)
                    denom = v.sqrt().div_(sqrt_bc2).add_(eps)
                    if p.dim() >= 2 and opt["wd"] > 0:
                        pf[sl].mul_(decay)
                    pf[sl].sub_(m.div(denom).mul_(step_size))
                    if low:
                        store_bf16_stochastic(mf[sl], m, self.rounding)
                        store_bf16_stochastic(vf[sl], v, self.rounding)
                del g
        release_memory(self.device)   # the step's freed activations and gradients go back (RSS / the CUDA cache falls between phases)
        return {"gradNorm": norm, "step": t}, {}

    def generate(self, h, a):
        """Batched sampling with a KV cache; left-padded prompts; stops on stop ids, stop strings (piece table) or length.
        The rows are prefilled and decoded in chunks of `rowChunk` rows (default: all): each row draws from its own
        generator, so the tokens do not depend on the chunking; only the memory does (prefill activations and the
        K/V cache are those of one chunk). Outside autocast the frozen bf16 weights are upcast once for the call when their f32
        copies fit `f32CopiesMb` (default SPA_TORCH_GEN_F32_MB, 1024 MiB): +4 bytes per frozen parameter for the call's
        length, the same tokens (Decoder.hold_f32_copies)."""
        lengths = h["lengths"]
        flat = a["prompts"].tolist()
        prompts, o = [], 0
        for n in lengths:
            prompts.append(flat[o:o + n])
            o += n
        B = len(prompts)
        R = int(h.get("rowChunk") or B)
        if R < 1:
            raise ValueError("generate: rowChunk must be a positive number of rows, got %r" % (h.get("rowChunk"),))
        self.prefix_budget_mb = int(h.get("cacheMb", PREFIX_CACHE_MB))
        keys = h.get("cacheKeys") if self.prefix_budget_mb > 0 else None
        if keys is None:
            self.prefix_cache.clear()
        else:
            if len(keys) != B or not all(isinstance(k, str) for k in keys):
                raise ValueError("generate: cacheKeys must hold one string per prompt (%d), got %r" % (B, keys if len(keys) < 5 else len(keys)))
            live = set(keys)
            for k in [k for k in self.prefix_cache if k not in live]:   # an episode that is not in this call has ended
                del self.prefix_cache[k]
        tokens, logprobs = [], []
        self.f32_held = self.model.hold_f32_copies(int(h.get("f32CopiesMb", GEN_F32_MB)))
        try:
            for r0 in range(0, B, R):
                t, l = self._generate_rows(h, prompts[r0:r0 + R], r0, None if keys is None else keys[r0:r0 + R])
                tokens += t
                logprobs += l
                release_memory(self.device)
        finally:
            self.model.drop_f32_copies()
            release_memory(self.device)
        out_len = [len(t) for t in tokens]
        flat_tokens = [x for t in tokens for x in t]
        flat_lp = [x for t in logprobs for x in t]
        return {"lengths": out_len}, {"tokens": torch.tensor(flat_tokens, dtype=torch.int32),
                                      "logprobs": torch.tensor(flat_lp, dtype=torch.float32)}

    def _prefill_from_cache(self, ids, seg, positions, prompts, keys, cap):
        """The batched prefill, reusing each row's cached K/V (its key's entry) over the longest common prefix of the cached
        token ids and its prompt. The rows' prompts are left-padded to P columns; with S the longest uncached tail of a row,
        only the last S columns are computed (one batched pass, attending to the cached columns before them): a row whose
        cache covers more than its first P - S columns recomputes the rest of them. With no cache (a first turn) S = P: the
        plain prefill. Returns the last column's hidden state [B, 1, D] and the generation cache. The same numbers as the
        plain prefill up to float rounding (causal attention: a token's K/V do not depend on what follows it)."""
        m = self.model
        B, P = ids.shape
        reuse = []
        for p, key in zip(prompts, keys):
            entry, L = self.prefix_cache.get(key), 0
            if entry is not None:
                ids0, n = entry["ids"], min(len(entry["ids"]), len(p) - 1)   # the last prompt token is always computed: it starts the reply
                while L < n and ids0[L] == p[L]:
                    L += 1
            reuse.append((entry, L))
        S = max(len(p) - L for p, (_, L) in zip(prompts, reuse))
        cache = {"cap": cap}
        used = [max(0, len(p) - S) if entry is not None else 0 for p, (entry, _) in zip(prompts, reuse)]
        self.prefix_stats["rows"] += B
        self.prefix_stats["tokens"] += sum(len(p) for p in prompts)
        self.prefix_stats["reused"] += sum(used)
        if any(used):
            like = next(e for e, _ in reuse if e is not None)["k"][0]
            for i in range(m.c["num_hidden_layers"]):
                cache[i] = (torch.zeros(B, like.shape[1], cap, like.shape[3], dtype=like.dtype, device=self.device),
                            torch.zeros(B, like.shape[1], cap, like.shape[3], dtype=like.dtype, device=self.device))
            for b, (p, (entry, _)) in enumerate(zip(prompts, reuse)):
                r, o = used[b], P - len(p)
                if r == 0:
                    continue
                for i in range(m.c["num_hidden_layers"]):
                    cache[i][0][b, :, o:o + r] = entry["k"][i][0, :, :r]
                    cache[i][1][b, :, o:o + r] = entry["v"][i][0, :, :r]
        hidden = m.trunk(ids[:, P - S:], seg, cache=cache, positions=positions[:, P - S:])
        return hidden[:, -1:], cache

    def _store_prefix(self, prompts, keys, tokens, cache):
        """Each row's K/V of its prompt and of the reply tokens fed back (all but the last), under its key, within the budget."""
        P = max(len(p) for p in prompts)
        L_layers = self.model.c["num_hidden_layers"]
        budget = self.prefix_budget_mb * 2 ** 20
        for key in keys:
            self.prefix_cache.pop(key, None)
        held = self.prefix_bytes()
        for b, (p, key) in enumerate(zip(prompts, keys)):
            fed = tokens[b][:-1]
            o, end = P - len(p), P + len(fed)
            ks = [cache[i][0][b, :, o:end].unsqueeze(0).clone() for i in range(L_layers)]
            vs = [cache[i][1][b, :, o:end].unsqueeze(0).clone() for i in range(L_layers)]
            size = sum(t.numel() * t.element_size() for t in ks + vs)
            if held + size > budget:
                continue
            held += size
            self.prefix_cache[key] = {"ids": list(p) + list(fed), "k": ks, "v": vs, "bytes": size}

    def before_op(self, op):
        """Cached generation K/V belong to the weights they were computed with: any op that may change them empties the cache."""
        if op not in KEEPS_WEIGHTS:
            self.prefix_cache.clear()

    def prefix_bytes(self):
        return sum(e["bytes"] for e in self.prefix_cache.values())

    def _generate_rows(self, h, prompts, row0, keys=None):
        B, P = len(prompts), max(len(p) for p in prompts)
        pad = int(h["padTokenId"])
        steps = int(h["maxNewTokens"])
        temperature, top_k, top_p = float(h["temperature"]), int(h["topK"]), float(h["topP"])
        stop_ids = set(h.get("stopTokenIds", []))
        stops = [s for s in h.get("stop", []) if s]
        pieces = self.pieces
        window = max([len(s) for s in stops] + [0]) + 8
        ids = torch.tensor([[pad] * (P - len(p)) + p for p in prompts], dtype=torch.long, device=self.device)
        seg = torch.tensor([[0] * (P - len(p)) + [1] * len(p) for p in prompts], dtype=torch.long, device=self.device)
        gens = []
        for b in range(B):
            g = torch.Generator()
            g.manual_seed(int(h["seed"]) * 1000003 + int(h.get("rowSeedOffset", 0)) + row0 + b)
            gens.append(g)
        tokens = [[] for _ in range(B)]
        logprobs = [[] for _ in range(B)]
        texts = ["" for _ in range(B)]
        done = [False] * B
        cache = {"cap": P + steps}   # K/V buffers of the prompt plus every new token, allocated once
        prefilled = None
        positions = positions_from_segments(seg)
        if keys is not None:
            with _inference_mode(), self.model._ctx():
                prefilled, cache = self._prefill_from_cache(ids, seg, positions, prompts, keys, P + steps)
        next_pos = positions[:, -1] + 1
        cur_ids, cur_pos = ids, positions
        chunk = generation_chunk(self.device.type)
        # sampling on CUDA (float64 there too); MPS has no float64 and samples on the CPU
        sample_dev = self.device if self.device.type in ("cpu", "cuda") else torch.device("cpu")
        alive = torch.ones(B, 1, dtype=torch.long, device=self.device)
        step = 0
        with _inference_mode(), self.model._ctx():
            while step < steps and not all(done):
                n = min(chunk, steps - step)
                # each row's uniforms for the chunk from its own generator: the same numbers as one draw per step
                u = None
                if temperature > 0:
                    u = torch.stack([torch.rand(n, generator=g, dtype=torch.float64) for g in gens], dim=1).to(sample_dev)
                picks, lps = [], []
                for i in range(n):
                    if step + i > 0:
                        # rows are independent: a finished row keeps feeding its own tokens, which only its own
                        # (discarded) outputs see
                        seg = torch.cat([seg, alive], dim=1)
                        cur_pos = next_pos.unsqueeze(1)
                        next_pos = next_pos + 1
                    if step + i == 0 and prefilled is not None:
                        hidden = prefilled
                    else:
                        hidden = self.model.trunk(cur_ids, seg, cache=cache, positions=cur_pos)
                    logits = self.model.lm_head(hidden[:, -1]).float()
                    del hidden
                    if logits.device != sample_dev:
                        logits = logits.to(sample_dev)
                    picked = sample_batch(logits, None if u is None else u[i], temperature, top_k, top_p)
                    picks.append(picked)
                    lps.append(torch.log_softmax(logits, dim=-1).gather(1, picked.unsqueeze(1)).squeeze(1))
                    cur_ids = picked.to(self.device).unsqueeze(1)
                # one look at the host per chunk: token ids are exact in float64
                both = torch.stack([torch.stack(picks).double(), torch.stack(lps).double()]).cpu().tolist()
                for i in range(n):
                    for b in range(B):
                        if done[b]:
                            continue
                        tok = int(both[0][i][b])
                        tokens[b].append(tok)
                        logprobs[b].append(both[1][i][b])
                        if tok in stop_ids:
                            done[b] = True
                            continue
                        if stops and pieces is not None:
                            texts[b] = (texts[b] + (pieces[tok] if tok < len(pieces) else ""))[-window * 4:]
                            if any(s in texts[b][-window * 2:] for s in stops):
                                done[b] = True
                step += n
            if keys is not None:
                self._store_prefix(prompts, keys, tokens, cache)
        return tokens, logprobs

    pieces = None

    def set_pieces(self, h, a):
        self.pieces = h["pieces"]
        return {}, {}

    def weights(self, h, a):
        """Named weights (default: the base weights, then the adapters under LoRA)."""
        names = h.get("names") or (self.model.names() + self.model.adapter_names())
        return {}, {n: self.model.tensor(n) for n in names}

    def save(self, h, a):
        """model.safetensors (the base weights); under LoRA adapter_model.safetensors at `adapters` (PEFT keys, as
        core/model/checkpoint.ts writes them); the main optimizer's moments by trainable name, with its step; and at
        `valueOptimizer` the 'value' slot's (a shared-trunk value view), when that slot exists."""
        m = self.model
        opt = self.opts.get("main")
        moments = bool(h.get("optimizer")) and opt is not None
        # with the moments (a resume point) the weights stay f32, so a resume continues from exactly these numbers
        dtype = "f32" if moments else h.get("dtype", "f32")
        write_safetensors(h["weights"], {n: m.w[n] for n in m.names()}, {"format": "pt"}, dtype)
        out = {"optimizerStep": None, "lora": m.lora_cfg, "dtype": dtype}
        if m.lora_cfg is not None:
            if not h.get("adapters"):
                raise ValueError("save: the model has LoRA adapters but no `adapters` path was given")
            write_safetensors(h["adapters"], {n: m.lora_w[n] for n in m.adapter_names()}, {"format": "pt"})
        if moments:
            state = {}
            for n in m.trainable_names():
                state[n + ".exp_avg"] = opt["m"][n]
                state[n + ".exp_avg_sq"] = opt["v"][n]
            low = opt["dtype"] == torch.bfloat16   # bf16 moments are written as they are kept (half the file)
            write_safetensors(h["optimizer"], state, {"format": "pt", "step": opt["step"]}, "bf16" if low else "f32")
            out["optimizerStep"] = opt["step"]
            out["momentDtype"] = "bf16" if low else "f32"
        value = self.opts.get("value")
        if moments and h.get("valueOptimizer") and value is not None:
            state = {}
            for n in m.trainable_names():
                state[n + ".exp_avg"] = value["m"][n]
                state[n + ".exp_avg_sq"] = value["v"][n]
            vlow = value["dtype"] == torch.bfloat16
            write_safetensors(h["valueOptimizer"], state, {"format": "pt", "step": value["step"]}, "bf16" if vlow else "f32")
            out["valueOptimizerStep"] = value["step"]
        return out, {}

    def cpu(self, h, a):     # benchmarks: this process's CPU seconds
        return {"seconds": time.process_time()}, {}


def main():
    global _out, _in
    _out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)                          # anything printed (torch warnings, user code) goes to stderr
    sys.stdout = sys.stderr
    _in = os.fdopen(os.dup(0), "rb")
    worker = Worker(THREADS)
    while True:
        try:
            header, arrays = read_frame()
        except FrameError as e:
            sys.stderr.write("SPA-WORKER-FATAL: %s\n" % e)
            sys.exit(4)
        if header is None:
            return
        rid = header.get("id")
        op = header.get("op")
        if op == "shutdown":
            write_frame({"id": rid, "ok": True})
            return
        fn = getattr(worker, op, None) if isinstance(op, str) and not op.startswith("_") else None
        worker.before_op(op)
        try:
            if fn is None:
                raise ValueError("unknown op %r" % op)
            reply, out = fn(header, arrays)
            reply = dict(reply)
            reply.update({"id": rid, "ok": True})
            write_frame(reply, out)
        except Exception as e:  # noqa: BLE001 - every failure goes back to the engine with its reason
            worker.graph = None
            write_frame({"id": rid, "ok": False, "error": "%s: %s" % (type(e).__name__, e), "trace": traceback.format_exc()[-2000:]})


if __name__ == "__main__":
    main()


Qwen2 = Decoder   # the name tests and benches used before other families loaded

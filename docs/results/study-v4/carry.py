#!/usr/bin/env python3
"""Carry a stopped study cell (a project folder) through git, so a fresh machine resumes it (study v4 amendment 2026-12-01).

    carry.py pack   SRC DEST --base MODEL_DIR [--max-mb 40]   # SRC project folder -> DEST carry folder (replaced)
    carry.py unpack SRC DEST --base MODEL_DIR                 # SRC carry folder -> DEST project folder (must not exist)
    carry.py verify SRC --base MODEL_DIR                      # SRC carry folder: every file's sha256, every rebuild

What is left out: under LoRA every checkpoint's `model.safetensors` is the frozen base (docs/checkpoints.md), 538 MB in F32
for SmolLM2-135M. `pack` replaces such a file by `model.safetensors.carried.json` (its header bytes, size and sha256) only
when the file can be rebuilt byte for byte from MODEL_DIR/model.safetensors (the imported base): the same header, and each
tensor's data the base's tensor by name in the header's dtype (F32 as is, or rounded to BF16 round-to-nearest-even, or
F32 of the BF16-rounded value: a BF16-held frozen base). Anything else (a trained value head, another base) is copied as
it is, and `pack` fails when the carry would exceed --max-mb. `unpack` rebuilds each file and checks its sha256 and every
other file's against CARRY.json; it fails, leaving nothing at DEST, on any mismatch (e.g. another imported base).
`engine.pid.json` is not carried; `pack` refuses a folder whose engine is alive (stop the run first: a resume point is
written by the stop, docs/checkpoints.md). Needs numpy. Errors: exit 2 with one line on stderr.
"""
import argparse
import hashlib
import json
import mmap
import os
import shutil
import struct
import sys
import time

import numpy as np

STUB = ".carried.json"
SKIP = {"engine.pid.json"}
DT = {"F32": (np.float32, 4), "BF16": (np.uint16, 2), "F16": (np.float16, 2)}


class CarryError(Exception):
    pass


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 22), b""):
            h.update(chunk)
    return h.hexdigest()


def read_header(path):
    """(header bytes incl. the 8-byte length, parsed JSON) of a .safetensors file."""
    with open(path, "rb") as f:
        raw = f.read(8)
        if len(raw) != 8:
            raise CarryError("%s: not a safetensors file (shorter than 8 bytes)" % path)
        n = struct.unpack("<Q", raw)[0]
        if n > 100 << 20:
            raise CarryError("%s: not a safetensors file (header of %d bytes)" % (path, n))
        body = f.read(n)
    try:
        return raw + body, json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CarryError("%s: unreadable safetensors header (%s)" % (path, e)) from e


class Base:
    """The imported base's tensors by name (memory-mapped; F32 / BF16 / F16 read as float32)."""

    def __init__(self, model_dir):
        self.path = os.path.join(model_dir, "model.safetensors")
        if not os.path.isfile(self.path):
            raise CarryError("no base model at %s (the imported model the cell was trained from)" % self.path)
        hb, self.header = read_header(self.path)
        self.start = len(hb)
        self._f = open(self.path, "rb")
        self.mm = mmap.mmap(self._f.fileno(), 0, access=mmap.ACCESS_READ)
        self._sha = None

    def sha256(self):
        if self._sha is None:
            self._sha = sha256_file(self.path)
        return self._sha

    def f32(self, name):
        e = self.header.get(name)
        if e is None or name == "__metadata__":
            return None
        a, b = e["data_offsets"]
        if e["dtype"] not in DT:
            return None
        raw = np.frombuffer(self.mm, dtype=np.uint8, count=b - a, offset=self.start + a)
        if e["dtype"] == "F32":
            return raw.view(np.float32)
        if e["dtype"] == "BF16":
            return (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
        return raw.view(np.float16).astype(np.float32)


def to_bf16(x):
    """float32 -> bfloat16 bits as the torch worker writes them (torch's own conversion when torch is here; else round to
    nearest even, NaN -> 0x7FC0, which is torch's for every finite value; the sha256 check catches any other difference)."""
    try:
        import torch
        return torch.from_numpy(np.array(x, dtype=np.float32)).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    except ImportError:
        pass
    u = x.view(np.uint32)
    out = ((u + (((u >> 16) & 1) + 0x7FFF)) >> 16).astype(np.uint16)
    out[np.isnan(x)] = 0x7FC0
    return out


def rebuild(header_bytes, header, base, via, sink):
    """Feed the bytes of the file the header describes, built from the base, to sink(bytes). False when the base lacks a
    tensor or its shape or dtype cannot give it."""
    sink(header_bytes)
    entries = sorted(((k, v) for k, v in header.items() if k != "__metadata__"), key=lambda kv: kv[1]["data_offsets"][0])
    pos = 0
    for name, e in entries:
        a, b = e["data_offsets"]
        if a != pos or e["dtype"] not in ("F32", "BF16"):
            return False
        x = base.f32(name)
        if x is None or x.size != int(np.prod(e["shape"], dtype=np.int64)):
            return False
        if via == "bf16":
            x = (to_bf16(x).astype(np.uint32) << 16).view(np.float32)
        data = x.astype(np.float32, copy=False).tobytes() if e["dtype"] == "F32" else to_bf16(np.ascontiguousarray(x)).tobytes()
        if len(data) != b - a:
            return False
        sink(data)
        pos = b
    return True


def try_stub(path, base):
    """The stub for a checkpoint's model.safetensors when the base rebuilds it byte for byte, else None."""
    hb, header = read_header(path)
    want, size = sha256_file(path), os.path.getsize(path)
    for via in ("f32", "bf16"):
        h = hashlib.sha256()
        n = [0]

        def sink(b, h=h, n=n):
            h.update(b)
            n[0] += len(b)
        if rebuild(hb, header, base, via, sink) and n[0] == size and h.hexdigest() == want:
            return {"sha256": want, "size": size, "via": via, "base_sha256": base.sha256(), "header": hb[8:].decode("utf-8")}
    return None


def engine_alive(folder):
    for root, _dirs, files in os.walk(folder):
        if "engine.pid.json" in files:
            try:
                pid = int(json.load(open(os.path.join(root, "engine.pid.json")))["pid"])
                os.kill(pid, 0)
                return os.path.join(root, "engine.pid.json")
            except (OSError, ValueError, KeyError, TypeError, json.JSONDecodeError):
                continue
    return None


def pack(src, dest, model_dir, max_mb):
    if not os.path.isdir(src):
        raise CarryError("no project folder %s" % src)
    alive = engine_alive(src)
    if alive:
        raise CarryError("%s: its engine is alive (%s): stop the run first (spa-workbench stop), then pack" % (src, alive))
    base = Base(model_dir)
    tmp = dest.rstrip("/") + ".packing"
    shutil.rmtree(tmp, ignore_errors=True)
    files, total, dropped = {}, 0, 0
    for root, dirs, names in os.walk(src):
        dirs.sort()
        for name in sorted(names):
            if name in SKIP:
                continue
            p = os.path.join(root, name)
            rel = os.path.relpath(p, src)
            out = os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(out), exist_ok=True)
            if name == "model.safetensors" and os.path.isfile(os.path.join(root, "adapter_model.safetensors")):
                stub = try_stub(p, base)
                if stub is not None:
                    with open(out + STUB, "w") as f:
                        json.dump(stub, f)
                    files[rel + STUB] = sha256_file(out + STUB)
                    dropped += stub["size"]
                    continue
            shutil.copy2(p, out)
            files[rel] = sha256_file(out)
            total += os.path.getsize(out)
            if total > max_mb * 1e6:
                shutil.rmtree(tmp, ignore_errors=True)
                raise CarryError("the carry of %s exceeds %d MB at %s (%.1f MB): not carried" % (src, max_mb, rel, total / 1e6))
    manifest = {"packed": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "base_sha256": base.sha256(), "files": files}
    with open(os.path.join(tmp, "CARRY.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
    shutil.rmtree(dest, ignore_errors=True)
    os.rename(tmp, dest)
    print("packed %s -> %s: %d files, %.1f MB carried, %.1f MB of base copies left out (rebuilt on unpack)"
          % (src, dest, len(files), total / 1e6, dropped / 1e6))


def check(src, base, out_dir=None):
    """Verify a carry folder; with out_dir, also write the project there (files and rebuilt base copies)."""
    mpath = os.path.join(src, "CARRY.json")
    if not os.path.isfile(mpath):
        raise CarryError("%s is not a carry folder (no CARRY.json)" % src)
    manifest = json.load(open(mpath))
    if manifest["base_sha256"] != base.sha256():
        raise CarryError("the base %s (sha256 %s) is not the one the cell was packed with (%s)"
                         % (base.path, base.sha256(), manifest["base_sha256"]))
    for rel, want in sorted(manifest["files"].items()):
        p = os.path.join(src, rel)
        if not os.path.isfile(p) or sha256_file(p) != want:
            raise CarryError("%s: missing or changed since it was packed (sha256 differs from CARRY.json)" % p)
        if rel.endswith(STUB):
            stub = json.load(open(p))
            hb = stub["header"].encode("utf-8")
            hb = struct.pack("<Q", len(hb)) + hb
            h = hashlib.sha256()
            target = os.path.join(out_dir, rel[:-len(STUB)]) if out_dir else None
            f = None
            if target:
                os.makedirs(os.path.dirname(target), exist_ok=True)
                f = open(target, "wb")

            def sink(b, f=f):
                h.update(b)
                if f:
                    f.write(b)
            ok = rebuild(hb, json.loads(stub["header"]), base, stub["via"], sink)
            if f:
                f.close()
            if not ok or h.hexdigest() != stub["sha256"]:
                raise CarryError("%s: the base does not rebuild it (sha256 differs)" % rel[:-len(STUB)])
        elif out_dir:
            target = os.path.join(out_dir, rel)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(p, target)
    return manifest


def unpack(src, dest, model_dir):
    if os.path.exists(dest):
        raise CarryError("%s exists: a local cell is preferred to its carry (move it away to unpack)" % dest)
    tmp = dest.rstrip("/") + ".unpacking"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        m = check(src, Base(model_dir), tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    os.rename(tmp, dest)
    print("unpacked %s -> %s: %d files (packed %s), every sha256 checked" % (src, dest, len(m["files"]), m["packed"]))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("op", choices=["pack", "unpack", "verify"])
    ap.add_argument("src")
    ap.add_argument("dest", nargs="?")
    ap.add_argument("--base", required=True, help="the imported model folder the cell was trained from")
    ap.add_argument("--max-mb", type=float, default=40)
    a = ap.parse_args(argv)
    try:
        if a.op != "verify" and not a.dest:
            raise CarryError("%s needs SRC and DEST" % a.op)
        if a.op == "pack":
            pack(a.src, a.dest, a.base, a.max_mb)
        elif a.op == "unpack":
            unpack(a.src, a.dest, a.base)
        else:
            m = check(a.src, Base(a.base))
            print("verified %s: %d files" % (a.src, len(m["files"])))
    except (CarryError, OSError) as e:
        sys.stderr.write("carry: %s\n" % e)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

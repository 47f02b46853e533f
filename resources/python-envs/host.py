"""Host of one Python environment file for the workbench (core/envs/python-env.ts starts it).

An environment is a Python class with Gymnasium's API on text:

    reset(seed=None, options=None) -> (observation: str, info: dict)
    step(action: str)              -> (observation: str, reward: float, terminated: bool, truncated: bool, info: dict)

plus class attributes that declare it to the workbench (docs/envs.md lists them): id, title, docs, options, rules,
instruction, budget, requires; and optional methods admissible_commands() (the legal actions of the current state; default:
the class attribute `actions`), oracle() (a plan from the current state, or None), state_text() (default: the observation),
and a static parse_state(text) (a model's state text in canonical form, or None when it does not parse).

Usage:
    python host.py --list DIR_OR_FILE ...   print the env files found (JSON on stdout) without importing them
    python host.py FILE                     serve FILE's env over stdin/stdout

Protocol (one request at a time, both directions): frame = b"SPAE" + u32 little-endian length + UTF-8 JSON.
Requests {"op": ...}; replies {"ok": true, ...} or {"ok": false, "error": {"type", "message", "traceback"}}.
  describe                        the declaration (JSON)
  create  {options}               -> {handle}             a new env instance with these (already validated) options
  reset   {handle, seed, options} -> {observation, info, legal, text}
  step    {handle, action}        -> {observation, reward, terminated, truncated, info, legal, text}
  oracle  {handle}                -> {actions: [str] | null}
  parse   {text}                  -> {text: str | null}   the class's parse_state(text): a state text in canonical form
  close   {handle}
The env's own prints go to stderr (stdout carries only frames). An exception inside the env is a reply with its traceback; the
process stays up. Only the standard library is used here.
"""
import ast
import faulthandler
import importlib.util
import inspect
import json
import os
import signal
import struct
import sys
import traceback

MAGIC = b"SPAE"
DECLARED = ("id", "title", "docs", "options", "actions", "rules", "instruction", "legend", "budget", "requires", "timeout")


def find_env_files(paths):
    """Env files under the given dirs/files: a .py file with a class that has reset and step methods and a string `id`."""
    found = []
    for path in paths:
        if os.path.isdir(path):
            files = sorted(os.path.join(path, f) for f in os.listdir(path) if f.endswith(".py") and not f.startswith("_"))
        elif os.path.isfile(path):
            files = [path]
        else:
            continue
        for file in files:
            try:
                with open(file, encoding="utf-8") as fh:
                    tree = ast.parse(fh.read(), file)
            except (OSError, SyntaxError, ValueError) as exc:
                found.append({"file": os.path.abspath(file), "id": os.path.splitext(os.path.basename(file))[0],
                              "error": f"{type(exc).__name__}: {exc}"})
                continue
            for node in tree.body:
                if not isinstance(node, ast.ClassDef):
                    continue
                methods = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
                env_id = title = None
                requires = []
                for n in node.body:
                    if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) \
                            and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str):
                        if n.targets[0].id == "id":
                            env_id = n.value.value
                        elif n.targets[0].id == "title":
                            title = n.value.value
                    if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) \
                            and n.targets[0].id == "requires" and isinstance(n.value, (ast.List, ast.Tuple)):
                        requires = [e.value for e in n.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
                if {"reset", "step"} <= methods and env_id:
                    found.append({"file": os.path.abspath(file), "id": env_id, "title": title or env_id, "cls": node.name,
                                  "requires": requires})
    return found


def load_env_class(file):
    spec = importlib.util.spec_from_file_location("spa_env_" + os.path.splitext(os.path.basename(file))[0], file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    classes = [c for _, c in inspect.getmembers(module, inspect.isclass)
               if c.__module__ == module.__name__ and callable(getattr(c, "reset", None)) and callable(getattr(c, "step", None))
               and isinstance(getattr(c, "id", None), str)]
    if len(classes) != 1:
        raise RuntimeError(f"{file}: expected exactly one env class (with reset, step and a string id), found {[c.__name__ for c in classes]}")
    return classes[0]


def describe(cls):
    out = {}
    for key in DECLARED:
        value = getattr(cls, key, None)
        if key == "rules" and callable(value):
            out["rulesIsMethod"] = True
            value = None
        if value is not None:
            out[key] = value
    out["hasOracle"] = callable(getattr(cls, "oracle", None))
    out["hasAdmissible"] = callable(getattr(cls, "admissible_commands", None))
    out["hasParser"] = callable(getattr(cls, "parse_state", None))
    if not isinstance(out.get("docs"), dict):
        doc = inspect.getdoc(cls) or ""
        out["docs"] = {"summary": doc.split("\n\n")[0] if doc else out.get("title", cls.__name__)}
    return out


class Instance:
    def __init__(self, cls, options):
        self.cls = cls
        self.options = options
        self.env = cls(**options)
        self.last = ""

    def renew(self, cls):
        """A new episode of an edited file: the instance is rebuilt from the reloaded class (same options)."""
        if cls is not self.cls:
            self.cls = cls
            self.env = cls(**self.options)

    def legal(self):
        if callable(getattr(self.env, "admissible_commands", None)):
            return [str(a) for a in self.env.admissible_commands()]
        return [str(a) for a in (getattr(self.env, "actions", None) or [])]

    def text(self):
        if callable(getattr(self.env, "state_text", None)):
            return str(self.env.state_text())
        return self.last

    def rules(self):
        r = getattr(self.env, "rules", None)
        return str(r()) if callable(r) else (str(r) if r is not None else None)


def plain(value):
    """JSON-safe copy of an info dict (numpy scalars and other objects become numbers or strings)."""
    try:
        return json.loads(json.dumps(value, default=lambda o: o.item() if hasattr(o, "item") else str(o)))
    except (TypeError, ValueError):
        return str(value)


def serve(file):
    if hasattr(signal, "SIGUSR1"):   # the workbench asks for the stack of a hung call before it kills the process
        faulthandler.register(signal.SIGUSR1, file=sys.stderr, all_threads=False)
    out = sys.stdout.buffer
    sys.stdout = sys.stderr          # the env's prints must not corrupt the frames
    inp = sys.stdin.buffer
    loaded = {"stamp": None, "cls": None, "error": None}

    def current_class():
        """The env class, reloaded when the file changed since it was loaded (a fixed file is picked up at the next create or reset)."""
        try:
            st = os.stat(file)
            stamp = (st.st_mtime_ns, st.st_size)
        except OSError:
            stamp = None
        if stamp != loaded["stamp"]:
            loaded["stamp"] = stamp
            try:
                loaded["cls"], loaded["error"] = load_env_class(file), None
            except BaseException:    # reported with its traceback
                loaded["cls"], loaded["error"] = None, traceback.format_exc()
        if loaded["error"] is not None:
            raise RuntimeError(f"loading {file} failed:\n{loaded['error']}")
        return loaded["cls"]

    instances = {}
    counter = 0

    def send(obj):
        data = json.dumps(obj).encode("utf-8")
        out.write(MAGIC + struct.pack("<I", len(data)) + data)
        out.flush()

    while True:
        head = inp.read(8)
        if len(head) < 8:
            return
        if head[:4] != MAGIC:
            sys.stderr.write(f"host.py: malformed frame (magic {head[:4]!r})\n")
            return
        body = inp.read(struct.unpack("<I", head[4:])[0])
        request = json.loads(body.decode("utf-8"))
        op = request.get("op")
        try:
            if op == "describe":
                reply = {"declaration": describe(current_class())}
            elif op == "create":
                counter += 1
                instances[counter] = Instance(current_class(), request.get("options") or {})
                reply = {"handle": counter}
            elif op == "parse":
                fn = getattr(current_class(), "parse_state", None)
                value = fn(request["text"]) if callable(fn) else request["text"]
                reply = {"text": None if value is None else str(value)}
            elif op == "close":
                instances.pop(request["handle"], None)
                reply = {}
            else:
                inst = instances[request["handle"]]
                if op == "reset":
                    inst.renew(current_class())
                    obs, info = inst.env.reset(seed=request.get("seed"), options=request.get("options"))
                    inst.last = str(obs)
                    reply = {"observation": inst.last, "info": plain(info or {}), "legal": inst.legal(), "text": inst.text(),
                             "rules": inst.rules()}
                elif op == "step":
                    obs, reward, terminated, truncated, info = inst.env.step(request["action"])
                    inst.last = str(obs)
                    reply = {"observation": inst.last, "reward": float(reward), "terminated": bool(terminated),
                             "truncated": bool(truncated), "info": plain(info or {}), "legal": inst.legal(), "text": inst.text()}
                elif op == "oracle":
                    plan = inst.env.oracle() if callable(getattr(inst.env, "oracle", None)) else None
                    reply = {"actions": None if plan is None else [str(a) for a in plan]}
                else:
                    raise ValueError(f"unknown op {op!r}")
            reply["ok"] = True
        except BaseException as exc:  # noqa: BLE001 - every env failure goes back with its traceback
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            reply = {"ok": False, "error": {"type": type(exc).__name__, "message": str(exc), "traceback": traceback.format_exc()}}
        send(reply)


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "--list":
        print(json.dumps(find_env_files(sys.argv[2:])))
    elif len(sys.argv) == 2:
        serve(sys.argv[1])
    else:
        sys.stderr.write(__doc__)
        sys.exit(2)

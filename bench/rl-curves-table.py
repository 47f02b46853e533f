#!/usr/bin/env python3
"""Collect and tabulate the RL learning curves of bench/rl-curves.sh (issue 34 item 3).

--collect RUN_DIR --curve a --seed 0 --tag T --out FILE.json
    reads a finished product run: the tracked Pass@1 on held-out puzzles (eval/rl-step-*.json, every passAtKEvery steps,
    with the episodes trained so far), the final evaluation (eval/final.json) with chance and oracle on the same puzzles,
    the training rollouts' success per step, and the run's settings; writes one JSON result.
FILE.json [FILE.json ...]
    prints a markdown table: per curve and tag, Pass@1 at each tracked step (mean and per seed), chance, oracle, target.
"""
import argparse
import glob
import json
import os

TARGETS = {"a": ("abs", 0.80, ">= 80% within 2,000 episodes"), "b": ("chance+", 0.25, ">= chance + 25 points"),
           "c": ("chance+", 0.15, ">= chance + 15 points")}


def collect(run, curve, seed, tag):
    config = json.load(open(os.path.join(run, "run.json")))["config"]
    rl = config["stages"]["rl"]
    per_step = rl["groups"] * rl["groupSize"]
    tracked = []
    for path in sorted(glob.glob(os.path.join(run, "eval", "rl-step-*.json"))):
        d = json.load(open(path))
        tracked.append({"step": d["step"], "episodes": d["step"] * per_step, "passAt1": d["passAtK"]["1"]["mean"],
                        "low": d["passAtK"]["1"]["low"], "high": d["passAtK"]["1"]["high"]})
    final = json.load(open(os.path.join(run, "eval", "final.json")))
    ref = {r["kind"]: r["passAt"]["1"] for r in final.get("reference", [])}
    rollouts = []
    for path in sorted(glob.glob(os.path.join(run, "rollouts", "rl-*.jsonl"))):
        eps = [json.loads(l) for l in open(path) if l.strip()]
        rollouts.append({"step": int(os.path.basename(path)[3:9]), "success": sum(e["success"] for e in eps) / max(1, len(eps))})
    return {
        "curve": curve, "seed": seed, "tag": tag, "run": os.path.basename(run.rstrip("/")),
        "settings": {"env": config["env"], "rl": {k: rl[k] for k in ("algorithm", "lr", "groups", "groupSize", "updatesPerStep",
                                                                      "miniBatchSize", "steps", "lossAggregation", "advantage")},
                     "backend": config.get("backend"), "template": config["template"]},
        "episodesPerStep": per_step, "tracked": tracked, "rolloutSuccess": rollouts,
        "final": {"passAt1": final["passAtK"]["1"], "formatErrorRate": final.get("formatErrorRate"), "puzzles": final.get("puzzles")},
        "chance": ref.get("chance"), "oracle": ref.get("oracle"),
    }


def table(files):
    rows = [json.load(open(f)) for f in files]
    groups = {}
    for r in rows:
        groups.setdefault((r["curve"], r["tag"]), []).append(r)
    for (curve, tag), rs in sorted(groups.items()):
        rs.sort(key=lambda r: r["seed"])
        kind, value, text = TARGETS[curve]
        chance = rs[0]["chance"]
        target = value if kind == "abs" else chance + value
        print(f"\n### curve {curve}, {tag}: target {text} (= {target:.2f}); chance {chance:.3f}, oracle {rs[0]['oracle']:.3f}\n")
        steps = sorted({t["step"] for r in rs for t in r["tracked"]})
        print("| step | episodes | Pass@1 mean | per seed | meets target |")
        print("|---|---|---|---|---|")
        for s in steps:
            vals = [next((t["passAt1"] for t in r["tracked"] if t["step"] == s), None) for r in rs]
            got = [v for v in vals if v is not None]
            mean = sum(got) / len(got)
            eps = s * rs[0]["episodesPerStep"]
            print(f"| {s} | {eps} | {mean:.3f} | {' / '.join('%.3f' % v if v is not None else '-' for v in vals)} | "
                  f"{'yes' if mean >= target else 'no'} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--collect")
    ap.add_argument("--curve")
    ap.add_argument("--seed", type=int)
    ap.add_argument("--tag")
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.collect:
        result = collect(a.collect, a.curve, a.seed, a.tag)
        with open(a.out, "w") as f:
            json.dump(result, f, indent=1)
        print(json.dumps({k: result[k] for k in ("curve", "seed", "tag", "chance", "oracle")}), result["final"]["passAt1"])
    else:
        table(a.files)


if __name__ == "__main__":
    main()

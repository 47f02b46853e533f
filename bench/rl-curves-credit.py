#!/usr/bin/env python3
"""Where the policy gradient of an RL step lands: the decision token's share (issue 34 item 2).

Reads the RL rollouts a product run wrote (runs/<id>/rollouts/rl-*.jsonl; each trained turn carries the per-token
log-probabilities and the advantages the update used, core/train/token-stats.ts) and, per step, measures on the loss's
own terms:

  g_t = |A_t| * w_t * (1 - p_t)      the size of d loss / d z_t[a_t], the sampled token's logit, for token t of the step
                                     (the clipped surrogate at ratio 1: d(-A r)/dz = -A (1 - p); w_t = the aggregation
                                     weight of rl.lossAggregation, 1 for token-mean, 1/n_episode tokens for
                                     seq-mean-token-mean, both up to the step's common factor)
  decision share = sum of g_t over the decision tokens (the plan's and the answer's action token) / sum over all trained tokens

The decision tokens are the first character of the first action word the reply writes (the compact formats write
"I will try <Action>." before anything else that names an action) and the first character of the action in <answer>
(what runs: it usually copies the plan, but a malformed reply of the base may not). Near-certain tokens
(p ~ 1) get g ~ 0 whatever their advantage, so the share says how much of the update is about the choice of the move
and how much about the other uncertain tokens (the world-model prediction, format tokens).

Also per step: the mean |A| at the decision tokens, and the agreement between the sign of the decision token's
advantage and whether the move was a shortest-path move toward the goal (0.5 = no information about the move).

Usage: python3 bench/rl-curves-credit.py RUN_DIR [RUN_DIR ...] [--aggregation token-mean|seq-mean-token-mean ...]
       --out FILE.json writes the per-step rows. Pure Python, no torch.
"""
import argparse
import glob
import json
import os
from collections import deque

ACTIONS = ("Left", "Down", "Right", "Up")
MOVES = {"Left": (0, -1), "Down": (1, 0), "Right": (0, 1), "Up": (-1, 0)}


def first_action(text, start=0):
    """Character offset of the first action word in text[start:], or None."""
    found = [k for k in (text.find(a, start) for a in ACTIONS) if k >= 0]
    return min(found) if found else None


def decision_indexes(tokens):
    """The action-choosing tokens: the first token of the plan's first action word and of the answer's action word."""
    text = ""
    starts = []
    for tok in tokens:
        starts.append(len(text))
        text += tok
    offsets = []
    plan = first_action(text)
    if plan is not None:
        offsets.append(plan)
    answer_at = text.find("<answer>")
    if answer_at >= 0:
        k = first_action(text, answer_at)
        if k is not None and k not in offsets:
            offsets.append(k)
    out = []
    for off in offsets:
        i = max(j for j in range(len(tokens)) if starts[j] <= off)
        if i not in out:
            out.append(i)
    return out


def shortest_moves(cells):
    """The moves that start a shortest path from the player to the goal (BFS over non-hole cells)."""
    rows, cols = len(cells), len(cells[0])
    start = goal = None
    for r in range(rows):
        for c in range(cols):
            if cells[r][c] == "player":
                start = (r, c)
            if cells[r][c] == "goal":
                goal = (r, c)
    if start is None or goal is None:
        return set()
    dist = {goal: 0}
    queue = deque([goal])
    while queue:
        r, c = queue.popleft()
        for dr, dc in MOVES.values():
            n = (r + dr, c + dc)
            if 0 <= n[0] < rows and 0 <= n[1] < cols and n not in dist and cells[n[0]][n[1]] != "hole":
                dist[n] = dist[(r, c)] + 1
                queue.append(n)
    if start not in dist:
        return set()
    out = set()
    for a, (dr, dc) in MOVES.items():
        n = (start[0] + dr, start[1] + dc)
        if n in dist and dist[n] == dist[start] - 1:
            out.add(a)
    return out


def step_row(path, aggregation):
    decision = total = 0.0
    abs_adv = []
    agree = []
    turns_seen = 0
    for line in open(path):
        line = line.strip()
        if not line:
            continue
        episode = json.loads(line)
        trained = [t for t in episode["turns"] if t.get("tokenStats") and t["tokenStats"].get("advantages")]
        n_tokens = sum(len(t["tokenStats"]["advantages"]) for t in trained)
        if n_tokens == 0:
            continue
        w = 1.0 if aggregation == "token-mean" else 1.0 / n_tokens
        for t in trained:
            s = t["tokenStats"]
            turns_seen += 1
            g = [abs(a) * w * (1 - min(1.0, pow(2.718281828459045, lp))) for a, lp in zip(s["advantages"], s["logprobs"])]
            total += sum(g)
            ks = decision_indexes(s["tokens"])
            if not ks:
                continue
            decision += sum(g[k] for k in ks)
            k = ks[-1]   # the executed move is the answer's (the plan's when there is no answer)
            abs_adv.append(abs(s["advantages"][k]))
            act = (t.get("actionsExecuted") or [None])[0]
            good = shortest_moves(t["stateBefore"]["board"]["cells"])
            if act is not None and good and s["advantages"][k] != 0:
                agree.append(1.0 if (act in good) == (s["advantages"][k] > 0) else 0.0)
    return {
        "turns": turns_seen,
        "decisionShare": decision / total if total > 0 else None,
        "decisionAbsAdvantage": sum(abs_adv) / len(abs_adv) if abs_adv else None,
        "signAgreesWithMove": sum(agree) / len(agree) if agree else None,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--aggregation", default=None, help="override the run's rl.lossAggregation")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    rows = []
    for run in args.runs:
        config = json.load(open(os.path.join(run, "run.json")))["config"]
        rl = config["stages"]["rl"]
        aggregation = args.aggregation or rl.get("lossAggregation", "token-mean")
        for path in sorted(glob.glob(os.path.join(run, "rollouts", "rl-*.jsonl"))):
            step = int(os.path.basename(path)[3:9])
            row = {"run": os.path.basename(run.rstrip("/")), "advantage": rl.get("advantage"), "aggregation": aggregation,
                   "maskStateSpans": rl.get("maskStateSpans", False), "template": config["template"].get("preset"), "step": step, **step_row(path, aggregation)}
            rows.append(row)
            print(json.dumps(row))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()

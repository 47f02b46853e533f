"""Per-RL-step diagnostics read from a run's rollouts (issue 23 item 4; docs/results/rl-learns): decision-token entropy,
action marginal, share of moves toward the goal / into a hole / into a wall, groups whose episodes all got the same reward,
|advantage| at the decision token. For the compact plain format (`<think>I will try A.</think>...`).

  python3 bench/rl-rollout-diagnostics.py RUN_DIR        # RUN_DIR = <project>/runs/<id>/
"""
import json, sys, glob, math, collections, os
run = sys.argv[1]
def pos(cells, kind):
    for r, row in enumerate(cells):
        for c, v in enumerate(row):
            if v == kind: return r, c
    return None
D = {'Left': (0, -1), 'Right': (0, 1), 'Up': (-1, 0), 'Down': (1, 0)}
print('step | eps | success | groups all-same | fmt err | act-token entropy | P(action) L/D/R/U | toward-G rate | into-hole rate | wall rate | adv@action |')
for f in sorted(glob.glob(os.path.join(run, 'rollouts/rl-*.jsonl'))):
    eps = [json.loads(l) for l in open(f)]
    step = eps[0]['step']
    groups = collections.defaultdict(list)
    for e in eps: groups[e['group']].append(e['totalReward'])
    same = sum(1 for g in groups.values() if max(g) - min(g) < 1e-9)
    n = fmt = 0; ent = []; acts = collections.Counter(); toward = hole = wall = moves = 0; advs = []
    for e in eps:
        for t in e['turns']:
            n += 1
            if t['flags']['formatError']: fmt += 1; continue
            a = (t['parsed']['actions'] or [None])[0]
            if a not in D: continue
            acts[a] += 1
            cells = t['stateBefore']['board']['cells']
            p = pos(cells, 'player'); g = pos(cells, 'goal')
            if p is None or g is None: continue
            moves += 1
            dr, dc = D[a]; q = (p[0] + dr, p[1] + dc)
            if not (0 <= q[0] < 4 and 0 <= q[1] < 4): wall += 1; continue
            if cells[q[0]][q[1]] == 'hole': hole += 1
            if abs(q[0] - g[0]) + abs(q[1] - g[1]) < abs(p[0] - g[0]) + abs(p[1] - g[1]): toward += 1
            ts = t.get('tokenStats')
            if ts:
                toks = ts['tokens']
                # decision token: first token after "try "
                for i in range(len(toks) - 1):
                    if toks[i] == ' ' and ''.join(toks[max(0, i - 3):i]) == 'try':
                        ent.append(ts['entropies'][i + 1]);
                        if ts.get('advantages'): advs.append(abs(ts['advantages'][i + 1]))
                        break
    tot = sum(acts.values()) or 1
    m = lambda x: sum(x) / len(x) if x else float('nan')
    print(f"{step} | {len(eps)} | {m([e['success'] for e in eps]):.3f} | {same}/{len(groups)} | {fmt/n:.3f} | {m(ent):.3f} | "
          f"{'/'.join(f'{acts[k]/tot:.2f}' for k in ('Left','Down','Right','Up'))} | {toward/max(1,moves):.3f} | {hole/max(1,moves):.3f} | {wall/max(1,moves):.3f} | {m(advs):.2f} |")

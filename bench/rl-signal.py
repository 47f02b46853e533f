"""How much does the episode-level RL advantage say about each decision? (issue 23 item 4, docs/results/rl-learns)

Uniform-policy episodes on the deterministic 4x4 lake (generated as core/envs/frozen-lake.ts: p 0.8, random start and goal,
solvable; 10 one-action turns), 8 episodes per puzzle, 4 puzzles per step (the standard size's RL step). The advantage of
decision t of an episode with n decisions is gamma^(n-1-t) * success minus a baseline: the mean over its puzzle group
(GRPO's) or over the step's 4 groups (PPO whose critic has learned nothing, whitened over the batch). A decision is "good"
when it lowers the shortest-path distance to G. Prints the standardised gap d = (mean advantage of good decisions - mean of
the others) / std of all advantages: the per-decision signal-to-noise of the RL label (a supervised label would separate
them perfectly).

  python3 bench/rl-signal.py [--steps 750] [--seed 1]
"""
import argparse, math, random
from collections import deque

ap = argparse.ArgumentParser()
ap.add_argument('--steps', type=int, default=750)
ap.add_argument('--seed', type=int, default=1)
args = ap.parse_args()
MOVES = [(0, -1), (1, 0), (0, 1), (-1, 0)]

def gen_map(rng):
    while True:
        cells = [['F' if rng.random() < 0.8 else 'H' for _ in range(4)] for _ in range(4)]
        s = rng.randrange(16); g = rng.randrange(15); g += g >= s
        cells[s // 4][s % 4] = 'S'; cells[g // 4][g % 4] = 'G'
        seen, q = {divmod(s, 4)}, deque([divmod(s, 4)])
        while q:
            r, c = q.popleft()
            if cells[r][c] == 'G': return cells, divmod(s, 4)
            for dr, dc in MOVES:
                rr, cc = r + dr, c + dc
                if 0 <= rr < 4 and 0 <= cc < 4 and (rr, cc) not in seen and cells[rr][cc] != 'H': seen.add((rr, cc)); q.append((rr, cc))

def distances(cells):
    g = next((r, c) for r in range(4) for c in range(4) if cells[r][c] == 'G'); d = {g: 0}; q = deque([g])
    while q:
        r, c = q.popleft()
        for dr, dc in MOVES:
            rr, cc = r + dr, c + dc
            if 0 <= rr < 4 and 0 <= cc < 4 and (rr, cc) not in d and cells[rr][cc] != 'H': d[(rr, cc)] = d[(r, c)] + 1; q.append((rr, cc))
    return d

def move(p, a):
    return (min(3, max(0, p[0] + MOVES[a][0])), min(3, max(0, p[1] + MOVES[a][1])))

print('| baseline | gamma | decisions | share good | mean advantage, good | mean advantage, others | std | d |')
print('|---|---|---|---|---|---|---|---|')
for baseline in ('group', 'batch'):
    for gamma in (1.0, 0.8, 0.5):
        rng = random.Random(args.seed)
        good_a, bad_a = [], []
        for _ in range(args.steps):
            step = []   # (distances, episodes) per group; an episode = ([(position, action)], success)
            for _g in range(4):
                cells, start = gen_map(rng); episodes = []
                for _e in range(8):
                    p, decisions, success = start, [], 0
                    for _t in range(10):
                        a = rng.randrange(4); decisions.append((p, a)); p = move(p, a); v = cells[p[0]][p[1]]
                        if v in 'GH': success = int(v == 'G'); break
                    episodes.append((decisions, success))
                step.append((distances(cells), episodes))
            returns = [[[s * gamma ** (len(ds) - 1 - t) for t in range(len(ds))] for ds, s in eps] for _d, eps in step]
            def mean_of(groups):   # gamma 1: the mean episode reward; else the mean return over decisions
                vals = [s for g in groups for _ds, s in step[g][1]] if gamma == 1 else [x for g in groups for r in returns[g] for x in r]
                return sum(vals) / len(vals)
            batch_mean = mean_of(range(4))
            for g, (d, eps) in enumerate(step):
                b = mean_of([g]) if baseline == 'group' else batch_mean
                for (ds, _s), rs in zip(eps, returns[g]):
                    for (p, a), x in zip(ds, rs):
                        q = move(p, a)
                        (good_a if q in d and d[q] < d.get(p, 99) else bad_a).append(x - b)
        allv = good_a + bad_a; mu = sum(allv) / len(allv); sd = math.sqrt(sum((x - mu) ** 2 for x in allv) / len(allv))
        mg, mb = sum(good_a) / len(good_a), sum(bad_a) / len(bad_a)
        print(f'| {baseline} | {gamma} | {len(allv)} | {len(good_a) / len(allv):.3f} | {mg:+.4f} | {mb:+.4f} | {sd:.4f} | {(mg - mb) / sd:.3f} |')

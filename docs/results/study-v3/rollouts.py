#!/usr/bin/env python3
"""What the policies of study v3 do, from the cells' own rollouts (criterion 4's "rollouts read by hand", counted).

For each cell project under WORKDIR/<lake>/<arm>-s<seed>/ (run.sh's layout; the projects are not in git), from the first RL
step's rollouts (the start of RL) and the final eval's (after RL):
- the first turn's action distribution (Up / Down / Left / Right / no legal answer),
- I(first action; goal side) in nats, where the goal side is the larger of the row and column offsets from the player to
  the goal (Up / Down / Left / Right), and the share of first actions toward that side,
- the share of episodes whose first 4 actions alternate between two opposite moves (Up Down Up Down, Left Right ...): a
  back-and-forth that never reaches the goal,
- the eval's format-error rate over turns.
Prints a markdown table. With --show ARM-sSEED N: prints N eval episodes of that cell (sample 0 of the first N puzzles),
each turn's written observation and prediction beside the truth (= exact, x not), for reading by hand.

  python3 docs/results/study-v3/rollouts.py /work/s10/study-v3 fldet > docs/results/study-v3/fldet/rollouts.md
  python3 docs/results/study-v3/rollouts.py /work/s10/study-v3 fldet --show spa-s1 20
"""
import collections
import glob
import json
import math
import os
import sys

MOVES = ['Up', 'Down', 'Left', 'Right']
OPPOSITE = {'Up': 'Down', 'Down': 'Up', 'Left': 'Right', 'Right': 'Left'}
ARMS = ['vanilla-rl', 'state-estimation-rl', 'spa', 'spa-mask-state-spans']


def goal_side(board):
    pr = pc = gr = gc = None
    for r, row in enumerate(board['cells']):
        for c, v in enumerate(row):
            if v == 'player':
                pr, pc = r, c
            elif v == 'goal':
                gr, gc = r, c
    if pr is None or gr is None:
        return None
    dr, dc = gr - pr, gc - pc
    if abs(dr) >= abs(dc) and dr != 0:
        return 'Down' if dr > 0 else 'Up'
    return 'Right' if dc > 0 else 'Left'


def answer(turn):
    a = (turn.get('parsed') or {}).get('answer')
    return a if a in MOVES else 'none'


def stats(path):
    first, joint, sides = collections.Counter(), collections.Counter(), collections.Counter()
    n = osc = turns = fmt = 0
    for line in open(path):
        d = json.loads(line)
        if not d['turns']:
            continue
        n += 1
        a, s = answer(d['turns'][0]), goal_side(d['initialState']['board'])
        first[a] += 1
        joint[(s, a)] += 1
        sides[s] += 1
        seq = [answer(t) for t in d['turns'][:4]]
        if len(seq) == 4 and seq[0] in MOVES and all(seq[i + 1] == OPPOSITE.get(seq[i]) for i in range(3)):
            osc += 1
        turns += len(d['turns'])
        fmt += d.get('formatErrors', 0)
    if n == 0:
        return None
    mi = sum(c / n * math.log((c / n) / ((sides[s] / n) * (first[a] / n))) for (s, a), c in joint.items())
    toward = sum(c for (s, a), c in joint.items() if s == a) / n
    return {'n': n, 'first': {a: first[a] / n for a in MOVES + ['none']}, 'mi': mi, 'toward': toward, 'osc': osc / n,
            'fmt': fmt / max(turns, 1)}


def cells(work, lake):
    for arm in ARMS:
        for seed in range(3):
            runs = sorted(glob.glob(os.path.join(work, lake, f'{arm}-s{seed}', 'runs', '*', 'rollouts')))
            if runs:
                yield arm, seed, runs[0]


def table(work, lake):
    print(f'| arm | seed | when | episodes | first action Up / Down / Left / Right / none | I(first action; goal side), nats '
          f'| first action toward the goal | Up-Down or Left-Right back and forth (first 4 turns) | format errors (turns) |')
    print('|---|---|---|---|---|---|---|---|---|')
    for arm, seed, ro in cells(work, lake):
        for when, f in (('RL step 0', 'rl-000000.jsonl'), ('final eval', 'eval.jsonl')):
            p = os.path.join(ro, f)
            st = stats(p) if os.path.exists(p) else None
            if not st:
                continue
            dist = ' / '.join(f"{st['first'][a]:.2f}" for a in MOVES + ['none'])
            print(f"| {arm} | {seed} | {when} | {st['n']} | {dist} | {st['mi']:.2f} | {st['toward']:.2f} | {st['osc']:.2f} "
                  f"| {st['fmt']:.3f} |")


def show(work, lake, cell, n):
    arm, seed = cell.rsplit('-s', 1)
    ro = sorted(glob.glob(os.path.join(work, lake, f'{arm}-s{seed}', 'runs', '*', 'rollouts')))
    if not ro:
        sys.exit(f'no rollouts for {cell} under {os.path.join(work, lake)}')
    seen = 0
    for line in open(os.path.join(ro[0], 'eval.jsonl')):
        d = json.loads(line)
        if d.get('sample') != 0:
            continue
        seen += 1
        if seen > n:
            break
        print(f"== puzzle {d['seed']} success={d['success']} turns={d['numTurns']} start {d['initialState']['text'].replace(chr(10), '|')}")
        for t in d['turns']:
            p = t.get('parsed') or {}
            truth = t['stateBefore']['text'].replace('\n', '|')
            after = t['stateAfter']['text'].replace('\n', '|') if t.get('stateAfter') else '-'
            obs, pred = (p.get('observation') or '').replace('\n', '|'), (p.get('prediction') or '').replace('\n', '|')
            line = f"   t{t['turn']} {answer(t):5}"
            if obs or pred:
                line += f" obs{'=' if obs == truth else 'x'} {obs[:24]:24} pred{'=' if pred == after else 'x'} {pred[:24]:24} next {after}"
            else:
                line += f" next {after}"
            print(line + ('  FORMAT' if p.get('formatError') else ''))


if __name__ == '__main__':
    if len(sys.argv) < 3:
        sys.exit('usage: rollouts.py WORKDIR LAKE [--show ARM-sSEED N]')
    if '--show' in sys.argv:
        i = sys.argv.index('--show')
        show(sys.argv[1], sys.argv[2], sys.argv[i + 1], int(sys.argv[i + 2]) if len(sys.argv) > i + 2 else 20)
    else:
        table(sys.argv[1], sys.argv[2])

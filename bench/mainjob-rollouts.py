#!/usr/bin/env python3
"""Read a main-job run's eval rollouts (issue 34): per turn, the move against the one-step lookahead of the true board.

  python3 bench/mainjob-rollouts.py RUN_DIR [--show N]

For each eval turn with a player on ice: the class of the chosen move (goal / nearer ice / other ice / edge / hole) beside
what a uniform move would give on the same states, whether the reply wrote the lookahead line and whether that line matched
the true landing cells, the format-error rate by turn, and N sample replies. Prints one JSON object (and the samples).
"""
import json, os, sys, random
from collections import Counter, defaultdict

ACTIONS = ['Left', 'Down', 'Right', 'Up']
DR, DC = [0, 1, 0, -1], [-1, 0, 1, 0]


def lookahead(grid):
    rows = grid.split('\n')
    P = G = None
    for r, row in enumerate(rows):
        for c, ch in enumerate(row):
            if ch == 'P': P = (r, c)
            if ch == 'G': G = (r, c)
    if P is None or G is None: return None
    out = []
    for d in range(4):
        r, c = P[0] + DR[d], P[1] + DC[d]
        if r < 0 or c < 0 or r >= len(rows) or c >= len(rows[0]): out.append(('#', False)); continue
        ch = rows[r][c]
        cell = 'G' if ch == 'G' else 'O' if ch == 'O' else '_'
        closer = cell != 'O' and abs(r - G[0]) + abs(c - G[1]) < abs(P[0] - G[0]) + abs(P[1] - G[1])
        out.append((cell, closer))
    return out


def klass(o):
    cell, closer = o
    return 'goal' if cell == 'G' else ('nearer' if closer else 'ice') if cell == '_' else 'edge' if cell == '#' else 'hole'


def main():
    run = sys.argv[1]
    show = int(sys.argv[sys.argv.index('--show') + 1]) if '--show' in sys.argv else 4
    path = os.path.join(run, 'rollouts', 'eval.jsonl')
    eps = [json.loads(l) for l in open(path)]
    chosen, uniform = Counter(), Counter()
    line_written = line_right = turns = 0
    fmt = defaultdict(lambda: [0, 0])
    for e in eps:
        for t in e['turns']:
            fmt[t['turn']][0] += t['flags']['formatError']; fmt[t['turn']][1] += 1
            la = lookahead(t['stateBefore']['text'])
            if la is None: continue
            turns += 1
            for o in la: uniform[klass(o)] += 0.25
            acts = t['parsed']['actions']
            chosen[klass(la[ACTIONS.index(acts[0])]) if acts else 'no move'] += 1
            true_line = ', '.join(f'{a} {o[0]}' for a, o in zip(ACTIONS, la)) + '.'
            if 'Left ' in t['response'] and '</observation>' in t['response']:
                after = t['response'].split('</observation>', 1)[1].lstrip('\n').split('\n', 1)[0]
                if after.startswith('Left '):
                    line_written += 1; line_right += after == true_line
    out = {
        'run': run, 'episodes': len(eps), 'success': sum(e['success'] for e in eps) / len(eps),
        'turnsOnIce': turns,
        'moveClass': {k: round(v / turns, 3) for k, v in sorted(chosen.items())},
        'uniformMoveClass': {k: round(v / turns, 3) for k, v in sorted(uniform.items())},
        'lookaheadLineWritten': round(line_written / turns, 3) if turns else None,
        'lookaheadLineExact': round(line_right / line_written, 3) if line_written else None,
        'formatErrorsByTurn': {k + 1: f'{v[0]}/{v[1]}' for k, v in sorted(fmt.items())},
        'avgTurns': sum(e['numTurns'] for e in eps) / len(eps),
    }
    print(json.dumps(out, indent=1))
    random.seed(0)
    for e in random.sample(eps, min(show, len(eps))):
        print(f"\n--- puzzle {e['seed']} sample {e.get('sample')} success {e['success']} turns {e['numTurns']}")
        for t in e['turns'][:4]:
            print(f"turn {t['turn'] + 1}: {t['response']!r}")


if __name__ == '__main__':
    main()

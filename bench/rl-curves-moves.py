"""Per RL step of a curve-(a) run (the contextual bandit): what the rollouts show about the move.

Reads RUN_DIR/metrics.jsonl and RUN_DIR/rollouts/rl-*.jsonl (the product's own records) and prints one JSON line per step:
success, format errors, losses/entropy (with rl.entropyOn 'action' the move token's entropy), charts/lr, the move's marginal
(Left/Down/Right/Up over the step's well-formed replies), the empirical I(move; correct move) in nats over the step's episodes
(the correct move = the direction from P to G, the goal being next to the start), and the tracked Pass@1 when the step has it.
  python3 bench/rl-curves-moves.py RUN_DIR [--every N] [--pool N]
--pool N: one line per N steps, pooled (the MI of 64 episodes has a small-sample bias of ~9/(2*64) = 0.07 nats; pooled over
8 steps ~0.01), with the window's mean success and format errors.
"""
import glob, json, math, os, sys
from collections import Counter

ACTIONS = ['Left', 'Down', 'Right', 'Up']


def correct_move(grid):
    rows = grid.split('\n')
    p = g = None
    for r, line in enumerate(rows):
        for c, ch in enumerate(line):
            if ch == 'P': p = (r, c)
            if ch == 'G': g = (r, c)
    if p is None or g is None: return None
    dr, dc = g[0] - p[0], g[1] - p[1]
    return {(0, -1): 'Left', (1, 0): 'Down', (0, 1): 'Right', (-1, 0): 'Up'}.get((dr, dc))


def mutual_information(pairs):
    n = len(pairs)
    if n == 0: return 0.0
    joint = Counter(pairs); a = Counter(x for x, _ in pairs); b = Counter(y for _, y in pairs)
    return sum(c / n * math.log((c / n) / ((a[x] / n) * (b[y] / n))) for (x, y), c in joint.items())


def main():
    run = sys.argv[1]
    every = int(sys.argv[sys.argv.index('--every') + 1]) if '--every' in sys.argv else 1
    pool = int(sys.argv[sys.argv.index('--pool') + 1]) if '--pool' in sys.argv else 0
    metrics = {}
    for line in open(os.path.join(run, 'metrics.jsonl')):
        r = json.loads(line)
        if r.get('stage') == 'rl': metrics.setdefault(r['step'], {}).update(r['values'])
    if pool:
        return pooled(run, metrics, pool)
    for f in sorted(glob.glob(os.path.join(run, 'rollouts', 'rl-*.jsonl'))):
        step = int(os.path.basename(f)[3:9])
        if step % every: continue
        moves, pairs, n = Counter(), [], 0
        for line in open(f):
            ep = json.loads(line)
            for t in ep['turns']:
                n += 1
                a = (t.get('parsed') or {}).get('answer')
                want = correct_move((t.get('stateBefore') or {}).get('text', ''))
                if a in ACTIONS:
                    moves[a] += 1
                    if want: pairs.append((a, want))
        total = sum(moves.values()) or 1
        m = metrics.get(step + 1, {})
        out = {'step': step, 'episodes': n, 'success': m.get('rollout/success'), 'formatErrors': m.get('rollout/formatErrorRate'),
               'entropy': m.get('losses/entropy'), 'lr': m.get('charts/lr'), 'marginal': [round(moves[a] / total, 3) for a in ACTIONS],
               'accuracy': round(sum(1 for a, w in pairs if a == w) / max(1, len(pairs)), 3), 'mi': round(mutual_information(pairs), 4)}
        if 'rl/passAt1' in metrics.get(step, {}): out['passAt1'] = metrics[step]['rl/passAt1']
        print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in out.items()}))


def pooled(run, metrics, pool):
    windows = {}
    for f in sorted(glob.glob(os.path.join(run, 'rollouts', 'rl-*.jsonl'))):
        step = int(os.path.basename(f)[3:9])
        w = windows.setdefault(step // pool, {'moves': Counter(), 'pairs': [], 'n': 0, 'wins': 0, 'fmt': 0, 'steps': []})
        w['steps'].append(step)
        for line in open(f):
            ep = json.loads(line)
            w['wins'] += 1 if ep.get('success') else 0
            for t in ep['turns']:
                w['n'] += 1
                parsed = t.get('parsed') or {}
                w['fmt'] += 1 if parsed.get('formatError') else 0
                a = parsed.get('answer')
                want = correct_move((t.get('stateBefore') or {}).get('text', ''))
                if a in ACTIONS:
                    w['moves'][a] += 1
                    if want: w['pairs'].append((a, want))
    for k in sorted(windows):
        w = windows[k]
        total = sum(w['moves'].values()) or 1
        tracked = [metrics[s]['rl/passAt1'] for s in w['steps'] if 'rl/passAt1' in metrics.get(s, {})]
        print(json.dumps({'steps': [min(w['steps']), max(w['steps'])], 'episodes': w['n'], 'success': round(w['wins'] / max(1, w['n']), 3),
                          'formatErrors': round(w['fmt'] / max(1, w['n']), 3), 'marginal': [round(w['moves'][a] / total, 3) for a in ACTIONS],
                          'accuracy': round(sum(1 for a, x in w['pairs'] if a == x) / max(1, len(w['pairs'])), 3),
                          'mi': round(mutual_information(w['pairs']), 4), **({'passAt1': tracked} if tracked else {})}))


if __name__ == '__main__':
    main()

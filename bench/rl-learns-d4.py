"""Rule D4 of docs/results/rl-learns: RL gain (Pass@1 after 960 episodes - at its start) from the shipped base and from the
25-step behaviour-cloning start, seeds 0-2, from the committed pilot rows.  python3 bench/rl-learns-d4.py"""
import json, sys
import os
D = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'docs', 'results', 'rl-learns', 'pilot') + '/'
runs = {('warm', 0): D + 'rl-lr3e-4-g4x8-after-bc25.jsonl', ('base', 0): D + 'rl-lr3e-4-g4x8-gamma1.jsonl'}
for s in (1, 2):
    runs[('warm', s)] = D + f'd4-rl-lr3e-4-after-bc25-seed{s}.jsonl'; runs[('base', s)] = D + f'd4-rl-lr3e-4-base-seed{s}.jsonl'
print('| start | seed | Pass@1 at start | Pass@1 after 960 episodes | gain | chance | oracle | I(action; state) start → end (nats) |')
print('|---|---|---|---|---|---|---|---|')
gains = {'warm': [], 'base': []}
for start in ('base', 'warm'):
    for s in (0, 1, 2):
        try: rows = [json.loads(l) for l in open(runs[(start, s)])]
        except FileNotFoundError: continue
        ev = {r['step']: r for r in rows if r['row'] == 'eval'}
        chance = next(r['passAt1'] for r in rows if r['row'] == 'chance')
        if 0 not in ev or 30 not in ev: print(f'| {start} | {s} | (not finished) |'); continue
        g = ev[30]['passAt1'] - ev[0]['passAt1']; gains[start].append(g)
        name = 'shipped base' if start == 'base' else '25 behaviour-cloning steps'
        print(f"| {name} | {s} | {ev[0]['passAt1']:.3f} | {ev[30]['passAt1']:.3f} | {g:+.3f} | {chance:.3f} | 1.000 | "
              f"{ev[0].get('stateDependence', float('nan')):.4f} → {ev[30].get('stateDependence', float('nan')):.4f} |")
for k, v in gains.items():
    if v: print(f"\nmean gain from the {'shipped base' if k == 'base' else 'warm start'}: {sum(v) / len(v):+.3f} over {len(v)} seeds")

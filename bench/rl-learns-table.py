"""Markdown table of bench/rl-learns-pilot.py JSON lines (docs/results/rl-learns): python3 bench/rl-learns-table.py FILE.jsonl ..."""
import json, sys, math
print('| setting | step | episodes (or labelled states) so far | Pass@1 (n) | ±95% (binomial) | chance | oracle | Pass@1 − chance | toward goal | P(shortest move), turn 0 | I(action; state), turn 0 (nats) | turn-0 entropy | turn-0 marginal L/D/R/U |')
print('|---|---|---|---|---|---|---|---|---|---|---|---|---|')
for f in sys.argv[1:]:
    rows = [json.loads(l) for l in open(f)]
    chance = next(r['passAt1'] for r in rows if r['row'] == 'chance')
    for r in rows:
        if r['row'] == 'chance': continue
        bc = r['row'] == 'bc'
        name = (f"behaviour cloning, lr {r['lr']:g}, {r.get('bc', 64)} states/step" if bc else
                f"RL lr {r['lr']:g}, {r['groups']}×{r['groupSize']}, γ {r.get('gamma', 1)}" + (', /std' if r.get('std') else '') + (', embeddings frozen' if r.get('frozenEmbeddings') else '')
                + (f", after {r['bcWarmup']} behaviour-cloning steps" if r.get('bcWarmup') else ''))
        seen = r['step'] * (r.get('bc', 64) if bc else r['groups'] * r['groupSize'])
        p, n = r['passAt1'], r['n']; ci = 1.96 * math.sqrt(p * (1 - p) / n)
        print(f"| {name} | {r['step']} | {seen} | {p:.3f} ({n}) | {ci:.3f} | {chance:.3f} | 1.000 | {p - chance:+.3f} | {r['towardGoal']:.2f} | "
              f"{r.get('pShortestMove', float('nan')):.2f} | {r.get('stateDependence', float('nan')):.4f} | {r['turn0Entropy']:.2f} | {'/'.join(f'{x:.2f}' for x in r['marginal'])} |")

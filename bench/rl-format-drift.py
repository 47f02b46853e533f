"""Per-RL-step format drift read from a run's rollouts (docs/results/spa-cpu-v2/format-drift): the share of turns with a
format error, success, the mean advantage of malformed and of well-formed turns (token mean over the reply), the return of
episodes with and without a malformed turn, reply lengths, the share of episodes that end in a hole, and from the run's
metrics.jsonl the policy's entropy per token and the value / policy gradient norms of the update that followed the step.

  python3 bench/rl-format-drift.py RUN_DIR [--from A --to B]
    RUN_DIR = <project>/runs/<id>/; the last line averages the format-error share over steps A..B (turn-weighted)
"""
import json, sys, glob, os, argparse

ap = argparse.ArgumentParser()
ap.add_argument('run')
ap.add_argument('--from', dest='lo', type=int, default=16)
ap.add_argument('--to', dest='hi', type=int, default=24)
args = ap.parse_args()
mean = lambda x: sum(x) / len(x) if x else float('nan')

files = sorted(glob.glob(os.path.join(args.run, 'rollouts/rl-*.jsonl')))
if not files:
    sys.exit(f'no rollouts/rl-*.jsonl under {args.run}: expected a run folder <project>/runs/<id>/')
metrics = {}
mpath = os.path.join(args.run, 'metrics.jsonl')
if os.path.exists(mpath):
    for line in open(mpath):
        r = json.loads(line)
        if r.get('stage') == 'rl' and 'losses/entropy' in r.get('values', {}):
            metrics[r['step']] = r['values']

print('| RL step | turns with a format error | success | mean advantage, malformed turns (n) | mean advantage, well-formed turns '
      '| return, episodes with a malformed turn (n) | return, episodes without (n) | reply tokens, malformed / well-formed '
      '| episodes ending in a hole | entropy per token (update after) | value / policy grad norm |')
print('|' + '---|' * 11)
window = [0, 0]
for f in files:
    eps = [json.loads(l) for l in open(f)]
    step = eps[0]['step']
    adv_bad, adv_ok, ret_bad, ret_ok, len_bad, len_ok = [], [], [], [], [], []
    turns = bad = holes = 0
    for e in eps:
        has_bad = False
        for t in e['turns']:
            turns += 1
            adv = (t.get('tokenStats') or {}).get('advantages') or []
            if t['flags']['formatError']:
                bad += 1; has_bad = True; adv_bad.append(mean(adv)); len_bad.append(len(adv))
            else:
                adv_ok.append(mean(adv)); len_ok.append(len(adv))
        (ret_bad if has_bad else ret_ok).append(e['totalReward'])
        if e['terminated'] and not e['success']:
            holes += 1
    if args.lo <= step <= args.hi:
        window[0] += bad; window[1] += turns
    m = metrics.get(step + 1, {})
    ent = f"{m['losses/entropy']:.3f}" if 'losses/entropy' in m else '–'
    grads = f"{m['charts/valueGradNorm']:.2f} / {m['charts/gradNorm']:.2f}" if 'charts/valueGradNorm' in m else '–'
    print(f"| {step} | {bad / turns:.3f} | {mean([e['success'] for e in eps]):.3f} | {mean(adv_bad):+.3f} ({len(adv_bad)}) "
          f"| {mean(adv_ok):+.3f} | {mean(ret_bad):+.3f} ({len(ret_bad)}) | {mean(ret_ok):+.3f} ({len(ret_ok)}) "
          f"| {mean(len_bad):.0f} / {mean(len_ok):.0f} | {holes / len(eps):.2f} | {ent} | {grads} |")
if window[1]:
    print(f'\nturns with a format error over RL steps {args.lo}-{args.hi}: {window[0]}/{window[1]} = {window[0] / window[1]:.3f}')
else:
    print(f'\nno rollouts in RL steps {args.lo}-{args.hi} yet')

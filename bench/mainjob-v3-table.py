#!/usr/bin/env python3
"""The mainjob-v3 table (issue 34 item 5) from bench/mainjob-v3.sh's result lines and each run's eval/final.json.

  python3 bench/mainjob-v3-table.py docs/results/mainjob-v3/runs.jsonl

One row per run: backend, seed, Pass@1 with its interval (the eval's bootstrap over puzzles), chance and oracle on the same
puzzles, Pass@1 - chance, RL's paired gain over its start (eval/final.json rlGainOverStart), the world model given the action
(model vs base), format errors, wall and CPU seconds, load average; then the rule's verdict per run (README.md).
"""
import json, os, sys


def pct(x):
    return '–' if x is None else f'{100 * x:.1f}%'


def main():
    rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
    print('| backend | seed | Pass@1 [95% CI] | chance | oracle | Pass@1 − chance | RL gain over start, paired [95% CI] | '
          'given the action (base) | format errors | wall s | CPU s | load before → after | meets 1-3 |')
    print('|' + '---|' * 13)
    for r in sorted(rows, key=lambda r: (('wasm' in r.get('set', '')), r['seed'])):
        backend = 'wasm' if 'backend=wasm' in r.get('set', '') else 'torch'
        try:
            final = json.load(open(os.path.join(r['run'], 'eval', 'final.json')))
        except Exception as e:  # noqa: BLE001
            print(f"| {backend} | {r['seed']} | no eval ({e!r}) |" + ' |' * 11); continue
        p1 = final['passAtK']['1']
        ref = {x['kind']: x['passAt']['1'] for x in final.get('reference', [])}
        chance, oracle = ref.get('chance'), ref.get('oracle')
        gain = final.get('rlGainOverStart')
        wm = final.get('worldModelVersusBase', {})
        given = wm.get('model', {}).get('conditioned', {}).get('exactChanged')
        base = wm.get('base', {}).get('conditioned', {}).get('exactChanged')
        ok = (chance is not None and p1['mean'] >= chance + 0.15 and given is not None and given >= 0.5 and base is not None
              and base <= 0.1 and gain is not None)
        g = '–' if gain is None else f"{100 * gain['mean']:+.1f} [{100 * gain['low']:+.1f}, {100 * gain['high']:+.1f}] ({gain['puzzles']} puzzles)"
        print(f"| {backend} | {r['seed']} | {pct(p1['mean'])} [{pct(p1['low'])}, {pct(p1['high'])}] | {pct(chance)} | {pct(oracle)} | "
              f"{100 * (p1['mean'] - chance):+.1f} pts | {g} | {pct(given)} ({pct(base)}) | {pct(final.get('formatErrorRate'))} | "
              f"{r['wallSeconds']:.0f} | {r.get('cpuSeconds')} | {r.get('loadBefore')} → {r.get('loadAfter')} | {'yes' if ok else 'no'} |")


if __name__ == '__main__':
    main()

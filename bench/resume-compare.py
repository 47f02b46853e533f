# Compare two run projects (a resumed one, a reference): every metric value by stage/step/name, checkpoint weights (sha-256),
# eval/ files without their times. Usage: python3 bench/resume-compare.py RESUMED_PROJECT REFERENCE_PROJECT (bench/resume-kill.sh).
import json, glob, sys, hashlib, os
def metrics(proj):
    run = glob.glob(proj + '/runs/*/')[0]
    vals = {}; lines = 0; dup_diff = 0
    for l in open(run + 'metrics.jsonl'):
        if not l.strip(): continue
        p = json.loads(l); lines += 1
        for k, v in p['values'].items():
            key = (p['stage'], p['step'], k)
            if key in vals and vals[key] != v: dup_diff += 1
            vals[key] = v
    return run, vals, lines, dup_diff
ra, a, la, da = metrics(sys.argv[1]); rb, b, lb, db = metrics(sys.argv[2])
same = sum(1 for k in b if k in a and a[k] == b[k])
print(f'reference: {len(b)} metric values ({lb} lines); resumed: {len(a)} values ({la} lines, {da} re-logged with another value)')
print(f'equal: {same}/{len(b)}; missing in resumed: {sum(1 for k in b if k not in a)}; extra: {sum(1 for k in a if k not in b)}')
for k in b:
    if a.get(k) != b[k]: print('  differs', k, a.get(k), b[k])
def h(p): return hashlib.sha256(open(p,'rb').read()).hexdigest()
ca = {d: h(ra+'checkpoints/'+d+'/model.safetensors') for d in os.listdir(ra+'checkpoints') if os.path.exists(ra+'checkpoints/'+d+'/model.safetensors')}
cb = {d: h(rb+'checkpoints/'+d+'/model.safetensors') for d in os.listdir(rb+'checkpoints') if os.path.exists(rb+'checkpoints/'+d+'/model.safetensors')}
common = sorted(set(ca) & set(cb))
print(f'checkpoints equal: {sum(ca[d]==cb[d] for d in common)}/{len(common)} common ({sorted(cb)}); only in resumed: {sorted(set(ca)-set(cb))}; only in reference: {sorted(set(cb)-set(ca))}')
ea = sorted(os.listdir(ra+'eval')); eb = sorted(os.listdir(rb+'eval'))
print('eval files equal lists:', ea == eb, [f for f in eb if f not in ea])
strip = lambda o: json.loads(json.dumps(o), object_hook=lambda d: {k: v for k, v in d.items() if k not in ('time','wallSeconds','created','checkpoint','model')})
for f in eb:
    if f in ea and strip(json.load(open(ra+'eval/'+f))) != strip(json.load(open(rb+'eval/'+f))): print('  eval differs:', f)

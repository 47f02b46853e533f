"""Record RAGEN validation rollouts as JSONL that SPA Workbench imports turn by turn.

RAGEN keeps every env's per-turn history in its EnvStateManager (ragen/llm_agent/es_manager.py):
  rollout_cache[i] = {env_id, group_id, tag, penalty, history: [{state, actions_left, actions, reward,
                      info{action_is_effective, action_is_valid, success}, llm_response, llm_raw_response}, ...,
                      {state, actions_left, metrics}], metrics{<Tag>/success, ...}}
  envs[i] = {tag, group_id, env_id, config, status: EnvStatus(seed, terminated, truncated, num_actions, rewards)}
but writes none of it to disk (RAGEN issue #84). This recorder writes one JSON line per env:

  {"format": "spa-workbench.ragen-recorder", "version": 1, "step": 10, "split": "val",
   "tag": "SimpleSokoban", "env_type": "sokoban", "env_id": 0, "group_id": 0, "seed": 123,
   "terminated": true, "truncated": false, "penalty": 0.0, "metrics": {...}, "env_config": {...},
   "history": [ ...RAGEN's history entries, unchanged... ]}

Hook (RAGEN v1, ragen/trainer/agent_trainer.py, RayAgentTrainer._validate), right after
  test_batch = self.agent_proxy.rollout(test_gen_batch, val=True)
add
  import ragen_recorder; ragen_recorder.record_validation(self.agent_proxy.val_es_manager, self.global_steps)
(`python ragen_recorder.py patch <RAGEN dir>` inserts exactly that line, once). Files go to
$SPA_WORKBENCH_RECORD_DIR (default ./workbench_rollouts) as val_step<N>.jsonl.

Other commands:
  python ragen_recorder.py from-json STATES.json --out OUT.jsonl --step N [--split val]
      STATES.json: a list of rollout_cache entries as above, each optionally with "seed",
      "terminated", "truncated", "env_type" (what es_manager.get_rollout_states() returns, json-dumped).
  python ragen_recorder.py from-pkl val_rollouts_*.pkl --out OUT.jsonl
      RAGEN-2's eval dump (a pickled verl DataProto; needs verl importable). Not tested by the workbench.
Only the standard library is needed (numpy values are converted when numpy is present).
"""
import argparse
import json
import os
import sys

FORMAT = 'spa-workbench.ragen-recorder'
VERSION = 1
HOOK = 'import ragen_recorder; ragen_recorder.record_validation(self.agent_proxy.val_es_manager, self.global_steps)'
HOOK_AFTER = 'test_batch = self.agent_proxy.rollout(test_gen_batch, val=True)'


def _plain(value):
    """JSON-safe copy: numpy scalars/arrays to Python, dataclasses to dicts, images dropped."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items() if k != 'images'}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, 'item') and callable(value.item) and getattr(value, 'shape', None) == ():
        return value.item()
    if hasattr(value, 'tolist'):
        return value.tolist()
    if hasattr(value, '__dataclass_fields__'):
        return {k: _plain(getattr(value, k)) for k in value.__dataclass_fields__}
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def record_line(cache, step, split='val', seed=None, terminated=None, truncated=None, env_type=None, env_config=None):
    """One JSONL record from one rollout_cache entry."""
    history = cache.get('history')
    if not isinstance(history, list) or not history:
        raise ValueError(f'env {cache.get("env_id")}: rollout cache has no history list')
    for t, turn in enumerate(history):
        if 'state' not in turn:
            raise ValueError(f'env {cache.get("env_id")}: history[{t}] has no "state"')
    return {
        'format': FORMAT, 'version': VERSION, 'step': int(step), 'split': split,
        'tag': cache.get('tag'), 'env_type': env_type, 'env_id': cache.get('env_id'), 'group_id': cache.get('group_id'),
        'seed': seed, 'terminated': terminated, 'truncated': truncated, 'penalty': cache.get('penalty', 0.0),
        'metrics': _plain(cache.get('metrics', {})), 'env_config': _plain(env_config) if env_config is not None else None,
        'history': _plain(history),
    }


def write_lines(records, out_path):
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    with open(out_path, 'a', encoding='utf-8') as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + '\n')
    return len(records)


def record_validation(es_manager, step, out_dir=None, split='val'):
    """Append this validation's rollouts to <out_dir>/val_step<step>.jsonl; call after agent_proxy.rollout(..., val=True)."""
    out_dir = out_dir or os.environ.get('SPA_WORKBENCH_RECORD_DIR', 'workbench_rollouts')
    records = []
    for entry, cache in zip(es_manager.envs, es_manager.rollout_cache):
        status = entry.get('status')
        env_type = None
        try:
            env_type = es_manager.sys_config.custom_envs[entry['tag']].env_type
        except Exception:
            pass
        records.append(record_line(cache, step, split, seed=getattr(status, 'seed', None), terminated=getattr(status, 'terminated', None),
                                   truncated=getattr(status, 'truncated', None), env_type=env_type, env_config=entry.get('config')))
    return write_lines(records, os.path.join(out_dir, f'{split}_step{int(step)}.jsonl'))


def from_json(path, out, step, split):
    with open(path, encoding='utf-8') as f:
        states = json.load(f)
    if not isinstance(states, list):
        raise ValueError(f'{path}: expected a JSON list of rollout cache entries, got {type(states).__name__}')
    records = []
    for i, cache in enumerate(states):
        if not isinstance(cache, dict):
            raise ValueError(f'{path}: entry {i} is not an object')
        records.append(record_line(cache, cache.get('step', step), split, seed=cache.get('seed'), terminated=cache.get('terminated'),
                                   truncated=cache.get('truncated'), env_type=cache.get('env_type'), env_config=cache.get('env_config')))
    if os.path.exists(out):
        os.remove(out)
    return write_lines(records, out)


def from_pkl(path, out, step, split):
    import pickle
    with open(path, 'rb') as f:
        proto = pickle.load(f)   # verl DataProto: needs verl importable
    nt = proto.non_tensor_batch
    records = []
    for i, history in enumerate(nt['history']):
        cache = {'history': list(history), 'env_id': int(nt['env_ids'][i]) if 'env_ids' in nt else i,
                 'group_id': int(nt['group_ids'][i]) if 'group_ids' in nt else None, 'tag': nt['tags'][i] if 'tags' in nt else None,
                 'metrics': nt['metrics'][i] if 'metrics' in nt else {}}
        records.append(record_line(cache, step, split))
    if os.path.exists(out):
        os.remove(out)
    return write_lines(records, out)


def patch(ragen_dir):
    """Insert the hook after the validation rollout in ragen/trainer/agent_trainer.py (idempotent)."""
    target = os.path.join(ragen_dir, 'ragen', 'trainer', 'agent_trainer.py')
    with open(target, encoding='utf-8') as f:
        lines = f.read().split('\n')
    if any(HOOK in line for line in lines):
        return f'{target}: hook already present'
    for i, line in enumerate(lines):
        if line.strip() == HOOK_AFTER:
            indent = line[:len(line) - len(line.lstrip())]
            lines.insert(i + 1, indent + HOOK)
            with open(target, 'w', encoding='utf-8') as f:
                f.write('\n'.join(lines))
            return f'{target}: hook added at line {i + 2}'
    raise SystemExit(f'{target}: line "{HOOK_AFTER}" not found; add the hook by hand (see this file\'s docstring)')


def main(argv=None):
    p = argparse.ArgumentParser(description='RAGEN rollouts -> SPA Workbench recorder JSONL')
    sub = p.add_subparsers(dest='cmd', required=True)
    for name in ('from-json', 'from-pkl'):
        s = sub.add_parser(name)
        s.add_argument('input')
        s.add_argument('--out', required=True)
        s.add_argument('--step', type=int, default=0)
        s.add_argument('--split', default='val')
    s = sub.add_parser('patch')
    s.add_argument('ragen_dir')
    a = p.parse_args(argv)
    try:
        if a.cmd == 'patch':
            print(patch(a.ragen_dir))
        else:
            n = (from_json if a.cmd == 'from-json' else from_pkl)(a.input, a.out, a.step, a.split)
            print(f'wrote {n} episodes to {a.out}')
    except ValueError as e:
        print(f'error: {e}', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())

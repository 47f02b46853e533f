#!/usr/bin/env bash
# One quick SPA run on FrozenLake from the shipped base (what `npm start` runs), timed: wall and CPU seconds
# (user + sys of the CLI and every child: engine, torch worker), the load average before and after, and the
# eval's world-model table. Appends one JSON line to OUT (docs/results/compact-v2/quick-runs.jsonl).
#   bash bench/compact-quick.sh OUT PROJECT SEED [--set k=v ...]
set -u
OUT=${1:?usage: compact-quick.sh OUT PROJECT SEED [--set k=v ...]}; PROJECT=${2:?}; SEED=${3:?}; shift 3
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
TIMEF=$(mktemp)
CPUF=$(mktemp)
# CPU seconds: the engine runs detached (not counted by time(1)), so poll the run's processes (the CLI, the engine named
# in the run's engine.pid.json, and their children, e.g. the torch worker) every second and keep each one's last utime + stime
(
  declare -A last
  while :; do
    pids="$(pgrep -f -- "--project $PROJECT") $(cat "$PROJECT"/runs/*/engine.pid.json 2>/dev/null | sed -n 's/.*"pid": *\([0-9]*\).*/\1/p')"
    for pid in $pids; do
      for p in $pid $(pgrep -P "$pid"); do
        t=$(awk '{print $14 + $15}' /proc/$p/stat 2>/dev/null) && [ -n "$t" ] && last[$p]=$t
      done
    done
    total=0; for p in "${!last[@]}"; do total=$((total + ${last[$p]})); done
    echo "$total" > "$CPUF"
    sleep 1
  done
) &
POLLER=$!
SPA_TORCH_THREADS=${SPA_TORCH_THREADS:-1} /usr/bin/time -f '%e %U %S' -o "$TIMEF" nice -n "${NICE:-5}" node bin/spa-workbench.mjs run spa --size quick \
  --project "$PROJECT" --set env.id=frozenlake --set seeds.base="$SEED" "$@" --json > "$PROJECT.seed$SEED.json" 2> "$PROJECT.seed$SEED.log"
RC=$?
kill "$POLLER" 2>/dev/null
TICKS=$(getconf CLK_TCK)
POLLED=$(awk -v t="$TICKS" '{printf "%.1f", $1 / t}' "$CPUF" 2>/dev/null); POLLED=${POLLED:-nan}
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
read -r WALL USER SYS < "$TIMEF"
RUNDIR=$(python3 -c "import json,sys; t=open(sys.argv[1]).read(); print(json.loads(t[t.index('{'):])['dir'])" "$PROJECT.seed$SEED.json" 2>/dev/null)
python3 - "$RUNDIR" "$SEED" "$RC" "$WALL" "$USER" "$SYS" "$LOAD0" "$LOAD1" "$*" "$POLLED" >> "$OUT" <<'PY'
import json, sys, os
run, seed, rc, wall, user, sys_, load0, load1, sets, polled = sys.argv[1:11]
out = {'seed': int(seed), 'exit': int(rc), 'wallSeconds': float(wall), 'cliCpuSeconds': round(float(user) + float(sys_), 1),
       'cpuSeconds': float(polled),
       'loadBefore': load0, 'loadAfter': load1, 'set': sets, 'run': run}
try:
    info = json.load(open(os.path.join(run, 'run.json')))
    out['stages'] = {s['name']: round((s['finishedAt'] - s['startedAt']) / 1000, 1) for s in info['stages'] if s.get('startedAt') and s.get('finishedAt')}
    vals = {}
    for line in open(os.path.join(run, 'metrics.jsonl')):
        p = json.loads(line)
        if p.get('stage') == 'eval': vals.update(p['values'])
    keep = ('eval/wmCheck/', 'eval/pass', 'eval/success', 'eval/format')
    out['eval'] = {k: v for k, v in vals.items() if k.startswith(keep)}
except Exception as e:  # a failed run still gets its line
    out['error'] = repr(e)
print(json.dumps(out))
PY

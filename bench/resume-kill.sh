#!/usr/bin/env bash
# usage: bash bench/resume-kill.sh CODE_DIR OUT_DIR (docs/checkpoints.md, "Resume: what is restored"; issue 37 N6/N6b)
#  — the retest's R3 on FrozenLake: reference, SIGKILL of the CLI's whole process group
# (CLI, engine, torch worker) right after RL saved the state of step 2 (RL 2/5), resume; resumable by marker files.
set -uo pipefail
CODE=$1; R=$(realpath -m "$2"); HERE=$(cd "$(dirname "$0")" && pwd); mkdir -p "$R"; cd "$CODE"
SETS=(--set env.id=frozenlake --set stages.selfplay.games=24 --set stages.sft.epochs=4 --set stages.rl.steps=5 --set stages.rl.groups=2 --set seeds.base=7)
CLI="node bin/spa-workbench.mjs"
if [ ! -f $R/ref.done ]; then
  rm -rf $R/ref; $CLI run spa --size smoke --project $R/ref --name ref "${SETS[@]}" --json > $R/ref.json 2> $R/ref.err && touch $R/ref.done
fi
if [ ! -f $R/kill.done ]; then
  rm -rf $R/kill
  setsid $CLI run spa --size smoke --project $R/kill --name kill "${SETS[@]}" --json > $R/kill.json 2> $R/kill.err &
  pid=$!
  for i in $(seq 1 6000); do
    st=$(ls $R/kill/runs/*/stages/rl/state.json 2>/dev/null | head -1)
    if [ -n "$st" ] && grep -q '"nextStep": *2' "$st"; then kill -9 -- -$pid; echo "killed at $(cat $st)" > $R/kill.note; break; fi
    sleep 0.05
  done
  wait $pid; touch $R/kill.done
fi
if [ ! -f $R/resume.done ]; then
  id=$(basename $(ls -d $R/kill/runs/*/ | head -1))
  $CLI resume --project $R/kill $id > $R/resume.out 2> $R/resume.err; echo "resume rc $?" >> $R/kill.note; touch $R/resume.done
fi
python3 "$HERE/resume-compare.py" $R/kill $R/ref > $R/compare.txt
cat "$R/compare.txt"

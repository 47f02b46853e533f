#!/usr/bin/env bash
# Resumes study v4 on a machine at a session's start: a code snapshot of this repository's HEAD (so edits to the checkout
# do not change the code the cells run), then both streams (run.sh A and B) on WORKDIR; run.sh unpacks the cells carried
# in docs/results/study-v4/carry/ that WORKDIR lacks. Needs .ci/run's installs (torch, the GGUF) and node_modules here.
#
#   bash docs/results/study-v4/resume.sh /work/s21        # code in /work/s21/code, cells in /work/s21/study-v4
#
# At the session's end: carry.sh stop WORKDIR, carry.sh pack WORKDIR (into this checkout's carry/), commit carry/.
set -eu
BASE=${1:?usage: resume.sh DIR}
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
[ -d "$ROOT/node_modules" ] || { echo "no node_modules in $ROOT: run npm ci first" >&2; exit 2; }
mkdir -p "$BASE"
if [ ! -d "$BASE/code" ]; then
  git -C "$ROOT" worktree add --detach "$BASE/code" HEAD
  ln -s "$ROOT/node_modules" "$BASE/code/node_modules"
fi
W=$BASE/study-v4; mkdir -p "$W"
cd "$BASE/code"
export SPA_MODEL_CACHE=${SPA_MODEL_CACHE:-$HOME/.cache/spa-workbench}
for s in A B; do
  setsid nohup nice -n 15 bash docs/results/study-v4/run.sh "$W" "$s" >> "$W/$s.out" 2>&1 < /dev/null &
  echo "stream $s: pid $! (log $W/$s.out)"
  sleep 20
done

#!/usr/bin/env bash
# Carries study v4's unfinished cells through git (README amendment of 2026-12-01): the machine is replaced between some
# sessions and only the repository survives.
#
#   bash docs/results/study-v4/carry.sh stop WORKDIR            # stop every running cell (a resume point is written)
#   bash docs/results/study-v4/carry.sh pack WORKDIR [CELL...]  # WORKDIR/fldet/<cell> -> carry/<cell> (default: every
#                                                               # unrecorded cell there); then commit carry/
#   bash docs/results/study-v4/carry.sh unpack WORKDIR CELL     # carry/<cell> -> WORKDIR/fldet/<cell> (run.sh does this
#                                                               # itself for a cell it claims and does not have)
#
# A cell is `<arm>-s<seed>` (e.g. spa-s0). CARRY_DIR (default: this folder's carry/) is where carried cells live: pack
# into the repository you commit from. carry.py leaves out each LoRA checkpoint's copy of the frozen base after checking
# that WORKDIR/smollm2 rebuilds it byte for byte, and unpack checks every file's sha256.
set -u
OP=${1:?usage: carry.sh stop|pack|unpack WORKDIR [CELL...]}; WORK=${2:?usage: carry.sh stop|pack|unpack WORKDIR [CELL...]}; shift 2
HERE=$(cd "$(dirname "$0")" && pwd); ROOT=$(cd "$HERE/../../.." && pwd)
CARRY=${CARRY_DIR:-$HERE/carry}; OUT=$HERE/fldet
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
cells() { find "$WORK/fldet" -mindepth 1 -maxdepth 1 -type d ! -name claims -printf "%f\n" | sort; }
case "$OP" in
  stop)
    for c in $(cells); do
      for pidf in "$WORK/fldet/$c"/runs/*/engine.pid.json; do
        [ -f "$pidf" ] || continue
        run=$(basename "$(dirname "$pidf")")
        (cd "$ROOT" && node bin/spa-workbench.mjs stop --project "$WORK/fldet/$c" "$run") || echo "stop of $c failed" >&2
      done
    done
    # stop returns once the stop is asked: wait for the engines to write their resume points and exit
    for c in $(cells); do
      while ls "$WORK/fldet/$c"/runs/*/engine.pid.json >/dev/null 2>&1 && \
        kill -0 "$(sed -n 's/.*"pid": *\([0-9]*\).*/\1/p' "$WORK/fldet/$c"/runs/*/engine.pid.json | head -1)" 2>/dev/null; do
        sleep 10
      done
      echo "$c stopped"
    done ;;
  pack)
    mkdir -p "$CARRY"
    [ $# -gt 0 ] || set -- $(cells)
    rc=0
    for c in "$@"; do
      [ -f "$OUT/runs/${c%-s*}-frozenlake-s${c##*-s}.json" ] && { echo "$c is recorded: not carried"; rm -rf "${CARRY:?}/$c"; continue; }
      "$PY" "$HERE/carry.py" pack "$WORK/fldet/$c" "$CARRY/$c" --base "$WORK/smollm2" || rc=2
      [ -f "$WORK/fldet/$c.log" ] && tail -c 200000 "$WORK/fldet/$c.log" > "$CARRY/$c.log.tail"
    done
    du -sh "$CARRY"
    exit $rc ;;
  unpack)
    c=${1:?usage: carry.sh unpack WORKDIR CELL}
    "$PY" "$HERE/carry.py" unpack "$CARRY/$c" "$WORK/fldet/$c" --base "$WORK/smollm2" || exit 2
    [ -f "$CARRY/$c.log.tail" ] && [ ! -f "$WORK/fldet/$c.log" ] && cp "$CARRY/$c.log.tail" "$WORK/fldet/$c.log"
    exit 0 ;;
  *) echo "carry.sh: unknown operation $OP (stop | pack | unpack)" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# Times `npm start` (issue 34 criterion 4) on a checkout where `npm ci` has run: from `npm start` to the run's end line
# ("<run>: completed in ..."), then stops the server. BACKEND=wasm (default) or torch sets SPA_BACKEND. For a first start as
# a new user has it, remove the checkout's dist-renderer/ and projects/ first (the UI is then built, ~4 s here).
#   bash bench/npm-start-time.sh CHECKOUT LOG      # the timing line goes to LOG.time
set -u
cd "${1:?usage: npm-start-time.sh CHECKOUT LOG}" || exit 2
LOG=${2:?usage: npm-start-time.sh CHECKOUT LOG}
s=$(date +%s.%N)
SPA_BACKEND=${BACKEND:-wasm} npm start -- --no-open --port 0 > "$LOG" 2>&1 &
P=$!
while ! grep -q "completed in\|failed in\|: failed" "$LOG"; do sleep 1; kill -0 $P 2>/dev/null || break; done
e=$(date +%s.%N)
echo "npm start to the run's end: $(echo "$e - $s" | bc) s; load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$LOG.time"
pkill -INT -f "spa-workbench.mjs start --run" ; sleep 3; kill $P 2>/dev/null

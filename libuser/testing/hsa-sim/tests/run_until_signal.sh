#!/bin/sh
# SPDX-License-Identifier: MIT
# hsa_app --loop-until-signal keeps dispatching until SIGTERM, then drains,
# prints its summary and exits 0.
# usage: run_until_signal.sh HSA_APP
set -eu
app=$1
out=$(mktemp)
trap 'rm -f "$out"' EXIT

"$app" --loop-until-signal -d 200 --progress-ms 50 >"$out" &
pid=$!
sleep 0.5
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
cat "$out"
[ "$rc" -eq 0 ] || { echo "run_until_signal: exit status $rc" >&2; exit 1; }
grep -q '"event":"summary","status":"ok"' "$out" || { echo "no ok summary" >&2; exit 1; }
# It ran for a while: at least a few hundred 200 us kernels in 0.5 s.
completed=$(sed -n 's/.*"event":"summary".*"completed":\([0-9]*\).*/\1/p' "$out")
[ "$completed" -ge 100 ] || { echo "only $completed packets completed" >&2; exit 1; }
grep -q '"event":"progress"' "$out" || { echo "no progress lines" >&2; exit 1; }

#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs amdqpd (no /dev/amdqp needed: it waits for the module) on a free
# port, scrapes /metrics and has Prometheus' promtool check the text.
#   promtool_test.sh AMDQPD PROMTOOL
set -u
d=$1
promtool=$2
tmp=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$d" --config /dev/null --runtime-dir "$tmp" --metrics "127.0.0.1:$port" 2>"$tmp/log" &
pid=$!
i=0
while [ $i -lt 100 ]; do
	if python3 - "$port" >"$tmp/metrics" 2>/dev/null <<'PY'
import sys, urllib.request
print(urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=2).read().decode(), end="")
PY
	then break; fi
	i=$((i + 1))
	sleep 0.1
done
[ -s "$tmp/metrics" ] || { echo "not ok - no metrics from amdqpd"; cat "$tmp/log"; exit 1; }
if "$promtool" check metrics <"$tmp/metrics"; then
	echo "ok - promtool check metrics"
else
	echo "not ok - promtool check metrics"
	exit 1
fi
grep -q '^amdqpd_control_loop_seconds_bucket{le="+Inf"} 0$' "$tmp/metrics" || { echo "not ok - histogram"; exit 1; }
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
[ $rc -eq 0 ] || { echo "not ok - SIGTERM exit status $rc"; cat "$tmp/log"; exit 1; }
echo "ok - SIGTERM stops it with status 0"

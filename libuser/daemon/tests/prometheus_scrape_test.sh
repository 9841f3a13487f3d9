#!/bin/sh
# SPDX-License-Identifier: MIT
# A real Prometheus server (Debian's prometheus) scrapes a running amdqpd:
# the target must come up and the daemon's series must be queryable.
#   prometheus_scrape_test.sh AMDQPD PROMETHEUS
set -u
d=$1
prom=$2
tmp=$(mktemp -d)
pids=""
# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
query() { # query PROMQL: the JSON answer of the instant query API
	python3 - "$pport" "$1" <<'PY'
import sys, urllib.parse, urllib.request
url = "http://127.0.0.1:%s/api/v1/query?query=%s" % (sys.argv[1], urllib.parse.quote(sys.argv[2]))
print(urllib.request.urlopen(url, timeout=2).read().decode())
PY
}
dport=$(free_port)
pport=$(free_port)
"$d" --config /dev/null --runtime-dir "$tmp" --metrics "127.0.0.1:$dport" 2>"$tmp/amdqpd.log" &
pids="$pids $!"
cat >"$tmp/prometheus.yml" <<YML
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: amdqpd
    static_configs:
      - targets: ["127.0.0.1:$dport"]
YML
"$prom" --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/data" \
	--web.listen-address="127.0.0.1:$pport" >"$tmp/prometheus.log" 2>&1 &
pids="$pids $!"
i=0
ok=0
while [ $i -lt 60 ]; do
	if query 'up{job="amdqpd"}' 2>/dev/null | grep -q '"value":\[[0-9.]*,"1"\]' &&
		query 'amdqpd_suspend_calls_total' 2>/dev/null | grep -q '"__name__":"amdqpd_suspend_calls_total"'; then
		ok=1
		break
	fi
	i=$((i + 1))
	sleep 0.5
done
if [ $ok = 1 ]; then
	echo "ok - prometheus scraped amdqpd (up == 1, amdqpd_suspend_calls_total queryable)"
	exit 0
fi
echo "not ok - prometheus did not scrape amdqpd within 30 s"
tail -n 20 "$tmp/prometheus.log" "$tmp/amdqpd.log" | sed 's/^/# /'
exit 1

#!/bin/sh
# SPDX-License-Identifier: MIT
# hsa_app's requests (--request-kernels, --gap-us), latency from the
# schedule in open loop, it_per_s and --cu-mask, checked on the summary line.
# Bounds are the ones the submitter enforces itself (gaps, periods, kernel
# run times), not the machine's speed, so a loaded host cannot fail them.
# usage: hsa_app_requests.sh HSA_APP
# The awk conditions below are single-quoted on purpose: $1.. are awk's.
# shellcheck disable=SC2016
set -eu
app=$1
out=$(mktemp)
trap 'rm -f "$out"' EXIT
failed=0

bad() {
	echo "FAIL: $*" >&2
	failed=1
}

# run ARGS...: the summary line of hsa_app ARGS into $out; must exit 0.
run() {
	rc=0
	"$app" --quiet "$@" >"$out" || rc=$?
	[ "$rc" -eq 0 ] || bad "hsa_app $* exited with $rc"
	grep '"event":"summary"' "$out" >"$out.s" || bad "hsa_app $*: no summary"
	mv "$out.s" "$out"
	cat "$out"
}

# num NAME: a number of the summary whose name is used once in it.
num() {
	sed -n "s/.*[{,]\"$1\":\([0-9.]*\).*/\1/p" "$out"
}

# lat NAME: a field of latency_us, per packet.
lat() {
	sed -n 's/.*"duration_us":[0-9.]*,"latency_us":{\([^}]*\)}.*/\1/p' "$out" |
		sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p"
}

# req NAME: a field of request_latency_us.
req() {
	sed -n 's/.*"request_latency_us":{\([^}]*\)}.*/\1/p' "$out" |
		sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p"
}

str() {
	sed -n "s/.*\"$1\":\"\([a-z_]*\)\".*/\1/p" "$out"
}

# check DESCRIPTION AWK-CONDITION VALUE...: $1.. in the condition are the values.
check() {
	what=$1
	cond=$2
	shift 2
	if ! awk -v c="$*" "BEGIN { \$0 = c; exit !($cond) }"; then
		bad "$what ($*)"
	fi
}

# 4 requests of 3 kernels, 3 ms apart: a request spans at least its two
# gaps, and it is 3 doorbells.
run -n 12 -d 200 --request-kernels 3 --gap-us 3000
check "requests counted" '$1 == 4 && $2 == 4 && $3 == 12' "$(num requests)" "$(req n)" "$(num doorbells)"
check "request latency spans the gaps" '$1 >= 6000' "$(req p50)"
check "closed loop: latency from submit" '$1 == "submit"' "$(str latency_from)"

# Batches within requests; a request cut short by --count counts as well.
run -n 10 -b 2 --request-kernels 2 -d 50
check "batched requests" '$1 == 3 && $2 == 3 && $3 == 5' "$(num requests)" "$(req n)" "$(num doorbells)"

# Open loop, requests due every 2 ms but 5 ms to submit: the submitter falls
# 3 ms further behind with each one, and the latency of request k counts
# from its due time, k * 2 ms: the last of 10 waited at least 9 * 3 + 5 ms.
run -n 20 -d 100 --request-kernels 2 --gap-us 5000 --period-us 2000
check "open loop: latency from the schedule" '$1 == "schedule"' "$(str latency_from)"
check "late requests count from their due time" '$1 >= 32000 && $2 == 10' "$(req max)" "$(req n)"
check "packet latency is not the request's" '$1 < $2' "$(lat p50)" "$(req max)"

# Throughput: completed packets per second of the run; 1 ms kernels in one
# queue cannot exceed 1000 per second.
run -n 50 -d 1000
check "it_per_s is completed / elapsed_s" '$1 > 0 && ($1 - $2 / $3) ^ 2 < ($1 / 100) ^ 2' \
	"$(num it_per_s)" "$(num completed)" "$(num elapsed_s)"
check "it_per_s bounded by the kernel time" '$1 <= 1000' "$(num it_per_s)"

# K=1: one request per doorbell, as before requests existed.
run -n 30 -b 3 -d 50 -p 1000
check "one request per doorbell" '$1 == 10 && $2 == 10 && $3 == 10' "$(num requests)" "$(num doorbells)" "$(req n)"

# --cu-mask: the queue is confined through hsa_amd_queue_cu_set_mask and runs.
run -n 10 -d 100 --cu-mask 4
check "cu mask reported" '$1 == 4 && $2 == 10' "$(num cu_mask)" "$(num completed)"
if "$app" --cu-mask 0 >/dev/null 2>&1; then
	bad "--cu-mask 0 accepted"
fi

[ "$failed" -eq 0 ] && echo "hsa_app_requests: all checks passed"
exit "$failed"

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs amdqp's kfd backend against the glue stub inside the test VM
# (busybox sh, as root): loads /modules/amdqp_kfdstub.ko first and then
# /modules/amdqp.ko, which binds its kfd backend to the stub at load as
# it would to a patched amdgpu; runs every program of tests.list; unloads
# both and checks that the backend left no queue reference, no
# suspension, no imposed CU mask and no broken rule behind. One TAP
# stream, nested like selftests/run-guest.sh (scripts/tap-summary.sh
# counts the leaves).
#
# Environment: AMDQP_MODULE_DIR (default /modules), AMDQP_TEST_TIMEOUT
# (seconds per program, default 300), AMDQP_TESTS (programs to run),
# AMDQP_STUB_PARAMS (insmod parameters of the stub, e.g. min_api=1 to run
# an older amdqp.ko against it).

here=$(cd "$(dirname "$0")" && pwd)
moddir=${AMDQP_MODULE_DIR:-/modules}
per_test_timeout=${AMDQP_TEST_TIMEOUT:-300}
export AMDQP_MODULE_DIR="$moddir"
dbg=/sys/kernel/debug/amdqp_kfdstub

if [ -n "${AMDQP_TESTS:-}" ]; then
	tests=$AMDQP_TESTS
else
	tests=$(cat "$here/tests.list")
fi
ntests=0
for t in $tests; do
	ntests=$((ntests + 1))
done

n=0
failed=0
result() {
	n=$((n + 1))
	case "$1" in
	OK) echo "ok $n $2" ;;
	SKIP) echo "ok $n $2 # SKIP ${3:-}" ;;
	*)
		echo "not ok $n $2${3:+ # $3}"
		failed=$((failed + 1))
		;;
	esac
}
note() {
	echo "# $*"
}
dmesg_tail() {
	dmesg 2>/dev/null | tail -n "${1:-40}" | sed 's/^/# dmesg: /'
}
stat_of() { # stat_of NAME: a value of the stub's stats file
	sed -n "s/^$1 //p" "$dbg/stats" 2>/dev/null
}

echo "TAP version 13"
echo "1..$((ntests + 2))"
note "kernel $(uname -r), $(nproc) cpu(s)"

# The provider first, as amdgpu would be: amdqp binds at load.
load_ok=1
# shellcheck disable=SC2086 # parameters are words
if ! out=$(insmod "$moddir/amdqp_kfdstub.ko" ${AMDQP_STUB_PARAMS:-} 2>&1); then
	note "insmod $moddir/amdqp_kfdstub.ko: $out"
	load_ok=0
fi
if ! out=$(insmod "$moddir/amdqp.ko" 2>&1); then
	note "insmod $moddir/amdqp.ko: $out"
	load_ok=0
fi
if [ "$load_ok" = 1 ] && [ -c /dev/amdqp ] && [ -d "$dbg" ] &&
	dmesg | grep -q 'kfd backend bound (at load)'; then
	result OK "selftests: kfdstub: module_load"
else
	result FAIL "selftests: kfdstub: module_load"
	dmesg_tail
	echo "Bail out! amdqp did not bind its kfd backend to the stub"
	exit 1
fi

for t in $tests; do
	note "selftests: kfdstub: $t"
	if [ ! -x "$here/$t" ]; then
		result FAIL "selftests: kfdstub: $t" "program missing"
		continue
	fi
	t0=$(date +%s)
	rcfile=/tmp/amdqp-rc.$$
	( timeout "$per_test_timeout" "$here/$t" 2>&1; echo $? >"$rcfile" ) |
		sed 's/^/# /'
	rc=$(cat "$rcfile" 2>/dev/null || echo 255)
	rm -f "$rcfile"
	case "$rc" in
	0) result OK "selftests: kfdstub: $t" ;;
	4) result SKIP "selftests: kfdstub: $t" "all skipped" ;;
	143 | 124)
		result FAIL "selftests: kfdstub: $t" "TIMEOUT after ${per_test_timeout}s"
		dmesg_tail
		;;
	*)
		result FAIL "selftests: kfdstub: $t" "exit=$rc"
		dmesg_tail 20
		;;
	esac
	note "$t took $(($(date +%s) - t0))s"
done

# amdqp first (it must let go of everything), then the provider.
unload_ok=1
if ! out=$(rmmod amdqp 2>&1); then
	note "rmmod amdqp: $out"
	unload_ok=0
fi
for s in violations handles; do
	v=$(stat_of "$s")
	if [ "$v" != 0 ]; then
		note "stub $s after amdqp unloaded: ${v:-unreadable}"
		unload_ok=0
	fi
done
if grep -q 'ctl=1' "$dbg/state" 2>/dev/null; then
	note "queues left suspended after amdqp unloaded:"
	grep 'ctl=1' "$dbg/state" | sed 's/^/#   /'
	unload_ok=0
fi
if grep -q ' imp=1 ' "$dbg/state" 2>/dev/null; then
	note "queues left confined (imposed CU mask) after amdqp unloaded:"
	grep ' imp=1 ' "$dbg/state" | sed 's/^/#   /'
	unload_ok=0
fi
if ! out=$(rmmod amdqp_kfdstub 2>&1); then
	note "rmmod amdqp_kfdstub: $out"
	unload_ok=0
fi
if [ "$unload_ok" = 1 ] && [ ! -d /sys/module/amdqp ]; then
	result OK "selftests: kfdstub: module_unload"
else
	result FAIL "selftests: kfdstub: module_unload"
	dmesg_tail
fi

note "$((n - failed)) of $n top-level results ok"
[ "$failed" = 0 ]

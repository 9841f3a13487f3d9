#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs the amdqp selftests inside the test VM (busybox sh, as root):
# loads /modules/amdqp.ko and /modules/amdqp_sim.ko, runs every test
# program of this folder (order in tests.list; each makes and removes its
# own sim devices), unloads the modules, and prints the whole run as one
# TAP stream in the kselftest runner's nested form:
#
#   TAP version 13
#   1..N
#   # selftests: amdqp: abi
#   # TAP version 13            <- the program's own TAP, indented by '# '
#   # ...
#   ok 2 selftests: amdqp: abi
#
# scripts/tap-summary.sh counts the nested tests. Exit status: 0 when
# everything passed (or skipped), 1 otherwise.
#
# Environment: AMDQP_MODULE_DIR (default /modules), AMDQP_TEST_TIMEOUT
# (seconds per program; default: timeout= in ./settings, else 300),
# AMDQP_TESTS (space separated program names to run instead of tests.list).

here=$(cd "$(dirname "$0")" && pwd)
moddir=${AMDQP_MODULE_DIR:-/modules}
# kselftest's per-folder settings file: timeout=SECONDS per program.
settings_timeout=$(sed -n 's/^timeout=\([0-9]*\)$/\1/p' "$here/settings" 2>/dev/null)
per_test_timeout=${AMDQP_TEST_TIMEOUT:-${settings_timeout:-300}}
export AMDQP_MODULE_DIR="$moddir"

if [ -n "${AMDQP_TESTS:-}" ]; then
	tests=$AMDQP_TESTS
elif [ -r "$here/tests.list" ]; then
	tests=$(cat "$here/tests.list")
else
	tests=$(cd "$here" && for f in *; do
		[ -f "$f" ] && [ -x "$f" ] && [ "$f" != run-guest.sh ] && echo "$f"
	done)
fi

ntests=0
for t in $tests; do
	ntests=$((ntests + 1))
done

n=0
failed=0

# result OK|FAIL|SKIP DESCRIPTION [REASON]
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

# The last kernel messages, as TAP comments, after a failure.
dmesg_tail() {
	dmesg 2>/dev/null | tail -n "${1:-40}" | sed 's/^/# dmesg: /'
}

echo "TAP version 13"
# module load + every program + unload
echo "1..$((ntests + 2))"

note "kernel $(uname -r), $(nproc) cpu(s)"
load_ok=1
for m in amdqp amdqp_sim; do
	if [ -d "/sys/module/$m" ]; then
		note "$m already loaded"
	elif ! out=$(insmod "$moddir/$m.ko" 2>&1); then
		note "insmod $moddir/$m.ko: $out"
		load_ok=0
	fi
done
if [ "$load_ok" = 1 ] && [ -c /dev/amdqp ] && [ -c /dev/amdqp_sim ] &&
	[ -d /sys/kernel/debug/amdqp_sim ]; then
	result OK "selftests: amdqp: module_load"
else
	result FAIL "selftests: amdqp: module_load"
	dmesg_tail
	echo "Bail out! amdqp modules did not load"
	exit 1
fi

start=$(date +%s)
for t in $tests; do
	note "selftests: amdqp: $t"
	if [ ! -x "$here/$t" ]; then
		result FAIL "selftests: amdqp: $t" "program missing"
		continue
	fi
	t0=$(date +%s)
	# The program's TAP goes on stdout, its logs on stderr: keep both,
	# indented so that they nest under this run's result line.
	rcfile=/tmp/amdqp-rc.$$
	( timeout "$per_test_timeout" "$here/$t" 2>&1; echo $? >"$rcfile" ) |
		sed 's/^/# /'
	rc=$(cat "$rcfile" 2>/dev/null || echo 255)
	rm -f "$rcfile"
	dt=$(($(date +%s) - t0))
	case "$rc" in
	0) result OK "selftests: amdqp: $t" ;;
	4) result SKIP "selftests: amdqp: $t" "all skipped" ;;
	143 | 124)
		result FAIL "selftests: amdqp: $t" "TIMEOUT after ${per_test_timeout}s"
		dmesg_tail
		;;
	*)
		result FAIL "selftests: amdqp: $t" "exit=$rc"
		dmesg_tail 20
		;;
	esac
	note "$t took ${dt}s"
	# A test that crashed may leave sim devices behind; say so.
	left=
	for d in /sys/kernel/debug/amdqp_sim/gpu*; do
		[ -d "$d" ] && left="$left ${d##*/}"
	done
	[ -z "$left" ] || note "sim devices left behind after $t: $left"
done
note "all programs took $(($(date +%s) - start))s"

# Unload: nothing may pin the modules now that every test program exited.
unload_ok=1
for m in amdqp_sim amdqp; do
	[ -d "/sys/module/$m" ] || { note "$m not loaded at the end"; unload_ok=0; continue; }
	if ! out=$(rmmod "$m" 2>&1); then
		note "rmmod $m: $out"
		unload_ok=0
	fi
done
if [ "$unload_ok" = 1 ] && [ ! -e /dev/amdqp ] && [ ! -d /sys/module/amdqp ]; then
	result OK "selftests: amdqp: module_unload"
else
	result FAIL "selftests: amdqp: module_unload"
	dmesg_tail
fi

note "$((n - failed)) of $n top-level results ok"
[ "$failed" = 0 ]

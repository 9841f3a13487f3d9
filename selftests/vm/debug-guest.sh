#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The guest side of the debug-kernel pass (scripts/check.sh stage
# vm-debug; the kernel is scripts/debug-kernel.sh's KASAN + lockdep +
# kmemleak + UBSAN + debug-objects + fault-injection build). In one boot:
#
#   1. the sim selftests       /tests/run-guest.sh
#   2. the stub selftests      /stubtests/run-guest.sh (kfd backend)
#   3. fault injection         /tests/churn with failslab and
#                              fail_page_alloc armed for allocations made
#                              through amdqp.ko's text; then the modules
#                              must unload (no leaked hold or reference)
#   4. kmemleak                nothing unreferenced since the baseline
#
# One TAP stream, each suite nested as kselftest's runner does. Splats in
# dmesg are the host's business (run-vm.sh fails the run on any).
# Environment: AMDQP_MODULE_DIR (default /modules), AMDQP_CHURN_ROUNDS
# (rounds of the injection pass, default 100).

moddir=${AMDQP_MODULE_DIR:-/modules}
leaks=/sys/kernel/debug/kmemleak
n=0
failed=0

result() { # OK|FAIL DESCRIPTION
	n=$((n + 1))
	if [ "$1" = OK ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		failed=$((failed + 1))
	fi
}

# nest NAME COMMAND...: run a TAP-printing suite, indented under NAME
nest() {
	name=$1
	shift
	echo "# selftests: debug-kernel: $name"
	"$@" >/tmp/nest.out 2>&1
	rc=$?
	sed 's/^/# /' /tmp/nest.out
	if [ "$rc" = 0 ]; then
		result OK "debug-kernel: $name"
	else
		result FAIL "debug-kernel: $name # exit=$rc"
	fi
}

fault_pass() {
	insmod "$moddir/amdqp.ko" && insmod "$moddir/amdqp_sim.ko" || return 1
	AMDQP_CHURN_INJECT=1 AMDQP_CHURN_REPORT=/tmp/injected \
		AMDQP_CHURN_ROUNDS=${AMDQP_CHURN_ROUNDS:-100} /tests/churn
	rc=$?
	# Every hold and queue reference gone, or these refuse.
	rmmod amdqp_sim && rmmod amdqp || return 1
	return "$rc"
}

echo "TAP version 13"
echo "1..4"
echo "# kernel $(uname -r), $(nproc) cpu(s)"
if [ ! -w "$leaks" ]; then
	echo "Bail out! $leaks missing: not the debug kernel (CONFIG_DEBUG_KMEMLEAK)?"
	exit 1
fi
# Boot-time objects kmemleak cannot see references to are not ours.
echo scan >"$leaks"
echo clear >"$leaks"

nest "sim selftests" /tests/run-guest.sh
nest "stub selftests" /stubtests/run-guest.sh
nest "fault injection" fault_pass
if [ -r /tmp/injected ]; then
	echo "# fault injection: $(cat /tmp/injected) allocation failures injected into amdqp's call sites"
fi

# kmemleak reports objects older than 5 s, after two scans.
sleep 6
echo scan >"$leaks"
echo scan >"$leaks"
report=$(cat "$leaks")
if [ -z "$report" ]; then
	result OK "debug-kernel: kmemleak: no unreferenced object"
else
	printf '%s\n' "$report" | sed 's/^/# kmemleak: /'
	result FAIL "debug-kernel: kmemleak: $(printf '%s\n' "$report" | grep -c '^unreferenced object') unreferenced object(s)"
fi
[ "$failed" = 0 ]

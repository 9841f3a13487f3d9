#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest side of 'make bench' (busybox sh): load amdqp and amdqp_sim unless
# the VM runner already did, run control_path, which creates its own HWS
# and MES sim devices with every latency knob at 0 and writes
# /tmp/control-path.json. Arguments go to control_path ('--help').
# Exit status is control_path's: 0 all checks held, 1 a check failed
# (e.g. a batch under HWS was not exactly one runlist update), 2 error.
#
#   AMDQP_MODULES=DIR   where amdqp.ko and amdqp_sim.ko are, if not loaded

here=$(cd "$(dirname "$0")" && pwd)
dbg=/sys/kernel/debug

say() {
	echo "[run-bench] $*"
}

fail() {
	echo "[run-bench] error: $*" >&2
	exit 2
}

# load NAME: insmod NAME.ko from the first folder that has it, unless loaded
load() {
	[ -d "/sys/module/$1" ] && return 0
	for d in ${AMDQP_MODULES:+"$AMDQP_MODULES"} /modules "$here/modules" \
		"/lib/modules/$(uname -r)/extra"; do
		if [ -f "$d/$1.ko" ]; then
			say "insmod $d/$1.ko"
			insmod "$d/$1.ko" || fail "insmod $d/$1.ko failed"
			return 0
		fi
	done
	fail "$1.ko not found (set AMDQP_MODULES=DIR)"
}

grep -q " $dbg debugfs " /proc/mounts || mount -t debugfs debugfs "$dbg"
load amdqp
load amdqp_sim
[ -w "$dbg/amdqp_sim/new_device" ] || fail "$dbg/amdqp_sim/new_device missing"

say "kernel $(uname -r), $(grep -c '^processor' /proc/cpuinfo) CPU(s)"
"$here/control_path" --json /tmp/control-path.json "$@"
rc=$?
say "control_path exit status $rc"
exit $rc

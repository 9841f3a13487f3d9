#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest side of 'make demo' (busybox sh): load amdqp and amdqp_sim unless
# the VM runner already did, create a simulated MI300-like HWS device,
# run amdqp_demo on it, remove the device. Arguments go to amdqp_demo
# (see 'amdqp_demo --help'). Exit status is amdqp_demo's: 0 PASS, 1 no
# clear P99 gain, 2 error.
#
# Environment (all optional):
#   DEMO_GPU=4201   gpu_id of the sim device
#   DEMO_MODE=hws   scheduler model, hws or mes
#   DEMO_XCC=4      XCC count (MI308X: 4 per partition)
#   DEMO_SLOTS=8    compute slots of the virtual GPU
#   DEMO_UNMAP_US=200 DEMO_MAP_US=100 DEMO_SAVE_US=50 DEMO_RESTORE_US=50
#   DEMO_JSON=/tmp/demo.json   where amdqp_demo writes its results
#   AMDQP_MODULES=DIR          where amdqp.ko and amdqp_sim.ko are

here=$(cd "$(dirname "$0")" && pwd)
gpu=${DEMO_GPU:-4201}
mode=${DEMO_MODE:-hws}
xcc=${DEMO_XCC:-4}
slots=${DEMO_SLOTS:-8}
json=${DEMO_JSON:-/tmp/demo.json}
dbg=/sys/kernel/debug
sim=$dbg/amdqp_sim

say() {
	echo "[run-demo] $*"
}

fail() {
	echo "[run-demo] error: $*" >&2
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

knob() {
	echo "$2" >"$sim/gpu$gpu/$1" || fail "cannot set $1=$2"
}

# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() {
	if [ -d "$sim/gpu$gpu" ]; then
		echo "$gpu" >"$sim/del_device"
	fi
}

grep -q " $dbg debugfs " /proc/mounts || mount -t debugfs debugfs "$dbg"
load amdqp
load amdqp_sim
[ -w "$sim/new_device" ] || fail "$sim/new_device missing (debugfs not mounted?)"

[ -d "$sim/gpu$gpu" ] && echo "$gpu" >"$sim/del_device"
echo "$gpu $mode $xcc $slots" >"$sim/new_device" ||
	fail "cannot create sim device '$gpu $mode $xcc $slots'"
trap cleanup EXIT
knob unmap_latency_us "${DEMO_UNMAP_US:-200}"
knob map_latency_us "${DEMO_MAP_US:-100}"
knob cwsr_save_us "${DEMO_SAVE_US:-50}"
knob cwsr_restore_us "${DEMO_RESTORE_US:-50}"

say "sim device gpu $gpu: $mode, $xcc XCC, $slots slots;" \
	"unmap $(cat "$sim/gpu$gpu/unmap_latency_us") us," \
	"map $(cat "$sim/gpu$gpu/map_latency_us") us," \
	"CWSR save $(cat "$sim/gpu$gpu/cwsr_save_us") us," \
	"restore $(cat "$sim/gpu$gpu/cwsr_restore_us") us"
say "amdqp max_suspend_ms=$(cat /sys/module/amdqp/parameters/max_suspend_ms)" \
	"cooldown_ms=$(cat /sys/module/amdqp/parameters/cooldown_ms)"

"$here/amdqp_demo" --gpu "$gpu" --json "$json" "$@"
rc=$?
say "device counters after the demo:"
sed 's/^/[run-demo]   /' "$sim/gpu$gpu/counters"
say "amdqp stats:"
sed 's/^/[run-demo]   /' /sys/kernel/debug/amdqp/stats
say "amdqp_demo exit status $rc"
exit $rc

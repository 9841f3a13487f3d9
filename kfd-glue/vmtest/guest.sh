#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the VM (busybox sh) after the stock DRM dependencies of
# amdgpu were loaded (run-vm.sh --stock-deps amdgpu). Loads the patched
# amdgpu.ko and amdqp.ko in both orders and checks the kfd backend binds,
# unbinds and reports itself correctly.
#
# Writes "ok - ..." / "not ok - ..." lines to $1 (the host numbers them
# into TAP).
out=${1:-/results/kfd.tap}
mkdir -p "$(dirname "$out")"
: >"$out"
M=/modules
T=/files/kfdtest

res() {	# res STATUS DESCRIPTION
	if [ "$1" = 0 ]; then echo "ok - $2"; else echo "not ok - $2"; fi |
		tee -a "$out"
}

dmesg_has() {	# dmesg_has PATTERN: since the last mark
	dmesg | sed -n "/kfdtest-mark-$mark/,\$p" | grep -q "$1"
}

mark=0
next_mark() {
	mark=$((mark + 1))
	echo "kfdtest-mark-$mark" >/dev/kmsg
}

tests() {	# tests --kfd|--no-kfd: kfdtest's lines go to the TAP file
	"$T" "$1" >/tmp/kfdtest.out 2>&1
	rc=$?
	cat /tmp/kfdtest.out
	grep -E '^(ok|not ok) - ' /tmp/kfdtest.out >>"$out"
	[ "$rc" = 0 ] || [ "$rc" = 1 ] || res 1 "kfdtest $1 ran (exit $rc)"
}

# --- order 1: amdgpu, then amdqp; unload amdqp first -------------------
next_mark
insmod $M/amdgpu.ko
res $? "insmod patched amdgpu.ko after its stock dependencies"
[ -c /dev/kfd ]
res $? "/dev/kfd appears"
grep -qw kfd_qctl_register_client /proc/kallsyms
res $? "amdgpu exports the queue control API (kfd_qctl_register_client)"
grep -qw kfd_qctl_set_cu_mask /proc/kallsyms
res $? "amdgpu exports the CU-mask call of patch 0005 (kfd_qctl_set_cu_mask)"

# A live KFD process (no queues: there is no GPU) for amdqp's initial
# walk of all processes, and for the process exit path afterwards.
sh -c 'exec 3<>/dev/kfd; sleep 30 3>&-; exit 0' &
holder=$!
sleep 1
found=1
for f in /proc/$holder/fd/*; do
	[ "$(readlink "$f")" = /dev/kfd ] && found=0
done
res $found "a process holds /dev/kfd open (a KFD process exists)"

next_mark
insmod $M/amdqp.ko
res $? "insmod amdqp.ko with amdgpu loaded"
dmesg_has "amdqp: kfd backend bound (at load)"
res $? "dmesg: amdqp bound the kfd backend at load"
dmesg_has "amdqp: kfd backend bound (at load).*CU masks supported"
res $? "dmesg: amdqp found the glue's CU-mask call (CONFINE through kfd)"
tests --kfd

kill $holder
wait $holder 2>/dev/null
sleep 1
[ ! -d /proc/$holder ]
res $? "the KFD process exits while amdqp is bound"

# Debian's ROCr on this /dev/kfd while amdqp is bound (vmtest/rocr.sh;
# kfd-glue/check.sh passes it when the programs were built).
if [ -n "${ROCR_SMOKE:-}" ]; then
	sh /files/rocr.sh "$out" /results/rocr.jsonl
fi

rmmod amdqp
res $? "rmmod amdqp (amdgpu stays)"
rmmod amdgpu
res $? "then rmmod amdgpu"

# --- order 2: amdqp first, amdgpu later; unload amdgpu first -----------
next_mark
insmod $M/amdqp.ko
res $? "insmod amdqp.ko without amdgpu"
dmesg_has "amdqp: kfd backend not bound"
res $? "dmesg: amdqp says why the kfd backend is not bound"
tests --no-kfd

next_mark
insmod $M/amdgpu.ko
res $? "insmod amdgpu.ko while amdqp is loaded"
dmesg_has "amdqp: kfd backend bound (amdgpu loaded)"
res $? "dmesg: amdqp bound the kfd backend when amdgpu loaded"
tests --kfd

next_mark
rmmod amdgpu
res $? "rmmod amdgpu while amdqp is bound to it"
dmesg_has "amdqp: kfd backend unbound"
res $? "dmesg: amdqp unbound the kfd backend when amdgpu went away"
tests --no-kfd

rmmod amdqp
res $? "then rmmod amdqp"
! grep -q -E '^(amdgpu|amdqp) ' /proc/modules
res $? "both modules gone"
exit 0

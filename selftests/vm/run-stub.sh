#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kfd backend against the glue stub, in the VM: builds the stub tests
# (selftests/kfdstub -> build/selftests-stub), boots the pinned kernel with
# amdqp.ko and amdqp_kfdstub.ko (no amdgpu, no sim) and runs
# selftests/kfdstub/run-guest.sh there. Prints the guest's TAP (nested,
# for scripts/tap-summary.sh) and exits with its status.
#
# Usage: run-stub.sh [--ko-dir DIR] [--timeout SEC] [--dmesg FILE]
#   --ko-dir DIR   the built kmod/ folder: DIR/amdqp.ko and
#                  DIR/testing/amdqp_kfdstub.ko (default: kmod/ of this
#                  tree, e.g. after `make modules`)
#   --timeout SEC  VM wall-clock limit (default 900)
#   --dmesg FILE   keep the guest's dmesg
# Environment: KSRC (a linux-source tree with the kselftest harness;
# default scripts/kernel-src.sh --minimal), AMDQP_TESTS (programs to run),
# AMDQP_STUB_PARAMS (the stub's insmod parameters), the run-vm.sh knobs
# (AMDQP_VM_*).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
kodir="$root/kmod"
timeout_s=900
dmesg_args=()

while [ $# -gt 0 ]; do
	case "$1" in
	--ko-dir) kodir="$2"; shift ;;
	--timeout) timeout_s="$2"; shift ;;
	--dmesg) dmesg_args=(--dmesg "$2"); shift ;;
	-h | --help) sed -n '3,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "run-stub.sh: FAIL: unknown option '$1'"; exit 125 ;;
	esac
	shift
done

for ko in "$kodir/amdqp.ko" "$kodir/testing/amdqp_kfdstub.ko"; do
	if [ ! -f "$ko" ]; then
		echo "run-stub.sh: FAIL: $ko missing (make modules)"
		exit 125
	fi
done

out="$root/build/selftests-stub"
ksrc="${KSRC:-$(bash "$root/scripts/kernel-src.sh" --minimal)}"
if ! nice make -s -C "$root/selftests/kfdstub" KSRC="$ksrc" OUT="$out" >&2; then
	echo "run-stub.sh: FAIL: make -C selftests/kfdstub failed"
	exit 125
fi

envs=()
[ -z "${AMDQP_TESTS:-}" ] || envs+=(--env "AMDQP_TESTS=$AMDQP_TESTS")
[ -z "${AMDQP_STUB_PARAMS:-}" ] || envs+=(--env "AMDQP_STUB_PARAMS=$AMDQP_STUB_PARAMS")
exec bash "$here/run-vm.sh" --module-file "$kodir/amdqp.ko" \
	--module-file "$kodir/testing/amdqp_kfdstub.ko" \
	--dir "$out:/stubtests" --timeout "$timeout_s" \
	${envs[@]+"${envs[@]}"} ${dmesg_args[@]+"${dmesg_args[@]}"} \
	-- /stubtests/run-guest.sh

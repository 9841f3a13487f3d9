#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/run-hsa-program.sh on a small HSA program of one's own
# (hsa_own_program.c, public hsa.h only), compiled here against the
# stand-in: the program runs in the VM on the sim GPU under amdqpctl run
# --priority high, amdqpctl list shows its queue at priority 12, its exit
# status comes back, HSA_AGENT_INFO_NAME and the refused cooperative queue
# are what hsa-sim's README says. Output is TAP.
#
#   selftests/vm/tests/run-hsa-program-test.sh BUILD_DIR
#
# Exit status: 0 all passed; 1 a failure; 77 (skipped) when QEMU, the VM
# kernel, the modules, hsa/hsa.h or a C compiler are missing - unless
# AMDQP_VM_REQUIRED=1 (CI), which makes each of those a failure.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/lib.sh
. "$here/../../../scripts/lib.sh"
build="$(readlink -f "${1:?usage: $0 BUILD_DIR}")"

skip() {
	if [ "${AMDQP_VM_REQUIRED:-0}" = 1 ]; then
		echo "1..1"
		echo "not ok 1 - the VM test has its inputs: $* (AMDQP_VM_REQUIRED=1)"
		exit 1
	fi
	echo "1..0 # SKIP $*"
	exit 77
}

command -v "${AMDQP_VM_QEMU:-qemu-system-x86_64}" >/dev/null || skip "no QEMU"
[ -f "$AMDQP_CACHE/vm-kernel-$(amdqp_ver_path "$AMDQP_KPKGVER")/.complete" ] ||
	skip "the VM kernel is not cached (scripts/fetch-kernel.sh)"
ko=()
if [ -n "${AMDQP_KO_DIR:-}" ]; then
	ko=(--ko-dir "$AMDQP_KO_DIR")
elif [ ! -f "${AMDQP_BUILDS:-$AMDQP_CACHE}/build-6.12/kmod/sim/amdqp_sim.ko" ] &&
	[ ! -f "$AMDQP_ROOT/kmod/sim/amdqp_sim.ko" ]; then
	skip "no built amdqp.ko and sim/amdqp_sim.ko (make modules, or set AMDQP_KO_DIR)"
fi
cc="${CC:-cc}"
command -v "$cc" >/dev/null || skip "no C compiler ($cc)"
[ -r /usr/include/hsa/hsa.h ] || skip "no hsa/hsa.h (libhsa-runtime-dev)"
hsalib="$build/libuser/testing/hsa-sim/lib/libhsa-runtime64.so.1"
[ -f "$hsalib" ] || skip "no $hsalib (the hsasim_runtime target)"

w="$(mktemp -d "${TMPDIR:-/tmp}/run-hsa-program-test.XXXXXX")"
trap 'rm -rf "$w"' EXIT
# Linked by SONAME, no RUNPATH: any libhsa-runtime64.so.1 serves.
"$cc" -O2 -Wall -Werror -o "$w/hsa_own_program" "$here/hsa_own_program.c" "$hsalib"

n=0
fails=0
check() { # check DESCRIPTION COMMAND...
	local desc="$1"
	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n - $desc"
	else
		echo "not ok $n - $desc"
		fails=$((fails + 1))
	fi
}
has() { grep -Eq "$1" "$w/out" || { echo "# no /$1/ in the output"; return 1; }; }

set +e
bash "$AMDQP_ROOT/scripts/run-hsa-program.sh" --build "$build" "${ko[@]+"${ko[@]}"}" \
	--priority high --timeout "${AMDQP_RUN_HSA_TIMEOUT:-540}" \
	"$w/hsa_own_program" 40 50000000 7 >"$w/out" 2>&1
rc=$?
set -e
tr -d '\r' <"$w/out" >"$w/out.txt" && mv "$w/out.txt" "$w/out"
sed 's/^/# /' "$w/out"

echo "1..6"
check "the program's exit status (7) is the script's" [ "$rc" = 7 ]
check "HSA_AGENT_INFO_NAME is amdqp-sim" has '^agent: amdqp-sim$'
check "HSA_QUEUE_TYPE_COOPERATIVE is refused" has '^cooperative queue: refused$'
check "every kernel ran on the sim GPU" has '^completed 40 kernels$'
check "amdqpctl list showed its queue while it ran" has '^== amdqpctl list --pid [0-9]+ \(while it runs\):'
check "at priority 12 (high)" has '(^|[^0-9])12([^0-9]|$).*4201|4201.*(^|[^0-9])12([^0-9]|$)'
[ "$fails" = 0 ]

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Issue 25's adversarial suite, end to end in the test VM (ctest trust.vm):
# tenants as other Unix users attack the real amdqp.ko and amdqpd (ceiling,
# forged activity pages, squatters and a socket flood, the starvation
# budget, the per-user rate limit). Compiles trust_tool.c here and runs
# trust-guest.sh through tagging-vm.sh; output is TAP.
#
#   selftests/vm/tests/trust-vm.sh --amdqpd PATH --amdqpctl PATH --preload PATH
#       --hsa-runtime PATH --hsa-app PATH
#
# The options are tagging-vm.sh's (see its --help). The C compiler is $CC
# (default cc). Exit status: 0 all passed; 1 a failure; 77 (skipped) when
# the compiler, QEMU, the VM kernel, the modules or the build are missing -
# unless AMDQP_VM_REQUIRED=1 (CI), which makes each of those a failure.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$here/../../.."

case "${1:-}" in
-h | --help)
	sed -n '/^#   selftests/,/^# unless/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
	exit 0
	;;
esac

cc="${CC:-cc}"
if ! command -v "$cc" >/dev/null; then
	if [ "${AMDQP_VM_REQUIRED:-0}" = 1 ]; then
		echo "1..1"
		echo "not ok 1 - a C compiler for trust_tool.c ($cc) (AMDQP_VM_REQUIRED=1)"
		exit 1
	fi
	echo "1..0 # SKIP no C compiler ($cc)"
	exit 77
fi
w="$(mktemp -d "${TMPDIR:-/tmp}/trust-vm.XXXXXX")"
trap 'rm -rf "$w"' EXIT
"$cc" -O2 -Wall -Wextra -Werror -I"$root/uapi" -I"$root/libuser/lib/include" \
	-o "$w/trust_tool" "$here/trust_tool.c"
set +e
# The suite is long (attacks by the dozen, each waiting for its effect in
# an emulated VM): a limit of its own, inside ctest's (CMakeLists.txt).
AMDQP_TAGGING_VM_TIMEOUT="${AMDQP_TAGGING_VM_TIMEOUT:-780}" \
	bash "$here/tagging-vm.sh" --guest "$here/trust-guest.sh" \
		--extra-dyn "$w/trust_tool:/opt/amdqp-e2e/bin/trust_tool" "$@"
rc=$?
set -e
exit "$rc"

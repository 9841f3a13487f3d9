#!/bin/bash
# 'make bench': build the control-path benchmark and run it in the VM;
# its JSON lands in bench/out/control-path.json.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	cat <<USAGE
Usage: ${0##*/} [--no-deps] [--no-build] [-- ARGS for run-bench.sh]

Installs missing packages (scripts/deps.sh), builds the modules
(scripts/build-modules.sh) and the benchmark (make -C bench, into
bench/out/guest/), boots the VM with amdqp.ko and amdqp_sim.ko at
/modules and bench/out/guest at /bench, runs /bench/run-bench.sh ARGS
with its output shown live, and copies the guest's /tmp/control-path.json
to bench/out/control-path.json (a missing file is a failure).

Variables named BENCH_* are passed into the guest. AMDQP_BENCH_TIMEOUT
(default 900) limits the VM run; AMDQP_VM_* knobs apply
(selftests/vm/run-vm.sh --help).
USAGE
}

amdqp_guest_options "$@"
cd "$AMDQP_ROOT"
amdqp_guest_prepare bench bench/out/guest/run-bench.sh \
	"the benchmark is"
amdqp_env_args BENCH_

rm -f bench/out/control-path.json
exec bash selftests/vm/run-vm.sh \
	--module-file kmod/amdqp.ko --module-file kmod/sim/amdqp_sim.ko \
	--dir bench/out/guest:/bench "${AMDQP_ENV_ARGS[@]}" \
	--out /tmp/control-path.json:bench/out/control-path.json \
	--timeout "${AMDQP_BENCH_TIMEOUT:-900}" \
	-- /bench/run-bench.sh "${AMDQP_ARGS[@]}"

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

deps=1
build=1
while [ $# -gt 0 ]; do
	case "$1" in
	--no-deps) deps=0 ;;
	--no-build) build=0 ;;
	-h | --help) usage; exit 0 ;;
	--) shift; break ;;
	*) usage >&2; exit 2 ;;
	esac
	shift
done

cd "$AMDQP_ROOT"
[ -f bench/Makefile ] ||
	amdqp_die "bench/Makefile is missing: the benchmark is not there yet"
[ "$deps" = 0 ] || bash scripts/deps.sh
if [ "$build" = 1 ]; then
	bash scripts/build-modules.sh
	nice make -C bench -j"$(nproc)"
fi
[ -x bench/out/guest/run-bench.sh ] ||
	amdqp_die "bench/out/guest/run-bench.sh was not built (make -C bench)"

env_args=()
while IFS= read -r v; do
	env_args+=(--env "$v=${!v}")
done < <(compgen -v | grep '^BENCH_' || true)

rm -f bench/out/control-path.json
exec bash selftests/vm/run-vm.sh \
	--module-file kmod/amdqp.ko --module-file kmod/sim/amdqp_sim.ko \
	--dir bench/out/guest:/bench "${env_args[@]}" \
	--out /tmp/control-path.json:bench/out/control-path.json \
	--timeout "${AMDQP_BENCH_TIMEOUT:-900}" \
	-- /bench/run-bench.sh "$@"

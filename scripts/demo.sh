#!/bin/bash
# 'make demo': build everything the demo needs and run it in the VM with
# its output shown live.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	cat <<USAGE
Usage: ${0##*/} [--no-deps] [--no-build] [-- ARGS for run-demo.sh]

Installs missing packages (scripts/deps.sh), builds the modules
(scripts/build-modules.sh) and the guest programs (make -C experiments,
into experiments/out/), then boots the VM with amdqp.ko and amdqp_sim.ko
at /modules and experiments/out at /demo, and runs /demo/run-demo.sh ARGS.
The demo's JSON (/tmp/demo.json in the guest) is copied to
experiments/out/demo.json when it was written.

Variables named DEMO_* are passed into the guest (see
experiments/run-demo.sh), e.g. DEMO_MODE=mes ${0##*/}.
AMDQP_DEMO_TIMEOUT (default 900) limits the VM run; AMDQP_VM_* knobs
apply (selftests/vm/run-vm.sh --help).
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
[ -f experiments/Makefile ] ||
	amdqp_die "experiments/Makefile is missing: the demo's guest programs are not there yet"
[ "$deps" = 0 ] || bash scripts/deps.sh
if [ "$build" = 1 ]; then
	bash scripts/build-modules.sh
	nice make -C experiments -j"$(nproc)"
fi
[ -x experiments/out/run-demo.sh ] ||
	amdqp_die "experiments/out/run-demo.sh was not built (make -C experiments)"

env_args=()
while IFS= read -r v; do
	env_args+=(--env "$v=${!v}")
done < <(compgen -v | grep '^DEMO_' || true)

exec bash selftests/vm/run-vm.sh \
	--module-file kmod/amdqp.ko --module-file kmod/sim/amdqp_sim.ko \
	--dir experiments/out:/demo "${env_args[@]}" \
	--out-optional /tmp/demo.json:experiments/out/demo.json \
	--timeout "${AMDQP_DEMO_TIMEOUT:-900}" \
	-- /demo/run-demo.sh "$@"

#!/bin/bash
# 'make demo-mechanism': the mechanism alone (amdqp_demo's hand-written policy
# on kernel-fed sim queues, no daemon, no tagging): build it and run it in the VM with
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
experiments/out/demo-mechanism.json when it was written.

Variables named DEMO_* are passed into the guest (see
experiments/run-demo.sh), e.g. DEMO_MODE=mes ${0##*/}.
AMDQP_DEMO_TIMEOUT (default 900) limits the VM run; AMDQP_VM_* knobs
apply (selftests/vm/run-vm.sh --help).
USAGE
}

amdqp_guest_options "$@"
cd "$AMDQP_ROOT"
amdqp_guest_prepare experiments experiments/out/run-demo.sh \
	"the demo's guest programs are"
amdqp_env_args DEMO_

exec bash selftests/vm/run-vm.sh \
	--module-file kmod/amdqp.ko --module-file kmod/sim/amdqp_sim.ko \
	--dir experiments/out:/demo "${AMDQP_ENV_ARGS[@]}" \
	--out-optional /tmp/demo.json:experiments/out/demo-mechanism.json \
	--timeout "${AMDQP_DEMO_TIMEOUT:-900}" \
	-- /demo/run-demo.sh "${AMDQP_ARGS[@]}"

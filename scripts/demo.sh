#!/bin/bash
# 'make demo': the full stack on the simulated device in the test VM -
# amdqp.ko + amdqp_sim.ko, unmodified HSA programs on the hsa-sim stand-in
# tagged by amdqpctl run, and the amdqpd policy daemon - in phases, written
# to experiments/out/demo.json (experiments/demo/demo.py says what runs).
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	cat <<USAGE
Usage: ${0##*/} [--no-deps] [--no-build] [-- ARGS for demo.py]

Installs missing packages (scripts/deps.sh), builds the modules
(scripts/build-modules.sh) and the userspace the demo runs (amdqpd,
amdqpctl, the tagging layer, the hsa-sim stand-in and hsa_app, in
build/demo), boots the VM with them and runs experiments/demo/demo.py
ARGS (python3 experiments/demo/demo.py --help lists them, e.g. --only
hp-alone,both+amdqpd or --rounds 1). Prints the phases side by side with
the verdict and copies the guest's JSON to experiments/out/demo.json.
The verdict: both+amdqpd's high-priority P95 over hp-alone's, with a 95 %
bootstrap interval (the two phases run in ABBA rounds, their requests
pooled); PASS when the whole interval is <= 1.5x, FAIL when all of it is
above, INCONCLUSIVE otherwise (Documentation/policy.rst, "Measured").
Exit status: 0 PASS, 1 FAIL or INCONCLUSIVE, other: an error.

AMDQP_KO_DIR takes the modules from another build (default kmod/, which
the build step makes); AMDQP_DEMO_BUILD the userspace from another CMake
build folder (default build/demo; with --no-build it must hold the
targets above). DEMO_SECONDS (default 20: 100 measured high-priority
requests at 5/s, after 1 s of warm-up) sets the length of each run of
hp-alone, both+amdqpd and both+amdqpd-confine, DEMO_ROUNDS (default 2)
their ABBA rounds (4 runs each, 400 requests), DEMO_OTHER_SECONDS
(default 10) the length of the five other phases (run once), so the 17
runs take about 5.5 minutes with the boot (measured:
Documentation/policy.rst);
AMDQP_DEMO_TIMEOUT (default 900) limits the VM run; AMDQP_VM_* knobs
apply (selftests/vm/run-vm.sh --help). As root QEMU runs at
AMDQP_VM_NICE=-10 unless set: what the phases compare is the emulated
CPUs' wake-up latency, which other work on the host would otherwise
stretch (run it on a quiet machine all the same).
USAGE
}

amdqp_guest_options "$@"
cd "$AMDQP_ROOT"
b="${AMDQP_DEMO_BUILD:-$AMDQP_ROOT/build/demo}"
[ "$AMDQP_DEPS" = 0 ] || bash scripts/deps.sh
if [ "$AMDQP_BUILD" = 1 ]; then
	bash scripts/build-modules.sh
	cmake -S . -B "$b" -DCMAKE_BUILD_TYPE=Release >/dev/null
	nice cmake --build "$b" -j"$(nproc)" --target amdqpd amdqpctl amdqp-preload \
		hsasim_runtime hsa_app
fi
ctl="$b/tools/amdqpctl/amdqpctl"
daemon="$b/libuser/daemon/amdqpd"
preload="$b/libuser/preload/libamdqp-preload.so"
hsart="$b/libuser/testing/hsa-sim/lib/libhsa-runtime64.so.1"
app="$b/libuser/testing/hsa-sim/tests/hsa_app"
ko="${AMDQP_KO_DIR:-kmod}"
for f in "$ctl" "$daemon" "$preload" "$hsart" "$app" "$ko/amdqp.ko" "$ko/sim/amdqp_sim.ko"; do
	[ -f "$f" ] || amdqp_die "$f is missing: run ${0##*/} without --no-build"
done
mkdir -p experiments/out
amdqp_env_args DEMO_
[ "$(id -u)" != 0 ] || export AMDQP_VM_NICE="${AMDQP_VM_NICE--10}"

exec bash selftests/vm/run-vm.sh --python --mem 1536 \
	--module-file "$ko/amdqp.ko" --module-file "$ko/sim/amdqp_sim.ko" \
	--dyn "$ctl:/opt/amdqp/bin/amdqpctl" --dyn "$daemon:/opt/amdqp/sbin/amdqpd" \
	--dyn "$preload:/opt/amdqp/lib/libamdqp-preload.so" \
	--dyn "$hsart:/opt/hsa-sim/lib/libhsa-runtime64.so.1" \
	--file "$app:/opt/hsa-sim/bin/hsa_app" \
	--file experiments/demo/demo.py:/files/demo.py \
	--env AMDQPCTL_BIN=/opt/amdqp/bin/amdqpctl --env AMDQPD_BIN=/opt/amdqp/sbin/amdqpd \
	--env AMDQP_PRELOAD_LIB=/opt/amdqp/lib/libamdqp-preload.so \
	--env HSA_APP=/opt/hsa-sim/bin/hsa_app --env HSA_LIB_DIR=/opt/hsa-sim/lib \
	"${AMDQP_ENV_ARGS[@]}" \
	--out-optional /tmp/demo.json:experiments/out/demo.json \
	--out-optional /tmp/control-loop.json:bench/out/control-loop.json \
	--timeout "${AMDQP_DEMO_TIMEOUT:-900}" \
	-- python3 /files/demo.py "${AMDQP_ARGS[@]}"

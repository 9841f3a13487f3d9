#!/bin/bash
# 'make bench': the tagging layer's cost per submission and the policy's
# cost per event on the host (bench/out/tagging.json, bench/out/policy.json),
# the control-path benchmark in the VM (bench/out/control-path.json), then
# the control loop (bench/out/control-loop*.json).
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	cat <<USAGE
Usage: ${0##*/} [--no-deps] [--no-build] [-- ARGS for run-bench.sh]

Installs missing packages (scripts/deps.sh), then runs four benchmarks:

1. Tagging cost (issue 8): builds the userspace project in Release into
   build/bench-user (targets hsasim_bench_tagging and amdqp-preload) and
   runs hsasim_bench_tagging --tool libamdqp-preload.so on the hsa-sim
   stand-in's thread backend, on this host: what the tagging layer adds to
   one AQL submission, with and without it in the same run. Writes
   bench/out/tagging.json {"median_ns_added", "p99_ns_added",
   "submissions", ...} and prints the numbers and the verdict against the
   target (median <= ${AMDQP_TAGGING_TARGET_NS:-50} ns). Missing the target
   is reported, not a failure; run on a quiet machine.
2. Policy decision cost (issue 9): builds amdqp_policy_bench (Google
   Benchmark, libuser/policy/bench) in the same Release build and runs
   each case AMDQP_POLICY_REPETITIONS times (default 5): the policy's CPU
   time per event (kernel_events: one update() with one queue's new
   sample; request_cycle: one update() with every queue's sample, 200 a
   request, and the tick() after it). Writes bench/out/policy.json:
     {"what", "unit": "ns", "build_type": "Release", "context": {"date",
      "host_name", "num_cpus", "load_avg", ...},
      "benchmarks": [{"name": "BM_KernelEvents/gpus:8/queues_per_gpu:2",
        "case": "kernel_events" | "request_cycle", "gpus", "queues",
        "ns_per_event" (median of the repetitions), "ns_per_event_min",
        "ns_per_event_max", "repetitions", "iterations"}, ...]}
   and prints one summary line "policy: ns per event ...". No target: the
   numbers are for Documentation/policy.rst's Cost section.
3. Control path: builds the modules (scripts/build-modules.sh) and the
   benchmark (make -C bench, into bench/out/guest/), boots the VM with
   amdqp.ko and amdqp_sim.ko at /modules and bench/out/guest at /bench,
   runs /bench/run-bench.sh ARGS with its output shown live, and copies
   the guest's /tmp/control-path.json to bench/out/control-path.json (a
   missing file is a failure).
4. Control loop (issue 9): the demo's VM (scripts/demo.sh) runs amdqpd
   with a low-priority and an open-loop high-priority hsa_app and measures
   first doorbell of the idle high-priority queue -> low-priority queues
   unmapped, at the sim's unmap latency and at 0, plus amdqpd's CPU use
   idle and under load: bench/out/control-loop.json {"p50_us", "p99_us",
   "max_us", "unmap_us", ...}; and natively, against the /dev/amdqp fake
   (the loop without any unmap): bench/out/control-loop-native.json.

--no-build uses what build/bench-user and bench/out/guest already hold.

Environment: AMDQP_BENCH_ONLY=tagging|policy|control-path|control-loop
runs one. AMDQP_TAGGING_SUBMISSIONS (default the benchmark's, 1000000 per
side), AMDQP_TAGGING_TARGET_NS (50), AMDQP_POLICY_REPETITIONS (5).
Variables named BENCH_* are passed into the guest. AMDQP_BENCH_TIMEOUT
(default 900) limits the VM run; AMDQP_VM_* knobs apply
(selftests/vm/run-vm.sh --help).
USAGE
}

# tagging_bench: step 1 (see usage)
tagging_bench() {
	local b="$AMDQP_ROOT/build/bench-user" out=bench/out/tagging.json
	local bench="$b/libuser/testing/hsa-sim/bench/hsasim_bench_tagging"
	local tool="$b/libuser/preload/libamdqp-preload.so"
	local args=() json median p99 n target verdict
	if [ "$AMDQP_BUILD" = 1 ]; then
		amdqp_log "tagging: building $b (Release)"
		nice cmake -S . -B "$b" -DCMAKE_BUILD_TYPE=Release -DAMDQP_USER_TESTS=OFF >/dev/null
		nice cmake --build "$b" -j"$(nproc)" --target hsasim_bench_tagging amdqp-preload
	fi
	[ -x "$bench" ] ||
		amdqp_die "$bench was not built (needs libhsa-runtime-dev: scripts/deps.sh)"
	[ -f "$tool" ] || amdqp_die "$tool was not built"
	[ -z "${AMDQP_TAGGING_SUBMISSIONS:-}" ] ||
		args+=(--submissions "$AMDQP_TAGGING_SUBMISSIONS")
	mkdir -p bench/out
	rm -f "$out"
	amdqp_log "tagging: $bench --tool $tool (HSA_SIM_BACKEND=thread)"
	HSA_SIM_BACKEND=thread "$bench" --tool "$tool" --out "$out" "${args[@]}"
	[ -s "$out" ] || amdqp_die "hsasim_bench_tagging wrote no $out"
	json="$(cat "$out")"
	num() { sed -n "s/.*\"$1\": *\\([-0-9.eE+]*\\).*/\\1/p" <<<"$json"; }
	median="$(num median_ns_added)"
	p99="$(num p99_ns_added)"
	n="$(num submissions)"
	if [ -z "$median" ] || [ -z "$p99" ] || [ -z "$n" ]; then
		amdqp_die "$out lacks median_ns_added, p99_ns_added or submissions: $json"
	fi
	target="${AMDQP_TAGGING_TARGET_NS:-50}"
	if awk -v m="$median" -v t="$target" 'BEGIN { exit !(m <= t) }'; then
		verdict="MET"
	else
		verdict="MISSED"
	fi
	echo "tagging: median +$median ns, p99 +$p99 ns per submission ($n submissions) -> $out"
	echo "tagging: target median <= $target ns: $verdict"
}

# policy_bench: step 2 (see usage)
policy_bench() {
	local b="$AMDQP_ROOT/build/bench-user" out=bench/out/policy.json
	local bench="$b/libuser/policy/bench/amdqp_policy_bench"
	local raw="$b/policy-bench-raw.json"
	if [ "$AMDQP_BUILD" = 1 ]; then
		amdqp_log "policy: building $b (Release)"
		nice cmake -S . -B "$b" -DCMAKE_BUILD_TYPE=Release -DAMDQP_USER_TESTS=OFF >/dev/null
		nice cmake --build "$b" -j"$(nproc)" --target amdqp_policy_bench
	fi
	[ -x "$bench" ] ||
		amdqp_die "$bench was not built (needs libbenchmark-dev: scripts/deps.sh)"
	mkdir -p bench/out
	rm -f "$out" "$raw"
	amdqp_log "policy: $bench"
	# CPU time per event (items): a busy host delays the benchmark less
	# than it stretches wall time. The table goes to the terminal.
	"$bench" --benchmark_repetitions="${AMDQP_POLICY_REPETITIONS:-5}" \
		--benchmark_out="$raw" --benchmark_out_format=json
	[ -s "$raw" ] || amdqp_die "amdqp_policy_bench wrote no $raw"
	/usr/bin/python3 libuser/policy/bench/policy_json.py "$raw" "$out"
}

# The policy's control loop (issue 9): amdqpd in the VM, through the demo's
# guest program (experiments/demo/demo.py --control-loop).
control_loop_bench() {
	local opts=(--no-deps) b="$AMDQP_ROOT/build/bench-loop"
	[ "$AMDQP_BUILD" = 1 ] || opts+=(--no-build)
	mkdir -p bench/out
	# Natively first: the loop's own cost against the /dev/amdqp fake.
	if [ "$AMDQP_BUILD" = 1 ]; then
		# Tests on: the benchmark links the /dev/amdqp fake of the tests.
		nice cmake -S . -B "$b" -DCMAKE_BUILD_TYPE=Release >/dev/null
		nice cmake --build "$b" -j"$(nproc)" --target amdqpd_loop_bench
	fi
	"$b/libuser/daemon/bench/amdqpd_loop_bench" --json bench/out/control-loop-native.json
	rm -f bench/out/control-loop.json
	bash scripts/demo.sh "${opts[@]}" -- --control-loop /tmp/control-loop.json
	[ -s bench/out/control-loop.json ] || amdqp_die "the control-loop benchmark wrote nothing"
	cat bench/out/control-loop.json
}

amdqp_guest_options "$@"
cd "$AMDQP_ROOT"
only="${AMDQP_BENCH_ONLY:-}"
case "$only" in
"" | tagging | policy | control-path | control-loop) ;;
*) amdqp_die "AMDQP_BENCH_ONLY=$only: use tagging, policy, control-path or control-loop" ;;
esac
if [ "$only" = control-loop ]; then
	control_loop_bench
	exit 0
fi
if [ "$only" != control-path ]; then
	if [ "$AMDQP_DEPS" = 1 ]; then
		bash scripts/deps.sh
		AMDQP_DEPS=0 # done for every step
	fi
	[ "$only" = policy ] || tagging_bench
	[ "$only" != tagging ] || exit 0
	policy_bench
	[ "$only" != policy ] || exit 0
fi

amdqp_guest_prepare bench bench/out/guest/run-bench.sh \
	"the benchmark is"
amdqp_env_args BENCH_

rm -f bench/out/control-path.json
bash selftests/vm/run-vm.sh \
	--module-file kmod/amdqp.ko --module-file kmod/sim/amdqp_sim.ko \
	--dir bench/out/guest:/bench "${AMDQP_ENV_ARGS[@]}" \
	--out /tmp/control-path.json:bench/out/control-path.json \
	--timeout "${AMDQP_BENCH_TIMEOUT:-900}" \
	-- /bench/run-bench.sh "${AMDQP_ARGS[@]}"
[ -n "$only" ] || control_loop_bench

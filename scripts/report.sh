#!/bin/bash
# 'make report': bench/REPORT.md from every measurement the project has,
# each labelled with where it was measured (bench/report/make_report.py).
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	cat <<USAGE
Usage: ${0##*/} [--no-deps] [--bench] [--demo] [--out FILE]

Writes bench/REPORT.md and its plots (bench/report/*.png):

1. VM and host benchmarks from bench/out/ (control-path.json,
   tagging.json, control-loop*.json) and the end-to-end demo's
   experiments/out/demo.json, as found. --bench reruns 'make bench'
   first, --demo reruns 'make demo' (each boots the QEMU VM: minutes).
   A missing file is named in the report, never invented.
2. The GPU measurements committed in experiments/results/*.json (the
   drivers of experiments/dual_model and experiments/llm_tp, run on lent
   NVIDIA GPUs; their kernel timelines in experiments/results/timelines/).
3. tools/amdqp-sim, built in Release into build/report: 'validate' on
   every dual_model and llm_tp result that has timelines (runs of one
   test and protocol on one GPU model pooled; the report prints
   "validation error: N %" over the runs that carry the in-situ host
   probe, one line per tensor-parallel degree, and the all-runs error
   for the record; the time slice is fitted on the H200 run of the
   vendored fixtures, tools/amdqp-sim/data), then, only if the one-GPU
   (TP 1) error is within the limit, 'sweep' (the one-GPU MI308X
   predictions; no TP prediction unless its degree's error passes too). Their JSON lands in bench/out/sim/;
   the report carries no prediction when validation fails.

  --no-deps   do not install missing packages (scripts/deps.sh)
  --bench     rerun the VM/host benchmarks first
  --demo      rerun the end-to-end demo first
  --out FILE  write the report there (default bench/REPORT.md)
  -h, --help  this text
USAGE
}

deps=1
bench=0
demo=0
out=bench/REPORT.md
while [ $# -gt 0 ]; do
	case "$1" in
	--no-deps) deps=0 ;;
	--bench) bench=1 ;;
	--demo) demo=1 ;;
	--out)
		[ $# -ge 2 ] || amdqp_die "--out needs a file name"
		out=$2
		shift
		;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
	shift
done

cd "$AMDQP_ROOT"
[ "$deps" = 0 ] || bash scripts/deps.sh
[ "$bench" = 0 ] || bash scripts/bench.sh --no-deps
[ "$demo" = 0 ] || bash scripts/demo.sh --no-deps

b="$AMDQP_ROOT/build/report"
amdqp_log "building amdqp-sim (Release) in $b"
cmake -S . -B "$b" -DCMAKE_BUILD_TYPE=Release -DAMDQP_USER_TESTS=OFF >/dev/null
nice cmake --build "$b" -j"$(nproc)" --target amdqp-sim
sim="$b/tools/amdqp-sim/amdqp-sim"
[ -x "$sim" ] || amdqp_die "$sim was not built"

mkdir -p bench/out/sim
rm -f bench/out/sim/validate.json bench/out/sim/sweep.json
# The H200 dual-model run of the vendored fixtures fits the time slice;
# every dual-model and llm_tp run committed with its timelines is
# validated (runs of one test on one GPU model pooled into one case).
pairs=(--result tools/amdqp-sim/data/h200_dual_r18_r50bs1024.json
	--timelines tools/amdqp-sim/data/h200)
for r in experiments/results/dual_model-*.json experiments/results/llm_tp-*.json; do
	[ -f "$r" ] || continue
	t="experiments/results/timelines/$(basename "$r" .json)"
	[ -d "$t" ] && pairs+=(--result "$r" --timelines "$t")
done
amdqp_log "amdqp-sim validate: $((${#pairs[@]} / 4)) case(s)"
# The TP runs the TP model was designed on are listed, never counted
# (tools/amdqp-sim/README.md): session 7's design runs, and since the ring
# collectives of session 11 every TP run made before them.
design=()
for r in llm_tp-deepseek-tp2-rate05-h100x4-r2 llm_tp-deepseek-tp4-h100x4-r1 \
	llm_tp-deepseek-tp2-h100x4-r3 llm_tp-dense-tp2-rate05-h100x4-r1 \
	llm_tp-deepseek-tp4-rate05-h100x4-r2 llm_tp-dense-tp4-rate05-h100x4-r2 \
	llm_tp-deepseek-tp2-rate05-h200x2-r1 llm_tp-dense-tp2-h200x2-r1 \
	llm_tp-deepseek-tp2-h200x2-r1; do
	design+=(--design-run "$r")
done
rc=0
"$sim" validate "${pairs[@]}" "${design[@]}" --calibrate-on h200_dual_r18_r50bs1024 --json \
	>bench/out/sim/validate.json || rc=$?
[ "$rc" -le 1 ] || amdqp_die "amdqp-sim validate failed (exit $rc)"
# The one-GPU predictions rest on the one-GPU runs' error alone (TP 1);
# TP > 1 has its own line, and no prediction rests on it unless it passes.
tp1_ok="$(/usr/bin/python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))
e = (v.get("error_by_tp") or {}).get("1")
print(1 if e is not None and e <= v.get("max_error_pct", 20.0) else 0)
' bench/out/sim/validate.json)"
if [ "$tp1_ok" = 1 ]; then
	amdqp_log "amdqp-sim sweep"
	"$sim" sweep --json >bench/out/sim/sweep.json
else
	amdqp_log "TP 1 validation error above the limit: the report carries no prediction"
fi

/usr/bin/python3 bench/report/make_report.py --out "$out"

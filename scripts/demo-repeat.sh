#!/bin/bash
# The demo's acceptance as a series: N fresh checkouts, each running
# `bash scripts/demo.sh` from scratch, their verdicts side by side and the
# median ratio against the 1.1x goal (issue 28).
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

fail() {
	printf '%s: error: %s\n' "${0##*/}" "$*" >&2
	exit 2
}

usage() {
	cat <<USAGE
Usage: ${0##*/} [--runs N] [--out DIR] [--keep] [-- ARGS for demo.sh]

Runs the demo N times (default 5), each in a fresh clone of this
checkout's committed HEAD made in a new temporary folder: its own build of
the modules and the userspace, from nothing but the clone, with
\`time bash scripts/demo.sh ARGS\`. The downloads and extracted kernel trees
in AMDQP_CACHE (default this checkout's .cache) are shared, since they do
not depend on the checkout. Run it on a quiet machine: the demo compares
wake-up latencies of an emulated CPU (scripts/demo.sh --help).

DIR (default experiments/out/demo-repeat) receives, per run K, run-K.log
(the demo's whole output), run-K.json (its experiments/out/demo.json plus
"wall_s", the run's wall time, build included) and at the end summary.json:
{"runs": [{"run", "result", "ratio", "lo", "hi", "percentile", "n",
"lp_loss", "without_amdqpd", "wall_s", "confine"}], "median_ratio",
"target", "goal", "all_pass", "count", "confine"}
(experiments/demo/repeat_summary.py), with a table; "confine" holds the
medians of suspension, confinement and the static CU mask (HP P99 ratio,
LP loss) and whether confinement meets issue 27's goal by them.
Progress goes to stderr. A run that ends without a verdict stops the
series. --keep leaves the clones in place (their paths are printed).

Exit status: 0 when every run passed, 1 when one did not, 2 on an error.
USAGE
}

runs=5
out="$AMDQP_ROOT/experiments/out/demo-repeat"
keep=0
while [ $# -gt 0 ]; do
	case "$1" in
	--runs)
		[ $# -ge 2 ] || fail "--runs needs a number"
		runs="$2"
		shift 2
		;;
	--out)
		[ $# -ge 2 ] || fail "--out needs a folder"
		out="$2"
		shift 2
		;;
	--keep)
		keep=1
		shift
		;;
	-h | --help)
		usage
		exit 0
		;;
	--)
		shift
		break
		;;
	*)
		usage >&2
		exit 2
		;;
	esac
done
case "$runs" in
'' | *[!0-9]* | 0) fail "--runs takes a positive number, not '$runs'" ;;
esac
command -v git >/dev/null || fail "git is needed to make the fresh checkouts"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
rm -f "$out"/run-*.log "$out"/run-*.json "$out"/summary.json

jsons=()
for k in $(seq 1 "$runs"); do
	clone="$(mktemp -d /tmp/amdqp-demo-repeat.XXXXXX)"
	amdqp_log "run $k of $runs: fresh clone of $(git -C "$AMDQP_ROOT" rev-parse --short HEAD) in $clone"
	git clone --quiet "$AMDQP_ROOT" "$clone/amdqp"
	start=$(date +%s)
	set +e
	(cd "$clone/amdqp" && AMDQP_CACHE="$AMDQP_CACHE" AMDQP_BUILDS='' \
		bash scripts/demo.sh "$@") >"$out/run-$k.log" 2>&1
	rc=$?
	set -e
	wall=$(($(date +%s) - start))
	json="$clone/amdqp/experiments/out/demo.json"
	if [ ! -s "$json" ] || ! grep -q '"verdict"' "$json"; then
		tail -20 "$out/run-$k.log" >&2
		fail "run $k ended with status $rc and no verdict: see $out/run-$k.log"
	fi
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); d["wall_s"] = int(sys.argv[2])
json.dump(d, open(sys.argv[3], "w"), indent=2)' "$json" "$wall" "$out/run-$k.json"
	jsons+=("$out/run-$k.json")
	amdqp_log "run $k: $(grep -E '^(PASS|FAIL|INCONCLUSIVE):' "$out/run-$k.log" | cut -c1-160) ($wall s)"
	if [ "$keep" = 1 ]; then
		amdqp_log "run $k's clone kept in $clone/amdqp"
	else
		# With its module builds in the shared cache (scripts/lib.sh).
		rm -rf "$clone" "$AMDQP_CACHE/trees/$(printf '%s' "$clone/amdqp" | sha256sum | cut -c1-12)"
	fi
done
set +e
python3 "$AMDQP_ROOT/experiments/demo/repeat_summary.py" "$out/summary.json" "${jsons[@]}"
rc=$?
set -e
amdqp_log "summary in $out/summary.json"
exit "$rc"

#!/bin/bash
# Throughput and peak RSS of amdqp-trace on a synthetic ftrace file.
# usage: bench.sh AMDQP_TRACE AMDQP_TRACE_GEN [MEGABYTES]
set -euo pipefail
trace=${1:?amdqp-trace binary}
gen=${2:?amdqp-trace-gen binary}
mb=${3:-500}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/amdqp-trace-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

"$gen" "$mb" > "$tmp/trace.txt"
size=$(stat -c %s "$tmp/trace.txt")
for cmd in report timeline; do
    if [ "$cmd" = timeline ]; then
        args=(timeline --perfetto "$tmp/out.json" --no-progress "$tmp/trace.txt")
    else
        args=(report --no-progress "$tmp/trace.txt")
    fi
    start=$(date +%s.%N)
    /usr/bin/time -f '%M' -o "$tmp/rss" "$trace" "${args[@]}" > "$tmp/stdout"
    end=$(date +%s.%N)
    rss_kb=$(tail -n1 "$tmp/rss")
    awk -v s="$size" -v t0="$start" -v t1="$end" -v rss="$rss_kb" -v c="$cmd" 'BEGIN {
        secs = t1 - t0; mb = s / 1e6;
        printf "amdqp-trace %-8s input %.1f MB in %.2f s: %.1f MB/s, peak RSS %.1f MiB, RSS/input %.4f\n",
               c, mb, secs, mb / secs, rss / 1024, (rss * 1024) / s }'
    rm -f "$tmp/out.json"
done

#!/bin/bash
# A short libFuzzer run of every amdqp-trace parser (part of the bench, not of CI).
# usage: fuzz.sh SECONDS FIXTURE_DIR FUZZ_BINARY...
# Seeds are pieces of the fixtures (heads, a few lines) and, for the profiler
# CSV/JSON parsers, small documents written here in their formats.
set -euo pipefail
secs=${1:?seconds per target}
fix=${2:?fixture folder}
shift 2
work=$(mktemp -d "${TMPDIR:-/tmp}/amdqp-trace-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT

seed() { # seed NAME FILE BYTES
    head -c "$3" "$fix/$2" > "$work/seeds/$1-$2-$3"
}
mkdir -p "$work/seeds"
for f in debugfs-kfd-hqds-16streams.txt debugfs-kfd-mqds-16streams.txt \
         hip-amd-log-level3-16streams.log rocprof-trace.json dual-model-test3-standard.log; do
    seed all "$f" 4096
    seed all "$f" 600
done
printf '%s\n' '"Kind","Agent_Id","Queue_Id","Thread_Id","Kernel_Name","Start_Timestamp","End_Timestamp"' \
    '"KERNEL_DISPATCH","Agent 9",1,7,"k(int, int)",1000,2000' > "$work/seeds/v3.csv"
printf '%s\n' 'Index,KernelName,gpu-id,queue-id,queue-index,pid,tid,BeginNs,EndNs' \
    '0,"k(int, int)",9,0,0,42,42,1000,2000' > "$work/seeds/v1.csv"
printf '%s' '{"rocprofiler-sdk-tool":[{"metadata":{"pid":42},"agents":[{"id":{"handle":1},' \
    '"node_id":9,"gpu_id":63420}],"kernel_symbols":[{"kernel_id":1,"kernel_name":"k"}],' \
    '"buffer_records":{"kernel_dispatch":[{"thread_id":42,"start_timestamp":1,' \
    '"end_timestamp":2,"dispatch_info":{"agent_id":{"handle":1},"queue_id":{"handle":1},' \
    '"kernel_id":1}}]}}]}' > "$work/seeds/v3.json"
printf '%s\n' '# tracer: nop' \
    ' x-1 [001] ..... 1.000001: amdqp_suspend_batch: gpu_id=63420 count=1 failed=0 latency_ns=9' \
    ' x-1 [001] ..... 1.000002: pm_send_runlist_entry: (pm_send_runlist+0x0/0x1 [amdgpu])' \
    > "$work/seeds/ftrace.txt"

status=0
for bin in "$@"; do
    name=$(basename "$bin")
    mkdir -p "$work/corpus-$name"
    start=$(date +%s)
    if ! nice -n 15 "$bin" -max_total_time="$secs" -max_len=16384 -timeout=10 \
            -rss_limit_mb=2048 "$work/corpus-$name" "$work/seeds" \
            > "$work/$name.log" 2>&1; then
        echo "FAIL $name (log follows)"
        tail -n 40 "$work/$name.log"
        status=1
        continue
    fi
    runs=$(grep -o 'Done [0-9]* runs' "$work/$name.log" | awk '{print $2}')
    cov=$(grep -o 'cov: [0-9]*' "$work/$name.log" | tail -n1 | awk '{print $2}')
    echo "ok   $name: $(( $(date +%s) - start )) s, ${runs:-?} runs, coverage ${cov:-?}"
done
exit "$status"

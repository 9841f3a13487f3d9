#!/bin/bash
# Tests of amdqp-capture that need no GPU and no real tracefs: option parsing,
# error paths, dry run, and a full capture against a fake tracefs/debugfs tree
# (AMDQP_CAPTURE_TEST_FS) whose result is read back with amdqp-trace; then
# the test_capture_*.sh suites, one per feature.
# usage: test_capture.sh [AMDQP_TRACE_BINARY]
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=lib_capture.sh
. "$(dirname "$0")/lib_capture.sh"
trace_bin=${1:-}

fake=$tmp/tracefs
make_fake_tracefs "$fake"
debugfs=$tmp/debugfs
make_fake_debugfs "$debugfs"

# ---- option parsing and error paths ----
expect 0 'usage: amdqp-capture' "--help" -- "$cap" --help
expect 1 'unknown option .--bogus.' "unknown option" -- "$cap" --bogus
expect 1 'nothing to trace' "no target" -- "$cap"
expect 1 'give one of' "two targets" -- "$cap" --pid 1 -- true
expect 1 '--duration must be whole seconds' "bad duration" -- "$cap" -d 1.5 -- true
expect 1 '--buffer-kb must be a number of KiB >= 64' "bad buffer size" -- "$cap" -b 10 -- true
expect 1 '--functions must be kprobe, function or none' "bad mode" -- "$cap" --functions x -- true
expect 1 'option --output needs a value' "missing value" -- "$cap" --output
expect 1 '--hip-log needs a COMMAND' "hip-log without command" -- "$cap" --hip-log -d 1
expect 1 'no process with pid 999999999' "unknown pid" -- "$cap" --pid 999999999
expect 1 "cannot find a running container 'no-such-ctr'" "unknown container" -- \
	env PATH=/usr/bin:/bin "$cap" --tracefs "$fake" --debugfs "$debugfs" --container no-such-ctr
expect 1 'must run as root' "not root" -- env AMDQP_CAPTURE_EUID=1000 "$cap" -- true
expect 1 'tracefs missing at /nonexistent' "tracefs missing" -- "$cap" --tracefs /nonexistent -- true
expect 1 'debugfs is not mounted at' "debugfs not mounted" -- "$cap" --tracefs "$fake" --debugfs "$tmp/empty" -- true

# ---- dry run: prints actions, writes nothing ----
out=$("$cap" -n --tracefs "$fake" --debugfs "$debugfs" -o "$tmp/dry" -b 8192 --hip-log -- true 2>&1)
rc=$?
if [ "$rc" -eq 0 ] && ! [ -e "$tmp/dry" ] && [ ! -s "$fake/kprobe_events" ] &&
	grep -q "would write '8192' > $fake/instances/amdqp-capture-[0-9]*/buffer_size_kb" <<<"$out" &&
	grep -q "would write 'p:amdqp_kfd/execute_queues_cpsch_entry execute_queues_cpsch' >> $fake/kprobe_events" <<<"$out" &&
	grep -q "would write 'p:amdqp_kfd/unmap_queues_cpsch_entry unmap_queues_cpsch' >> $fake/kprobe_events" <<<"$out" &&
	grep -q "would write '1' > .*/events/amdqp/amdqp_suspend_batch/enable" <<<"$out" &&
	grep -q "would run: true" <<<"$out"; then
	ok "dry run"
else
	bad "dry run (rc=$rc): $out"
fi
if ! grep -q "schedule" <<<"$out"; then ok "dry run traces only KFD functions"; else bad "dry run traced 'schedule'"; fi

# ---- full run against the fake tree ----
out=$(AMDQP_CAPTURE_TEST_FS=1 "$cap" --tracefs "$fake" --debugfs "$debugfs" -o "$tmp/out" \
	--hip-log -- bash -c 'echo ":3:rocdevice.cpp :3048: 100 us:  Created SWq=0x1 to map on HWq=0x7f0000100000 with size 16384 with priority 1, cooperative: 0" >&2; exit 7' 2>&1)
rc=$?
capdir=$(find "$tmp/out" -mindepth 1 -maxdepth 1 -type d -name 'amdqp-capture-*' | head -n1)
if [ "$rc" -eq 7 ] && [ -n "$capdir" ]; then ok "command exit code passed through"; else bad "full run rc=$rc: $out"; fi
inst=$(find "$fake/instances" -mindepth 1 -maxdepth 1 -type d | head -n1)
m=$capdir/manifest.json
for f in manifest.json trace.txt pids.txt hip-log.txt kfd/hqds-start.txt kfd/hqds-end.txt \
	kfd/mqds-start.txt kfd/mqds-end.txt; do
	if [ -f "$capdir/$f" ]; then ok "capture has $f"; else bad "capture lacks $f"; fi
done
if cmp -s "$capdir/kfd/hqds-start.txt" "$debugfs/kfd/hqds"; then ok "hqds snapshot is a copy"; else bad "hqds snapshot differs"; fi
if grep -q '"command_exit_code": 7' "$m" && grep -q '"kernel": ' "$m" && grep -q '"start_time": "20' "$m" &&
	grep -q '"stop_time": "20' "$m" && grep -q '"kfd/hqds-start.txt"' "$m" &&
	grep -q '"functions": \["create_queue_cpsch", "execute_queues_cpsch", "unmap_queues_cpsch"\]' "$m" &&
	grep -q '"amdqp/amdqp_watchdog"' "$m" && grep -q '"amdgpu/amdgpu_cs_ioctl"' "$m" &&
	grep -q '"amdgpu/amdgpu_vm_flush"' <(sed -n '/"skipped"/p' "$m"); then
	ok "manifest fields"
else
	bad "manifest: $(cat "$m")"
fi
if python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$m" 2>/dev/null; then ok "manifest is JSON"; else bad "manifest is not JSON"; fi
if head -n1 "$capdir/hip-log.txt" | grep -qE '^# amdqp-capture hip-log pid=[0-9]+ AMD_LOG_LEVEL=3$' &&
	grep -q 'Created SWq' "$capdir/hip-log.txt"; then ok "hip log with pid header"; else bad "hip log: $(cat "$capdir/hip-log.txt")"; fi
cpid=$(sed -n 's/^# amdqp-capture hip-log pid=\([0-9]*\).*/\1/p' "$capdir/hip-log.txt")
if grep -qE "^$cpid	$cpid( [0-9]+)*	command	" "$capdir/pids.txt"; then ok "pid mapping row"; else bad "pids.txt: $(cat "$capdir/pids.txt")"; fi
# kprobes were added and removed again; tracing switched on, then off.
# shellcheck disable=SC2016 # $retval is literal kprobe syntax
ret_pat='^r:amdqp_kfd/execute_queues_cpsch_exit execute_queues_cpsch ret=\$retval$'
if grep -q '^p:amdqp_kfd/execute_queues_cpsch_entry execute_queues_cpsch$' "$fake/kprobe_events" &&
	grep -q "$ret_pat" "$fake/kprobe_events" &&
	grep -q '^-:amdqp_kfd/execute_queues_cpsch_exit$' "$fake/kprobe_events" &&
	[ "$(cat "$inst/tracing_on")" = 0 ] && [ "$(cat "$inst/events/amdqp/amdqp_error/enable")" = 1 ] &&
	[ "$(cat "$inst/trace_clock")" = mono ]; then
	ok "tracefs writes"
else
	bad "tracefs writes: $(cat "$fake/kprobe_events")"
fi
if [ -n "$trace_bin" ]; then
	json=$("$trace_bin" census --json --no-progress "$capdir" 2>&1)
	if grep -q '"gpu_id": "f7bc", "node": 2, "xcc_count": 4, "active_hqds": 20' <<<"$json" &&
		grep -q '{"pid": 94314, "gpu_id": "f7bc", "queues": 5' <<<"$json" &&
		grep -qE '\{"pid": [0-9]+, "gpu_id": "dev0", "queues": 1' <<<"$json"; then
		ok "amdqp-trace reads the capture folder"
	else
		bad "amdqp-trace census: $json"
	fi
fi

# ---- the scripts are shellcheck clean (where shellcheck is installed) ----
if command -v shellcheck >/dev/null; then
	if shellcheck "$cap" "$here"/*.sh; then ok "shellcheck"; else bad "shellcheck"; fi
fi

# ---- the suites of one feature each, numbered on after these ----
for suite in "$here"/test_capture_*.sh; do
	name=$(basename "$suite" .sh)
	while IFS= read -r line; do
		case "$line" in
		"ok "*) ok "$name: ${line#ok * - }" ;;
		"not ok "*) bad "$name: ${line#not ok * - }" ;;
		1..*) ;;
		*) echo "$line" ;;
		esac
	done < <(bash "$suite" 2>&1)
done

finish

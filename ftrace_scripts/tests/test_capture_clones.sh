#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# amdqp-capture finds the KFD functions that GCC renamed (f.isra.N,
# f.constprop.N) in available_filter_functions or /proc/kallsyms, probes them
# under the function's own name, and takes nothing that only starts alike.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=lib_capture.sh
. "$(dirname "$0")/lib_capture.sh"

fake=$tmp/tracefs
make_fake_tracefs "$fake"
printf '%s\n' 'execute_queues_cpsch [amdgpu]' 'map_queues_cpsch.isra.0 [amdgpu]' \
	'pm_send_runlist.constprop.0 [amdgpu]' 'unmap_queues_cpsch.constprop.0.isra.0 [amdgpu]' \
	'unmap_queues_cpsch.cold [amdgpu]' 'map_queues_cpsch_helper [amdgpu]' \
	'evict_process_queues_cpsch.part.0 [amdgpu]' 'resume_queues.isra.0 [amdgpu]' \
	'resume_queues.constprop.0 [amdgpu]' >"$fake/available_filter_functions"
# Only in kallsyms (no mcount entry): reachable by a kprobe, not by ftrace.
printf '%s\t%s\n' 'ffffffffc0a10000 t destroy_queue_cpsch.isra.0' '[amdgpu]' \
	'ffffffffc0a20000 d create_queue_cpsch.isra.0' '[amdgpu]' >"$tmp/kallsyms"

out=$(AMDQP_CAPTURE_KALLSYMS=$tmp/kallsyms "$cap" -n --tracefs "$fake" --no-kfd -- true 2>&1)
want=(
	"p:amdqp_kfd/map_queues_cpsch_entry map_queues_cpsch.isra.0"
	"r:amdqp_kfd/map_queues_cpsch_exit map_queues_cpsch.isra.0 ret="
	"p:amdqp_kfd/pm_send_runlist_entry pm_send_runlist.constprop.0"
	"p:amdqp_kfd/unmap_queues_cpsch_entry unmap_queues_cpsch.constprop.0.isra.0"
	"p:amdqp_kfd/destroy_queue_cpsch_entry destroy_queue_cpsch.isra.0"
	"p:amdqp_kfd/execute_queues_cpsch_entry execute_queues_cpsch"
	"p:amdqp_kfd/resume_queues_entry resume_queues.constprop.0"
	"p:amdqp_kfd_1/resume_queues_entry resume_queues.isra.0"
	"would write '1' > .*/events/amdqp_kfd_1/resume_queues_exit/enable"
)
missing=
for w in "${want[@]}"; do grep -q -- "$w" <<<"$out" || missing+="[$w] "; done
if [ -z "$missing" ]; then ok "clones are probed under the function's name"; else bad "clones: missing $missing in: $out"; fi
if ! grep -qE 'cold|map_queues_cpsch_helper|\.part\.|create_queue_cpsch' <<<"$out"; then
	ok "no cold parts, partial clones, data symbols or look-alikes"
else
	bad "took a wrong symbol: $out"
fi

# The function tracer is given the clone names (and cannot use kallsyms).
out=$(AMDQP_CAPTURE_KALLSYMS=$tmp/kallsyms "$cap" -n --functions function --tracefs "$fake" --no-kfd -- true 2>&1)
if grep -q "would write 'map_queues_cpsch.isra.0' >> .*/set_ftrace_filter" <<<"$out" &&
	grep -q "would write 'unmap_queues_cpsch.constprop.0.isra.0' >> .*/set_ftrace_filter" <<<"$out" &&
	! grep -q destroy_queue_cpsch <<<"$out"; then
	ok "function mode filters on the clone names"
else
	bad "function mode: $out"
fi

# The manifest lists base names and the symbols behind them.
out=$(AMDQP_CAPTURE_TEST_FS=1 "$cap" --tracefs "$fake" --no-kfd -o "$tmp/out" -- true 2>&1)
m=$(capture_dir "$tmp/out")/manifest.json
if [ "$(manifest_get "$m" functions)" = '["execute_queues_cpsch", "map_queues_cpsch", "unmap_queues_cpsch", "pm_send_runlist", "resume_queues"]' ] &&
	manifest_get "$m" function_symbols | grep -q '"map_queues_cpsch.isra.0"'; then
	ok "manifest: functions and their symbols"
else
	bad "manifest: $out $(cat "$m" 2>/dev/null)"
fi

expect 1 '--extra-function needs a kernel function name' "bad --extra-function" -- \
	"$cap" --extra-function 'a|b' -- true

finish

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# amdqp-capture removes, and says so, the tracefs instance and the amdqp_kfd
# kprobes a previous run left behind when it was killed with SIGKILL, and
# leaves those of a run still going alone.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=lib_capture.sh
. "$(dirname "$0")/lib_capture.sh"
export AMDQP_CAPTURE_TEST_FS=1

# A pid that no process has now.
true &
dead=$!
wait "$dead"

# Leftovers as the kernel lists them (return probes read back as r<maxactive>:).
leftovers() { # TRACEFS PID
	mkdir -p "$1/instances/amdqp-capture-$2/events/amdqp_kfd"
	echo 1 >"$1/instances/amdqp-capture-$2/tracing_on"
	# shellcheck disable=SC2016 # $retval is literal kprobe syntax
	printf '%s\n' 'p:amdqp_kfd/execute_queues_cpsch_entry execute_queues_cpsch' \
		'r16:amdqp_kfd/execute_queues_cpsch_exit execute_queues_cpsch ret=$retval' \
		'p:amdqp_kfd_1/map_queues_cpsch_entry map_queues_cpsch.constprop.0' \
		'p:kprobes/someone_elses do_sys_open' >"$1/kprobe_events"
}

fake=$tmp/stale
make_fake_tracefs "$fake"
leftovers "$fake" "$dead"
out=$("$cap" --tracefs "$fake" --no-kfd -o "$tmp/stale.out" -- true 2>&1)
rc=$?
m=$(capture_dir "$tmp/stale.out")/manifest.json
# The removals come before this run's own probes.
removals=$(grep -n '^-:' "$fake/kprobe_events" | head -n3 | cut -d: -f1 | tr '\n' ' ')
if [ "$rc" -eq 0 ] && [ ! -e "$fake/instances/amdqp-capture-$dead" ] &&
	grep -q "removed tracefs instance .*amdqp-capture-$dead left by amdqp-capture pid $dead" <<<"$out" &&
	grep -q 'removed 3 kprobe(s) (amdqp_kfd) left by an earlier amdqp-capture run' <<<"$out" &&
	[ "$removals" = "5 6 7 " ] &&
	sed -n 5,7p "$fake/kprobe_events" | grep -q '^-:amdqp_kfd/execute_queues_cpsch_entry$' &&
	sed -n 5,7p "$fake/kprobe_events" | grep -q '^-:amdqp_kfd/execute_queues_cpsch_exit$' &&
	sed -n 5,7p "$fake/kprobe_events" | grep -q '^-:amdqp_kfd_1/map_queues_cpsch_entry$' &&
	! grep -q '^-:kprobes/someone_elses' "$fake/kprobe_events" &&
	grep -q '"kprobe:amdqp_kfd/execute_queues_cpsch_entry"' "$m" &&
	grep -q "\"instance:amdqp-capture-$dead\"" "$m"; then
	ok "leftovers of a killed run are removed, with a note"
else
	bad "stale cleanup (rc=$rc): $out; kprobe_events: $(cat "$fake/kprobe_events")"
fi

# The instance and kprobes of a run still going (its pid runs amdqp-capture)
# stay; this run's probes take a group of their own.
(exec -a amdqp-capture sleep 30) >/dev/null 2>&1 &
live=$!
fake=$tmp/live
make_fake_tracefs "$fake"
leftovers "$fake" "$live"
out=$("$cap" --tracefs "$fake" --no-kfd -o "$tmp/live.out" -- true 2>&1)
rc=$?
kill "$live"
if [ "$rc" -eq 0 ] && [ -d "$fake/instances/amdqp-capture-$live" ] &&
	grep -q "another amdqp-capture is running (pid $live)" <<<"$out" &&
	! grep -q '^-:amdqp_kfd/' "$fake/kprobe_events" &&
	grep -qE '^p:amdqp_kfd_p[0-9]+/execute_queues_cpsch_entry execute_queues_cpsch$' "$fake/kprobe_events" &&
	grep -qE '^-:amdqp_kfd_p[0-9]+/execute_queues_cpsch_entry$' "$fake/kprobe_events"; then
	ok "a running capture's instance and kprobes are left alone"
else
	bad "live run (rc=$rc): $out; kprobe_events: $(cat "$fake/kprobe_events")"
fi

# A dry run says what it would remove and removes nothing.
fake=$tmp/dry
make_fake_tracefs "$fake"
leftovers "$fake" "$dead"
out=$("$cap" -n --tracefs "$fake" --no-kfd -- true 2>&1)
if [ -d "$fake/instances/amdqp-capture-$dead" ] && [ "$(wc -l <"$fake/kprobe_events")" -eq 4 ] &&
	grep -q "would write '-:amdqp_kfd/execute_queues_cpsch_entry' >> $fake/kprobe_events" <<<"$out" &&
	grep -q "would remove 3 kprobe(s)" <<<"$out"; then
	ok "dry run shows the clean-up"
else
	bad "dry run: $out"
fi

finish

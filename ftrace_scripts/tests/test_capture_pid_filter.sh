#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# amdqp-capture --pid: the tracefs instance records only those processes and
# their children (set_event_pid, options/event-fork; set_ftrace_pid and
# options/function-fork for the function tracer), unless --no-pid-filter.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=lib_capture.sh
. "$(dirname "$0")/lib_capture.sh"
export AMDQP_CAPTURE_TEST_FS=1

sleep 60 >/dev/null 2>&1 &
p1=$!
sleep 60 >/dev/null 2>&1 &
p2=$!
trap 'kill "$p1" "$p2" 2>/dev/null; rm -rf "$tmp"' EXIT

# run NAME ARGS...: a 1 s capture in a fresh fake tree $tmp/NAME.
run() {
	local name=$1
	shift
	make_fake_tracefs "$tmp/$name"
	out=$("$cap" --tracefs "$tmp/$name" --no-kfd -o "$tmp/$name.out" -d 1 "$@" 2>&1)
	rc=$?
	inst=$(instance_dir "$tmp/$name")
	m=$(capture_dir "$tmp/$name.out")/manifest.json
}

run kprobe --pid "$p1" --pid "$p2"
if [ "$rc" -eq 0 ] && [ "$(cat "$inst/set_event_pid" 2>/dev/null)" = "$p1"$'\n'"$p2" ] &&
	[ "$(cat "$inst/options/event-fork" 2>/dev/null)" = 1 ] && [ ! -e "$inst/set_ftrace_pid" ] &&
	[ "$(manifest_get "$m" pid_filter)" = true ] &&
	[ "$(cut -f1 "$(dirname "$m")/pids.txt" | tr '\n' ' ')" = "$p1 $p2 " ]; then
	ok "--pid restricts events to the pids and their children"
else
	bad "--pid (rc=$rc): $out; set_event_pid: $(cat "$inst/set_event_pid" 2>&1)"
fi

run function --functions function --pid "$p1"
if [ "$rc" -eq 0 ] && [ "$(cat "$inst/set_event_pid" 2>/dev/null)" = "$p1" ] &&
	[ "$(cat "$inst/set_ftrace_pid" 2>/dev/null)" = "$p1" ] &&
	[ "$(cat "$inst/options/function-fork" 2>/dev/null)" = 1 ] &&
	[ "$(cat "$inst/current_tracer" 2>/dev/null)" = nop ]; then
	ok "--pid restricts the function tracer too"
else
	bad "--pid with --functions function (rc=$rc): $out"
fi

run nofilter --no-pid-filter --pid "$p1"
if [ "$rc" -eq 0 ] && [ ! -e "$inst/set_event_pid" ] && [ "$(manifest_get "$m" pid_filter)" = false ] &&
	grep -q "^$p1	" "$(dirname "$m")/pids.txt"; then
	ok "--no-pid-filter records the pids only"
else
	bad "--no-pid-filter (rc=$rc): $out"
fi

# Without --pid nothing is filtered.
run system
if [ "$rc" -eq 0 ] && [ ! -e "$inst/set_event_pid" ] && [ "$(manifest_get "$m" pid_filter)" = false ]; then
	ok "system-wide capture is not filtered"
else
	bad "system-wide (rc=$rc): $out"
fi

out=$("$cap" -n --tracefs "$tmp/kprobe" --no-kfd --pid "$p1" 2>&1)
if grep -q "would write '$p1' >> .*/set_event_pid" <<<"$out" &&
	grep -q "would write '1' > .*/options/event-fork" <<<"$out"; then
	ok "dry run shows the pid filter"
else
	bad "dry run: $out"
fi

finish

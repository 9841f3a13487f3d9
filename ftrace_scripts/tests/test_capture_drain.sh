#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# amdqp-capture empties the ring buffer after tracing stops: events the reader
# gets from trace_pipe more than 0.5 s after tracing_on=0 are kept, and what
# the reader did not take is read from the instance's trace file.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=lib_capture.sh
. "$(dirname "$0")/lib_capture.sh"
export AMDQP_CAPTURE_TEST_FS=1

ev() { # TIMESTAMP NAME
	printf '          python-4242    [001] ..... %s: %s: (%s+0x0/0x1a0 [amdgpu])\n' "$1" "$2" "${2%_*}"
}

# A stand-in kernel for one instance: trace_pipe is a FIFO it writes to; it
# delivers a late batch 1.2 s after tracing_on goes back to 0, then reports the
# per-CPU buffer empty and closes the pipe (the EOF of a drained trace_pipe),
# at once or, like kernels before 6.7 that do not wake the reader, HOLD s later.
fake_kernel() { # TRACEFS [HOLD]
	local inst='' _
	for _ in $(seq 100); do
		inst=$(instance_dir "$1")
		# (cp -a may have made the folder but not yet the FIFO.)
		[ -n "$inst" ] && [ -p "$inst/trace_pipe" ] && break
		sleep 0.05
	done
	[ -p "$inst/trace_pipe" ] || return 0
	exec 3>"$inst/trace_pipe"
	ev 100.000001 execute_queues_cpsch_entry >&3
	for _ in $(seq 100); do [ "$(cat "$inst/tracing_on")" = 1 ] && break; sleep 0.05; done
	for _ in $(seq 200); do [ "$(cat "$inst/tracing_on")" = 0 ] && break; sleep 0.05; done
	sleep 1.2
	ev 100.000002 execute_queues_cpsch_exit >&3
	ev 100.000003 late_event_exit >&3
	echo "entries: 0" >"$inst/per_cpu/cpu0/stats"
	if [ "${2:-0}" != 0 ]; then
		sleep "$2" &
		trap 'kill $! 2>/dev/null; exit 0' TERM
		wait $!
	fi
	exec 3>&-
}

# run_fifo NAME [HOLD]: a capture of `sleep 1` against fake_kernel; sets rc,
# secs, out, capdir.
run_fifo() {
	local t0 skel=$tmp/$1/instance-skel kpid
	make_fake_tracefs "$tmp/$1"
	mkdir -p "$skel/per_cpu/cpu0"
	mkfifo "$skel/trace_pipe"
	echo "entries: 2" >"$skel/per_cpu/cpu0/stats"
	(fake_kernel "$tmp/$1" "${2:-0}") >/dev/null 2>&1 &
	kpid=$!
	t0=$SECONDS
	out=$("$cap" --tracefs "$tmp/$1" --no-kfd -o "$tmp/$1.out" -- sleep 1 2>&1)
	rc=$?
	secs=$((SECONDS - t0))
	kill "$kpid" 2>/dev/null
	wait "$kpid"
	capdir=$(capture_dir "$tmp/$1.out")
}

run_fifo eof
if [ "$rc" -eq 0 ] && [ "$(wc -l <"$capdir/trace.txt")" -eq 3 ] && grep -q late_event_exit "$capdir/trace.txt" &&
	grep -qE '^"(reader-eof|buffer-empty)"$' <<<"$(manifest_get "$capdir/manifest.json" trace_drain)"; then
	ok "events read after tracing stopped are kept"
else
	bad "drain (rc=$rc): $(manifest_get "$capdir/manifest.json" trace_drain) $out; trace.txt: $(cat "$capdir/trace.txt" 2>/dev/null)"
fi

# No EOF: the reader is stopped once the buffer is empty, not 30 s later.
run_fifo noeof 30
if [ "$rc" -eq 0 ] && [ "$(wc -l <"$capdir/trace.txt")" -eq 3 ] && [ "$secs" -lt 15 ] &&
	[ "$(manifest_get "$capdir/manifest.json" trace_drain)" = '"buffer-empty"' ]; then
	ok "a reader without EOF is stopped when the buffer is empty"
else
	bad "drain without EOF (rc=$rc after ${secs}s): $out; log: $(cat "$capdir/capture.log" 2>/dev/null); trace.txt: $(cat "$capdir/trace.txt" 2>/dev/null)"
fi

# A reader that ends before the buffer is empty: the rest comes from 'trace'
# (the header lines of which are left out).
make_fake_tracefs "$tmp/rest"
skel=$tmp/rest/instance-skel
mkdir -p "$skel"
ev 200.000001 create_queue_cpsch_entry >"$skel/trace_pipe"
{
	echo '# tracer: nop'
	echo '#'
	ev 200.000002 create_queue_cpsch_exit
} >"$skel/trace"
out=$("$cap" --tracefs "$tmp/rest" --no-kfd -o "$tmp/rest.out" -- true 2>&1)
rc=$?
capdir=$(capture_dir "$tmp/rest.out")
if [ "$rc" -eq 0 ] && [ "$(wc -l <"$capdir/trace.txt")" -eq 2 ] &&
	grep -q '200.000002: create_queue_cpsch_exit' "$capdir/trace.txt" && ! grep -q '^#' "$capdir/trace.txt"; then
	ok "what the reader left in the buffer is appended"
else
	bad "leftovers (rc=$rc): $out; trace.txt: $(cat "$capdir/trace.txt" 2>/dev/null)"
fi

finish

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# amdqp-capture -- COMMAND: the command is stopped at the --duration deadline
# and on Ctrl-C with SIGINT, SIGTERM, SIGKILL, its real exit status is kept,
# and --hip-log copies its stderr without hiding it from the terminal.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=lib_capture.sh
. "$(dirname "$0")/lib_capture.sh"

fake=$tmp/tracefs
make_fake_tracefs "$fake"
export AMDQP_CAPTURE_TEST_FS=1

# run_capture NAME ARGS...: runs a capture into $tmp/NAME, sets rc, secs, out, m.
run_capture() {
	local name=$1 t0
	shift
	t0=$(date +%s%N)
	out=$("$cap" --tracefs "$fake" --no-kfd -o "$tmp/$name" "$@" 2>&1)
	rc=$?
	secs=$((($(date +%s%N) - t0) / 1000000000))
	m=$(capture_dir "$tmp/$name")/manifest.json
}

# A command that would run 30 s is stopped after 1 s by SIGINT.
run_capture deadline -d 1 -- sleep 30
if [ "$rc" -eq 130 ] && [ "$secs" -lt 15 ] &&
	[ "$(manifest_get "$m" command_exit_code)" = 130 ] &&
	[ "$(manifest_get "$m" command_stopped_by)" = '"deadline"' ] &&
	[ "$(manifest_get "$m" command_stop_signals)" = '["INT"]' ]; then
	ok "-d stops the command with SIGINT at the deadline and records its status"
else
	bad "-d deadline (rc=$rc after ${secs}s): $out $(cat "$m" 2>/dev/null)"
fi

# One that ignores SIGINT and SIGTERM gets them --grace apart, then SIGKILL.
stubborn='trap "echo got-int >&2" INT; trap "echo got-term >&2" TERM; while :; do sleep 0.1; done'
run_capture stubborn -d 1 --grace 1 -- bash -c "$stubborn"
if [ "$rc" -eq 137 ] && [ "$secs" -lt 15 ] && grep -q got-int <<<"$out" && grep -q got-term <<<"$out" &&
	[ "$(manifest_get "$m" command_exit_code)" = 137 ] &&
	[ "$(manifest_get "$m" command_stop_signals)" = '["INT", "TERM", "KILL"]' ] &&
	[ "$(manifest_get "$m" stop_grace_s)" = 1 ]; then
	ok "SIGINT, SIGTERM, SIGKILL --grace seconds apart"
else
	bad "stop sequence (rc=$rc after ${secs}s): $out $(cat "$m" 2>/dev/null)"
fi

# The command's children (its process group) are stopped too.
# (A background sleep of a script ignores SIGINT: SIGTERM ends it.)
run_capture children -d 1 --grace 1 -- bash -c 'sleep 30 & echo "child=$!" >&2; wait'
child=$(sed -n 's/^child=//p' <<<"$out")
# Gone, or a zombie that nobody here may reap.
if [ -n "$child" ] && [ "$secs" -lt 15 ] &&
	{ ! kill -0 "$child" 2>/dev/null || [ "$(awk '{ print $3 }' "/proc/$child/stat" 2>/dev/null)" = Z ]; }; then
	ok "the deadline stops the command's children"
else
	bad "children (child=$child after ${secs}s): $out"
	[ -z "$child" ] || kill "$child" 2>/dev/null
fi

# Ctrl-C (a SIGINT to the script) stops the command the same way. The script
# runs in the background here, where SIGINT starts ignored: undo that. (Sent
# once the command runs: during set-up bash may drop a SIGINT sent to it alone.)
t0=$SECONDS
env --default-signal=INT "$cap" --tracefs "$fake" --no-kfd -o "$tmp/ctrlc" -- sleep 60 >"$tmp/ctrlc.out" 2>&1 &
cpid=$!
for _ in $(seq 300); do
	grep -q 'command pid' "$(capture_dir "$tmp/ctrlc")/capture.log" 2>/dev/null && break
	sleep 0.1
done
kill -INT "$cpid"
wait "$cpid"
rc=$?
m=$(capture_dir "$tmp/ctrlc")/manifest.json
if [ "$rc" -eq 130 ] && [ $((SECONDS - t0)) -lt 30 ] &&
	[ "$(manifest_get "$m" command_exit_code)" = 130 ] &&
	[ "$(manifest_get "$m" command_stopped_by)" = '"interrupt"' ]; then
	ok "Ctrl-C stops the command and records its status"
else
	bad "Ctrl-C (rc=$rc after $((SECONDS - t0))s): $(cat "$tmp/ctrlc.out" "$m" 2>/dev/null)"
fi

# Without a command (--pid, system-wide), a SIGINT sent to the script alone
# (kill -INT, timeout -s INT) ends the capture too.
env --default-signal=INT "$cap" --tracefs "$fake" --no-kfd -o "$tmp/sysint" >"$tmp/sysint.out" 2>&1 -d 300 &
cpid=$!
for _ in $(seq 300); do
	grep -q 'tracing on' "$(capture_dir "$tmp/sysint")/capture.log" 2>/dev/null && break
	sleep 0.1
done
kill -INT "$cpid"
for _ in $(seq 150); do kill -0 "$cpid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$cpid" 2>/dev/null; then
	kill -KILL "$cpid"
	bad "SIGINT to a system-wide capture was lost: $(cat "$tmp/sysint.out")"
else
	wait "$cpid"
	rc=$?
	if [ "$rc" -eq 130 ] && [ -s "$(capture_dir "$tmp/sysint")/manifest.json" ]; then
		ok "SIGINT ends a capture without a command"
	else
		bad "SIGINT without a command (rc=$rc): $(cat "$tmp/sysint.out")"
	fi
fi

# A command that exits by itself: its status, no stop signals.
run_capture exit7 -d 30 -- bash -c 'exit 7'
if [ "$rc" -eq 7 ] && [ "$secs" -lt 15 ] && [ "$(manifest_get "$m" command_exit_code)" = 7 ] &&
	[ "$(manifest_get "$m" command_stopped_by)" = null ] &&
	[ "$(manifest_get "$m" command_stop_signals)" = '[]' ]; then
	ok "a command that ends before the deadline is left alone"
else
	bad "early exit (rc=$rc after ${secs}s): $out"
fi

# The command still reads the script's standard input.
out=$(echo from-stdin | "$cap" --tracefs "$fake" --no-kfd -o "$tmp/stdin" -- cat 2>/dev/null)
if [ "$out" = from-stdin ]; then ok "the command reads standard input"; else bad "stdin: '$out'"; fi

# --hip-log: stderr on the terminal and in hip-log.txt.
"$cap" --tracefs "$fake" --no-kfd -o "$tmp/hip" --hip-log -- bash -c 'echo "boom: visible" >&2; exit 3' \
	>"$tmp/hip.out" 2>"$tmp/hip.err"
rc=$?
hip=$(capture_dir "$tmp/hip")/hip-log.txt
if [ "$rc" -eq 3 ] && grep -q 'boom: visible' "$tmp/hip.err" && grep -q 'boom: visible' "$hip" &&
	head -n1 "$hip" | grep -qE '^# amdqp-capture hip-log pid=[0-9]+ AMD_LOG_LEVEL=3$'; then
	ok "--hip-log keeps stderr on the terminal"
else
	bad "--hip-log (rc=$rc): stderr: $(cat "$tmp/hip.err") hip-log: $(cat "$hip" 2>/dev/null)"
fi

expect 1 '--grace must be whole seconds' "bad --grace" -- "$cap" --grace x -- true

finish

#!/bin/bash
# SPDX-License-Identifier: MIT
# amdqpctl suspend against a real tagged process on the cooperative
# mechanism: an unmodified HSA program (tagging_app, on the hsa-sim
# stand-in's thread backend) with the tagging layer, whose queue ioctls the
# fake-sim test double answers and logs. A live amdqpctl keeps the queues off
# for many leases and gives them back when it stops; a killed one leaves them
# off for at most its lease.
#
#   coop_lease_test.sh AMDQPCTL TAGGING_APP PRELOAD_LIB FAKE_SIM_LIB CASE
set -u

ctl="$1"
app="$2"
preload="$3"
fake_sim="$4"
case_name="$5"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/amdqpctl-lease.XXXXXX")"
app_pid=""
ctl_pid=""
cleanup() {
	for pid in $ctl_pid $app_pid; do
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

export AMDQP_RUNTIME_DIR="$tmp/act"
mkdir -p "$AMDQP_RUNTIME_DIR"
export AMDQP_DEVICE="$tmp/no-amdqp" # the cooperative mechanism only
export AMDQP_QUIET=1
unset LD_PRELOAD HSA_TOOLS_LIB ROCP_TOOL_LIBRARIES AMDQP_PRELOAD_LIB
log="$tmp/updates.log"
touch "$log"

fail() {
	echo "FAIL: $*"
	echo "--- scheduler updates (update GPU QUEUE PERCENTAGE PRIORITY)"
	cat "$log"
	echo "--- amdqpctl"
	cat "$tmp/ctl.out" "$tmp/ctl.err" 2>/dev/null
	exit 1
}

# updates PERCENTAGE: how many queue updates to that percentage so far (0:
# taken off, 100: put back).
updates() {
	awk -v p="$1" '$1 == "update" && $4 == p { n++ } END { print n + 0 }' "$log"
}

# wait_for SECONDS COMMAND...: true once COMMAND is, false after SECONDS.
wait_for() {
	local tries=$(($1 * 20))
	shift
	while ! "$@"; do
		tries=$((tries - 1))
		[ "$tries" -gt 0 ] || return 1
		sleep 0.05
	done
}

at_least() { # at_least PERCENTAGE N
	[ "$(updates "$1")" -ge "$2" ]
}

now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

# The tagged program: two queues, held until a line arrives on its stdin.
mkfifo "$tmp/in"
HSA_SIM_BACKEND=thread AMDQP_PRIORITY=low AMDQP_FAKE_SIM_LOG="$log" \
	LD_PRELOAD="$preload:$fake_sim" HSA_TOOLS_LIB="$preload" \
	"$app" --queues 2 --announce-ioctl --hold <"$tmp/in" >"$tmp/app.out" 2>"$tmp/app.err" &
app_pid=$!
exec 3>"$tmp/in"
wait_for 20 grep -q '^ready' "$tmp/app.out" || fail "the tagged program did not start: $(cat "$tmp/app.err")"

lease=0.3
"$ctl" suspend "$app_pid" --lease "$lease" >"$tmp/ctl.out" 2>"$tmp/ctl.err" &
ctl_pid=$!
wait_for 10 at_least 0 2 || fail "amdqpctl suspend did not take the two queues off"
wait_for 10 grep -q "^suspended pid $app_pid" "$tmp/ctl.out" || fail "amdqpctl did not report the suspension"

# Five leases: a live amdqpctl renews them.
sleep 1.5
kill -0 "$ctl_pid" 2>/dev/null || fail "amdqpctl suspend exited"
[ "$(updates 100)" = 0 ] || fail "the queues came back while amdqpctl held them"

case "$case_name" in
released)
	kill -TERM "$ctl_pid"
	wait "$ctl_pid"
	rc=$?
	ctl_pid=""
	[ "$rc" = 0 ] || fail "amdqpctl suspend exited $rc"
	# Put back when it stopped, without waiting for the lease.
	at_least 100 2 || fail "amdqpctl did not put the queues back when it stopped"
	grep -q '^released 1 suspension' "$tmp/ctl.out" || fail "no 'released' line"
	;;
killed)
	kill -KILL "$ctl_pid"
	wait "$ctl_pid" 2>/dev/null
	ctl_pid=""
	start=$(now_ms)
	[ "$(updates 100)" = 0 ] || fail "the queues came back before the lease ran out"
	wait_for 10 at_least 100 2 || fail "the queues stayed off after amdqpctl was killed"
	took=$(($(now_ms) - start))
	# The lease, plus slack for a loaded machine.
	[ "$took" -le 2300 ] || fail "the queues came back only after $took ms (lease ${lease}s)"
	echo "queues back $took ms after SIGKILL (lease ${lease}s)"
	;;
*)
	echo "unknown case $case_name"
	exit 2
	;;
esac

# The program never noticed, and runs to its end.
echo go >&3
echo go >&3
exec 3>&-
wait "$app_pid"
rc=$?
app_pid=""
[ "$rc" = 0 ] || fail "the tagged program exited $rc: $(cat "$tmp/app.err")"
echo "ok: $case_name"

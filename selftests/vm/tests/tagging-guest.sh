#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest half of tagging-vm.sh (busybox sh, root, in the test VM): issue 8's
# acceptance on sim devices. Prints TAP; exit status 0 when all pass.
#
# From the host (run-vm.sh --env): AMDQPCTL_BIN (amdqpctl, at its build
# path where the guest can have it), HSA_APP (the unmodified HSA program), HSA_LIB_DIR (the folder
# holding only the hsa-sim stand-in libhsa-runtime64.so.1), and
# AMDQP_PRELOAD_LIB when amdqpctl cannot find its build's tagging layer by
# itself. The modules are at /modules (loaded here, after the part that
# needs them absent).
#
# Each hsa_app runs an open loop (one 200 us kernel every 2 ms) until
# SIGTERM and prints a progress line every 100 ms with its queue's read
# index (what the GPU consumed), write index and doorbell count. A queue
# that is off the GPU shows as a read index that stays put while the
# doorbell count keeps growing.

G1=4301 # amdqp.ko takes the queues off (mechanism amdqp)
G2=4302 # amdqp_managed=0, a stock amdgpu: the processes do it (coop)
W=/tmp/tagging
mkdir -p "$W"
ln -sf "$AMDQPCTL_BIN" /usr/bin/amdqpctl
# The stand-in's waits poll; a slower poll keeps four processes light on
# an emulated CPU without changing what is measured.
export HSA_SIM_POLL_US=500
APP_ARGS="--loop-until-signal -d 200 -p 2000 --progress-ms 100 --drain-timeout-s 20"

n=0
fails=0
pids=""
check() { # check DESCRIPTION COMMAND...
	desc="$1"
	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n - $desc"
	else
		echo "not ok $n - $desc"
		fails=$((fails + 1))
	fi
}

show() { # show FILE [LABEL]: a file as TAP comments
	echo "# ---- ${2:-$1} ----"
	sed 's/^/#   /' "$1" 2>/dev/null
}

# --- predicates: each prints what it saw when it fails --------------------

rc_is() { # rc_is WANT GOT WHAT [FILE...]
	want=$1 got=$2 what=$3
	shift 3
	[ "$got" = "$want" ] && return 0
	echo "# $what: exit status $got, wanted $want"
	for f; do show "$f"; done
	return 1
}

has() { # has FILE EXTENDED-REGEX
	grep -Eq "$2" "$1" && return 0
	echo "# no /$2/ in $1:"
	show "$1"
	return 1
}

lacks() { # lacks FILE EXTENDED-REGEX
	grep -Eq "$2" "$1" || return 0
	echo "# /$2/ should not be in $1:"
	show "$1"
	return 1
}

lines_at_most() { # lines_at_most N FILE
	got=$(wc -l <"$2")
	[ "$got" -le "$1" ] && return 0
	echo "# $got lines in $2, at most $1 allowed:"
	show "$2"
	return 1
}

mapped() { # mapped PID LIB: the process has LIB loaded
	grep -q "$2" "/proc/$1/maps" 2>/dev/null && return 0
	echo "# $2 is not mapped in pid $1"
	return 1
}

# --- helpers -----------------------------------------------------------------

# until_ok SECONDS COMMAND...: retry every 0.1 s for SECONDS of wall time
# (a retry may itself take a while on an emulated CPU)
until_ok() {
	deadline=$(($(date +%s) + $1))
	shift
	while ! "$@" 2>/dev/null; do
		[ "$(date +%s)" -lt "$deadline" ] || return 1
		sleep 0.1
	done
}

# reap PID SECONDS: wait for a child, SIGKILL it after SECONDS; sets rc
reap() {
	(
		sleep "$2"
		kill -KILL "$1" 2>/dev/null
	) &
	dog=$!
	wait "$1"
	rc=$?
	kill "$dog" 2>/dev/null
}

list_pid() { # list_pid PID: amdqpctl list --json --pid PID into $W/list.json
	amdqpctl list --json --pid "$1" >"$W/list.json" 2>"$W/list.err"
}

listed_on() { # listed_on PID GPU: the process has a queue on GPU
	list_pid "$1" && grep -Eq "\"gpu\": $2([^0-9]|\$)" "$W/list.json"
}

list_has() { # list_has PID REGEX DESCRIPTION-OF-FAILURE
	list_pid "$1" || { echo "# amdqpctl list --json --pid $1 failed"; show "$W/list.err"; return 1; }
	has "$W/list.json" "$2"
}

# status_mech GPU MECHANISM: amdqpctl status --json reports GPU's mechanism
status_mech() {
	amdqpctl status --json >"$W/status.json" 2>&1
	tr -d ' \n' <"$W/status.json" | grep -Eq "\"gpu\":$1,[^}]*\"mechanism\":\"$2\"" && return 0
	echo "# amdqpctl status --json does not give GPU $1 mechanism $2:"
	show "$W/status.json"
	return 1
}

# start_app NAME GPU-AGENT LEVEL [ENV...]: amdqpctl run --priority LEVEL --
# hsa_app in the background; its output in $W/NAME.out/.err, pid in $pid
start_app() {
	name=$1 agent=$2 level=$3
	shift 3
	# shellcheck disable=SC2086  # APP_ARGS is a word list
	env LD_LIBRARY_PATH="$HSA_LIB_DIR" "$@" amdqpctl run --priority "$level" -- \
		"$HSA_APP" --agent "$agent" $APP_ARGS >"$W/$name.out" 2>"$W/$name.err" &
	pid=$!
	pids="$pids $pid"
}

started() { # started NAME: hsa_app printed its start line
	grep -q '"event":"start"' "$W/$1.out"
}

both_started() { # both_started NAME1 NAME2 GPU: within 30 s, on the sim GPU
	if ! { until_ok 30 started "$1" && until_ok 5 started "$2"; }; then
		echo "# no start line from both:"
		show "$W/$1.out"
		show "$W/$1.err"
		show "$W/$2.out"
		show "$W/$2.err"
		return 1
	fi
	has "$W/$1.out" "\"product\":\"[^\"]*[^0-9]$3\"" && has "$W/$2.out" "\"product\":\"[^\"]*[^0-9]$3\""
}

both_mapped() { # both_mapped PID1 PID2
	mapped "$1" libamdqp-preload && mapped "$2" libamdqp-preload
}

# listed_as PID PRIORITY MECHANISM GPU: what amdqpctl list --json says
listed_as() {
	list_has "$1" "\"priority\": $2([^0-9]|\$)" &&
		has "$W/list.json" "\"mechanism\": \"$3\"" &&
		has "$W/list.json" "\"gpu\": $4([^0-9]|\$)"
}

last_progress() {
	grep '"event":"progress"' "$1" | tail -n 1
}

field() { # field KEY LINE: integer part of a number in a JSON line (0 if absent)
	v=$(printf '%s\n' "$2" | sed -n "s/.*\"$1\":\\([0-9]*\\).*/\\1/p")
	echo "${v:-0}"
}

# window SECONDS LOW HIGH: progress of two apps over the same SECONDS. Sets
# lo_dr lo_dd lo_dt hi_dr hi_dd hi_dt: growth of read index, doorbell count
# and time (ms) between the last progress lines before and after.
window() {
	lo0=$(last_progress "$W/$2.out")
	hi0=$(last_progress "$W/$3.out")
	sleep "$1"
	lo1=$(last_progress "$W/$2.out")
	hi1=$(last_progress "$W/$3.out")
	wname_lo=$2 wname_hi=$3
	lo_dr=$(($(field read_index "$lo1") - $(field read_index "$lo0")))
	lo_dd=$(($(field doorbells "$lo1") - $(field doorbells "$lo0")))
	lo_dt=$(($(field t_ms "$lo1") - $(field t_ms "$lo0")))
	hi_dr=$(($(field read_index "$hi1") - $(field read_index "$hi0")))
	hi_dd=$(($(field doorbells "$hi1") - $(field doorbells "$hi0")))
	hi_dt=$(($(field t_ms "$hi1") - $(field t_ms "$hi0")))
	echo "# window ${1}s: $2 read index +$lo_dr doorbells +$lo_dd (${lo_dt} ms);" \
		"$3 read index +$hi_dr doorbells +$hi_dd (${hi_dt} ms)"
}

show_window() {
	echo "# $wname_lo: read index +$lo_dr, doorbells +$lo_dd in ${lo_dt} ms"
	echo "#   before: $lo0"
	echo "#   after:  $lo1"
	echo "# $wname_hi: read index +$hi_dr, doorbells +$hi_dd in ${hi_dt} ms"
	echo "#   before: $hi0"
	echo "#   after:  $hi1"
}

# The low queue is off: its ring stops being consumed while its doorbell
# keeps being written, and the program is alive (fresh progress lines).
low_stalled() {
	[ "$lo_dt" -ge 500 ] && [ "$lo_dr" = 0 ] && [ "$lo_dd" -gt 0 ] && return 0
	show_window
	return 1
}

low_advances() {
	[ "$lo_dt" -ge 500 ] && [ "$lo_dr" -gt 0 ] && return 0
	show_window
	return 1
}

high_advances() {
	[ "$hi_dt" -ge 500 ] && [ "$hi_dr" -gt 0 ] && return 0
	show_window
	return 1
}

both_advance() {
	[ "$lo_dt" -ge 500 ] && [ "$lo_dr" -gt 0 ] && [ "$hi_dr" -gt 0 ] && return 0
	show_window
	return 1
}

# hold GPU: amdqpctl suspend --below 8 --gpu GPU --json in the background
# ($holder); returns once it printed what it holds (or gave up)
hold() {
	amdqpctl suspend --below 8 --gpu "$1" --json >"$W/hold.out" 2>"$W/hold.err" &
	holder=$!
	if until_ok 15 grep -q '"suspended":\[{' "$W/hold.out" && kill -0 "$holder"; then
		return 0
	fi
	echo "# amdqpctl suspend did not report a suspended queue and hold it:"
	show "$W/hold.out"
	show "$W/hold.err"
	return 1
}

# holds_only LOW-PID HIGH-PID MECHANISM: the holder names the low one only
holds_only() {
	has "$W/hold.out" "\"pid\":$1[,}]" && lacks "$W/hold.out" "\"pid\":$2[,}]" &&
		has "$W/hold.out" "\"mechanism\":\"$3\""
}

suspended_is() { # suspended_is PID true|false
	list_has "$1" "\"suspended\": $2"
}

running_now() { # running_now PID
	list_pid "$1" && grep -q '"suspended": false' "$W/list.json"
}

# back_in SECONDS PID: list shows the queue running again within SECONDS
back_in() {
	until_ok "$1" running_now "$2" && return 0
	echo "# pid $2 not listed as running after ${1}s:"
	show "$W/list.json"
	return 1
}

# stop_app NAME PID: SIGTERM, the program drains and exits; sets rc
stop_app() {
	kill -TERM "$2"
	reap "$2" 30
}

app_ok() { # app_ok NAME RC: exit status 0 and an ok summary
	rc_is 0 "$2" "$1" "$W/$1.err" || { show "$W/$1.out"; return 1; }
	has "$W/$1.out" '"event":"summary","status":"ok"'
}

# ===========================================================================
# e) no /dev/amdqp: amdqpctl run still runs the program, with at most one
# warning line (none with AMDQP_QUIET=1). hsa_app needs /dev/amdqp_sim on the
# sim backend, so these use the stand-in's thread backend.
# ===========================================================================
[ ! -e /dev/amdqp ] || echo "# /dev/amdqp exists before the modules were loaded?"

HSA_SIM_BACKEND=thread LD_LIBRARY_PATH="$HSA_LIB_DIR" \
	amdqpctl run --priority low -- "$HSA_APP" -n 20 -d 100 >"$W/nodev.out" 2>"$W/nodev.err"
rc=$?
check "e) no /dev/amdqp: amdqpctl run --priority low -- hsa_app exits 0" \
	rc_is 0 "$rc" "amdqpctl run" "$W/nodev.err" "$W/nodev.out"
check "e) no /dev/amdqp: the program did its work" \
	has "$W/nodev.out" '"event":"summary","status":"ok","submitted":20,"completed":20'
check "e) no /dev/amdqp: at most one line on stderr" lines_at_most 1 "$W/nodev.err"
[ ! -s "$W/nodev.err" ] || sed 's/^/# the line: /' "$W/nodev.err"

AMDQP_QUIET=1 HSA_SIM_BACKEND=thread LD_LIBRARY_PATH="$HSA_LIB_DIR" \
	amdqpctl run --priority low -- "$HSA_APP" -n 20 -d 100 >"$W/quiet.out" 2>"$W/quiet.err"
rc=$?
check "e) no /dev/amdqp, AMDQP_QUIET=1: exits 0" rc_is 0 "$rc" "amdqpctl run" "$W/quiet.err"
check "e) no /dev/amdqp, AMDQP_QUIET=1: nothing on stderr" lines_at_most 0 "$W/quiet.err"

# The layer is really there, not silently absent: its page names the queue.
start_app nodev_bg 0 low AMDQP_QUIET=1 HSA_SIM_BACKEND=thread
bg=$pid
until_ok 20 started nodev_bg
check "e) no /dev/amdqp: the tagging layer is loaded in the program" mapped "$bg" libamdqp-preload
check "e) no /dev/amdqp: its activity page exists" \
	until_ok 5 sh -c "ls -l /proc/$bg/fd 2>/dev/null | grep -q 'memfd:amdqp-act'"
check "e) no /dev/amdqp: amdqpctl list --json shows its queue from the page at priority 2" \
	list_has "$bg" '"priority": 2([^0-9]|$)'
stop_app nodev_bg "$bg"
check "d) no /dev/amdqp: SIGTERM to hsa_app under amdqpctl run: it drains and exits 0" \
	app_ok nodev_bg "$rc"

LD_LIBRARY_PATH="$HSA_LIB_DIR" amdqpctl run --priority low -- "$HSA_APP" --queue-size 100 \
	>"$W/usage.out" 2>"$W/usage.err"
rc=$?
check "d) amdqpctl run passes the program's exit status through (hsa_app usage error: 2)" \
	rc_is 2 "$rc" "amdqpctl run -- hsa_app --queue-size 100" "$W/usage.err"

# ===========================================================================
# The modules and two sim devices (HWS). G2 plays a stock amdgpu: amdqp.ko is
# told nothing about its queues (set before any queue exists).
# ===========================================================================
dbg=/sys/kernel/debug/amdqp_sim
setup_ok=1
# The starvation watchdog would end a hold after max_suspend_ms (5 s by
# default), and the starvation budget after 4.5 s off in a 5 s window; on
# an emulated CPU the checks of one hold take about that long. What is
# tested here is the hold itself (the budget has its own selftests).
insmod /modules/amdqp.ko max_suspend_ms=120000 min_run_pct=0 && insmod /modules/amdqp_sim.ko &&
	echo "$G1 hws" >"$dbg/new_device" && echo "$G2 hws" >"$dbg/new_device" &&
	echo 0 >"$dbg/gpu$G2/amdqp_managed" || setup_ok=0
check "modules loaded, sim devices $G1 and $G2 (amdqp_managed=0) created" [ "$setup_ok" = 1 ]
amdqpctl status >"$W/status.txt" 2>&1
show "$W/status.txt" "amdqpctl status"

# ===========================================================================
# a) b) amdqp.ko's mechanism on G1 (agent 0)
# ===========================================================================
start_app high1 0 high
hp=$pid
start_app low1 0 low
lp=$pid
check "a) both hsa_app processes started on GPU $G1" both_started high1 low1 "$G1"
until_ok 15 listed_on "$hp" "$G1"
until_ok 15 listed_on "$lp" "$G1"
check "a) the tagging layer is loaded in both" both_mapped "$hp" "$lp"
check "a) amdqpctl list --json: the high one at priority 12, gpu $G1, mechanism amdqp" \
	listed_as "$hp" 12 amdqp "$G1"
check "a) amdqpctl list --json: the low one at priority 2, gpu $G1, mechanism amdqp" \
	listed_as "$lp" 2 amdqp "$G1"
check "a) amdqpctl status --json: GPU $G1's mechanism is amdqp" status_mech "$G1" amdqp
window 1 low1 high1
check "b) before: both rings advance" both_advance

check "b) amdqpctl suspend --below 8 --gpu $G1 holds" hold "$G1"
check "b) it took the low one off, not the high one" holds_only "$lp" "$hp" amdqp
check "b) list shows the low queue suspended" suspended_is "$lp" true
check "b) list shows the high queue running" suspended_is "$hp" false
sleep 0.5
window 1.5 low1 high1
check "b) the low ring stops advancing while its doorbell keeps being written" low_stalled
check "b) the high ring keeps advancing" high_advances

kill -TERM "$holder" 2>/dev/null
reap "$holder" 15
check "b) amdqpctl suspend exits 0 on SIGTERM" rc_is 0 "$rc" "amdqpctl suspend" "$W/hold.err" "$W/hold.out"
check "b) after SIGTERM to amdqpctl the low queue is not suspended" back_in 5 "$lp"
sleep 0.3
window 1 low1 high1
check "b) ... and its ring advances again" low_advances

check "b) suspend again (for the SIGKILL variant)" hold "$G1"
sleep 0.5
window 1 low1 high1
check "b) the low ring stops again" low_stalled
kill -KILL "$holder"
reap "$holder" 15
check "b) after SIGKILL of amdqpctl the kernel releases its hold" back_in 5 "$lp"
sleep 0.3
window 1 low1 high1
check "b) ... and the low ring advances again" low_advances

stop_app high1 "$hp"
check "d) SIGTERM to the high hsa_app: it drains and exits 0 through amdqpctl run" app_ok high1 "$rc"
stop_app low1 "$lp"
check "d) SIGTERM to the low hsa_app: it drains and exits 0 through amdqpctl run" app_ok low1 "$rc"

# ===========================================================================
# c) the cooperative mechanism on G2 (agent 1): amdqp.ko does not know the
# queues; the low process's own tagging layer takes them off when asked
# through its activity page.
# ===========================================================================
start_app high2 1 high
hp=$pid
start_app low2 1 low
lp=$pid
check "c) both hsa_app processes started on GPU $G2" both_started high2 low2 "$G2"
until_ok 15 listed_on "$hp" "$G2"
until_ok 15 listed_on "$lp" "$G2"
check "c) the tagging layer is loaded in both" both_mapped "$hp" "$lp"
check "c) amdqpctl list --json: the high one at priority 12, gpu $G2, mechanism coop" \
	listed_as "$hp" 12 coop "$G2"
check "c) amdqpctl list --json: the low one at priority 2, gpu $G2, mechanism coop" \
	listed_as "$lp" 2 coop "$G2"
check "c) amdqpctl status --json: GPU $G2's mechanism is coop" status_mech "$G2" coop
window 1 low2 high2
check "c) before: both rings advance" both_advance

check "c) amdqpctl suspend --below 8 --gpu $G2 holds" hold "$G2"
check "c) it took the low process off (coop), not the high one" holds_only "$lp" "$hp" coop
check "c) list shows the low queue suspended" suspended_is "$lp" true
check "c) list shows the high queue running" suspended_is "$hp" false
sleep 0.5
window 1.5 low2 high2
check "c) the low ring stops advancing while its doorbell keeps being written" low_stalled
check "c) the high ring keeps advancing" high_advances

kill -TERM "$holder" 2>/dev/null
reap "$holder" 15
check "c) amdqpctl suspend exits 0 on SIGTERM" rc_is 0 "$rc" "amdqpctl suspend" "$W/hold.err" "$W/hold.out"
check "c) after its exit the low queue is not suspended" back_in 5 "$lp"
sleep 0.3
window 1 low2 high2
check "c) ... and its ring advances again" low_advances

# A killed holder cannot take its request back; amdqpctl resume does.
check "c) suspend again (SIGKILL variant)" hold "$G2"
sleep 0.5
window 1 low2 high2
check "c) the low ring stops again" low_stalled
kill -KILL "$holder"
reap "$holder" 15
amdqpctl resume "$lp" >"$W/resume.out" 2>"$W/resume.err"
rc=$?
check "c) after SIGKILL of the holder, amdqpctl resume PID exits 0" \
	rc_is 0 "$rc" "amdqpctl resume $lp" "$W/resume.err" "$W/resume.out"
check "c) ... the low queue is not suspended" back_in 5 "$lp"
sleep 0.3
window 1 low2 high2
check "c) ... and its ring advances again" low_advances

stop_app high2 "$hp"
check "d) coop: SIGTERM to the high hsa_app: exits 0 through amdqpctl run" app_ok high2 "$rc"
stop_app low2 "$lp"
check "d) coop: SIGTERM to the low hsa_app: exits 0 through amdqpctl run" app_ok low2 "$rc"

for p in $pids; do kill -KILL "$p" 2>/dev/null; done
echo "1..$n"
if [ "$fails" != 0 ]; then
	echo "# $fails of $n failed"
	amdqpctl stats >"$W/stats.txt" 2>&1
	show "$W/stats.txt" "amdqpctl stats"
fi
[ "$fails" = 0 ]

#!/bin/bash
# SPDX-License-Identifier: MIT
# amdqpctl as a user runs it, on a host without amdqp (the module is never
# needed here): exit statuses, messages, `run`'s pass-through.
#
#   cli_test.sh AMDQPCTL PRELOADABLE_LIB CASE     (ctest runs one CASE each)
set -u

# Activity pages are found in every process of the host: in a pid namespace
# of its own, this test sees only the processes it starts.
if [ "${AMDQP_CLI_TEST_NS:-}" != 1 ] && [ "$(id -u)" = 0 ] &&
	unshare --pid --fork --mount-proc true 2>/dev/null; then
	AMDQP_CLI_TEST_NS=1 exec unshare --pid --fork --mount-proc "$0" "$@"
fi

ctl="$1"
lib="$2"
case_name="$3"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/amdqpctl-cli.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
# No tagged processes and, whatever this host has, no amdqp device.
export AMDQP_RUNTIME_DIR="$tmp/act"
mkdir -p "$AMDQP_RUNTIME_DIR"
if [ -e /dev/amdqp ]; then
	export AMDQP_DEVICE="$tmp/no-amdqp"
else
	unset AMDQP_DEVICE
fi
unset AMDQP_QUIET AMDQP_PRELOAD_LIB LD_PRELOAD HSA_TOOLS_LIB ROCP_TOOL_LIBRARIES \
	HSA_TOOLS_ROCPROFILER_V1_TOOLS

fail() {
	echo "FAIL: $*"
	echo "--- stdout"; cat "$tmp/out"
	echo "--- stderr"; cat "$tmp/err"
	exit 1
}

# run_ctl ARGS...: status in $rc, output in $tmp/out and $tmp/err
run_ctl() {
	"$ctl" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

expect_rc() {
	[ "$rc" = "$1" ] || fail "expected exit status $1, got $rc"
}

expect_err_lines() { # at most N lines on stderr
	local n
	n="$(wc -l <"$tmp/err")"
	[ "$n" -le "$1" ] || fail "expected at most $1 stderr line(s), got $n"
}

case "$case_name" in
list_no_module)
	run_ctl list
	expect_rc 3
	grep -q 'modprobe amdqp' "$tmp/err" || fail "the message does not say how to load the module"
	grep -q 'insmod kmod/amdqp.ko' "$tmp/err" || fail "the message does not name kmod/amdqp.ko"
	expect_err_lines 1
	[ ! -s "$tmp/out" ] || fail "stdout is not empty"
	;;
verbs_no_module)
	for args in "list --json" "stats" "watch --count 1" "priority 1 low" "suspend 1" \
		"suspend --below 8 --gpu 1" "resume 1"; do
		# shellcheck disable=SC2086  # words on purpose
		run_ctl $args
		[ "$rc" = 3 ] || fail "amdqpctl $args: expected 3, got $rc"
		grep -q 'amdqp' "$tmp/err" || fail "amdqpctl $args: the message does not name amdqp"
		expect_err_lines 1
	done
	;;
status_no_module)
	run_ctl status
	expect_rc 3
	grep -q '^amdqp module: not available: .*modprobe amdqp' "$tmp/out" || fail "no module line"
	# Whether this host has amdqpd installed is not this test's business; no
	# status file is in the private runtime folder, so it is not running.
	grep -Eq '^amdqpd: not (installed|running \(installed at .*\))$' "$tmp/out" ||
		fail "no daemon line"
	run_ctl status --json
	expect_rc 3
	grep -q '"available": false' "$tmp/out" || fail "json: module available"
	;;
status_daemon)
	# A real process called amdqpd (a copy of sleep), and a stand-in for
	# the daemon's socket answering with what a daemon of that pid says.
	cp "$(command -v sleep)" "$tmp/amdqpd"
	"$tmp/amdqpd" 60 &
	daemon=$!
	chmod 0755 "$AMDQP_RUNTIME_DIR"
	cat >"$tmp/status.json" <<-EOF
		{"pid":$daemon,"order":"before-doorbell","device_open":false,"processes":1,
		 "stats":{"suspend_calls":3,"resume_calls":2,"coop_suspends":0,"coop_resumes":0,
		          "starvation_hits":0,"relapses":0},
		 "gpus":[{"gpu":1,"suspend_level":12}],
		 "groups":{"tp":{"priority":7,"gpus":[1],"pids":[77]}},
		 "tagged":[{"pid":77,"comm":"t","cgroup":"/","rule":"tag","coop_suspended":true,
		            "queues":[{"gpu":1,"queue":1,"priority":7,"mechanism":"coop",
		                       "active":false,"group":"tp"}]}]}
	EOF
	serve() { # serve FILE: answer status requests on the socket with FILE
		python3 - "$AMDQP_RUNTIME_DIR/amdqpd.sock" "$1" <<-'EOF' &
			import os, socket, sys
			s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
			s.bind(sys.argv[1]); s.listen(4)
			while True:
			    c, _ = s.accept()
			    if c.recv(1) == b"S":
			        c.sendall(open(sys.argv[2], "rb").read())
			    c.close()
		EOF
		server=$!
		for _ in $(seq 100); do [ -S "$AMDQP_RUNTIME_DIR/amdqpd.sock" ] && break; sleep 0.05; done
	}
	stop_serving() {
		kill "$server" 2>/dev/null
		wait "$server" 2>/dev/null
		rm -f "$AMDQP_RUNTIME_DIR/amdqpd.sock"
	}
	trap 'kill "$daemon" "$server" 2>/dev/null; rm -rf "$tmp"' EXIT
	serve "$tmp/status.json"
	run_ctl status
	expect_rc 3
	grep -qx "amdqpd: running (pid $daemon)" "$tmp/out" || fail "not reported running"
	grep -qx '  order: before-doorbell' "$tmp/out" || fail "no order"
	grep -Eqx '  1 +12 \(high\) +0 of 1' "$tmp/out" || fail "no GPU row"
	grep -Eqx '  tp +7 \(normal\) +1 +77' "$tmp/out" || fail "no group row"
	run_ctl status --json
	expect_rc 3
	python3 - "$tmp/out" "$daemon" "$tmp/amdqpd" <<-'EOF' || fail "json: daemon"
		import json, sys
		d = json.load(open(sys.argv[1]))["daemon"]
		assert d["state"] == "running" and d["pid"] == int(sys.argv[2]), d
		assert d["installed"] and d["path"] == sys.argv[3], d
		assert d["gpus"] == [{"gpu": 1, "suspend_level": 12, "confine_level": 0,
		                      "confine_share": 0, "auto_demand": {}, "queues": 1,
		                      "active_queues": 0}], d
		assert d["groups"]["tp"]["pids"] == [77] and d["stats"]["suspend_calls"] == 3, d
	EOF
	stop_serving
	# Nobody listens: not running, whatever runs under the name amdqpd.
	run_ctl status
	expect_rc 3
	grep -qx "amdqpd: not running (installed at $tmp/amdqpd)" "$tmp/out" ||
		grep -qx "amdqpd: not installed" "$tmp/out" || fail "a process named amdqpd believed"
	printf '{"pid": ' >"$tmp/bad.json"
	serve "$tmp/bad.json"
	run_ctl status
	expect_rc 3
	grep -q '^amdqpd: status unreadable: not JSON: ' "$tmp/out" || fail "garbage accepted"
	stop_serving
	kill "$daemon"
	wait "$daemon" 2>/dev/null
	expect_err_lines 0
	;;
run_exit_status)
	run_ctl run --priority low -- sh -c 'exit 7'
	expect_rc 7
	expect_err_lines 1
	AMDQP_QUIET=1 run_ctl run --priority low -- sh -c 'exit 7'
	expect_rc 7
	[ ! -s "$tmp/err" ] || fail "AMDQP_QUIET=1 and still something on stderr"
	# Without "--" too, like nice(1); the command's options stay its own.
	AMDQP_QUIET=1 run_ctl run -p high sh -c 'exit 3' -p
	expect_rc 3
	;;
run_stdio)
	out="$(printf 'line1\nline2\n' | AMDQP_QUIET=1 "$ctl" run -- sh -c 'cat; echo to-stderr >&2' 2>"$tmp/err")"
	[ "$out" = "$(printf 'line1\nline2')" ] || { echo "$out" >"$tmp/out"; fail "stdin/stdout not passed through"; }
	grep -qx 'to-stderr' "$tmp/err" || fail "stderr not passed through"
	;;
run_signals)
	# The command's own death by signal is amdqpctl's status (it is the
	# same process after exec).
	AMDQP_QUIET=1 run_ctl run -- sh -c 'kill -TERM $$'
	expect_rc 143
	# A signal sent to amdqpctl's pid reaches the command.
	mkfifo "$tmp/ready"
	# shellcheck disable=SC2016  # expanded by the inner shell
	AMDQP_QUIET=1 "$ctl" run -- sh -c 'trap "exit 42" TERM; echo up >"$0"; while :; do sleep 0.05; done' "$tmp/ready" &
	pid=$!
	read -r _ <"$tmp/ready"
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	expect_rc 42
	;;
run_cannot_execute)
	AMDQP_QUIET=1 run_ctl run -- "$tmp/does-not-exist"
	expect_rc 127
	grep -q 'command not found' "$tmp/err" || fail "no 'command not found'"
	printf 'not a program\n' >"$tmp/data"
	chmod 0644 "$tmp/data"
	AMDQP_QUIET=1 run_ctl run -- "$tmp/data"
	expect_rc 126
	;;
run_bad_input)
	run_ctl run --priority urgent -- true
	expect_rc 2
	grep -q "unknown priority 'urgent'" "$tmp/err" || fail "no clear message"
	grep -q 'high' "$tmp/err" || fail "the message does not list the levels"
	run_ctl run --priority low
	expect_rc 2
	run_ctl run --frobnicate -- true
	expect_rc 2
	;;
run_environment)
	# The tagging layer and its rocprofiler-sdk entry library, side by side
	# as installed (any library that may be preloaded stands in for both).
	mkdir "$tmp/lib"
	pre="$tmp/lib/libamdqp-preload.so"
	rocp="$tmp/lib/libamdqp-rocprofiler.so"
	ln -s "$lib" "$pre"
	ln -s "$lib" "$rocp"
	# shellcheck disable=SC2016  # expanded by the inner shell
	show='printf "%s|%s|%s|%s|%s|%s|%s\n" "$AMDQP_PRIORITY" "$AMDQP_GROUP" "$AMDQP_STREAM_PRIORITY" "$LD_PRELOAD" "$HSA_TOOLS_LIB" "$HSA_TOOLS_ROCPROFILER_V1_TOOLS" "${ROCP_TOOL_LIBRARIES-unset}"'
	AMDQP_PRELOAD_LIB="$pre" HSA_TOOLS_LIB=other.so run_ctl run -p high -g tp0 --stream-priority -- \
		sh -c "$show"
	expect_rc 0
	# No ROCP_TOOL_LIBRARIES of its own: where rocprofiler-sdk is missing,
	# rocprofiler-register would abort the command.
	want="high|tp0|1|$pre|other.so $pre|1|unset"
	[ "$(cat "$tmp/out")" = "$want" ] || fail "environment: want $want"
	[ ! -s "$tmp/err" ] || fail "a warning although the library was found"
	# A profiler's list gets the entry library (not the preload one); the
	# user's HSA_TOOLS_ROCPROFILER_V1_TOOLS stands.
	AMDQP_PRELOAD_LIB="$pre" ROCP_TOOL_LIBRARIES=/opt/prof.so HSA_TOOLS_ROCPROFILER_V1_TOOLS=0 \
		run_ctl run -- sh -c "$show"
	expect_rc 0
	want="normal|||$pre|$pre|0|/opt/prof.so:$rocp"
	[ "$(cat "$tmp/out")" = "$want" ] || fail "environment with a profiler: want $want"
	AMDQP_PRELOAD_LIB="$tmp/missing.so" run_ctl run -- true
	expect_rc 0
	expect_err_lines 1
	grep -q 'untagged' "$tmp/err" || fail "a missing preload library is not reported"
	;;
help)
	for verb in list run priority suspend resume watch stats status; do
		run_ctl "$verb" --help
		expect_rc 0
		grep -q "Usage: amdqpctl $verb" "$tmp/out" || fail "$verb --help has no usage line"
	done
	run_ctl --help
	expect_rc 0
	grep -q 'Exit status' "$tmp/out" || fail "--help does not list the exit statuses"
	run_ctl --version
	expect_rc 0
	;;
usage_errors)
	run_ctl
	expect_rc 2
	run_ctl frobnicate
	expect_rc 2
	grep -q "unknown verb 'frobnicate'" "$tmp/err" || fail "no clear message"
	run_ctl priority 1 urgent
	expect_rc 2
	grep -q "unknown priority 'urgent'" "$tmp/err" || fail "no clear message"
	run_ctl suspend --queue 1-2-3
	expect_rc 2
	grep -q 'PID:GPU:QUEUE' "$tmp/err" || fail "the message does not show the forms"
	run_ctl suspend --gpu 1 5
	expect_rc 2
	run_ctl watch --type nonsense
	expect_rc 2
	;;
man_page_complete)
	# Every verb, option, exit status and variable of the tool is in the man
	# page (options as roff writes them: \-\-json).
	man="${AMDQPCTL_MAN:?set AMDQPCTL_MAN to amdqpctl.1}"
	for verb in list run priority suspend resume watch stats status; do
		grep -qx "\.SS $verb" "$man" || fail "no section for $verb"
		"$ctl" "$verb" --help >"$tmp/out" 2>"$tmp/err"
		grep -oE -- '(^|[ ,/])--?[a-z][a-z-]*' "$tmp/out" | sed 's/^[ ,\/]*//' | sort -u >"$tmp/opts"
		[ -s "$tmp/opts" ] || fail "no options found in amdqpctl $verb --help"
		while IFS= read -r opt; do
			[ "$opt" = --help ] || [ "$opt" = -h ] && continue
			roff="$(printf '%s' "$opt" | sed 's/-/\\-/g')"
			grep -qF -- "$roff" "$man" || fail "amdqpctl $verb $opt is not in $man"
		done <"$tmp/opts"
	done
	for code in 0 1 2 3 4; do
		grep -qx "\.B $code" "$man" || fail "exit status $code is not in $man"
	done
	for word in 126 127 AMDQP_DEVICE AMDQP_RUNTIME_DIR AMDQP_PRELOAD_LIB AMDQP_QUIET \
		AMDQP_PRIORITY AMDQP_GROUP AMDQP_STREAM_PRIORITY LD_PRELOAD HSA_TOOLS_LIB \
		ROCP_TOOL_LIBRARIES HSA_TOOLS_ROCPROFILER_V1_TOOLS; do
		grep -q "$word" "$man" || fail "$word is not in $man"
	done
	;;
*)
	echo "unknown case $case_name"
	exit 2
	;;
esac
echo "ok: $case_name"

#!/bin/bash
# Count TAP results (kselftest style, nested '# ' subtests) in files/stdin.
set -euo pipefail

usage() {
	cat <<USAGE
Usage: ${0##*/} [--quiet] [FILE|-]...

Reads TAP 13 as kselftest prints it (a single harness binary, or the
kselftest runner's nested form where each test program's own TAP is
indented by '# ' before its 'ok N selftests: ...' line) from the FILEs or
stdin, and counts leaf tests:

  ok N desc              passed      (also '# XFAIL')
  not ok N desc          failed
  ok N desc # SKIP ...   skipped     (also 'not ok ... # TODO')
  plan 1..N, fewer results    each missing test counts as failed
  no plan / more results than planned / 'Bail out!'  one failure
  an input without any TAP    one failure

A result that owns nested TAP is not counted itself, but a 'not ok' on it
whose nested tests all passed (e.g. the program crashed or timed out
after its last test) counts as one failure. Lines that are not TAP
(console noise, kernel messages) are ignored.

Output (machine-readable, one record a line):
  tap-summary: FAIL <input>: <reason or test>
  tap-summary: suite passed=P failed=F skipped=S name=<test program>
  tap-summary: stream passed=P failed=F skipped=S name=<input>
  tap-summary: total passed=P failed=F skipped=S
--quiet prints only the total line and FAIL lines.
Exit status: 0 when failed=0, 1 otherwise, 2 on usage errors.
USAGE
}

quiet=0
inputs=()
while [ $# -gt 0 ]; do
	case "$1" in
	-q | --quiet) quiet=1 ;;
	-h | --help) usage; exit 0 ;;
	--) shift; inputs+=("$@"); break ;;
	-) inputs+=(-) ;;
	-*) usage >&2; exit 2 ;;
	*) inputs+=("$1") ;;
	esac
	shift
done
[ ${#inputs[@]} -gt 0 ] || inputs=(-)

# shellcheck disable=SC2016  # an awk program, not shell
tap_awk='
function start(d) {
	active[d] = 1; plan[d] = -1; seen[d] = 0; bail[d] = 0
	lp[d] = 0; lf[d] = 0; ls[d] = 0; pend[d] = 0
	any_tap = 1
}
function fail_note(msg) {
	printf "tap-summary: FAIL %s: %s\n", label, msg
}
function close_block(d,    missing) {
	if (!active[d])
		return
	if (active[d + 1])
		close_block(d + 1)
	if (plan[d] < 0) {
		lf[d]++
		fail_note(seen[d] ? "no TAP plan (output cut short?)" : "TAP started but no plan and no results")
	} else if (seen[d] < plan[d]) {
		missing = plan[d] - seen[d]
		lf[d] += missing
		fail_note(missing " test(s) missing: plan 1.." plan[d] ", got " seen[d] " result(s)")
	} else if (seen[d] > plan[d]) {
		lf[d]++
		fail_note("more results (" seen[d] ") than planned (" plan[d] ")")
	}
	if (bail[d] && plan[d] >= 0 && seen[d] >= plan[d]) {
		lf[d]++
	}
	active[d] = 0
	if (d == 0) {
		tp += lp[d]; tf += lf[d]; ts += ls[d]
		if (!quiet)
			printf "tap-summary: stream passed=%d failed=%d skipped=%d name=%s\n", lp[d], lf[d], ls[d], label
	} else {
		pend[d - 1] = 1
		pp[d - 1] = lp[d]; pf[d - 1] = lf[d]; ps[d - 1] = ls[d]
	}
}
function result(d, line,    notok, desc, dir, kind) {
	if (!active[d]) {
		if (d > 0)
			return
		start(0)
	}
	if (active[d + 1])
		close_block(d + 1)
	seen[d]++
	notok = (line ~ /^not ok/)
	desc = line
	sub(/^(not )?ok[ \t]*[0-9]*[ \t]*(-[ \t]*)?/, "", desc)
	dir = ""
	if (match(desc, /[ \t]#[ \t]*[A-Za-z]+/)) {
		dir = toupper(substr(desc, RSTART, RLENGTH))
		gsub(/[ \t#]/, "", dir)
	}
	if (dir ~ /^SKIP/ || (notok && dir ~ /^TODO/))
		kind = "skip"
	else if (notok)
		kind = "fail"
	else
		kind = "pass"
	if (pend[d] && pp[d] + pf[d] + ps[d] > 0) {
		lp[d] += pp[d]; lf[d] += pf[d]; ls[d] += ps[d]
		if (kind == "fail" && pf[d] == 0) {
			lf[d]++
			fail_note(desc " (program failed after its tests)")
		}
		if (!quiet)
			printf "tap-summary: suite passed=%d failed=%d skipped=%d name=%s\n", pp[d], pf[d] + (kind == "fail" && pf[d] == 0), ps[d], desc
	} else if (kind == "pass") {
		lp[d]++
	} else if (kind == "skip") {
		ls[d]++
	} else {
		lf[d]++
		fail_note(desc)
	}
	pend[d] = 0
}
function line_in(raw,    d, s) {
	s = raw
	sub(/\r$/, "", s)
	d = 0
	while (s ~ /^# / || s == "#") {
		s = substr(s, 3)
		d++
	}
	if (s ~ /^TAP version [0-9]+/) {
		if (d > 0 && !active[d - 1])
			return
		if (active[d])
			close_block(d)
		start(d)
	} else if (s ~ /^1\.\.[0-9]+/) {
		if (!active[d]) {
			if (d > 0 && !active[d - 1])
				return
			start(d)
		} else if (plan[d] >= 0) {
			close_block(d)
			start(d)
		}
		if (active[d + 1])
			close_block(d + 1)
		plan[d] = substr(s, 4) + 0
		if (plan[d] == 0 && !quiet)
			printf "tap-summary: note %s: empty plan (%s)\n", label, s
	} else if (s ~ /^(not )?ok( |$)/) {
		result(d, s)
	} else if (s ~ /^Bail out!/) {
		if (active[d]) {
			bail[d] = 1
			fail_note(s)
			close_block(d)
		}
	}
}
BEGIN { tp = tf = ts = 0 }
/^\001tap-summary-input / {
	if (started)
		finish_input()
	started = 1
	label = substr($0, 20)
	any_tap = 0
	next
}
{ line_in($0) }
function finish_input() {
	if (active[0])
		close_block(0)
	if (!any_tap) {
		tf++
		fail_note("no TAP output found")
	}
}
END {
	if (started)
		finish_input()
	printf "tap-summary: total passed=%d failed=%d skipped=%d\n", tp, tf, ts
	exit (tf > 0)
}
'

for f in "${inputs[@]}"; do
	if [ "$f" = - ]; then
		printf '\001tap-summary-input stdin\n'
		cat
	else
		printf '\001tap-summary-input %s\n' "$f"
		cat -- "$f" || true
	fi
	echo
done | awk -v quiet="$quiet" "$tap_awk"

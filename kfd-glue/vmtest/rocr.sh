#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the VM (busybox sh), from guest.sh, while the patched amdgpu
# (CPU-only /dev/kfd) and amdqp are loaded. Proves with Debian's real
# libhsa-runtime64 5.2.3 that hsa_init loads the tools libraries named in
# HSA_TOOLS_LIB and hands their OnLoad the API table every hsa_* call goes
# through (libuser/testing/rocr-smoke), and that the tagging layer loaded
# that way lets the program run as it would without it.
#
# Environment (kfd-glue/check.sh sets it; the files come with run-vm.sh
# --dyn): ROCR_SMOKE (the program), ROCR_SMOKE_TOOL (its tools library),
# ROCR_SMOKE_PRELOAD (libamdqp-preload.so; empty when not built).
#
# Usage: rocr.sh TAPFILE JSONFILE. Appends "ok - ..." / "not ok - ..."
# lines to TAPFILE and each run's JSON object to JSONFILE.
out=$1
json=$2
work=/tmp/rocr
mkdir -p "$work"
: >"$json"
P=$ROCR_SMOKE
T=$ROCR_SMOKE_TOOL
L=$ROCR_SMOKE_PRELOAD
missing=/nonexistent/libamdqp-missing.so

res() {	# res STATUS DESCRIPTION
	if [ "$1" = 0 ]; then echo "ok - $2"; else echo "not ok - $2"; fi |
		tee -a "$out"
}

# run NAME COMMAND...: the program's checks go to $out (it is given
# --checks), its stdout to NAME.json, its stderr (the runtime's and the
# tools libraries') to NAME.err.
run() {
	name=$1
	shift
	echo "rocr.sh: $name: $*"
	"$@" >"$work/$name.json" 2>"$work/$name.err"
	rc=$?
	sed "s/^/rocr.sh: $name: stderr: /" "$work/$name.err"
	cat "$work/$name.json" >>"$json"
	res $rc "rocr $name: the program exits 0 (exit $rc)"
}

# extra_lines NAME: stderr lines of run NAME that the runtime alone did not
# print (Debian's ROCr is built with its debug messages on: it prints two
# lines about xnack at every hsa_init on this kernel).
extra_lines() {
	grep -v -x -F -f "$work/baseline.err" "$work/$1.err" | grep -c .
}

# --- the runtime alone --------------------------------------------------
run baseline env -u HSA_TOOLS_LIB -u LD_PRELOAD \
	"$P" --label "rocr baseline" --checks "$out" --cpu-only --not-loaded "$T"

# --- a tools library of our own: OnLoad, its table, its hooks ------------
run tool env -u LD_PRELOAD HSA_TOOLS_LIB="$T" \
	"$P" --label "rocr tool" --checks "$out" --cpu-only --smoke-tool "$T" \
	--queue-create-owner "$T"

# A library that cannot be loaded does not stop the ones after it (the
# activation appends to a list the user may already have set).
run missing-first env -u LD_PRELOAD HSA_TOOLS_LIB="$missing $T" \
	"$P" --label "rocr missing-first" --checks "$out" --cpu-only --smoke-tool "$T" \
	--queue-create-owner "$T"
grep -q "libamdqp-missing.so" "$work/missing-first.err"
res $? "rocr missing-first: the runtime names the library it could not load on stderr"

# --- the tagging layer ----------------------------------------------------
if [ -n "$L" ]; then
	# Loaded by the runtime alone.
	run preload env -u LD_PRELOAD HSA_TOOLS_LIB="$L" AMDQP_PRIORITY=high \
		"$P" --label "rocr preload" --checks "$out" --cpu-only --loaded "$L"
	n=$(extra_lines preload)
	[ "$n" -le 1 ]
	res $? "rocr preload: libamdqp-preload.so adds at most one line to stderr ($n)"

	# What amdqpctl run sets up: LD_PRELOAD, and HSA_TOOLS_LIB appended
	# after a tool that was there already. The preload's OnLoad runs after
	# the smoke tool's, so the table's hsa_queue_create must now land in it.
	run preload-activation env LD_PRELOAD="$L" HSA_TOOLS_LIB="$T $L" \
		AMDQP_PRIORITY=low \
		"$P" --label "rocr preload-activation" --checks "$out" --cpu-only \
		--smoke-tool "$T" --queue-create-owner "$L" --loaded "$L"
	n=$(extra_lines preload-activation)
	[ "$n" -le 1 ]
	res $? "rocr preload-activation: libamdqp-preload.so adds at most one line to stderr ($n)"

	# A priority it cannot parse: the program still runs, and the layer
	# loaded twice (LD_PRELOAD and the runtime) says so once; not at all
	# with AMDQP_QUIET=1.
	run preload-warning env LD_PRELOAD="$L" HSA_TOOLS_LIB="$T $L" \
		AMDQP_PRIORITY=urgent \
		"$P" --label "rocr preload-warning" --checks "$out" --cpu-only \
		--smoke-tool "$T" --queue-create-owner "$L"
	n=$(extra_lines preload-warning)
	line=$(grep -v -x -F -f "$work/baseline.err" "$work/preload-warning.err" | head -n 1)
	[ "$n" = 1 ] && case "$line" in amdqp:*AMDQP_PRIORITY*) true ;; *) false ;; esac
	res $? "rocr preload-warning: exactly one stderr line, naming AMDQP_PRIORITY ($n: $line)"

	run preload-quiet env LD_PRELOAD="$L" HSA_TOOLS_LIB="$T $L" \
		AMDQP_PRIORITY=urgent AMDQP_QUIET=1 \
		"$P" --label "rocr preload-quiet" --checks "$out" --cpu-only \
		--smoke-tool "$T" --queue-create-owner "$L"
	n=$(extra_lines preload-quiet)
	[ "$n" = 0 ]
	res $? "rocr preload-quiet: AMDQP_QUIET=1 adds no line to stderr ($n)"
fi
exit 0

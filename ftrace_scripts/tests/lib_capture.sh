# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034 # variables for the suites that source this
# Sourced by the test_capture*.sh suites: TAP helpers and a fake
# tracefs/debugfs tree for amdqp-capture (AMDQP_CAPTURE_TEST_FS).
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cap=$here/../amdqp-capture
fixtures=$here/../../tools/amdqp-trace/tests/fixtures/mi308x
tmp=$(mktemp -d "${TMPDIR:-/tmp}/amdqp-capture-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0
n=0

export AMDQP_CAPTURE_EUID=0 # the script's own root check is tested in test_capture.sh
# Nothing from this host's /proc/kallsyms: the fake tree says what exists.
export AMDQP_CAPTURE_KALLSYMS=/dev/null

ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
finish() {
	echo "1..$n"
	[ "$fails" -eq 0 ]
}

# expect RC GREP-PATTERN DESCRIPTION -- command...
expect() {
	local want=$1 pat=$2 what=$3
	shift 4
	local out rc
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" -eq "$want" ] && grep -qE -- "$pat" <<<"$out"; then
		ok "$what"
	else
		bad "$what (rc=$rc, want $want; output: $(head -c 400 <<<"$out"))"
	fi
}

# A fake tracefs at $1: the files the script reads, plain files for what it
# writes. Two KFD functions plus a non-KFD one are "traceable".
make_fake_tracefs() { # DIR
	local f=$1 e
	mkdir -p "$f/instances" "$f/events/amdgpu/amdgpu_cs_ioctl"
	for e in amdqp_queue_register amdqp_queue_unregister amdqp_priority_change \
		amdqp_suspend_batch amdqp_resume_batch amdqp_error amdqp_watchdog; do
		mkdir -p "$f/events/amdqp/$e" && : >"$f/events/amdqp/$e/enable"
	done
	: >"$f/events/amdgpu/amdgpu_cs_ioctl/enable"
	: >"$f/trace"
	: >"$f/kprobe_events"
	printf '%s\n' 'execute_queues_cpsch [amdgpu]' 'create_queue_cpsch [amdgpu]' \
		'unmap_queues_cpsch [amdgpu]' 'schedule' >"$f/available_filter_functions"
}

make_fake_debugfs() { # DIR
	mkdir -p "$1/kfd"
	cp "$fixtures/debugfs-kfd-hqds-16streams.txt" "$1/kfd/hqds"
	cp "$fixtures/debugfs-kfd-mqds-16streams.txt" "$1/kfd/mqds"
}

# The one capture folder under an output folder.
capture_dir() { # OUTPUT
	find "$1" -mindepth 1 -maxdepth 1 -type d -name 'amdqp-capture-*' 2>/dev/null | head -n1
}

# The tracefs instance a run left in a fake tree (kept there for reading).
instance_dir() { # FAKE_TRACEFS
	find "$1/instances" -mindepth 1 -maxdepth 1 -type d -name 'amdqp-capture-*' | head -n1
}

# A manifest field as JSON text (python3: exact, whatever the layout).
manifest_get() { # MANIFEST KEY
	python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])).get(sys.argv[2])))' "$1" "$2" 2>/dev/null
}

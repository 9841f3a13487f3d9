#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# amdqp-capture ring buffer sizing: by GPUs and duration, capped for hosts with
# many CPUs, checked after the write, and the applied size recorded.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=lib_capture.sh
. "$(dirname "$0")/lib_capture.sh"

fake=$tmp/tracefs
make_fake_tracefs "$fake"
export AMDQP_CAPTURE_MEM_KB=$((256 * 1024 * 1024)) # 256 GiB: the 1 GiB cap rules

# buffer_kb CPUS GPUS ARGS...: the per-CPU size a dry run would write.
buffer_kb() {
	local cpus=$1 gpus=$2
	shift 2
	AMDQP_CAPTURE_CPUS=$cpus AMDQP_CAPTURE_GPUS=$gpus "$cap" -n --tracefs "$fake" --no-kfd "$@" 2>&1 |
		sed -n "s/^would write '\([0-9]*\)' > .*\/buffer_size_kb$/\1/p"
}
check_size() { # WANT DESCRIPTION CPUS GPUS ARGS...
	local want=$1 what=$2 got
	shift 2
	got=$(buffer_kb "$@")
	if [ "$got" = "$want" ]; then ok "$what"; else bad "$what: $got KiB per CPU, want $want"; fi
}

check_size 4096 "8 GPUs, 128 CPUs: 4 MiB per CPU, 512 MiB in all" 128 8 -- true
# Was 4 MiB per CPU here (2 GiB in all).
check_size 1024 "8 GPUs, 512 CPUs: 1 MiB per CPU, not the 4 MiB floor" 512 8 -- true
check_size 2048 "16 GPUs, 512 CPUs: the 1 GiB cap" 512 16 -- true
check_size 65536 "1 GPU, 1 CPU: at most 64 MiB per CPU" 1 1 -- true
check_size 512 "--duration 2 needs less" 64 4 -d 2 -- true
check_size 256 "the per-CPU floor" 64 1 -d 2 -- true
check_size 64 "the floor never lifts the total over the cap" 512 1 --buffer-max-mb 32 -- true
check_size 512 "--buffer-max-mb" 512 8 --buffer-max-mb 256 -- true
AMDQP_CAPTURE_MEM_KB=$((2 * 1024 * 1024)) check_size 512 "at most 1/8 of MemAvailable" 512 8 -- true
check_size 8192 "-b wins" 512 8 -b 8192 -- true
expect 1 '--buffer-max-mb must be a number of MiB >= 1' "bad --buffer-max-mb" -- "$cap" --buffer-max-mb 0 -- true

# A real run records what the kernel applied (here: what reads back).
export AMDQP_CAPTURE_TEST_FS=1
out=$(AMDQP_CAPTURE_CPUS=512 AMDQP_CAPTURE_GPUS=8 "$cap" --tracefs "$fake" --no-kfd -o "$tmp/ok" -- true 2>&1)
m=$(capture_dir "$tmp/ok")/manifest.json
if [ "$(manifest_get "$m" buffer_size_kb_per_cpu)" = 1024 ] && [ "$(manifest_get "$m" buffer_total_kb)" = 524288 ] &&
	[ "$(manifest_get "$m" buffer_size_kb_requested)" = 1024 ] && [ "$(manifest_get "$m" cpus)" = 512 ]; then
	ok "manifest has the applied size"
else
	bad "applied size: $out $(cat "$m" 2>/dev/null)"
fi

# A buffer_size_kb that takes writes but does not change (here /dev/null; in a
# kernel, a size it could not allocate) is noticed, retried smaller, reported.
rm -rf "$fake/instances"/*
mkdir -p "$fake/instance-skel"
ln -s /dev/null "$fake/instance-skel/buffer_size_kb"
out=$("$cap" --tracefs "$fake" --no-kfd -o "$tmp/nomem" -b 4096 -- true 2>&1)
m=$(capture_dir "$tmp/nomem")/manifest.json
log=$(capture_dir "$tmp/nomem")/capture.log
if grep -q 'could not set the ring buffer to 4096 KiB per CPU' <<<"$out" &&
	[ "$(manifest_get "$m" buffer_size_kb_per_cpu)" = null ] &&
	grep -q 'buffer_size_kb: wrote 2048' "$log"; then
	ok "a size that did not take is retried smaller and reported"
else
	bad "write check: $out $(cat "$m" 2>/dev/null)"
fi

finish

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# One-command hardware validation of amdqp's kfd path on a real AMD GPU
# host (MI300 gfx942, MI200 gfx90a, RDNA3 gfx110x). See
# Documentation/verification.rst.
#
#   sudo tools/hw-validate/hw-validate.sh [--out DIR] [--streams N]
#        [--iters K] [--seconds S] [--force]
#
# Writes DIR/report.md and DIR/report.json. Refuses to run (exit 2, with a
# report saying why) where the result could not mean anything: no AMD GPU,
# an unvalidated ASIC (unless --force), amdgpu without the kfd-glue
# patches, amdqp not loadable or not bound to kfd, no HIP toolchain,
# amdgpu's sched_policy=2 (no HWS). Exit 0 when every check passed, 1
# when one failed.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=$PWD/amdqp-hw-validate-$(hostname -s)-$(date -u +%Y%m%dT%H%M%SZ)
streams=8
iters=200
seconds=60
force=0

usage() { sed -n '2,/^set /p' "${BASH_SOURCE[0]}" | sed -n 's/^# \{0,1\}//p'; }
while [ $# -gt 0 ]; do
	case "$1" in
	--out) out=${2:?}; shift ;;
	--streams) streams=${2:?}; shift ;;
	--iters) iters=${2:?}; shift ;;
	--seconds) seconds=${2:?}; shift ;;
	--force) force=1 ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
	shift
done
mkdir -p "$out" || exit 2
bin=$out/bin
mkdir -p "$bin"

reasons=()
env_json=()
note() { echo "hw-validate: $*" >&2; }
refuse() { reasons+=("$1"); note "cannot validate: $1"; }
jstr() { printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g' | tr '\n' ' '; }
envkv() { env_json+=("\"$1\": \"$(jstr "$2")\""); }

write_report() {	# write_report STATUS [HWV_JSON HWV_MD WORKLOAD_LINES]
	local status=$1 i
	{
		echo "{"
		echo "  \"tool\": \"amdqp hw-validate\","
		echo "  \"status\": \"$status\","
		echo "  \"date_utc\": \"$(date -u +%FT%TZ)\","
		echo "  \"environment\": {"
		for i in "${!env_json[@]}"; do
			printf '    %s%s\n' "${env_json[$i]}" \
				"$([ "$i" -lt $((${#env_json[@]} - 1)) ] && echo ,)"
		done
		echo "  },"
		echo "  \"refusal_reasons\": ["
		for i in "${!reasons[@]}"; do
			printf '    "%s"%s\n' "$(jstr "${reasons[$i]}")" \
				"$([ "$i" -lt $((${#reasons[@]} - 1)) ] && echo ,)"
		done
		echo "  ],"
		if [ -n "${2:-}" ] && [ -s "$2" ]; then
			echo "  \"checks\":"
			sed 's/^/  /' "$2"
			echo "  ,"
		fi
		echo "  \"workloads\": \"$(jstr "${4:-}")\""
		echo "}"
	} >"$out/report.json"
	{
		echo "# amdqp hardware validation: $status"
		echo
		echo "Date (UTC): $(date -u +%FT%TZ)  "
		echo "Host: $(hostname -f 2>/dev/null || hostname)"
		echo
		echo "## Environment"
		echo
		for i in "${env_json[@]}"; do echo "- ${i//\"/}"; done
		if [ "${#reasons[@]}" -gt 0 ]; then
			echo
			echo "## Not validated, because"
			echo
			for i in "${reasons[@]}"; do echo "- $i"; done
		fi
		if [ -n "${3:-}" ] && [ -s "$3" ]; then
			echo
			echo "## Checks and measurements"
			echo
			cat "$3"
		fi
		if [ -n "${4:-}" ]; then
			echo
			echo "## Workload results"
			echo
			echo '```'
			echo "$4"
			echo '```'
		fi
	} >"$out/report.md"
	note "report: $out/report.md and $out/report.json"
}

# --- environment -----------------------------------------------------------
envkv kernel "$(uname -r)"
envkv os "$(. /etc/os-release 2>/dev/null; echo "${PRETTY_NAME:-unknown}")"
[ "$(id -u)" = 0 ] || refuse "must run as root (loads modules, reads debugfs, suspends other processes' queues)"

gfx=
if [ -d /sys/class/kfd/kfd/topology/nodes ]; then
	for n in /sys/class/kfd/kfd/topology/nodes/*; do
		id=$(cat "$n/gpu_id" 2>/dev/null || echo 0)
		[ "$id" != 0 ] || continue
		v=$(awk '$1 == "gfx_target_version" { print $2 }' "$n/properties")
		name=$(cat "$n/name" 2>/dev/null)
		gfx="$gfx ${v}"
		envkv "gpu_$id" "gfx_target_version $v ($name)"
	done
fi
if [ ! -c /dev/kfd ]; then
	refuse "/dev/kfd does not exist: amdgpu/amdkfd is not loaded or not enabled"
elif [ -z "$gfx" ]; then
	refuse "no AMD GPU node in the KFD topology (CPU-only): nothing to preempt"
else
	ok=0
	for v in $gfx; do
		case "$v" in
		90400 | 90401 | 90402 | 90010) ok=1 ;;	# gfx940/941/942 MI300, gfx90a MI200
		110000 | 110001 | 110002 | 110003) ok=1 ;;	# gfx110x RDNA3 (MES)
		esac
	done
	[ "$ok" = 1 ] || [ "$force" = 1 ] ||
		refuse "GPU(s) with gfx_target_version$gfx are not among the validated families (MI300 gfx94x, MI200 gfx90a, RDNA3 gfx110x); rerun with --force to try anyway"
fi
sp=$(cat /sys/module/amdgpu/parameters/sched_policy 2>/dev/null || echo "?")
envkv amdgpu_sched_policy "$sp"
[ "$sp" != 2 ] || refuse "amdgpu sched_policy=2 (no HWS): queue control needs the HWS or MES scheduler"
envkv amdgpu_mes "$(cat /sys/module/amdgpu/parameters/mes 2>/dev/null || echo '?')"
envkv queue_preemption_timeout_ms "$(cat /sys/module/amdgpu/parameters/queue_preemption_timeout_ms 2>/dev/null || echo '?')"
if grep -qw kfd_qctl_register_client /proc/kallsyms 2>/dev/null; then
	envkv amdgpu_glue "present"
else
	refuse "the loaded amdgpu lacks the amdkfd queue control glue (kfd_qctl_* not in /proc/kallsyms): install it with kfd-glue/dkms-overlay.sh and reload amdgpu"
fi
envkv amdgpu_srcversion "$(cat /sys/module/amdgpu/srcversion 2>/dev/null || echo '?')"

hipcc=$(command -v hipcc || ls /opt/rocm*/bin/hipcc 2>/dev/null | head -n 1)
if [ -z "$hipcc" ]; then
	refuse "hipcc not found: install ROCm's HIP SDK (hip-dev / rocm-hip-sdk) to build the workload"
else
	envkv hipcc "$("$hipcc" --version 2>/dev/null | head -n 2 | tr '\n' ' ')"
fi

# amdqp.ko: loaded, or load the one built in this checkout
if [ "${#reasons[@]}" = 0 ] && [ ! -c /dev/amdqp ]; then
	if [ -f "$repo/kmod/amdqp.ko" ]; then
		insmod "$repo/kmod/amdqp.ko" ||
			refuse "insmod $repo/kmod/amdqp.ko failed (built for $(modinfo -F vermagic "$repo/kmod/amdqp.ko" 2>/dev/null | cut -d' ' -f1)?)"
	else
		modprobe amdqp 2>/dev/null ||
			refuse "amdqp is not loaded and neither kmod/amdqp.ko (make modules) nor an installed module exists"
	fi
fi

# tools
if [ "${#reasons[@]}" = 0 ]; then
	cc -O2 -Wall -I"$repo/uapi" -o "$bin/hwv" "$here/src/hwv.c" ||
		refuse "building hwv failed"
	"$hipcc" -O2 -o "$bin/hwv_load" "$here/src/hwv_load.hip" >"$out/hipcc.log" 2>&1 ||
		refuse "building the HIP workload failed (see $out/hipcc.log)"
fi
if [ "${#reasons[@]}" = 0 ]; then
	probe=$("$bin/hwv" probe)
	envkv amdqp "$probe"
	[ "$(echo "$probe" | grep -c '"backend": 2')" -gt 0 ] ||
		refuse "amdqp's kfd backend is not bound to any GPU (probe: $probe); see dmesg | grep amdqp"
fi
envkv amdqp_dmesg "$(dmesg 2>/dev/null | grep 'amdqp: kfd backend' | tail -n 3)"

if [ "${#reasons[@]}" -gt 0 ]; then
	write_report refused
	exit 2
fi

# --- run -------------------------------------------------------------------
shm=/dev/shm/amdqp-hwv-$$
note "starting workload: $streams streams for up to $seconds s"
GPU_MAX_HW_QUEUES=$streams "$bin/hwv_load" "$shm.main" "$streams" "$seconds" \
	>"$out/workload-main.log" 2>&1 &
main=$!
GPU_MAX_HW_QUEUES=1 "$bin/hwv_load" "$shm.victim" 1 "$seconds" \
	>"$out/workload-victim.log" 2>&1 &
victim=$!
for _ in $(seq 100); do
	[ -s "$shm.main" ] && [ -s "$shm.victim" ] && break
	sleep 0.1
done

trace=/sys/kernel/tracing
[ -d "$trace/events/amdqp" ] && echo 1 >"$trace/events/amdqp/enable" 2>/dev/null
"$bin/hwv" run --pid "$main" --shm "$shm.main" --streams "$streams" \
	--victim "$victim" --victim-shm "$shm.victim" --iters "$iters" \
	--json "$out/checks.json" --md "$out/checks.md"
rc=$?
[ -d "$trace/events/amdqp" ] && echo 0 >"$trace/events/amdqp/enable" 2>/dev/null
cp /sys/kernel/debug/kfd/hqds "$out/hqds-after.txt" 2>/dev/null

wait "$victim" 2>/dev/null
# The main workload finishes on its own (--seconds) and checks its results.
note "waiting for the workload to finish and verify its results"
wait "$main"
wrc=$?
wres=$(grep -h RESULT "$out/workload-main.log")
[ "$wrc" = 0 ] && echo "$wres" | grep -q 'RESULT ok' || rc=1
dmesg | grep -E 'amdqp|amdgpu.*(queue control|preempt|reset)' | tail -n 50 >"$out/dmesg.txt"
rm -f "$shm.main" "$shm.victim"

write_report "$([ "$rc" = 0 ] && echo passed || echo failed)" \
	"$out/checks.json" "$out/checks.md" \
	"main workload: exit $wrc, $wres (results verified on the host)"
exit "$rc"

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# One-command hardware validation of amdqp's kfd path on a real AMD GPU
# host; see usage() and Documentation/verification.rst.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# Outside the checkout: reports are results, not sources.
out=${TMPDIR:-/var/tmp}/amdqp-hw-validate-$(hostname -s)-$(date -u +%Y%m%dT%H%M%SZ)
streams=8
iters=200
seconds=60
force=0
destructive=0
build_only=0
archs=

usage() {
	cat <<USAGE
Usage: sudo ${0##*/} [--out DIR] [--streams N] [--iters K] [--seconds S] [--force]
            [--destructive]
       ${0##*/} --build-only [--offload-arch gfxNNN[,gfxMMM]] [--out DIR]

One-command hardware validation of amdqp's kfd path on a real AMD GPU
host (MI300 gfx942, MI200 gfx90a, RDNA3 gfx110x). See
Documentation/verification.rst.

Writes DIR/report.md and DIR/report.json (DIR defaults to
\${TMPDIR:-/var/tmp}/amdqp-hw-validate-HOST-DATE). Refuses to run (exit
2, with a report saying why) where the result could not mean anything:
amdgpu not loaded, no AMD GPU, an unvalidated ASIC (unless --force),
amdgpu without the kfd-glue patches, amdqp not loadable or not bound to
kfd, no HIP toolchain, amdgpu's sched_policy=2 (no HWS). Exit 0 when
every check passed, 1 when one failed (inconclusive and skipped checks
do not fail the run).

Checks 7 (unmap timeout) and 8 (no remap of a reset queue) make a queue
that will not preempt: amdkfd then resets that queue (gfx 9.4.3) or the
whole GPU (everything else), killing the work of every process on it.
They run only with --destructive, after the main workload has ended;
without it they are reported as skipped ("refused: destructive").

  --out DIR           where the report, logs and programs go
  --streams N         HIP streams (user queues) of the main workload (8)
  --iters K           suspend/resume iterations per check (200)
  --seconds S         workload duration limit (60)
  --force             run on a GPU family that is not validated
  --destructive       also run checks 7 and 8, which reset a queue or the
                      GPU; only on a host whose GPU nobody else is using
  --build-only        only build the programs (hwv, hwv_load) into DIR/bin;
                      needs no GPU and no root (CI)
  --offload-arch A    gfx targets for hwv_load (comma separated; default:
                      hipcc's, i.e. the GPUs of this host)
  -h, --help          this text
USAGE
}
while [ $# -gt 0 ]; do
	case "$1" in
	--out | --streams | --iters | --seconds | --offload-arch)
		if [ $# -lt 2 ] || [ -z "$2" ]; then
			echo "${0##*/}: $1 needs a value" >&2
			exit 2
		fi
		case "$1" in
		--out) out=$2 ;;
		--streams) streams=$2 ;;
		--iters) iters=$2 ;;
		--seconds) seconds=$2 ;;
		--offload-arch) archs=$2 ;;
		esac
		shift
		;;
	--force) force=1 ;;
	--destructive) destructive=1 ;;
	--build-only) build_only=1 ;;
	-h | --help) usage; exit 0 ;;
	*) echo "${0##*/}: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
	esac
	shift
done
mkdir -p "$out" || exit 2
bin=$out/bin
mkdir -p "$bin"

hipcc=$(command -v hipcc || find /opt -maxdepth 3 -path '/opt/rocm*/bin/hipcc' -print -quit 2>/dev/null)
arch_flags=()
IFS=, read -r -a arch_list <<<"$archs"
for a in "${arch_list[@]}"; do arch_flags+=("--offload-arch=$a"); done

# build_tools: hwv (C) and hwv_load (HIP) into $bin; 0 when both built.
build_tools() {
	cc -O2 -Wall -Wextra -Werror -I"$repo/uapi" -o "$bin/hwv" "$here/src/hwv.c" \
		>"$out/cc.log" 2>&1 || { cat "$out/cc.log" >&2; return 1; }
	[ -n "$hipcc" ] || { echo "hw-validate: hipcc not found" >&2; return 2; }
	# hipcc leaves empty per-compile directories in TMPDIR: keep them here.
	local rc=0
	mkdir -p "$out/hipcc.tmp"
	TMPDIR=$out/hipcc.tmp "$hipcc" -O2 -Wall -Wextra -Werror "${arch_flags[@]}" \
		-o "$bin/hwv_load" "$here/src/hwv_load.hip" >"$out/hipcc.log" 2>&1 || rc=3
	rm -rf "$out/hipcc.tmp"
	[ "$rc" = 0 ] || cat "$out/hipcc.log" >&2
	return $rc
}

if [ "$build_only" = 1 ]; then
	build_tools || exit 1
	echo "hw-validate: built $bin/hwv and $bin/hwv_load${archs:+ ($archs)}" >&2
	exit 0
fi

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
envkv destructive "$([ "$destructive" = 1 ] && echo "yes (checks 7, 8 run)" || echo "no (checks 7, 8 refused)")"
# shellcheck source=/dev/null
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
if [ ! -d /sys/module/amdgpu ]; then
	if ! command -v lspci >/dev/null; then
		refuse "amdgpu is not loaded (no /sys/module/amdgpu): modprobe amdgpu (see dmesg | grep amdgpu if it fails)"
	elif [ -n "$(lspci -n -d 1002: 2>/dev/null | awk '$2 ~ /^03/')" ]; then
		refuse "amdgpu is not loaded (no /sys/module/amdgpu) although an AMD display/compute device is present: modprobe amdgpu, and see dmesg | grep amdgpu if it fails"
	else
		refuse "amdgpu is not loaded (no /sys/module/amdgpu) and lspci shows no AMD GPU (vendor 1002, class 03xx): this host has nothing to validate"
	fi
elif [ ! -c /dev/kfd ]; then
	refuse "amdgpu is loaded but /dev/kfd does not exist: amdkfd is disabled in this amdgpu (CONFIG_HSA_AMD) or no GPU initialised (dmesg | grep -i kfd)"
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
envkv amdgpu_cwsr_enable "$(cat /sys/module/amdgpu/parameters/cwsr_enable 2>/dev/null || echo '?')"
if [ ! -d /sys/module/amdgpu ]; then
	envkv amdgpu_glue "unknown (amdgpu not loaded)"
elif grep -qw kfd_qctl_register_client /proc/kallsyms 2>/dev/null; then
	envkv amdgpu_glue "present"
else
	refuse "the loaded amdgpu lacks the amdkfd queue control glue (kfd_qctl_* not in /proc/kallsyms): install it with kfd-glue/dkms-overlay.sh and reload amdgpu"
fi
envkv amdgpu_srcversion "$(cat /sys/module/amdgpu/srcversion 2>/dev/null || echo '?')"

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
	build_tools || refuse "building the tools failed (see $out/cc.log, $out/hipcc.log)"
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
cp /sys/kernel/debug/kfd/hqds "$out/hqds-before.txt" 2>/dev/null
extra=()
if [ "$destructive" = 1 ]; then
	note "--destructive: checks 7 and 8 will make amdkfd reset a queue or the GPU once the main workload has ended"
	extra+=(--destructive)
fi
# Steps 7/8 wait for the main workload to end before resetting anything.
"$bin/hwv" run --pid "$main" --shm "$shm.main" --streams "$streams" \
	--victim "$victim" --victim-shm "$shm.victim" --iters "$iters" \
	--load "$bin/hwv_load" --main-wait $((seconds + 120)) "${extra[@]}" \
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

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run an HSA program of your own under `amdqpctl run` in the test VM, on the
# HSA runtime stand-in (libuser/testing/hsa-sim) over a simulated GPU. The
# recipe, step by step, is in Documentation/testing.rst ("Your own HSA
# program in the VM"); --help says what this script does.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/lib.sh
. "$here/lib.sh"
runvm="$AMDQP_ROOT/selftests/vm/run-vm.sh"

usage() {
	cat <<USAGE
Usage: ${0##*/} [OPTIONS] PROGRAM [ARGS...]

Boots the test VM (selftests/vm/run-vm.sh, QEMU TCG, the pinned kernel),
loads amdqp.ko and amdqp_sim.ko, creates a simulated GPU through debugfs
(echo "GPU_ID MODE" > /sys/kernel/debug/amdqp_sim/new_device) and runs

  LD_LIBRARY_PATH=/opt/hsa-sim/lib amdqpctl run --priority PRIO -- PROGRAM ARGS...

as root in the guest: PROGRAM finds the stand-in libhsa-runtime64.so.1
(which runs its AQL packets on the sim GPU) instead of ROCr, and amdqpctl
tags its queues through the tagging layer (AMDQP_PRELOAD_LIB). While it
runs, the first 'amdqpctl list' that shows its queues is printed, then
'amdqpctl status' after it exits. The exit status is PROGRAM's (as
amdqpctl run passes it on); 125 when the VM could not run it.

PROGRAM is a host path. It reaches the guest with every library ldd finds
for it (run-vm.sh --dyn), resolved with the stand-in first in
LD_LIBRARY_PATH, so it needs no ROCm on the host. It must be linked
against libhsa-runtime64.so.1 without DT_RPATH (RUNPATH is fine:
LD_LIBRARY_PATH comes first). Libraries it dlopen()s and data files go
with --dyn / --file.

Options:
  --build DIR        the userspace build (default build/user): amdqpctl,
                     libamdqp-preload.so and the stand-in are taken from it
                     (cmake --build DIR --target amdqpctl amdqp-preload
                     hsasim_runtime)
  --priority PRIO    high|normal|low or 0..15 (default high)
  --mode hws|mes     the sim GPU's scheduler model (default hws)
  --gpu-id N         the sim GPU's id (default 4201)
  --ko-dir DIR       amdqp.ko and sim/amdqp_sim.ko (default \$AMDQP_KO_DIR,
                     else the newer of check.sh's build in
                     \$AMDQP_BUILDS/build-6.12/kmod and kmod/ of the tree)
  --file HOST[:GUEST]  copy a file for the program (run-vm.sh --file)
  --dyn HOST[:GUEST]   copy a program or library with its libraries
  --env NAME=VALUE   export a variable to PROGRAM (repeatable)
  --timeout SECONDS  for the whole VM run (default 600)
  -h, --help         this text

Environment: AMDQP_CACHE (the pinned kernel and module builds, default
.cache/), and run-vm.sh's AMDQP_VM_* knobs.
USAGE
}

die() {
	echo "${0##*/}: $*" >&2
	exit 125
}

build="$AMDQP_ROOT/build/user"
prio=high
mode=hws
gpu=4201
kodir="${AMDQP_KO_DIR:-}"
timeout=600
extra=()
envs=()
while [ $# -gt 0 ]; do
	case "$1" in
	-h | --help)
		usage
		exit 0
		;;
	--build | --priority | --mode | --gpu-id | --ko-dir | --file | --dyn | --env | --timeout)
		[ $# -ge 2 ] || { echo "${0##*/}: $1 needs a value" >&2; exit 2; }
		case "$1" in
		--build) build="$2" ;;
		--priority) prio="$2" ;;
		--mode) mode="$2" ;;
		--gpu-id) gpu="$2" ;;
		--ko-dir) kodir="$2" ;;
		--file | --dyn) extra+=("$1" "$2") ;;
		--env) envs+=("$2") ;;
		--timeout) timeout="$2" ;;
		esac
		shift 2
		;;
	--)
		shift
		break
		;;
	-*)
		echo "${0##*/}: unknown option $1 (--help)" >&2
		exit 2
		;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || { usage >&2; exit 2; }
prog="$1"
shift

case "$mode" in hws | mes) ;; *) echo "${0##*/}: --mode is hws or mes" >&2; exit 2 ;; esac
[[ "$gpu" =~ ^[1-9][0-9]{0,8}$ ]] || { echo "${0##*/}: --gpu-id is a number 1..999999999" >&2; exit 2; }
[[ "$timeout" =~ ^[1-9][0-9]*$ ]] || { echo "${0##*/}: --timeout is seconds" >&2; exit 2; }
for e in "${envs[@]}"; do
	[[ "$e" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || { echo "${0##*/}: --env wants NAME=VALUE, not $e" >&2; exit 2; }
done

if [ ! -f "$prog" ] || [ ! -x "$prog" ]; then
	die "$prog is not an executable file"
fi
ctl="$build/tools/amdqpctl/amdqpctl"
preload="$build/libuser/preload/libamdqp-preload.so"
hsalib="$build/libuser/testing/hsa-sim/lib"
for f in "$ctl" "$preload" "$hsalib/libhsa-runtime64.so.1"; do
	[ -f "$f" ] || die "$f missing: cmake --build $build -j2 --target amdqpctl amdqp-preload hsasim_runtime"
done
if [ -z "$kodir" ]; then
	# The newer of check.sh's build and the tree's (build-modules.sh).
	for d in "${AMDQP_BUILDS:-$AMDQP_CACHE}/build-6.12/kmod" "$AMDQP_ROOT/kmod"; do
		if [ ! -f "$d/amdqp.ko" ] || [ ! -f "$d/sim/amdqp_sim.ko" ]; then
			continue
		fi
		if [ -z "$kodir" ] || [ "$d/sim/amdqp_sim.ko" -nt "$kodir/sim/amdqp_sim.ko" ]; then
			kodir="$d"
		fi
	done
fi
if [ -z "$kodir" ] || [ ! -f "$kodir/amdqp.ko" ] || [ ! -f "$kodir/sim/amdqp_sim.ko" ]; then
	die "no amdqp.ko and sim/amdqp_sim.ko (scripts/build-modules.sh, or --ko-dir)"
fi

w="$(mktemp -d "${TMPDIR:-/tmp}/run-hsa-program.XXXXXX")"
trap 'rm -rf "$w"' EXIT

# The guest half (busybox sh). The program's arguments and environment go
# through files, so that no word is split or expanded twice.
guest_prog="/opt/hsa-prog/bin/$(basename "$prog")"
{
	printf '%s\n' "$guest_prog" "$@"
} >"$w/argv"
printf '%s\n' "${envs[@]+"${envs[@]}"}" >"$w/env"
cat >"$w/guest.sh" <<'GUEST'
#!/bin/sh
# Set by the host: GPU, MODE, PRIO. /files/argv: the program and its
# arguments, one a line; /files/env: NAME=VALUE lines for it.
dbg=/sys/kernel/debug/amdqp_sim
ln -sf /opt/amdqp/bin/amdqpctl /usr/bin/amdqpctl
[ -d /sys/kernel/debug/amdqp_sim ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
insmod /modules/amdqp.ko || exit 125
insmod /modules/amdqp_sim.ko || exit 125
echo "$GPU $MODE" >"$dbg/new_device" || { echo "new_device refused '$GPU $MODE'"; exit 125; }
echo "== sim GPU $GPU ($MODE) created; amdqpctl status:"
amdqpctl status
set --
while IFS= read -r a; do set -- "$@" "$a"; done </files/argv
while IFS= read -r e; do [ -n "$e" ] && export "${e?}"; done </files/env
echo "== amdqpctl run --priority $PRIO -- $*"
LD_LIBRARY_PATH=/opt/hsa-sim/lib amdqpctl run --priority "$PRIO" -- "$@" &
pid=$!
shown=0
while kill -0 "$pid" 2>/dev/null; do
	if [ "$shown" = 0 ] && amdqpctl list --pid "$pid" >/tmp/list.txt 2>&1 &&
		grep -q "$GPU" /tmp/list.txt; then
		echo "== amdqpctl list --pid $pid (while it runs):"
		cat /tmp/list.txt
		shown=1
	fi
	sleep 0.2
done
wait "$pid"
rc=$?
[ "$shown" = 1 ] || echo "== its queues were never seen by amdqpctl list (too short a run?)"
echo "== exit status $rc; amdqpctl status:"
amdqpctl status
echo "RUN-HSA-PROGRAM-RC=$rc"
exit "$rc"
GUEST

log="$w/console.log"
set +e
LD_LIBRARY_PATH="$(readlink -f "$hsalib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
	bash "$runvm" --timeout "$timeout" \
	--module-file "$kodir/amdqp.ko" --module-file "$kodir/sim/amdqp_sim.ko" \
	--dyn "$(readlink -f "$ctl"):/opt/amdqp/bin/amdqpctl" \
	--dyn "$(readlink -f "$preload"):/opt/amdqp/lib/libamdqp-preload.so" \
	--dyn "$(readlink -f "$hsalib/libhsa-runtime64.so.1"):/opt/hsa-sim/lib/libhsa-runtime64.so.1" \
	--dyn "$(readlink -f "$prog"):$guest_prog" "${extra[@]+"${extra[@]}"}" \
	--file "$w/guest.sh:/files/guest.sh" --file "$w/argv:/files/argv" \
	--file "$w/env:/files/env" \
	--env "GPU=$gpu" --env "MODE=$mode" --env "PRIO=$prio" \
	--env "AMDQP_PRELOAD_LIB=/opt/amdqp/lib/libamdqp-preload.so" \
	-- /bin/sh /files/guest.sh 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
if ! grep -q 'RUN-HSA-PROGRAM-RC=' "$log" && [ "$rc" = 0 ]; then
	rc=125
fi
exit "$rc"

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Issue 8's acceptance, end to end in the test VM: unmodified HSA programs
# (hsa_app on the hsa-sim stand-in) started with `amdqpctl run --priority`,
# listed with their priorities, taken off by `amdqpctl suspend --below` and
# put back when it exits (SIGTERM, SIGKILL), through amdqp.ko on one sim
# device and through the cooperative mechanism on another where amdqp.ko is
# told nothing; exit statuses through amdqpctl run; amdqpctl run without
# /dev/amdqp. The guest half is tagging-guest.sh. Output is TAP.
#
#   selftests/vm/tests/tagging-vm.sh [OPTIONS] [BUILD_DIR]
#
# BUILD_DIR is the CMake build of the repository root (default build/user);
# the options name the programs directly (ctest passes them):
#   --amdqpctl PATH     (BUILD_DIR/tools/amdqpctl/amdqpctl)
#   --preload PATH      libamdqp-preload.so (BUILD_DIR/libuser/preload/)
#   --hsa-runtime PATH  the stand-in libhsa-runtime64.so.1
#                       (BUILD_DIR/libuser/testing/hsa-sim/lib/)
#   --hsa-app PATH      (BUILD_DIR/libuser/testing/hsa-sim/tests/hsa_app)
#   --amdqpd PATH       the daemon, for guests that run it (at AMDQPD_BIN)
#   --guest SCRIPT      the guest half to run (default tagging-guest.sh)
#   --extra-dyn HOST:GUEST  one more dynamic program for the guest
#                       (run-vm.sh --dyn; may be repeated)
# libamdqp.so comes with amdqpctl (ldd). The modules come from $AMDQP_KO_DIR
# (amdqp.ko and sim/amdqp_sim.ko), default the checked build
# ($AMDQP_BUILDS/build-6.12/kmod), else kmod/ of the tree.
#
# Exit status: 0 all passed; 1 a failure; 77 (skipped) when QEMU, the VM
# kernel, the modules or the build are missing - unless AMDQP_VM_REQUIRED=1
# (CI), which makes each of those a failure.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/lib.sh
. "$here/../../../scripts/lib.sh"
runvm="$here/../run-vm.sh"

usage() {
	sed -n '/^#   selftests/,/^# (CI)/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
}

skip() {
	if [ "${AMDQP_VM_REQUIRED:-0}" = 1 ]; then
		echo "1..1"
		echo "not ok 1 - the VM test has its inputs: $* (AMDQP_VM_REQUIRED=1)"
		exit 1
	fi
	echo "1..0 # SKIP $*"
	exit 77
}

build=
ctl=
preload=
hsart=
app=
daemon=
guest="$here/tagging-guest.sh"
extra_args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--amdqpctl | --preload | --hsa-runtime | --hsa-app | --amdqpd | --guest)
		[ $# -ge 2 ] || { echo "${0##*/}: $1 needs a path" >&2; exit 2; }
		case "$1" in
		--amdqpctl) ctl="$2" ;;
		--preload) preload="$2" ;;
		--hsa-runtime) hsart="$2" ;;
		--hsa-app) app="$2" ;;
		--amdqpd) daemon="$2" ;;
		--guest) guest="$2" ;;
		esac
		shift
		;;
	--extra-dyn)
		[ $# -ge 2 ] || { echo "${0##*/}: $1 needs HOST:GUEST" >&2; exit 2; }
		extra_args+=(--dyn "$2")
		shift
		;;
	-h | --help) usage; exit 0 ;;
	-*) echo "${0##*/}: unknown option '$1' (see --help)" >&2; exit 2 ;;
	*) build="$1" ;;
	esac
	shift
done
build="${build:-$AMDQP_ROOT/build/user}"
ctl="${ctl:-$build/tools/amdqpctl/amdqpctl}"
preload="${preload:-$build/libuser/preload/libamdqp-preload.so}"
hsart="${hsart:-$build/libuser/testing/hsa-sim/lib/libhsa-runtime64.so.1}"
app="${app:-$build/libuser/testing/hsa-sim/tests/hsa_app}"

for f in "$ctl" "$preload" "$hsart" "$app" "$guest" ${daemon:+"$daemon"}; do
	[ -f "$f" ] || skip "no $f (build it: cmake -S . -B $build && cmake --build $build)"
done
command -v "${AMDQP_VM_QEMU:-qemu-system-x86_64}" >/dev/null || skip "no QEMU"
[ -f "$AMDQP_CACHE/vm-kernel-$(amdqp_ver_path "$AMDQP_KPKGVER")/.complete" ] ||
	skip "the VM kernel is not cached (scripts/fetch-kernel.sh)"
kodir="${AMDQP_KO_DIR:-}"
if [ -z "$kodir" ]; then
	for d in "$AMDQP_BUILDS/build-6.12/kmod" "$AMDQP_ROOT/kmod"; do
		[ -f "$d/amdqp.ko" ] && [ -f "$d/sim/amdqp_sim.ko" ] && { kodir="$d"; break; }
	done
fi
if [ -z "$kodir" ] || [ ! -f "$kodir/amdqp.ko" ] || [ ! -f "$kodir/sim/amdqp_sim.ko" ]; then
	skip "no built amdqp.ko and sim/amdqp_sim.ko (make modules, or set AMDQP_KO_DIR)"
fi

abs() { readlink -f "$1"; }
ctl="$(abs "$ctl")"
preload="$(abs "$preload")"
hsart="$(abs "$hsart")"
app="$(abs "$app")"

hidden_in_guest() {
	case "$1" in
	/tmp | /tmp/* | /run | /run/* | /proc | /proc/* | /sys | /sys/* | /dev | /dev/* | /amdqp | /amdqp/*)
		return 0
		;;
	esac
	return 1
}

# amdqpctl and the tagging layer keep their build paths in the guest, so
# that amdqpctl finds its build's layer as it does on the host. Where that
# is impossible (a build under /tmp) or it was built with another layer,
# the guest names the layer with AMDQP_PRELOAD_LIB.
env_args=()
daemon_args=()
if [ -n "$daemon" ]; then
	daemon="$(abs "$daemon")"
	daemon_args=(--dyn "$daemon:/opt/amdqp-e2e/sbin/amdqpd" --env "AMDQPD_BIN=/opt/amdqp-e2e/sbin/amdqpd")
fi
ctl_guest="$ctl"
preload_guest="$preload"
if hidden_in_guest "$ctl" || hidden_in_guest "$preload"; then
	ctl_guest="/opt/amdqp-e2e/bin/amdqpctl"
	preload_guest="/opt/amdqp-e2e/lib/libamdqp-preload.so"
	env_args+=(--env "AMDQP_PRELOAD_LIB=$preload_guest")
elif ! grep -qF -- "$preload" "$ctl"; then
	env_args+=(--env "AMDQP_PRELOAD_LIB=$preload_guest")
fi

w="$(mktemp -d "${TMPDIR:-/tmp}/tagging-vm.XXXXXX")"
trap 'rm -rf "$w"' EXIT

newer="$(find "$AMDQP_ROOT/kmod" "$AMDQP_ROOT/uapi" -name '*.[ch]' -newer "$kodir/sim/amdqp_sim.ko" 2>/dev/null | head -n 3)"

log="$w/console.log"
set +e
bash "$runvm" --timeout "${AMDQP_TAGGING_VM_TIMEOUT:-420}" \
	--module-file "$kodir/amdqp.ko" --module-file "$kodir/sim/amdqp_sim.ko" \
	--dyn "$ctl:$ctl_guest" --dyn "$preload:$preload_guest" \
	--dyn "$hsart:/opt/hsa-sim/lib/libhsa-runtime64.so.1" \
	--file "$app:/opt/hsa-sim/bin/hsa_app" \
	--file "$guest:/files/guest.sh" "${daemon_args[@]}" "${extra_args[@]}" \
	--env "AMDQPCTL_BIN=$ctl_guest" --env "HSA_APP=/opt/hsa-sim/bin/hsa_app" \
	--env "HSA_LIB_DIR=/opt/hsa-sim/lib" "${env_args[@]}" \
	-- /bin/sh /files/guest.sh >"$log" 2>&1
rc=$?
set -e
# The guest's TAP and comments as they are; the rest (boot, dmesg, harness)
# as comments.
sed -E '/^(1\.\.[0-9]+|(not )?ok [0-9]+ .*|#.*)$/!s/^/# /' "$log"
echo "# modules from $kodir"
if [ -n "$newer" ]; then
	echo "# note: sources newer than these modules (stale build?):"
	while IFS= read -r f; do echo "#   $f"; done <<<"$newer"
fi
exit "$rc"

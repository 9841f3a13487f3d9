#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Overlay the amdkfd queue control patches onto the amdgpu a host really
# runs, and rebuild it. Two sources are supported:
#
#   amdgpu-dkms  ROCm's out-of-tree driver (e.g. ROCm 6.4: amdgpu-dkms
#                6.12.12-*), installed under /usr/src/amdgpu-<version>.
#                A patched copy is registered as DKMS module "amdgpu-amdqp"
#                (same version), which replaces "amdgpu" for the kernel.
#   kernel       a kernel source tree matching the running kernel (e.g.
#                Debian's linux-source-6.12): amdgpu is rebuilt out of tree
#                and installed into /lib/modules/<kver>/updates/.
#
# See Documentation/dkms-overlay.rst. Nothing is changed with --dry-run.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

usage() {
	cat <<USAGE
Usage: ${0##*/} amdgpu-dkms [--src DIR] [--kver KVER] [--dry-run]
       ${0##*/} kernel --src DIR [--kver KVER] [--dry-run]
       ${0##*/} revert-dkms [--src DIR]

amdgpu-dkms  copy /usr/src/amdgpu-<ver> (or --src) to
             /usr/src/amdgpu-amdqp-<ver>, apply kfd-glue/patches/linux-6.12 (-p4, the
             DKMS tree has no drivers/gpu/drm prefix), then
             dkms remove amdgpu/<ver> (its source stays) and
             dkms add/build/install amdgpu-amdqp/<ver>.
kernel       apply the patches to a copy of DIR/drivers/gpu/drm/amd, build
             amdgpu.ko against /lib/modules/<kver>/build and install it to
             /lib/modules/<kver>/updates/amdgpu.ko, then depmod.
revert-dkms  undo amdgpu-dkms: remove amdgpu-amdqp, reinstall amdgpu.

--kver defaults to \$(uname -r). Reboot (or reload amdgpu) afterwards.
USAGE
}

die() { echo "dkms-overlay: error: $*" >&2; exit 1; }
log() { echo "dkms-overlay: $*" >&2; }
run() { if [ "$dry" = 1 ]; then echo "+ $*"; else "$@"; fi; }

[ $# -ge 1 ] || { usage >&2; exit 2; }
mode=$1
shift
src=
kver=$(uname -r)
dry=0
while [ $# -gt 0 ]; do
	case "$1" in
	--src) src=${2:?}; shift ;;
	--kver) kver=${2:?}; shift ;;
	--dry-run) dry=1 ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
	shift
done
[ "$dry" = 1 ] || [ "$(id -u)" = 0 ] || die "run as root (or use --dry-run)"

check_patches() {	# check_patches DIR STRIP
	local p
	for p in "$here"/patches/linux-6.12/*.patch; do
		patch -d "$1" -p"$2" --dry-run --batch --forward --quiet <"$p" >/dev/null ||
			die "${p##*/} does not apply to $1; this amdgpu needs a port of the series (see Documentation/dkms-overlay.rst)"
	done
}

apply_patches() {	# apply_patches DIR STRIP
	local p
	for p in "$here"/patches/linux-6.12/*.patch; do
		log "applying ${p##*/}"
		run patch -d "$1" -p"$2" --batch --forward --quiet -i "$p"
	done
}

case "$mode" in
amdgpu-dkms)
	command -v dkms >/dev/null || die "dkms not installed"
	if [ -z "$src" ]; then
		src=$(ls -d /usr/src/amdgpu-[0-9]* 2>/dev/null | sort -V | tail -n 1)
		[ -n "$src" ] || die "no /usr/src/amdgpu-<version>: install amdgpu-dkms first"
	fi
	[ -f "$src/dkms.conf" ] && [ -d "$src/amd/amdkfd" ] ||
		die "$src is not an amdgpu-dkms source tree"
	ver=$(sed -n 's/^PACKAGE_VERSION="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$src/dkms.conf")
	[ -n "$ver" ] || die "no PACKAGE_VERSION in $src/dkms.conf"
	dst=/usr/src/amdgpu-amdqp-$ver
	log "source $src (amdgpu $ver) -> $dst"
	check_patches "$src" 4
	run rm -rf "$dst"
	run cp -a "$src" "$dst"
	apply_patches "$dst" 4
	# amdkfd_qctl.h: the DKMS tree's include path is amd/include too.
	run sed -i 's/^PACKAGE_NAME=.*/PACKAGE_NAME="amdgpu-amdqp"/' "$dst/dkms.conf"
	if dkms status "amdgpu/$ver" 2>/dev/null | grep -q installed; then
		run dkms remove "amdgpu/$ver" -k "$kver"
	fi
	run dkms add "amdgpu-amdqp/$ver"
	run dkms build "amdgpu-amdqp/$ver" -k "$kver"
	run dkms install "amdgpu-amdqp/$ver" -k "$kver" --force
	log "installed amdgpu-amdqp/$ver for $kver; reboot or reload amdgpu"
	;;
revert-dkms)
	command -v dkms >/dev/null || die "dkms not installed"
	for d in /usr/src/amdgpu-amdqp-*; do
		[ -d "$d" ] || continue
		ver=${d#/usr/src/amdgpu-amdqp-}
		run dkms remove "amdgpu-amdqp/$ver" --all || true
		run rm -rf "$d"
		if [ -d "/usr/src/amdgpu-$ver" ]; then
			run dkms install "amdgpu/$ver" -k "$kver"
		fi
	done
	;;
kernel)
	[ -n "$src" ] || die "--src DIR (a kernel source tree) is required"
	[ -d "$src/drivers/gpu/drm/amd/amdkfd" ] || die "$src has no drivers/gpu/drm/amd"
	kbuild=/lib/modules/$kver/build
	[ -d "$kbuild" ] || die "$kbuild missing: install the headers of $kver"
	grep -q '^CONFIG_HSA_AMD=y' "$kbuild/.config" || die "CONFIG_HSA_AMD is off in $kver"
	check_patches "$src" 1
	work=$(mktemp -d /var/tmp/amdqp-amdgpu.XXXXXX)
	mkdir -p "$work/drivers/gpu/drm" "$work/.trace-inc/x"
	cp -a "$src/drivers/gpu/drm/amd" "$work/drivers/gpu/drm/"
	apply_patches "$work" 1
	log "building in $work (several minutes)"
	run make -C "$kbuild" M="$work/drivers/gpu/drm/amd/amdgpu" \
		KCFLAGS="-I$work/.trace-inc/x" -j"$(nproc)" modules
	run install -D -m 644 "$work/drivers/gpu/drm/amd/amdgpu/amdgpu.ko" \
		"/lib/modules/$kver/updates/amdgpu.ko"
	run strip --strip-debug "/lib/modules/$kver/updates/amdgpu.ko"
	run depmod "$kver"
	log "installed /lib/modules/$kver/updates/amdgpu.ko; update the initramfs if amdgpu is in it"
	;;
*)
	usage >&2
	exit 2
	;;
esac

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Register, build and install amdqp (amdqp.ko, amdqp_sim.ko) with DKMS,
# so that DKMS rebuilds it for every new kernel; or remove it again.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
me=${0##*/}

usage() {
	cat <<USAGE
Usage: $me [-k KVER]... [--load-at-boot] [--build-only] [--tree DIR]
       $me --uninstall [--tree DIR]

Copies the module sources to /usr/src/amdqp-VERSION (VERSION from the
VERSION file, substituted into dkms.conf), then dkms add, build and
install for each -k KVER (default: the running kernel, \$(uname -r)).
DKMS rebuilds amdqp for kernels installed later (AUTOINSTALL).

  -k KVER         kernel to build for (repeatable); needs its headers
                  (/lib/modules/KVER/build)
  --load-at-boot  also write /etc/modules-load.d/amdqp.conf (load amdqp
                  at boot) and /etc/modprobe.d/amdqp.conf (softdep: amdgpu
                  is loaded before amdqp)
  --build-only    dkms add + build, no install (CI)
  --uninstall     dkms remove amdqp (every version, every kernel), delete
                  /usr/src/amdqp-*, the load-at-boot files; rmmod amdqp
                  yourself if it is loaded
  --tree DIR      use DIR/src, DIR/dkms, DIR/modules as DKMS's source,
                  build and install trees instead of the system's (CI);
                  no root needed then
  -h, --help      this text

Secure Boot: DKMS signs the modules with its MOK (/var/lib/dkms/mok.key,
created on first use); enrol it once with
  mokutil --import /var/lib/dkms/mok.pub
and confirm at the next boot. See Documentation/dkms-overlay.rst.
USAGE
}

die() { echo "$me: error: $*" >&2; exit 1; }
log() { echo "$me: $*" >&2; }

kvers=()
boot=0
build_only=0
uninstall=0
tree=
while [ $# -gt 0 ]; do
	case "$1" in
	-k)
		[ $# -ge 2 ] || { echo "$me: -k needs a kernel release" >&2; exit 2; }
		kvers+=("$2")
		shift
		;;
	--load-at-boot) boot=1 ;;
	--build-only) build_only=1 ;;
	--uninstall) uninstall=1 ;;
	--tree)
		[ $# -ge 2 ] || { echo "$me: --tree needs a directory" >&2; exit 2; }
		tree=$(realpath -m "$2")
		shift
		;;
	-h | --help) usage; exit 0 ;;
	*) echo "$me: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
	esac
	shift
done
[ ${#kvers[@]} -gt 0 ] || kvers=("$(uname -r)")

ver=$(tr -d '[:space:]' <"$repo/VERSION")
[ -n "$ver" ] || die "VERSION is empty"
if [ -n "$tree" ]; then
	srctree=$tree/src
	opts=(--sourcetree "$srctree" --dkmstree "$tree/dkms" --installtree "$tree/modules")
	mkdir -p "$srctree" "$tree/dkms" "$tree/modules"
else
	[ "$(id -u)" = 0 ] || die "run as root (dkms installs into /usr/src and /lib/modules), or use --tree"
	srctree=/usr/src
	opts=()
fi
command -v dkms >/dev/null || die "dkms is not installed: apt-get install dkms"
dkms_() { dkms "$@" "${opts[@]}"; }

# Versions of amdqp DKMS knows (its tree has one directory per version).
registered() {
	local d=${tree:+$tree/dkms}
	d=${d:-/var/lib/dkms}/amdqp
	[ -d "$d" ] || return 0
	find "$d" -mindepth 1 -maxdepth 1 -type d -printf '%f\n'
}

remove_all() {
	local v
	for v in $(registered); do
		log "dkms remove amdqp/$v"
		dkms_ remove "amdqp/$v" --all || die "dkms remove amdqp/$v failed"
	done
}

bootfiles=(/etc/modules-load.d/amdqp.conf /etc/modprobe.d/amdqp.conf)
if [ "$uninstall" = 1 ]; then
	remove_all
	rm -rf "$srctree"/amdqp-[0-9]*
	[ -n "$tree" ] || rm -f "${bootfiles[@]}"
	log "amdqp removed from DKMS${tree:+ (tree $tree)}"
	exit 0
fi

for k in "${kvers[@]}"; do
	[ -f "/lib/modules/$k/build/Makefile" ] ||
		die "no headers for $k at /lib/modules/$k/build (apt-get install linux-headers-$k)"
done

src=$srctree/amdqp-$ver
remove_all
rm -rf "$src"
mkdir -p "$src/kfd-glue"
cp -r "$repo"/Kbuild "$repo"/Makefile "$repo"/VERSION "$repo"/kmod "$repo"/uapi "$src"/
mkdir -p "$src/scripts"
cp "$repo/scripts/versions.env" "$src/scripts/"
cp -r "$repo/kfd-glue/include" "$src/kfd-glue/"
# One source of truth for the version: VERSION.
sed "s/@VERSION@/$ver/" "$repo/dkms.conf" >"$src/dkms.conf"
grep -qx "PACKAGE_VERSION=\"$ver\"" "$src/dkms.conf" ||
	die "dkms.conf has no PACKAGE_VERSION=\"@VERSION@\" line"
# Objects from a build in the checkout must not leak into DKMS's build.
find "$src" \( -name '*.o' -o -name '*.ko' -o -name '*.mod' -o -name '*.mod.c' \
	-o -name '.*.cmd' -o -name modules.order -o -name Module.symvers \) -delete

dkms_ add "amdqp/$ver"
for k in "${kvers[@]}"; do
	dkms_ build "amdqp/$ver" -k "$k"
	[ "$build_only" = 1 ] || dkms_ install "amdqp/$ver" -k "$k"
done

if [ "$boot" = 1 ] && [ -z "$tree" ]; then
	echo amdqp >/etc/modules-load.d/amdqp.conf
	cat >/etc/modprobe.d/amdqp.conf <<CONF
# amdqp binds to amdgpu's queue control glue: load amdgpu first.
softdep amdqp pre: amdgpu
CONF
	log "amdqp will be loaded at boot (after amdgpu)"
fi
if [ "$build_only" = 1 ]; then
	log "amdqp $ver built for ${kvers[*]}"
else
	log "amdqp $ver installed for ${kvers[*]}; load with: modprobe amdqp"
fi

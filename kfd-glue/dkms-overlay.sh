#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Overlay the amdkfd queue control patches onto the amdgpu a host really
# runs, and rebuild it; undo it; keep it consistent across upgrades.
# See usage() and Documentation/dkms-overlay.rst.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
me=${BASH_SOURCE[0]##*/}

usage() {
	cat <<USAGE
Usage: $me kernel --src DIR|TARBALL [--kver KVER] [--kdir DIR] [options]
       $me amdgpu-dkms [--src /usr/src/amdgpu-VER] [--kver KVER] [options]
       $me revert [--kver KVER]           undo whatever this script installed
       $me revert-kernel [--kver KVER]    undo 'kernel' for KVER
       $me revert-dkms [--kver KVER]      undo 'amdgpu-dkms'
       $me status                         what is installed, and is it current
       $me verify                         the upgrade check (run by dpkg)

kernel       amdgpu from a kernel source tree or linux-source tarball of the
             same version as KVER's headers (checked): the series is applied
             in order to a scratch copy, amdgpu.ko is built with
             kfd-glue/build-amdgpu.sh against /lib/modules/KVER/build and
             installed as /lib/modules/KVER/updates/amdgpu.ko (depmod).
amdgpu-dkms  ROCm's amdgpu DKMS source /usr/src/amdgpu-VER (default: the
             newest) is copied to /usr/src/amdgpu-amdqp-VER, patched there,
             and registered as DKMS module amdgpu-amdqp/VER (same module
             names) in place of amdgpu/VER, which is unregistered (its
             source stays for revert-dkms).
revert-*     restore the stock amdgpu: kernel: remove updates/amdgpu.ko
             and depmod; dkms: remove amdgpu-amdqp, re-add and install
             amdgpu/VER. Reboot or reload amdgpu afterwards.
verify       for every overlay installed here: still matching the kernel
             and amdgpu-dkms packages? If amdgpu-dkms was upgraded, the
             overlay is rebuilt on the new version, or, when the series
             does not apply, removed and the stock amdgpu reinstalled; a
             kernel overlay whose kernel package changed is removed. Loud
             either way. Installed as a dpkg post-invoke hook
             (/etc/dpkg/dpkg.cfg.d/amdqp-overlay), so it runs after every
             apt/dpkg run.

Options:
  --src PATH   kernel: source directory or linux-source-*.tar.*;
               amdgpu-dkms: /usr/src/amdgpu-VER
  --kver KVER  kernel release (default: \$(uname -r))
  --kdir DIR   kernel: headers to build against (default /lib/modules/KVER/build)
  --base NAME  patch series kfd-glue/patches/NAME (default: looked up in
               kfd-glue/patches/bases; kernel 6.12.* -> linux-6.12)
  --cache DIR  kernel: keep the amdgpu build in DIR (build-amdgpu.sh
               cache; default: a temporary directory, removed)
  --jobs N     parallel make jobs for the kernel build (default: nproc)
  --root DIR   install below DIR instead of / (tests; headers still come
               from --kdir)
  --no-hook    do not install the dpkg upgrade hook
  --force      kernel: replace an updates/amdgpu.ko this script did not
               install; revert-kernel: remove it even if it changed
  --dry-run    check that everything applies and say what would be done;
               writes only to a temporary directory it removes
  -h, --help   this text

Exit status: 0 done, 1 error (with a message), 2 usage error.
USAGE
}

die() { echo "$me: error: $*" >&2; exit 1; }
log() { echo "$me: $*" >&2; }
loud() {
	local line
	echo "$me: ************************************************************" >&2
	while IFS= read -r line; do echo "$me: * $line" >&2; done <<<"$*"
	echo "$me: ************************************************************" >&2
	if command -v logger >/dev/null; then
		logger -t amdqp-overlay -- "$*" 2>/dev/null || true
	fi
}
usage_error() { echo "$me: $*" >&2; echo "Try '$me --help'." >&2; exit 2; }

for a in "$@"; do
	case "$a" in -h | --help) usage; exit 0 ;; esac
done
[ $# -ge 1 ] || usage_error "missing MODE"
mode=$1
shift
case "$mode" in
kernel | amdgpu-dkms | revert | revert-kernel | revert-dkms | status | verify) ;;
revert-dkms-all) mode=revert-dkms ;;
*) usage_error "unknown mode '$mode'" ;;
esac

src=
kver=
kdir=
base=
cache=
jobs=$(nproc)
root=
hook=1
force=0
dry=0
while [ $# -gt 0 ]; do
	case "$1" in
	--src | --kver | --kdir | --base | --cache | --jobs | --root)
		if [ $# -lt 2 ] || [ -z "$2" ]; then usage_error "$1 needs a value"; fi
		case "$1" in
		--src) src=$2 ;;
		--kver) kver=$2 ;;
		--kdir) kdir=$2 ;;
		--base) base=$2 ;;
		--cache) cache=$2 ;;
		--jobs) jobs=$2 ;;
		--root) root=$(realpath -m "$2") ;;
		esac
		shift
		;;
	--no-hook) hook=0 ;;
	--force) force=1 ;;
	--dry-run) dry=1 ;;
	*) usage_error "unknown argument '$1'" ;;
	esac
	shift
done
[ "$root" != / ] || root=
kver=${kver:-$(uname -r)}
[ "$dry" = 1 ] || [ -n "$root" ] || [ "$mode" = status ] || [ "$(id -u)" = 0 ] ||
	die "run as root (or use --dry-run)"

state=$root/var/lib/amdqp-overlay
libdir=$root/usr/lib/amdqp-overlay
hookfile=$root/etc/dpkg/dpkg.cfg.d/amdqp-overlay
usrsrc=$root/usr/src
moddir=$root/lib/modules
dkms_opts=()
[ -z "$root" ] || dkms_opts=(--sourcetree "$usrsrc" --dkmstree "$root/var/lib/dkms"
	--installtree "$moddir")

# Every temporary file lives in $work, removed however the script ends.
work=
cleanup() { [ -z "$work" ] || rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
mkwork() {
	[ -n "$work" ] && return 0
	work=$(mktemp -d "${TMPDIR:-/tmp}/amdqp-overlay.XXXXXX") ||
		die "cannot create a temporary directory"
}

# Shows the command with --dry-run, runs it otherwise.
run() {
	if [ "$dry" = 1 ]; then
		if [ "$1" = dkms_ ]; then
			echo "would run: dkms ${*:2}"
		else
			echo "would run: $*"
		fi
	else
		"$@"
	fi
}

dkms_() { dkms "$@" "${dkms_opts[@]}"; }

# --- the patch series ---------------------------------------------------------
# base_for MODE VERSION: the series named for VERSION in patches/bases.
base_for() {
	local m g b
	while read -r m g b; do
		case "$m" in '' | '#'*) continue ;; esac
		[ "$m" = "$1" ] || continue
		# shellcheck disable=SC2254  # $g is a glob on purpose
		case "$2" in $g) echo "$b"; return 0 ;; esac
	done <"$here/patches/bases"
	return 1
}

# pick_series MODE VERSION: sets base, series (the patch files in order).
pick_series() {
	local d have
	if [ -z "$base" ]; then
		base=$(base_for "$1" "$2") ||
			die "no patch series is known for $1 $2 (kfd-glue/patches/bases); the series needs a port to this amdgpu, or name one with --base"
	fi
	d=$here/patches/$base
	if [ ! -d "$d" ]; then
		have=$(cd "$here/patches" && find . -mindepth 1 -maxdepth 1 -type d -printf '%f ')
		die "no series kfd-glue/patches/$base for $1 $2 (there are: ${have:-none}); this amdgpu needs a port of the series"
	fi
	shopt -s nullglob
	series=("$d"/*.patch)
	shopt -u nullglob
	[ ${#series[@]} -gt 0 ] || die "kfd-glue/patches/$base holds no *.patch"
	log "series $base: ${#series[@]} patches"
}

# The patches name files as a/drivers/gpu/drm/amd/... (a kernel tree) or
# a/amd/... (an amdgpu-dkms tree): strip level relative to the directory
# holding amd/.
strip_of() {
	if grep -q '^+++ b/drivers/gpu/drm/amd/' "$1"; then echo 4; else echo 1; fi
}

# Paths below the directory holding amd/ that the series touches.
touched_files() {
	local p
	for p in "${series[@]}"; do
		sed -n 's|^+++ b/\(drivers/gpu/drm/\)\{0,1\}\(amd/[^[:space:]]*\).*|\2|p' "$p"
	done | LC_ALL=C sort -u
}

# apply_series DIR: DIR holds amd/; apply in order; dies naming the patch.
apply_series() {
	local p out n
	for p in "${series[@]}"; do
		n=$(strip_of "$p")
		if ! out=$(patch -d "$1" -p"$n" --forward --batch -i "$p" 2>&1); then
			printf '%s\n' "$out" >&2
			die "${p##*/} does not apply to ${2:-$1} after the patches before it; this amdgpu needs a port of the series $base (see Documentation/dkms-overlay.rst)"
		fi
	done
}

# check_series FROM: copy the files the series touches out of FROM (a
# directory holding amd/, or "tar:TARBALL:PREFIX") into a scratch tree
# and apply the whole series there, in order. Changes nothing else.
check_series() {
	local f dirs=() scratch
	mkwork
	scratch=$work/scratch
	rm -rf "$scratch"
	mkdir -p "$scratch"
	case "$1" in
	tar:*)
		local t=${1#tar:} pfx
		pfx=${t#*:}
		t=${t%%:*}
		# Whole directories: files the series creates are not in the tarball.
		while read -r f; do dirs+=("$pfx/${f%/*}"); done < <(touched_files)
		[ ${#dirs[@]} -gt 0 ] || die "the series $base names no files below amd/"
		mapfile -t dirs < <(printf '%s\n' "${dirs[@]}" | LC_ALL=C sort -u)
		tar -C "$scratch" -xf "$t" "${dirs[@]}" 2>"$work/tar.log" || {
			cat "$work/tar.log" >&2
			die "cannot extract ${dirs[*]} from $t"
		}
		scratch=$scratch/$pfx
		;;
	*)
		while read -r f; do
			[ ! -e "$1/$f" ] || (cd "$1" && cp --parents -p "$f" "$scratch/") ||
				die "cannot copy $1/$f"
		done < <(touched_files)
		;;
	esac
	apply_series "$scratch" "${1#tar:}"
	log "the series $base applies in order to ${1#tar:}"
	rm -rf "$work/scratch"
}

# --- the dpkg hook and what it needs --------------------------------------------
install_hook() {
	[ "$hook" = 1 ] || return 0
	if [ "$dry" = 1 ]; then
		echo "would install the upgrade check: $libdir/ and $hookfile"
		return 0
	fi
	# A copy of this script, build-amdgpu.sh and the series: the checkout
	# may be gone when the next upgrade comes.
	[ "$here" != "$libdir/kfd-glue" ] || { write_hook; return 0; }
	rm -rf "$libdir.tmp"
	mkdir -p "$libdir.tmp/kfd-glue" "$libdir.tmp/scripts"
	cp -p "$here/dkms-overlay.sh" "$here/build-amdgpu.sh" "$libdir.tmp/kfd-glue/"
	cp -a "$here/patches" "$libdir.tmp/kfd-glue/"
	cp -p "$here/../scripts/versions.env" "$libdir.tmp/scripts/"
	rm -rf "$libdir"
	mv "$libdir.tmp" "$libdir"
	write_hook
}

write_hook() {
	mkdir -p "${hookfile%/*}"
	cat >"$hookfile" <<HOOK
# amdqp: keep the amdgpu overlay consistent after package upgrades
# (kfd-glue/dkms-overlay.sh; removed by its revert modes).
post-invoke="if [ -x $libdir/kfd-glue/dkms-overlay.sh ]; then $libdir/kfd-glue/dkms-overlay.sh verify${root:+ --root $root} || true; fi"
HOOK
	log "upgrade check installed: $hookfile"
}

remove_hook_if_unused() {
	local left
	left=$(find "$state" -maxdepth 1 -type f 2>/dev/null | head -n 1)
	[ -z "$left" ] || return 0
	run rm -f "$hookfile"
	run rm -rf "$libdir"
	[ ! -d "$state" ] || run rmdir "$state"
}

# kv FILE KEY: a value from a state file (KEY=VALUE lines).
kv() { sed -n "s/^$2=//p" "$1" | head -n 1; }

pkg_of() { dpkg-query -S "$1" 2>/dev/null | head -n 1 | cut -d: -f1; }
pkg_ver() {
	[ -n "$1" ] || return 0
	dpkg-query -W -f='${db:Status-Status} ${Version}\n' "$1" 2>/dev/null |
		awk '$1 == "installed" { print $2 }'
}
# The package of kernel KVER's image (signed or not), with its version.
image_pkg() {
	local p
	for p in "linux-image-$1" "linux-image-$1-unsigned"; do
		if [ -n "$(pkg_ver "$p")" ]; then
			echo "$p $(pkg_ver "$p")"
			return 0
		fi
	done
	echo "unknown"
}

# --- kernel ---------------------------------------------------------------------
# The release a build directory is for (Debian's 6.1 headers answer
# 'make kernelrelease' with the upstream version, not the ABI name).
kdir_release() {
	sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' "$1/include/generated/utsrelease.h" 2>/dev/null | grep .
}

# Makefile VERSION.PATCHLEVEL.SUBLEVEL from a Makefile on stdin.
mk_version() {
	awk -F' *= *' '$1 == "VERSION" { v = $2 } $1 == "PATCHLEVEL" { p = $2 }
		$1 == "SUBLEVEL" { s = $2 } END { if (v != "") print v "." p "." s }'
}

do_kernel() {
	local srcver hdrver rel tarball='' top from srcpkg hdrpkg dest ko kopath
	[ -n "$src" ] || usage_error "kernel needs --src (a kernel source tree or linux-source tarball)"
	kdir=${kdir:-/lib/modules/$kver/build}
	[ -f "$kdir/Makefile" ] ||
		die "$kdir is not a kernel build directory: install the headers of $kver (linux-headers-$kver)"
	[ -f "$kdir/.config" ] || die "$kdir/.config missing"
	grep -q '^CONFIG_HSA_AMD=y' "$kdir/.config" || die "CONFIG_HSA_AMD is not =y in $kver: no amdkfd to patch"
	grep -q '^CONFIG_DRM_AMDGPU=m' "$kdir/.config" ||
		die "CONFIG_DRM_AMDGPU is not =m in $kver: a built-in amdgpu cannot be replaced by a module"
	rel=$(kdir_release "$kdir") || die "cannot read the kernel release of $kdir (include/generated/utsrelease.h)"
	[ "$rel" = "$kver" ] || die "$kdir is the build directory of $rel, not of --kver $kver"
	hdrver=$(make -s -C "$kdir" kernelversion 2>/dev/null) || die "cannot read the kernel version of $kdir"

	mkwork
	if [ -d "$src" ]; then
		src=$(cd "$src" && pwd)
		[ -d "$src/drivers/gpu/drm/amd/amdkfd" ] || die "$src has no drivers/gpu/drm/amd/amdkfd"
		[ -f "$src/Makefile" ] || die "$src has no top-level Makefile"
		srcver=$(mk_version <"$src/Makefile")
		from=$src/drivers/gpu/drm
	elif [ -f "$src" ]; then
		tarball=$(realpath "$src")
		top=${tarball##*/}
		top=${top%.tar*}
		tar -xOf "$tarball" --occurrence=1 "$top/Makefile" >"$work/Makefile" 2>"$work/tar.log" || {
			cat "$work/tar.log" >&2
			die "$tarball has no $top/Makefile: not a linux-source tarball"
		}
		srcver=$(mk_version <"$work/Makefile")
		from=tar:$tarball:$top/drivers/gpu/drm
	else
		die "--src $src: no such directory or file"
	fi
	[ -n "$srcver" ] || die "cannot read the kernel version of $src"
	[ "$srcver" = "$hdrver" ] ||
		die "--src $src is Linux $srcver but $kver is $hdrver: use the source of exactly that kernel"
	# Same upstream version is not enough for distribution kernels: the
	# Debian packages of source and headers must be the same build.
	srcpkg=$(pkg_of "${tarball:-$src/Makefile}")
	hdrpkg=$(pkg_of "$(realpath "$kdir")/Makefile")
	if [ -n "$srcpkg" ] && [ -n "$hdrpkg" ] &&
	   [ "$(pkg_ver "$srcpkg")" != "$(pkg_ver "$hdrpkg")" ]; then
		die "$srcpkg is $(pkg_ver "$srcpkg") but $hdrpkg is $(pkg_ver "$hdrpkg"): install matching versions"
	fi
	log "source $src: Linux $srcver${srcpkg:+ ($srcpkg $(pkg_ver "$srcpkg"))}; kernel $kver"

	pick_series kernel "$srcver"
	check_series "$from"

	dest=$moddir/$kver/updates/amdgpu.ko
	if [ -e "$dest" ] && [ ! -f "$state/kernel-$kver" ] && [ "$force" = 0 ]; then
		die "$dest exists and was not installed by $me; move it away or pass --force"
	fi
	if [ "$dry" = 1 ]; then
		echo "would build amdgpu.ko: $here/build-amdgpu.sh --src $src --kdir $kdir --kver $kver --patches $here/patches/$base"
		echo "would install $dest, then: depmod${root:+ -b $root} $kver"
		install_hook
		log "dry run: nothing changed"
		return 0
	fi

	ko=$("$here/build-amdgpu.sh" --src "$src" --kdir "$kdir" --kver "$kver" \
		--patches "$here/patches/$base" --cache "${cache:-$work/cache}" \
		--jobs "$jobs" | tail -n 1) || die "the amdgpu build failed (messages above)"
	[ -s "$ko" ] || die "build-amdgpu.sh printed no module path"
	kopath=$(modinfo -F vermagic "$ko" | cut -d' ' -f1)
	[ "$kopath" = "$kver" ] || die "built amdgpu.ko is for $kopath, not $kver"

	install -D -m 644 "$ko" "$dest"
	depmod ${root:+-b "$root"} "$kver" || die "depmod $kver failed"
	mkdir -p "$state"
	cat >"$state/kernel-$kver" <<STATE
mode=kernel
kver=$kver
src=$src
srcver=$srcver
srcpkg=${srcpkg:+$srcpkg $(pkg_ver "$srcpkg")}
image=$(image_pkg "$kver")
base=$base
patches=$(cat "${series[@]}" | sha256sum | cut -c1-16)
ko=$dest
ko_sha256=$(sha256sum "$dest" | cut -d' ' -f1)
STATE
	install_hook
	log "installed $dest (series $base)"
	log "if amdgpu is in the initramfs: update-initramfs -u -k $kver; then reboot (or rmmod amdgpu; modprobe amdgpu)"
}

revert_kernel_one() {	# revert_kernel_one STATEFILE
	local f=$1 k dest
	k=$(kv "$f" kver)
	dest=$(kv "$f" ko)
	if [ -f "$dest" ] && [ "$force" = 0 ] &&
	   [ "$(sha256sum "$dest" | cut -d' ' -f1)" != "$(kv "$f" ko_sha256)" ]; then
		die "$dest changed since $me installed it; remove it by hand or pass --force"
	fi
	run rm -f "$dest"
	[ ! -d "$moddir/$k" ] || run depmod ${root:+-b "$root"} "$k"
	run rm -f "$f"
	log "kernel $k: the stock amdgpu is back (update-initramfs -u -k $k if it is in the initramfs; reboot or reload amdgpu)"
}

do_revert_kernel() {
	local f=$state/kernel-$kver
	if [ ! -f "$f" ]; then
		log "no kernel overlay recorded for $kver ($f)"
		return 1
	fi
	revert_kernel_one "$f"
	remove_hook_if_unused
}

# --- amdgpu-dkms ----------------------------------------------------------------
dkms_conf_version() {
	sed -n 's/^PACKAGE_VERSION="\{0,1\}\([^"]*\)"\{0,1\}[[:space:]]*$/\1/p' "$1" | head -n 1
}

# The newest /usr/src/amdgpu-<ver> (not our copies).
newest_amdgpu_src() {
	local d all=()
	shopt -s nullglob
	for d in "$usrsrc"/amdgpu-[0-9]*; do
		[ -f "$d/dkms.conf" ] && all+=("$d")
	done
	shopt -u nullglob
	[ ${#all[@]} -gt 0 ] || return 1
	printf '%s\n' "${all[@]}" | sort -V | tail -n 1
}

dkms_registered() {	# dkms_registered NAME VER
	[ -d "$root/var/lib/dkms/$1/$2" ]
}

dkms_versions() {	# dkms_versions NAME: the registered versions
	[ -d "$root/var/lib/dkms/$1" ] || return 0
	find "$root/var/lib/dkms/$1" -mindepth 1 -maxdepth 1 -type d -printf '%f\n'
}

do_amdgpu_dkms() {
	local ver dst
	command -v dkms >/dev/null || [ "$dry" = 1 ] || die "dkms is not installed (apt-get install dkms)"
	if [ -z "$src" ]; then
		src=$(newest_amdgpu_src) ||
			die "no $usrsrc/amdgpu-<version> with a dkms.conf: install ROCm's amdgpu-dkms first, or pass --src"
	fi
	[ -d "$src" ] || die "--src $src: no such directory"
	src=$(cd "$src" && pwd)
	[ -f "$src/dkms.conf" ] || die "$src has no dkms.conf: not an amdgpu-dkms source tree"
	[ -d "$src/amd/amdkfd" ] || die "$src has no amd/amdkfd: not an amdgpu-dkms source tree"
	ver=$(dkms_conf_version "$src/dkms.conf")
	[ -n "$ver" ] || die "no PACKAGE_VERSION in $src/dkms.conf"
	grep -q '^PACKAGE_NAME="\{0,1\}amdgpu"\{0,1\}[[:space:]]*$' "$src/dkms.conf" ||
		die "$src/dkms.conf is not the amdgpu package (PACKAGE_NAME)"
	dst=$usrsrc/amdgpu-amdqp-$ver
	log "source $src (amdgpu-dkms $ver) -> $dst; kernel $kver"

	pick_series amdgpu-dkms "$ver"
	check_series "$src"

	if [ "$dry" = 0 ]; then
		rm -rf "$dst"
		cp -a "$src" "$dst"
		apply_series "$dst"
		sed -i 's/^PACKAGE_NAME=.*/PACKAGE_NAME="amdgpu-amdqp"/' "$dst/dkms.conf"
	else
		echo "would copy $src to $dst, apply the series $base there, set PACKAGE_NAME=\"amdgpu-amdqp\""
	fi
	# Every amdgpu/* unregistered for every kernel: otherwise DKMS would
	# build them too for the next kernel, and whichever installs last
	# would win.
	local v
	for v in $(dkms_versions amdgpu); do
		run dkms_ remove "amdgpu/$v" --all
	done
	! dkms_registered amdgpu-amdqp "$ver" || run dkms_ remove "amdgpu-amdqp/$ver" --all
	run dkms_ add "amdgpu-amdqp/$ver"
	if ! run dkms_ build "amdgpu-amdqp/$ver" -k "$kver" ||
	   ! run dkms_ install "amdgpu-amdqp/$ver" -k "$kver" --force; then
		log "building amdgpu-amdqp/$ver failed: putting the stock amdgpu/$ver back"
		dkms_ remove "amdgpu-amdqp/$ver" --all || true
		rm -rf "$dst"
		dkms_ add "amdgpu/$ver" || true
		dkms_ install "amdgpu/$ver" -k "$kver" --force || true
		die "amdgpu-amdqp/$ver did not build for $kver; the stock amdgpu/$ver is installed again"
	fi
	if [ "$dry" = 0 ]; then
		mkdir -p "$state"
		cat >"$state/dkms" <<STATE
mode=amdgpu-dkms
ver=$ver
src=$src
base=$base
patches=$(cat "${series[@]}" | sha256sum | cut -c1-16)
STATE
	fi
	install_hook
	if [ "$dry" = 1 ]; then
		log "dry run: nothing changed"
	else
		log "installed amdgpu-amdqp/$ver for $kver (DKMS rebuilds it for new kernels); reboot or reload amdgpu"
	fi
}

do_revert_dkms() {
	local d ver found=0
	shopt -s nullglob
	for d in "$usrsrc"/amdgpu-amdqp-*; do
		[ -d "$d" ] || continue
		found=1
		ver=${d#"$usrsrc"/amdgpu-amdqp-}
		if dkms_registered amdgpu-amdqp "$ver"; then
			run dkms_ remove "amdgpu-amdqp/$ver" --all
		fi
		run rm -rf "$d"
		if [ -f "$usrsrc/amdgpu-$ver/dkms.conf" ]; then
			dkms_registered amdgpu "$ver" || run dkms_ add "amdgpu/$ver"
			run dkms_ install "amdgpu/$ver" -k "$kver" --force
			log "stock amdgpu/$ver is installed again for $kver (other kernels: dkms autoinstall -k KVER)"
		else
			log "no $usrsrc/amdgpu-$ver any more: reinstall amdgpu-dkms to get the stock driver back"
		fi
	done
	shopt -u nullglob
	run rm -f "$state/dkms"
	remove_hook_if_unused
	[ "$found" = 1 ] || { log "no amdgpu-amdqp overlay installed"; return 1; }
}

# --- status / verify ------------------------------------------------------------
do_status() {
	local f any=0
	shopt -s nullglob
	for f in "$state"/kernel-* "$state"/dkms; do
		[ -f "$f" ] || continue	# nullglob does not drop a literal name
		any=1
		echo "== ${f##*/}"
		cat "$f"
	done
	shopt -u nullglob
	[ "$any" = 1 ] || echo "no amdqp overlay installed"
	[ ! -f "$hookfile" ] || echo "upgrade check: $hookfile"
}

verify_kernel() {	# verify_kernel STATEFILE
	local f=$1 k img dest
	k=$(kv "$f" kver)
	dest=$(kv "$f" ko)
	if [ ! -d "$moddir/$k" ]; then
		log "kernel $k is gone; forgetting its overlay"
		rm -f "$f"
		return 0
	fi
	img=$(image_pkg "$k")
	if [ "$img" != "$(kv "$f" image)" ]; then
		revert_kernel_one "$f"
		loud "kernel $k changed ($(kv "$f" image) -> $img): the amdqp amdgpu overlay
built for the old kernel was REMOVED; the stock amdgpu will load.
Rebuild it from the matching source:
  $me kernel --src <linux source of $img> --kver $k"
		return 1
	fi
	if [ ! -f "$dest" ]; then
		rm -f "$f"
		loud "$dest disappeared: the stock amdgpu will load for $k"
		return 1
	fi
}

verify_dkms() {
	local f=$state/dkms ver new newver
	ver=$(kv "$f" ver)
	new=$(newest_amdgpu_src) || new=
	newver=
	[ -z "$new" ] || newver=$(dkms_conf_version "$new/dkms.conf")
	if [ -n "$newver" ] && [ "$newver" != "$ver" ] || dkms_registered amdgpu "$ver"; then
		loud "amdgpu-dkms changed (the overlay is on $ver, the newest is ${newver:-none}): redoing the amdqp overlay"
		# The package's postinst installed its amdgpu over ours; removing
		# ours deletes that file too, so the stock one is installed again
		# below unless the overlay is rebuilt.
		! dkms_registered amdgpu-amdqp "$ver" || dkms_ remove "amdgpu-amdqp/$ver" --all || true
		rm -rf "$usrsrc/amdgpu-amdqp-$ver" "$f"
		if [ -z "$newver" ]; then
			loud "no /usr/src/amdgpu-<version> left: the overlay is REMOVED; reinstall amdgpu-dkms"
			return 1
		fi
		src=$new
		mkwork	# the subshell's temporary files are removed by our trap
		if (do_amdgpu_dkms); then
			return 0
		fi
		dkms_registered amdgpu "$newver" || dkms_ add "amdgpu/$newver" || true
		dkms_ install "amdgpu/$newver" -k "$kver" --force || true
		loud "the amdqp series does not fit amdgpu-dkms $newver: the overlay is
REMOVED and the stock amdgpu/$newver is installed. amdqp's kfd backend will
not bind until the series is ported (Documentation/dkms-overlay.rst)."
		return 1
	fi
	if [ ! -d "$usrsrc/amdgpu-amdqp-$ver" ] || ! dkms_registered amdgpu-amdqp "$ver"; then
		rm -f "$f"
		loud "amdgpu-amdqp/$ver is no longer registered with DKMS: the overlay is gone"
		return 1
	fi
}

do_verify() {
	local f rc=0
	shopt -s nullglob
	for f in "$state"/kernel-*; do
		verify_kernel "$f" || rc=1
	done
	shopt -u nullglob
	if [ -f "$state/dkms" ]; then
		verify_dkms || rc=1
	fi
	remove_hook_if_unused
	return $rc
}

case "$mode" in
kernel) do_kernel ;;
amdgpu-dkms) do_amdgpu_dkms ;;
revert-kernel) do_revert_kernel ;;
revert-dkms) do_revert_dkms ;;
revert)
	any=0
	[ ! -f "$state/kernel-$kver" ] || { do_revert_kernel; any=1; }
	[ ! -f "$state/dkms" ] || { do_revert_dkms; any=1; }
	[ "$any" = 1 ] || die "nothing to revert: no overlay recorded in $state for $kver"
	;;
status) do_status ;;
verify) do_verify ;;
esac

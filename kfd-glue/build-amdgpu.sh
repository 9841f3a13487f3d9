#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build amdgpu.ko with the amdkfd queue control patches out of tree: by
# default amdgpu from Debian's linux-source-6.12 with kfd-glue/patches/linux-6.12,
# against the matching linux-headers package (all pinned in
# scripts/versions.env). dkms-overlay.sh kernel uses it with --src/--kdir
# for the kernel of a real host.
#
# Prints the path of the stripped, patched amdgpu.ko on the last line of
# stdout. Everything else goes to stderr.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)

usage() {
	cat <<USAGE
Usage: ${0##*/} [--clean] [--jobs N] [--print-key]
       ${0##*/} --src DIR|TARBALL --kdir DIR [--kver KVER] [--patches DIR]
                [--cache DIR] [--clean] [--jobs N] [--print-key]

Without --src: extracts drivers/gpu/drm/amd from
/usr/src/linux-source-\$SERIES.tar.xz, applies kfd-glue/patches/linux-6.12/*.patch
in order, builds amdgpu.ko with
  make -C /usr/src/linux-headers-\$KVER M=<tree>/drivers/gpu/drm/amd/amdgpu
strips it (--strip-debug) and prints its path. The Debian package
versions of source and headers are checked against scripts/versions.env.

With --src: the same for any kernel source tree (a directory, or a
linux-source-*.tar.* tarball) and the headers in --kdir; --kver (default:
the headers' kernel release) must be the release the module is for.

The result is cached in --cache (default \$AMDQP_CACHE/kfd-glue, i.e.
.cache/kfd-glue), keyed by the hash of the patches, the inputs and this
script, so a second run with the same inputs is instant. The build tree
is kept too: after a patch change only the files the patches touch are
rebuilt.

  --src S      kernel source: directory or tarball (default: the pinned one)
  --kdir DIR   kernel build/headers directory (with --src)
  --kver KVER  kernel release (with --src; default from --kdir)
  --patches D  patch series directory (default kfd-glue/patches/linux-6.12)
  --cache DIR  cache directory (default \$AMDQP_CACHE/kfd-glue)
  --clean      ignore the caches and build from a fresh extraction
  --jobs N     parallel make jobs (default: number of CPUs)
  --print-key  print the cache key and exit
  -h, --help   this text

Environment: AMDQP_CACHE (cache root), AMDQP_KVER / AMDQP_KPKGVER /
AMDQP_KSRC_SERIES override scripts/versions.env.

Needs (Debian 12):
  apt-get install -y linux-source-\$SERIES=\$KPKGVER \\
      linux-headers-\$KVER build-essential bc flex bison libelf-dev \\
      dwarves xz-utils
USAGE
}

log() { echo "build-amdgpu: $*" >&2; }
die() { echo "build-amdgpu: error: $*" >&2; exit 1; }

clean=0
jobs=$(nproc)
print_key=0
src_arg=
kdir_arg=
kver_arg=
patches=$here/patches/linux-6.12
cache_arg=
while [ $# -gt 0 ]; do
	case "$1" in
	--clean) clean=1 ;;
	--jobs) jobs="${2:?--jobs needs a number}"; shift ;;
	--print-key) print_key=1 ;;
	--src) src_arg="${2:?--src needs a path}"; shift ;;
	--kdir) kdir_arg="${2:?--kdir needs a directory}"; shift ;;
	--kver) kver_arg="${2:?--kver needs a kernel release}"; shift ;;
	--patches) patches="${2:?--patches needs a directory}"; shift ;;
	--cache) cache_arg="${2:?--cache needs a directory}"; shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "build-amdgpu: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
	esac
	shift
done

# shellcheck source=/dev/null
. "$repo/scripts/versions.env"
shopt -s nullglob
series_files=("$patches"/*.patch)
shopt -u nullglob
[ ${#series_files[@]} -gt 0 ] || die "no *.patch in $patches"
amd=drivers/gpu/drm/amd
cache=${cache_arg:-${AMDQP_CACHE:-$repo/.cache}/kfd-glue}

pkgver() { dpkg-query -W -f='${db:Status-Status} ${Version}\n' "$1" 2>/dev/null |
	   awk '$1 == "installed" { print $2 }'; }

# The pinned inputs named explicitly (dkms-overlay.sh kernel in CI) share
# the cache of the default build.
if [ -n "$src_arg" ] && [ -n "$kdir_arg" ] &&
   [ "$(realpath -e "$src_arg" 2>/dev/null)" = "/usr/src/linux-source-$AMDQP_KSRC_SERIES.tar.xz" ] &&
   [ "$(realpath -e "$kdir_arg" 2>/dev/null)" = "$(realpath -e "/usr/src/linux-headers-$AMDQP_KVER" 2>/dev/null)" ] &&
   [ "${kver_arg:-$AMDQP_KVER}" = "$AMDQP_KVER" ]; then
	src_arg='' kdir_arg='' kver_arg=''
fi
if [ -z "$src_arg" ]; then
	# The pinned inputs (CI, the VM tests).
	[ -z "$kdir_arg$kver_arg" ] || die "--kdir/--kver need --src"
	kver=${AMDQP_KVER:?}
	kpkgver=${AMDQP_KPKGVER:?}
	series=${AMDQP_KSRC_SERIES:?}
	tarball=/usr/src/linux-source-$series.tar.xz
	headers=/usr/src/linux-headers-$kver
	top=linux-source-$series
	srcid="$kver $kpkgver $series"
	tree_src=$top
else
	[ -n "$kdir_arg" ] || die "--src needs --kdir (the headers to build against)"
	headers=$kdir_arg
	[ -f "$headers/Makefile" ] || die "$headers is not a kernel build directory (no Makefile)"
	kver=$kver_arg
	if [ -z "$kver" ]; then
		kver=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' \
			"$headers/include/generated/utsrelease.h" 2>/dev/null | grep .) ||
			die "cannot read the kernel release of $headers; pass --kver"
	fi
	if [ -d "$src_arg" ]; then
		tarball=
		[ -d "$src_arg/$amd/amdkfd" ] || die "$src_arg has no $amd/amdkfd"
		top=
		tree_src=src
		srcid="dir $(cd "$src_arg" && pwd) $(cd "$src_arg" &&
			find "$amd" Makefile -type f -printf '%P %s %T@\n' | LC_ALL=C sort |
			sha256sum | cut -c1-16)"
	elif [ -f "$src_arg" ]; then
		tarball=$(cd "$(dirname "$src_arg")" && pwd)/${src_arg##*/}
		top=${src_arg##*/}
		top=${top%.tar*}
		tree_src=src
		srcid="tar $tarball $(stat -c '%s %Y' "$tarball")"
	else
		die "--src $src_arg: no such directory or file"
	fi
	srcid="$srcid kver=$kver hdr=$(sha256sum "$headers/Module.symvers" 2>/dev/null | cut -c1-16)"
fi

# pkey: what the build tree must contain; key: the result (also depends
# on how this script builds it).
pkey=$( (cat "${series_files[@]}"; echo "$srcid") | sha256sum | cut -c1-16)
key=$( (echo "$pkey"; cat "${BASH_SOURCE[0]}") | sha256sum | cut -c1-16)
if [ "$print_key" = 1 ]; then
	echo "$key"
	exit 0
fi

# --- dependencies ---------------------------------------------------------
deps="build-essential bc flex bison libelf-dev dwarves xz-utils"
if [ -z "$src_arg" ]; then
	deps="linux-source-$series=$kpkgver linux-headers-$kver $deps"
	v=$(pkgver "linux-source-$series")
	[ -n "$v" ] || die "linux-source-$series is not installed; run: apt-get install -y $deps"
	[ "$v" = "$kpkgver" ] ||
		die "linux-source-$series is $v, need $kpkgver (scripts/versions.env); run: apt-get install -y linux-source-$series=$kpkgver"
	[ -f "$tarball" ] || die "$tarball missing (reinstall linux-source-$series)"
	v=$(pkgver "linux-headers-$kver")
	[ -n "$v" ] || die "linux-headers-$kver is not installed; run: apt-get install -y $deps"
	[ "$v" = "$kpkgver" ] ||
		die "linux-headers-$kver is $v, need $kpkgver"
fi
[ -f "$headers/Module.symvers" ] || die "$headers/Module.symvers missing"
grep -q '^CONFIG_HSA_AMD=y' "$headers/.config" ||
	die "CONFIG_HSA_AMD is not enabled in $headers/.config: amdkfd would not be built"
for t in make gcc bc flex bison xz strip patch pahole; do
	command -v "$t" >/dev/null || die "'$t' not found; run: apt-get install -y $deps"
done

mkdir -p "$cache"
out="$cache/amdgpu-$key"
if [ "$clean" = 0 ] && [ -s "$out/amdgpu.ko" ]; then
	log "cached: $out/amdgpu.ko (key $key)"
	echo "$out/amdgpu.ko"
	exit 0
fi

# One build at a time per cache (the tree is shared).
exec 9>"$cache/.build.lock"
flock 9

tree=$cache/tree
src=$tree/$tree_src
# Trees from before srcid was recorded held the pinned source.
if [ -z "$src_arg" ] && [ -d "$src/$amd/amdgpu" ] && [ ! -f "$tree/srcid" ]; then
	echo "$srcid" >"$tree/srcid"
fi

extract() {
	log "extracting $amd from ${tarball:-$src_arg}"
	rm -rf "$tree" "$tree.tmp"
	mkdir -p "$tree.tmp/$tree_src"
	if [ -n "$tarball" ]; then
		tar -C "$tree.tmp" -xf "$tarball" "$top/$amd" ||
			die "cannot extract $top/$amd from $tarball"
		[ "$top" = "$tree_src" ] || mv "$tree.tmp/$top/drivers" "$tree.tmp/$tree_src/"
	else
		mkdir -p "$tree.tmp/$tree_src/drivers/gpu/drm"
		cp -a "$src_arg/$amd" "$tree.tmp/$tree_src/drivers/gpu/drm/"
	fi
	echo "$srcid" >"$tree.tmp/srcid"
	mv "$tree.tmp" "$tree"
	: >"$tree/applied.list"
}

apply_all() {
	local p
	for p in "${series_files[@]}"; do
		log "applying ${p##*/}"
		patch -d "$src" -p1 --forward --batch --quiet <"$p" >&2 ||
			die "${p##*/} does not apply (in order, after the patches before it) to ${tarball:-$src_arg}"
		cp "$p" "$tree/applied.${p##*/}"
		echo "applied.${p##*/}" >>"$tree/applied.list"
	done
}

revert_all() {
	local p
	[ -f "$tree/applied.list" ] || return 1
	for p in $(tac "$tree/applied.list"); do
		patch -d "$src" -p1 -R --batch --quiet <"$tree/$p" >&2 || return 1
		rm -f "$tree/$p"
	done
	: >"$tree/applied.list"
}

if [ "$clean" = 1 ] || [ ! -d "$src/$amd/amdgpu" ] ||
   [ "$(cat "$tree/srcid" 2>/dev/null)" != "$srcid" ]; then
	extract
elif [ "$(cat "$tree/pkey" 2>/dev/null)" != "$pkey" ]; then
	# Reuse the objects of the last build: revert its patches, apply ours.
	log "reusing build tree; reverting the previous patch set"
	revert_all || { log "revert failed; fresh extraction"; extract; }
fi
if [ "$(cat "$tree/pkey" 2>/dev/null)" != "$pkey" ]; then
	rm -f "$tree/pkey"
	apply_all
	echo "$pkey" >"$tree/pkey"
fi

# amdgpu_trace.h sets TRACE_INCLUDE_PATH to ../../drivers/gpu/drm/amd/amdgpu,
# resolved against the include path: give it a directory two levels below
# the tree root.
mkdir -p "$src/.trace-inc/x"

log "building amdgpu.ko against $headers with -j$jobs (key $key)"
start=$(date +%s)
make -C "$headers" M="$src/$amd/amdgpu" KCFLAGS="-I$src/.trace-inc/x" \
	-j"$jobs" modules >"$tree/build.log" 2>&1 || {
	tail -40 "$tree/build.log" >&2
	die "amdgpu build failed (full log: $tree/build.log)"
}
log "built in $(($(date +%s) - start)) s"
if grep -E 'WARNING: modpost|undefined!' "$tree/build.log" >&2; then
	die "modpost reported problems (full log: $tree/build.log)"
fi

ko=$src/$amd/amdgpu/amdgpu.ko
vermagic=$(modinfo -F vermagic "$ko" | cut -d' ' -f1)
[ "$vermagic" = "$kver" ] || die "vermagic $vermagic != $kver"

rm -rf "$out.tmp"
mkdir -p "$out.tmp"
strip --strip-debug -o "$out.tmp/amdgpu.ko" "$ko"
cp "$tree/build.log" "$out.tmp/build.log"
echo "$key" >"$out.tmp/key"
rm -rf "$out"
mv "$out.tmp" "$out"
# Keep only the newest few results.
find "$cache" -maxdepth 1 -name 'amdgpu-*' -printf '%T@ %p\n' | sort -rn |
	tail -n +4 | cut -d' ' -f2- | xargs -r rm -rf
log "done: $out/amdgpu.ko ($(du -h "$out/amdgpu.ko" | cut -f1))"
echo "$out/amdgpu.ko"

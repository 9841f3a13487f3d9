#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build amdgpu.ko with the amdkfd queue control patches (kfd-glue/patches/linux-6.12)
# out of tree: amdgpu from Debian's linux-source-6.12, against the matching
# linux-headers package (both pinned in scripts/versions.env).
#
# Prints the path of the stripped, patched amdgpu.ko on the last line of
# stdout. Everything else goes to stderr.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)

usage() {
	cat <<USAGE
Usage: ${0##*/} [--clean] [--jobs N] [--print-key]

Extracts drivers/gpu/drm/amd from /usr/src/linux-source-\$SERIES.tar.xz,
applies kfd-glue/patches/linux-6.12/*.patch, builds amdgpu.ko with
  make -C /usr/src/linux-headers-\$KVER M=<tree>/drivers/gpu/drm/amd/amdgpu
strips it (--strip-debug) and prints its path.

The result is cached in \$AMDQP_CACHE/kfd-glue (default .cache/kfd-glue),
keyed by the hash of the patches, the pinned versions and this script, so
a second run with the same inputs is instant. The build tree is kept too:
after a patch change only the files the patches touch are rebuilt.

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

clean=0
jobs=$(nproc)
print_key=0
while [ $# -gt 0 ]; do
	case "$1" in
	--clean) clean=1 ;;
	--jobs) jobs="${2:?--jobs needs a number}"; shift ;;
	--print-key) print_key=1 ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
	shift
done

log() { echo "build-amdgpu: $*" >&2; }
die() { echo "build-amdgpu: error: $*" >&2; exit 1; }

# shellcheck source=/dev/null
. "$repo/scripts/versions.env"
kver=${AMDQP_KVER:?}
kpkgver=${AMDQP_KPKGVER:?}
series=${AMDQP_KSRC_SERIES:?}
cache=${AMDQP_CACHE:-$repo/.cache}/kfd-glue
tarball=/usr/src/linux-source-$series.tar.xz
headers=/usr/src/linux-headers-$kver
deps="linux-source-$series=$kpkgver linux-headers-$kver build-essential bc flex bison libelf-dev dwarves xz-utils"

# pkey: what the build tree must contain; key: the result (also depends
# on how this script builds it).
pkey=$( (cat "$here"/patches/linux-6.12/*.patch; echo "$kver $kpkgver $series") |
	sha256sum | cut -c1-16)
key=$( (echo "$pkey"; cat "${BASH_SOURCE[0]}") | sha256sum | cut -c1-16)
if [ "$print_key" = 1 ]; then
	echo "$key"
	exit 0
fi

# --- dependencies ---------------------------------------------------------
pkgver() { dpkg-query -W -f='${Status} ${Version}\n' "$1" 2>/dev/null |
	   awk '$3 == "installed" { print $4 }'; }

v=$(pkgver "linux-source-$series")
[ -n "$v" ] || die "linux-source-$series is not installed; run: apt-get install -y $deps"
[ "$v" = "$kpkgver" ] ||
	die "linux-source-$series is $v, need $kpkgver (scripts/versions.env); run: apt-get install -y linux-source-$series=$kpkgver"
[ -f "$tarball" ] || die "$tarball missing (reinstall linux-source-$series)"
v=$(pkgver "linux-headers-$kver")
[ -n "$v" ] || die "linux-headers-$kver is not installed; run: apt-get install -y $deps"
[ "$v" = "$kpkgver" ] ||
	die "linux-headers-$kver is $v, need $kpkgver"
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
src=$tree/linux-source-$series
amd=drivers/gpu/drm/amd

extract() {
	log "extracting $amd from $tarball"
	rm -rf "$tree" "$tree.tmp"
	mkdir -p "$tree.tmp"
	tar -C "$tree.tmp" -xJf "$tarball" "linux-source-$series/$amd"
	mv "$tree.tmp" "$tree"
	: >"$tree/applied.list"
}

apply_all() {
	local p
	for p in "$here"/patches/linux-6.12/*.patch; do
		log "applying ${p##*/}"
		patch -d "$src" -p1 --forward --batch --quiet <"$p" ||
			die "${p##*/} does not apply to linux-source-$series $kpkgver"
		cp "$p" "$tree/applied.$(basename "$p")"
		echo "applied.$(basename "$p")" >>"$tree/applied.list"
	done
}

revert_all() {
	local p
	[ -f "$tree/applied.list" ] || return 1
	for p in $(tac "$tree/applied.list"); do
		patch -d "$src" -p1 -R --batch --quiet <"$tree/$p" || return 1
		rm -f "$tree/$p"
	done
	: >"$tree/applied.list"
}

if [ "$clean" = 1 ] || [ ! -d "$src/$amd/amdgpu" ]; then
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
ls -dt "$cache"/amdgpu-* 2>/dev/null | tail -n +4 | xargs -r rm -rf
log "done: $out/amdgpu.ko ($(du -h "$out/amdgpu.ko" | cut -f1))"
echo "$out/amdgpu.ko"

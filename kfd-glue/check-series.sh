#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Check that the kfd-glue series of one base applies, in order, to that
# base's amdkfd sources; TAP on stdout. Nothing outside a temporary
# directory is written. See usage() and Documentation/kfd-glue.rst.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
me=${BASH_SOURCE[0]##*/}

usage() {
	cat <<USAGE
Usage: $me --base NAME [--tree DIR|TARBALL] [--strict]

Applies kfd-glue/patches/NAME/*.patch in order to a scratch copy of the
files they touch and prints TAP: one line per patch, one per base file
checked against kfd-glue/patches/NAME/BASE.

  --base NAME   the series (linux-6.12, rocm-6.4, rocm-7.0, ...)
  --tree PATH   the sources: a kernel tree (holding drivers/gpu/drm/amd),
                an amdgpu-dkms tree (holding amd/, e.g. /usr/src/amdgpu-VER),
                a directory of saved base files in kernel layout
                (DIR/drivers/gpu/drm/amd/amdkfd/...), or a linux-source-*
                tarball. Default for linux-*: /usr/src/linux-source-*.tar.xz
                of that series. Without a tree a ROCm base is reported as
                skipped, with what to download (from its BASE file).
  --strict      a hunk applied with fuzz fails the patch (offsets are fine)
  -h, --help    this text

BASE (optional) records where the series was checked: 'repo', 'tag',
'commit' lines and one 'file PATH SHA256' line per base file (PATH in
kernel layout). Each file present in the tree is compared; a mismatch is
reported as 'not ok' (the series was not checked against that content),
and the series is still applied. A base directory with a BASE but no
patches (a port still to be done) is reported as skipped, with BASE's
'status' and 'why' lines.

Exit status: 0 all ok or skipped, 1 a check failed, 2 usage error.
USAGE
}

die() { echo "$me: error: $*" >&2; exit 2; }

base=
tree=
strict=0
while [ $# -gt 0 ]; do
	case "$1" in
	-h | --help) usage; exit 0 ;;
	--base | --tree)
		if [ $# -lt 2 ] || [ -z "$2" ]; then die "$1 needs a value"; fi
		case "$1" in --base) base=$2 ;; --tree) tree=$2 ;; esac
		shift
		;;
	--strict) strict=1 ;;
	*) die "unknown argument '$1' (try --help)" ;;
	esac
	shift
done
[ -n "$base" ] || die "--base NAME is required (try --help)"
pdir=$here/patches/$base
[ -d "$pdir" ] || die "no series kfd-glue/patches/$base"

shopt -s nullglob
series=("$pdir"/*.patch)
shopt -u nullglob

work=$(mktemp -d "${TMPDIR:-/tmp}/kfd-check-series.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM HUP

n=0
failed=0
tap() {	# tap ok|not-ok TEXT
	n=$((n + 1))
	if [ "$1" = ok ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=1
	fi
}
note() { sed 's/^/# /'; }
finish() {
	echo "1..$n"
	exit "$failed"
}

# BASE keys, and the base files it lists (kernel-layout paths).
bkv() { [ -f "$pdir/BASE" ] && sed -n "s/^$1[[:space:]]\{1,\}//p" "$pdir/BASE" | head -n 1; }
base_files() {
	[ -f "$pdir/BASE" ] || return 0
	awk '$1 == "file" { print $2, $3 }' "$pdir/BASE"
}

# Paths (kernel layout, below drivers/gpu/drm/) the series reads or writes.
touched() {
	local p
	for p in "${series[@]}"; do
		sed -n 's|^+++ b/\(drivers/gpu/drm/\)\{0,1\}\(amd/[^[:space:]]*\).*|\2|p' "$p"
	done | LC_ALL=C sort -u
}

# A base directory without patches is a port still to be done: say so
# (from BASE) and skip rather than fail, so CI can list every base.
if [ ${#series[@]} -eq 0 ]; then
	{
		echo "kfd-glue/patches/$base holds no patch: the series is not ported to this base"
		[ ! -f "$pdir/BASE" ] || sed -n 's/^\(status\|why\)[[:space:]]\{1,\}//p' "$pdir/BASE"
	} | note
	tap ok "$base: series # SKIP not ported (kfd-glue/patches/$base/BASE)"
	finish
fi

if [ -z "$tree" ]; then
	case "$base" in
	linux-*)
		tree=/usr/src/linux-source-${base#linux-}.tar.xz
		[ -f "$tree" ] || {
			tap ok "$base: no tree # SKIP $tree missing (apt-get install linux-source-${base#linux-})"
			finish
		}
		;;
	*)
		{
			echo "no --tree: nothing to check the series $base against."
			if [ -n "$(bkv repo)" ]; then
				rev=$(bkv commit)
				case "$rev" in '' | unknown) rev=$(bkv tag) ;; esac
				echo "Get these files of $(bkv repo) at tag $(bkv tag) (commit $(bkv commit)):"
				base_files | while read -r f _; do
					echo "  $f"
				done
				echo "e.g. https://raw.githubusercontent.com/$(bkv repo)/$rev/PATH"
				echo "into DIR/PATH, then: $me --base $base --tree DIR"
			else
				echo "$pdir/BASE names no source; an amdgpu-dkms tree works too:"
				echo "  $me --base $base --tree /usr/src/amdgpu-VERSION"
			fi
		} | note
		tap ok "$base: no tree # SKIP no --tree given"
		finish
		;;
	esac
fi

# scratch: a kernel-layout copy of what the series touches.
scratch=$work/tree
mkdir -p "$scratch/drivers/gpu/drm"
mapfile -t files < <(touched)
if [ -f "$tree" ]; then
	top=${tree##*/}
	top=${top%.tar*}
	dirs=()
	for f in "${files[@]}"; do dirs+=("$top/drivers/gpu/drm/${f%/*}"); done
	mapfile -t dirs < <(printf '%s\n' "${dirs[@]}" | LC_ALL=C sort -u)
	if ! tar -C "$work" -xf "$tree" "${dirs[@]}" 2>"$work/tar.log"; then
		note <"$work/tar.log"
		tap not-ok "$base: extract ${dirs[*]} from $tree"
		finish
	fi
	from=$work/$top/drivers/gpu/drm
elif [ -d "$tree/drivers/gpu/drm/amd" ]; then
	from=$tree/drivers/gpu/drm
elif [ -d "$tree/amd" ]; then
	from=$tree
else
	die "--tree $tree: neither drivers/gpu/drm/amd nor amd/ below it, nor a tarball"
fi
for f in "${files[@]}"; do
	if [ -e "$from/$f" ]; then
		mkdir -p "$scratch/drivers/gpu/drm/${f%/*}"
		cp -p "$from/$f" "$scratch/drivers/gpu/drm/$f"
	fi
done

# The base files BASE pins: is this tree what the series was checked on?
while read -r f sum; do
	rel=${f#drivers/gpu/drm/}
	if [ ! -e "$from/$rel" ]; then
		tap not-ok "$base: base file $f missing from $tree"
	elif [ "$(sha256sum "$from/$rel" | cut -d' ' -f1)" = "$sum" ]; then
		tap ok "$base: base file $f matches BASE"
	else
		tap not-ok "$base: base file $f differs from the one BASE pins ($(bkv tag))"
	fi
done < <(base_files)

# In order: a patch may edit files an earlier one created.
for p in "${series[@]}"; do
	name=${p##*/}
	if grep -q '^+++ b/drivers/gpu/drm/amd/' "$p"; then
		d=$scratch
	else
		d=$scratch/drivers/gpu/drm
	fi
	if out=$(patch -d "$d" -p1 --forward --batch --no-backup-if-mismatch -i "$p" 2>&1); then
		if grep -q 'with fuzz' <<<"$out"; then
			note <<<"$out"
			if [ "$strict" = 1 ]; then
				tap not-ok "$base: $name applies only with fuzz"
				continue
			fi
			tap ok "$base: $name applies (with fuzz)"
		else
			tap ok "$base: $name applies"
		fi
	else
		note <<<"$out"
		tap not-ok "$base: $name does not apply after the patches before it"
	fi
done
finish

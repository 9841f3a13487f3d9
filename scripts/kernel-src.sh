#!/bin/bash
# Print the path of an extracted linux-source-6.12 tree (pinned version),
# extracting /usr/src/linux-source-6.12.tar.xz into the cache once.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	cat <<USAGE
Usage: ${0##*/} [--minimal] [--tarball PATH]

Prints the absolute path of an extracted linux-source-${AMDQP_KSRC_SERIES} tree
(Debian ${AMDQP_KPKGVER}, pinned in scripts/versions.env). The first call
extracts the tarball into \$AMDQP_CACHE (default .cache/); later calls just
print the path. Extraction goes to a temporary folder that is renamed when
complete, under a lock, so concurrent callers are safe and a killed run
leaves nothing half-done behind.

  --minimal      extract only what the checks need (checkpatch.pl and its
                 data files, kselftest_harness.h, kselftest.h). Faster; if
                 the full tree is already there, its path is printed instead.
  --tarball PATH source tarball (default /usr/src/linux-source-${AMDQP_KSRC_SERIES}.tar.xz)
  -h, --help     this text

The tree is shared: treat it as read-only (build out of tree, or copy).
Install the package with scripts/deps.sh.
USAGE
}

minimal=0
tarball="/usr/src/linux-source-${AMDQP_KSRC_SERIES}.tar.xz"
while [ $# -gt 0 ]; do
	case "$1" in
	--minimal) minimal=1 ;;
	--tarball) tarball="${2:?--tarball needs a path}"; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
	shift
done

top="linux-source-${AMDQP_KSRC_SERIES}"
verdir="$(amdqp_ver_path "$AMDQP_KPKGVER")"
full="$AMDQP_CACHE/linux-source-$verdir"
mini="$AMDQP_CACHE/linux-source-$verdir-minimal"

# Files (relative to the tree) that --minimal extracts.
minimal_files=(
	scripts/checkpatch.pl
	scripts/spelling.txt
	scripts/const_structs.checkpatch
	tools/testing/selftests/kselftest_harness.h
	tools/testing/selftests/kselftest.h
)

check_source() {
	local have
	[ -r "$tarball" ] ||
		amdqp_die "$tarball not found: run scripts/deps.sh (installs linux-source-${AMDQP_KSRC_SERIES}=${AMDQP_KPKGVER})"
	if [ "$tarball" = "/usr/src/linux-source-${AMDQP_KSRC_SERIES}.tar.xz" ]; then
		have="$(amdqp_pkg_version "linux-source-${AMDQP_KSRC_SERIES}")"
		[ "$have" = "$AMDQP_KPKGVER" ] ||
			amdqp_die "linux-source-${AMDQP_KSRC_SERIES} is '${have:-not installed}', pinned ${AMDQP_KPKGVER}: run scripts/deps.sh or change AMDQP_KPKGVER in scripts/versions.env"
	fi
}

# extract DEST [MEMBERS...]: untar into a temp folder next to DEST, rename.
extract() {
	local dest="$1" tmp
	shift
	[ -d "$dest" ] && return 0
	check_source
	mkdir -p "$AMDQP_CACHE"
	tmp="$(mktemp -d "$AMDQP_CACHE/.extract.XXXXXX")"
	# shellcheck disable=SC2064  # expand now: tmp is local
	trap "rm -rf '$tmp'" EXIT
	amdqp_log "extracting $tarball${1:+ (minimal)} into $dest"
	local members=()
	local f
	for f in "$@"; do members+=("$top/$f"); done
	tar -xJf "$tarball" -C "$tmp" "${members[@]}"
	[ -d "$tmp/$top" ] || amdqp_die "$tarball has no $top/ folder"
	printf '%s\n' "$AMDQP_KPKGVER" >"$tmp/$top/.amdqp-source-version"
	mv -T "$tmp/$top" "$dest"
	rm -rf "$tmp"
	trap - EXIT
}

if [ "$minimal" = 1 ]; then
	if [ -d "$full" ]; then
		printf '%s\n' "$full"
		exit 0
	fi
	amdqp_with_lock "$AMDQP_CACHE/.linux-source.lock" extract "$mini" "${minimal_files[@]}"
	printf '%s\n' "$mini"
else
	amdqp_with_lock "$AMDQP_CACHE/.linux-source.lock" extract "$full"
	printf '%s\n' "$full"
fi

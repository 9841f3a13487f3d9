# shellcheck shell=bash
# Common helpers for the amdqp build/test scripts. Source it, don't run it.
#
#   AMDQP_ROOT   repository root (derived from this file's location)
#   AMDQP_CACHE  cache folder for downloads and extracted trees
#                (default: $AMDQP_ROOT/.cache, gitignored)

AMDQP_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
AMDQP_CACHE="${AMDQP_CACHE:-$AMDQP_ROOT/.cache}"
export AMDQP_ROOT AMDQP_CACHE

# shellcheck source=scripts/versions.env
. "$AMDQP_ROOT/scripts/versions.env"
export AMDQP_KVER AMDQP_KPKGVER AMDQP_KSRC_SERIES AMDQP_KVER_OLD

# A Debian version as a path component: '~' and ':' upset make and shells.
amdqp_ver_path() {
	printf '%s\n' "$1" | tr '~:' '__'
}

amdqp_log() {
	printf '%s: %s\n' "${0##*/}" "$*" >&2
}

amdqp_die() {
	printf '%s: error: %s\n' "${0##*/}" "$*" >&2
	exit 1
}

# Installed version of a Debian package, empty when not installed.
amdqp_pkg_version() {
	dpkg-query -W -f='${db:Status-Status} ${Version}\n' "$1" 2>/dev/null |
		awk '$1 == "installed" { print $2 }'
}

# Run "$@" holding an exclusive lock on file $1 (serialises cache fills
# between concurrent callers: several engineers share one tree).
amdqp_with_lock() {
	local lock="$1"
	shift
	mkdir -p "$(dirname "$lock")"
	(
		flock 9
		"$@"
	) 9>"$lock"
}

# shellcheck shell=bash
# Common helpers for the amdqp build/test scripts. Source it, don't run it.
#
#   AMDQP_ROOT   repository root (derived from this file's location)
#   AMDQP_CACHE  cache folder for downloads and extracted trees
#                (default: $AMDQP_ROOT/.cache, gitignored)
#   AMDQP_BUILDS this checkout's module build copies (build-6.12, build-6.1,
#                build-debug): $AMDQP_CACHE when the cache is the tree's own,
#                else a folder of the shared cache named by the checkout's
#                path, so that clones sharing one cache never build into,
#                or test, each other's copies

AMDQP_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
AMDQP_CACHE="${AMDQP_CACHE:-$AMDQP_ROOT/.cache}"
if [ -z "${AMDQP_BUILDS:-}" ]; then
	if [ "$AMDQP_CACHE" = "$AMDQP_ROOT/.cache" ]; then
		AMDQP_BUILDS="$AMDQP_CACHE"
	else
		AMDQP_BUILDS="$AMDQP_CACHE/trees/$(printf '%s' "$AMDQP_ROOT" | sha256sum | cut -c1-12)"
	fi
fi
export AMDQP_ROOT AMDQP_CACHE AMDQP_BUILDS

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

# The guest-program wrappers (demo.sh, bench.sh) share their flow:
# amdqp_guest_options parses [--no-deps] [--no-build] [-h] [-- ARGS],
# calling the script's usage() for -h; it sets AMDQP_DEPS, AMDQP_BUILD
# and AMDQP_ARGS (the ARGS for the guest program).
# shellcheck disable=SC2034  # the variables are the sourcing script's
amdqp_guest_options() {
	AMDQP_DEPS=1
	AMDQP_BUILD=1
	AMDQP_ARGS=()
	while [ $# -gt 0 ]; do
		case "$1" in
		--no-deps) AMDQP_DEPS=0 ;;
		--no-build) AMDQP_BUILD=0 ;;
		-h | --help) usage; exit 0 ;;
		--) shift; break ;;
		*) usage >&2; exit 2 ;;
		esac
		shift
	done
	AMDQP_ARGS=("$@")
}

# amdqp_guest_prepare DIR RUNNER WHAT (in $AMDQP_ROOT): deps and builds (as the options
# said), then insists that make -C DIR produced RUNNER. WHAT names DIR's
# programs in the error when DIR has no Makefile.
amdqp_guest_prepare() {
	local dir=$1 runner=$2 what=$3
	[ -f "$dir/Makefile" ] ||
		amdqp_die "$dir/Makefile is missing: $what not there yet"
	[ "$AMDQP_DEPS" = 0 ] || bash scripts/deps.sh
	if [ "$AMDQP_BUILD" = 1 ]; then
		bash scripts/build-modules.sh
		nice make -C "$dir" -j"$(nproc)"
	fi
	[ -x "$runner" ] || amdqp_die "$runner was not built (make -C $dir)"
}

# amdqp_env_args PREFIX: AMDQP_ENV_ARGS gets run-vm.sh --env options for
# every shell variable whose name starts with PREFIX.
amdqp_env_args() {
	local v
	AMDQP_ENV_ARGS=()
	while IFS= read -r v; do
		AMDQP_ENV_ARGS+=(--env "$v=${!v}")
	done < <(compgen -v | grep "^$1" || true)
}

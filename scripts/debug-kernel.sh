#!/bin/bash
# Build (once, cached by a content key) the debug kernel the VM tests run
# under: Debian's pinned linux-source with tinyconfig plus
# selftests/vm/debug-kernel.config (KASAN, lockdep, kmemleak, UBSAN, debug
# objects, fault injection). Prints where its bzImage and build tree are.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

frag="$AMDQP_ROOT/selftests/vm/debug-kernel.config"
# Bump when the build steps below change in a way that changes the result.
recipe=1

usage() {
	cat <<USAGE
Usage: ${0##*/} [--bzimage | --kdir | --key]

Makes sure the debug kernel is built in \$AMDQP_CACHE (default .cache/)
and prints, one per line:

  the kernel image    DIR/bzImage
  the build tree      DIR/build (KDIR for out-of-tree modules: M=...)

Source: linux-source-${AMDQP_KSRC_SERIES} ${AMDQP_KPKGVER} (scripts/kernel-src.sh).
Config: 'make tinyconfig', then selftests/vm/debug-kernel.config merged
and 'make olddefconfig'; every option of the fragment is checked
afterwards (one that Kconfig dropped is an error that names it).
Cache key: sha256 of the fragment, the pinned source version, the
compiler's version and a recipe number; a finished build has a
.complete marker, an unfinished one is resumed. About 15-25 minutes
with 2 cores the first time; instant afterwards.

  --bzimage   print only the kernel image path
  --kdir      print only the build tree path
  --key       print only the cache key (builds nothing)
  -h, --help  this text

Environment: AMDQP_CACHE, AMDQP_JOBS (default: nproc).
USAGE
}

what=both
while [ $# -gt 0 ]; do
	case "$1" in
	--bzimage) what=bzimage ;;
	--kdir) what=kdir ;;
	--key) what=key ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
	shift
done

[ -r "$frag" ] || amdqp_die "$frag missing"
cc_ver="$(gcc --version 2>/dev/null | head -n1)" || amdqp_die "gcc not found: run scripts/deps.sh"
key="$({ cat "$frag"; echo "$AMDQP_KPKGVER"; echo "$cc_ver"; echo "recipe $recipe"; } |
	sha256sum | cut -c1-16)"
if [ "$what" = key ]; then
	echo "$key"
	exit 0
fi
dir="$AMDQP_CACHE/debug-kernel-$key"

# check_config CONFIG: every line of the fragment holds in CONFIG.
check_config() {
	local line name want bad=()
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*) ;;
		*) continue ;;
		esac
		name="${line%%=*}"
		want="${line#*=}"
		if [ "$want" = n ]; then
			grep -qx "$name=[ym]" "$1" && bad+=("$name (want n)")
		else
			grep -qxF "$line" "$1" || bad+=("$name (want $want, have '$(grep "^$name=" "$1" | cut -d= -f2)')")
		fi
	done <"$frag"
	[ ${#bad[@]} -eq 0 ] ||
		amdqp_die "debug kernel config: Kconfig did not keep: ${bad[*]} (a dependency is missing from $frag)"
}

build() {
	[ -f "$dir/.complete" ] && return 0
	local src b jobs="${AMDQP_JOBS:-$(nproc)}" start=$SECONDS
	src="$(bash "$AMDQP_ROOT/scripts/kernel-src.sh")"
	# An unfinished build (killed run) is resumed: kbuild redoes what a
	# config change or a half-written object needs.
	b="$dir/build"
	mkdir -p "$b"
	amdqp_log "building the debug kernel $key in $dir (linux-source $AMDQP_KPKGVER, -j$jobs; ~15-25 min the first time)"
	make -s -C "$src" O="$b" tinyconfig >/dev/null
	"$src/scripts/kconfig/merge_config.sh" -m -O "$b" "$b/.config" "$frag" >/dev/null
	make -s -C "$src" O="$b" olddefconfig >/dev/null
	check_config "$b/.config"
	# 'modules' writes Module.symvers, which out-of-tree builds need.
	nice make -s -C "$src" O="$b" -j"$jobs" bzImage modules >&2
	cp "$b/arch/x86/boot/bzImage" "$dir/bzImage"
	touch "$dir/.complete"
	amdqp_log "debug kernel built in $((SECONDS - start))s: $dir/bzImage"
}

mkdir -p "$AMDQP_CACHE"
amdqp_with_lock "$AMDQP_CACHE/.debug-kernel.lock" build
case "$what" in
bzimage) echo "$dir/bzImage" ;;
kdir) echo "$dir/build" ;;
*) printf '%s\n%s\n' "$dir/bzImage" "$dir/build" ;;
esac

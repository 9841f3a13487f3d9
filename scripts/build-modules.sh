#!/bin/bash
# Build kmod/amdqp.ko and kmod/sim/amdqp_sim.ko in the working tree against
# the pinned 6.12 headers (the root Makefile's 'modules' target).
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

case "${1:-}" in
-h | --help)
	cat <<USAGE
Usage: ${0##*/} [MAKE ARGS...]

Runs 'make modules KDIR=/usr/src/linux-headers-${AMDQP_KVER}' at the
repository root (nice'd, -j\$(nproc)) and checks that kmod/amdqp.ko and
kmod/sim/amdqp_sim.ko exist afterwards. Extra arguments go to make
(e.g. W=1). KDIR can be overridden from the environment.
USAGE
	exit 0
	;;
esac

kdir="${KDIR:-/usr/src/linux-headers-$AMDQP_KVER}"
cd "$AMDQP_ROOT"
[ -f Makefile ] || amdqp_die "no Makefile at the repository root"
[ -d "$kdir" ] || amdqp_die "kernel headers not found at $kdir: run scripts/deps.sh"
nice make -j"$(nproc)" modules KDIR="$kdir" "$@"
for ko in kmod/amdqp.ko kmod/sim/amdqp_sim.ko; do
	[ -f "$ko" ] || amdqp_die "$ko was not built"
done

#!/bin/bash
# Download the pinned Debian kernel image package once and unpack it into
# the cache; print where its vmlinuz and module tree are.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	cat <<USAGE
Usage: ${0##*/} [--vmlinuz | --moddir | --root]

Makes sure the VM kernel linux-image-${AMDQP_KVER}-unsigned
(${AMDQP_KPKGVER}, pinned in scripts/versions.env) is unpacked in
\$AMDQP_CACHE (default .cache/) and prints, one per line:

  the kernel image   ROOT/boot/vmlinuz-${AMDQP_KVER}
  the module tree    ROOT/lib/modules/${AMDQP_KVER}

The package is fetched with 'apt-get download' (nothing is installed on
the host), unpacked with 'dpkg -x' into a temporary folder, 'depmod' is
run on it (the package ships no modules.dep) and the folder is renamed
into place. Modules stay compressed (.ko.xz); run-vm.sh decompresses the
ones it puts into the guest.

  --vmlinuz   print only the kernel image path
  --moddir    print only the module tree path
  --root      print only the unpack root
  -h, --help  this text
USAGE
}

what=both
while [ $# -gt 0 ]; do
	case "$1" in
	--vmlinuz) what=vmlinuz ;;
	--moddir) what=moddir ;;
	--root) what=root ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
	shift
done

pkg="linux-image-${AMDQP_KVER}-unsigned"
root="$AMDQP_CACHE/vm-kernel-$(amdqp_ver_path "$AMDQP_KPKGVER")"
debdir="$AMDQP_CACHE/debs"

unpack() {
	[ -f "$root/.complete" ] && return 0
	local deb tmp
	mkdir -p "$debdir"
	deb="$(find "$debdir" -maxdepth 1 -name "${pkg}_$(amdqp_ver_path "$AMDQP_KPKGVER")_amd64.deb" -print -quit)"
	if [ -z "$deb" ]; then
		# apt-get download names the file with the version's ':' as %3a;
		# there is no epoch here, so the plain name is right.
		amdqp_log "downloading $pkg=$AMDQP_KPKGVER"
		tmp="$(mktemp -d "$debdir/.dl.XXXXXX")"
		if ! (cd "$tmp" && apt-get download -q -o APT::Sandbox::User=root "$pkg=$AMDQP_KPKGVER" >&2); then
			rm -rf "$tmp"
			amdqp_die "cannot download $pkg=$AMDQP_KPKGVER (not in the apt sources? run 'apt-get update'; if Debian dropped that version, pin an available one in scripts/versions.env: AMDQP_KVER, AMDQP_KPKGVER - see 'apt-cache policy $pkg' and 'apt-cache madison linux-source-$AMDQP_KSRC_SERIES')"
		fi
		deb="$debdir/${pkg}_$(amdqp_ver_path "$AMDQP_KPKGVER")_amd64.deb"
		mv "$tmp"/*.deb "$deb"
		rm -rf "$tmp"
	fi
	local have
	have="$(dpkg-deb -f "$deb" Version)"
	[ "$have" = "$AMDQP_KPKGVER" ] || amdqp_die "$deb is version $have, pinned $AMDQP_KPKGVER"

	amdqp_log "unpacking $deb"
	rm -rf "$root"
	tmp="$(mktemp -d "$AMDQP_CACHE/.vmk.XXXXXX")"
	dpkg -x "$deb" "$tmp"
	[ -f "$tmp/boot/vmlinuz-$AMDQP_KVER" ] || amdqp_die "$deb has no boot/vmlinuz-$AMDQP_KVER"
	# Debian's package ships no modules.dep: the postinst runs depmod.
	depmod -b "$tmp" "$AMDQP_KVER"
	touch "$tmp/.complete"
	mv -T "$tmp" "$root"
}

command -v apt-get >/dev/null || amdqp_die "apt-get not found: this needs Debian 12"
command -v depmod >/dev/null || amdqp_die "depmod not found: run scripts/deps.sh (package kmod)"
amdqp_with_lock "$AMDQP_CACHE/.vm-kernel.lock" unpack

case "$what" in
both)
	printf '%s\n' "$root/boot/vmlinuz-$AMDQP_KVER" "$root/lib/modules/$AMDQP_KVER"
	;;
vmlinuz) printf '%s\n' "$root/boot/vmlinuz-$AMDQP_KVER" ;;
moddir) printf '%s\n' "$root/lib/modules/$AMDQP_KVER" ;;
root) printf '%s\n' "$root" ;;
esac

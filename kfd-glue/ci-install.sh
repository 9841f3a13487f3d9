#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# CI of everything that installs amdqp on a real host, TAP on stdout
# (diagnostics on stderr):
#  - kfd-glue/dkms-overlay.sh: usage and error paths; 'kernel' against the
#    pinned linux-source tarball, dry run and for real into a temporary
#    root (amdgpu.ko built by build-amdgpu.sh, sharing the cache of the
#    kfd-glue stage), the upgrade check and revert-kernel; 'amdgpu-dkms'
#    dry run against a synthetic /usr/src/amdgpu-<ver>, and its DKMS flow
#    (install, upgrade of amdgpu-dkms, revert, refusal of a version the
#    series does not fit) with a stand-in amdgpu package whose module
#    only records whether the series was applied;
#  - scripts/install-dkms.sh: dkms build of amdqp for the pinned 6.12 and
#    6.1 headers, in temporary DKMS trees;
#  - tools/hw-validate: the HIP workload compiled by Debian's hipcc.
# Exit status: 0 when every test passed.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
cd "$repo" || exit 1
# shellcheck source=/dev/null
. scripts/versions.env
kver=$AMDQP_KVER
tarball=/usr/src/linux-source-$AMDQP_KSRC_SERIES.tar.xz
top=linux-source-$AMDQP_KSRC_SERIES
overlay=$here/dkms-overlay.sh
cache=${AMDQP_CACHE:-$repo/.cache}

mkdir -p "$repo/build/ci-install"
tmp=$(mktemp -d "$repo/build/ci-install/run.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
# Temporary files of the scripts under test land here: checked to be gone.
export TMPDIR=$tmp/tmp
mkdir -p "$TMPDIR"

n=0
failed=0
echo "TAP version 13"
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1))
	failed=1
	echo "not ok $n - $1"
	[ ! -s "$tmp/out" ] || sed 's/^/# /' "$tmp/out" | tail -n 40
}
check() { if [ "$1" = 0 ]; then ok "$2"; else not_ok "$2"; fi; }
# t CMD...: run, output (both streams) in $tmp/out, status in $rc.
t() { "$@" >"$tmp/out" 2>&1; rc=$?; }
has() { grep -q -- "$1" "$tmp/out"; }
snapshot() { find "$1" -printf '%p %s %T@\n' 2>/dev/null | LC_ALL=C sort | sha256sum; }
tmp_empty() { [ -z "$(find "$TMPDIR" -mindepth 1 -print -quit)" ]; }

# --- usage and error paths --------------------------------------------------
t "$overlay" --help
[ "$rc" = 0 ] && head -n 1 "$tmp/out" | grep -q '^Usage:' && ! has SPDX
check $? "dkms-overlay.sh --help: usage on stdout, exit 0"
t "$overlay"
[ "$rc" = 2 ] && has 'missing MODE'
check $? "dkms-overlay.sh without a mode: exit 2 with a message"
empty=$tmp/empty-root
mkdir -p "$empty"
t "$overlay" amdgpu-dkms --dry-run --root "$empty"
[ "$rc" = 1 ] && has 'no .*/usr/src/amdgpu-<version>'
check $? "amdgpu-dkms without /usr/src/amdgpu-*: exit 1 with a message (rc $rc)"
t "$overlay" status --root "$empty"
[ "$rc" = 0 ] && has 'no amdqp overlay installed' && ! has 'No such file'
check $? "status without an overlay: says so, exit 0 (rc $rc)"
t "$overlay" kernel --src "$tarball" --kver "$AMDQP_KVER_OLD" --dry-run
[ "$rc" = 1 ] && has "is Linux .* but $AMDQP_KVER_OLD is"
check $? "kernel: --src of another version than --kver is refused (rc $rc)"

# --- kernel: dry run ----------------------------------------------------------
root=$tmp/root
mkdir -p "$root"
before=$(snapshot "$root")
t "$overlay" kernel --src "$tarball" --kver "$kver" --root "$root" --dry-run
[ "$rc" = 0 ] && has 'applies in order' && [ "$(snapshot "$root")" = "$before" ] && tmp_empty
check $? "kernel --dry-run: the series applies in order to $top, nothing written (rc $rc)"

# A series whose 0004 needs 0003 must fail without it: the in-order check
# is real and names the patch.
broken=$tmp/broken/kfd-glue
mkdir -p "$broken/patches/linux-6.12" "$tmp/broken/scripts"
cp "$here/dkms-overlay.sh" "$here/build-amdgpu.sh" "$broken/"
cp "$here/patches/bases" "$broken/patches/"
cp "$repo/scripts/versions.env" "$tmp/broken/scripts/"
cp "$here"/patches/linux-6.12/*.patch "$broken/patches/linux-6.12/"
rm -f "$broken"/patches/linux-6.12/0003-*.patch
t "$broken/dkms-overlay.sh" kernel --src "$tarball" --kver "$kver" --root "$root" --dry-run
[ "$rc" = 1 ] && has '0004-.* does not apply' && tmp_empty
check $? "kernel --dry-run: a series that does not apply is refused, naming the patch (rc $rc)"

# --- kernel: for real, into $root ---------------------------------------------------
# The stock module tree of the VM kernel, so that modprobe can show which
# amdgpu it would load (hard links: same file system as the cache).
if moddir=$(bash scripts/fetch-kernel.sh --moddir 2>"$tmp/out"); then
	mkdir -p "$root/lib/modules"
	cp -al "$moddir" "$root/lib/modules/$kver" 2>"$tmp/out" ||
		cp -a "$moddir" "$root/lib/modules/$kver"
	ok "stock module tree of $kver in the test root"
else
	not_ok "scripts/fetch-kernel.sh --moddir"
fi
start=$(date +%s)
t "$overlay" kernel --src "$tarball" --kver "$kver" --root "$root" \
	--cache "$cache/kfd-glue" --jobs "$(nproc)"
ko=$root/lib/modules/$kver/updates/amdgpu.ko
[ "$rc" = 0 ] && [ -s "$ko" ] && tmp_empty
check $? "kernel: amdgpu.ko built and installed to updates/ ($(($(date +%s) - start)) s, rc $rc)"
if [ -s "$ko" ]; then
	[ "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" = "$kver" ] &&
		[ "$(nm "$ko" | grep -c ' __ksymtab_kfd_qctl_')" -ge 10 ]
	check $? "kernel: the installed amdgpu.ko is for $kver and exports kfd_qctl_*"
	t modprobe -d "$root" -S "$kver" --show-depends amdgpu
	grep -q "insmod $ko" "$tmp/out"
	check $? "kernel: modprobe picks updates/amdgpu.ko over the stock one"
	[ -f "$root/var/lib/amdqp-overlay/kernel-$kver" ] &&
		[ -x "$root/usr/lib/amdqp-overlay/kfd-glue/dkms-overlay.sh" ] &&
		grep -q "post-invoke=.*dkms-overlay.sh verify" "$root/etc/dpkg/dpkg.cfg.d/amdqp-overlay"
	check $? "kernel: state and the dpkg upgrade check are installed"
	t "$overlay" status --root "$root"
	[ "$rc" = 0 ] && has "== kernel-$kver" && has 'upgrade check:' && ! has 'No such file'
	check $? "status: lists the installed kernel overlay and the upgrade check (rc $rc)"
	t "$root/usr/lib/amdqp-overlay/kfd-glue/dkms-overlay.sh" verify --root "$root"
	[ "$rc" = 0 ] && [ -s "$ko" ]
	check $? "verify: nothing to do while the kernel package is unchanged (rc $rc)"
	# A kernel package upgrade that keeps the release name.
	sed -i 's/^image=.*/image=linux-image-'"$kver"' 0.0-old/' \
		"$root/var/lib/amdqp-overlay/kernel-$kver"
	t "$root/usr/lib/amdqp-overlay/kfd-glue/dkms-overlay.sh" verify --root "$root"
	[ "$rc" = 1 ] && [ ! -e "$ko" ] && has 'REMOVED' && [ ! -e "$root/etc/dpkg/dpkg.cfg.d/amdqp-overlay" ]
	check $? "verify: after a kernel package change the overlay is removed, loudly (rc $rc)"
	t modprobe -d "$root" -S "$kver" --show-depends amdgpu
	grep -q "kernel/drivers/gpu/drm/amd/amdgpu/amdgpu.ko" "$tmp/out"
	check $? "verify: modprobe is back to the stock amdgpu"
	t "$overlay" kernel --src "$tarball" --kver "$kver" --root "$root" \
		--cache "$cache/kfd-glue" --jobs "$(nproc)"
	t "$overlay" revert-kernel --kver "$kver" --root "$root"
	[ "$rc" = 0 ] && [ ! -e "$ko" ] && [ ! -e "$root/var/lib/amdqp-overlay" ] &&
		[ ! -e "$root/usr/lib/amdqp-overlay" ]
	check $? "revert-kernel: overlay, state and hook removed (rc $rc)"
fi

# --- amdgpu-dkms ----------------------------------------------------------------
# A stand-in amdgpu-dkms source tree: amd/amdkfd and amd/include from the
# pinned source, and an amd/amdgpu whose module only records whether the
# series' header is there. The series is the 6.12 one (--base): only the
# layout (-p4, amd/ at the top) and the DKMS flow are under test here.
dr=$tmp/dkmsroot
fake_amdgpu() {	# fake_amdgpu VERSION
	local d=$dr/usr/src/amdgpu-$1
	mkdir -p "$d/amd/amdgpu"
	cp -a "$tmp/amd/amdkfd" "$tmp/amd/include" "$d/amd/"
	cat >"$d/dkms.conf" <<CONF
PACKAGE_NAME="amdgpu"
PACKAGE_VERSION="$1"
MAKE[0]="make -C \${kernel_source_dir} M=\${dkms_tree}/\${PACKAGE_NAME}/\${PACKAGE_VERSION}/build/amd/amdgpu modules"
CLEAN="true"
BUILT_MODULE_NAME[0]="amdgpu"
BUILT_MODULE_LOCATION[0]="amd/amdgpu"
DEST_MODULE_LOCATION[0]="/updates/dkms"
AUTOINSTALL="yes"
CONF
	echo 'obj-m := amdgpu.o' >"$d/amd/amdgpu/Makefile"
	cat >"$d/amd/amdgpu/amdgpu.c" <<'C'
// SPDX-License-Identifier: GPL-2.0
#include <linux/module.h>
#if __has_include("../include/amdkfd_qctl.h")
MODULE_INFO(amdqp_qctl, "yes");
#else
MODULE_INFO(amdqp_qctl, "no");
#endif
MODULE_LICENSE("GPL");
C
}
dkms_opts=(--sourcetree "$dr/usr/src" --dkmstree "$dr/var/lib/dkms" --installtree "$dr/lib/modules")
# The qctl marker of the amdgpu.ko DKMS installed for $kver.
installed_qctl() {
	local f
	f=$(find "$dr/lib/modules/$kver/updates/dkms" -name 'amdgpu.ko*' -print -quit 2>/dev/null)
	[ -n "$f" ] && modinfo -F amdqp_qctl "$f"
}
registered() { [ -d "$dr/var/lib/dkms/$1/$2" ]; }

# asic_reg is most of amd/include (450 MB) and nothing the series needs.
if tar -C "$tmp" -xf "$tarball" --exclude="$top/drivers/gpu/drm/amd/include/asic_reg" \
	"$top/drivers/gpu/drm/amd/amdkfd" "$top/drivers/gpu/drm/amd/include" 2>"$tmp/out"; then
	mv "$tmp/$top/drivers/gpu/drm/amd" "$tmp/amd"
	mkdir -p "$dr/var/lib/dkms" "$dr/lib/modules/$kver"
	fake_amdgpu 6.12.117-ci1
	ok "stand-in amdgpu-dkms tree /usr/src/amdgpu-6.12.117-ci1"

	t "$overlay" amdgpu-dkms --root "$dr" --kver "$kver" --dry-run
	[ "$rc" = 1 ] && has 'no patch series is known for amdgpu-dkms 6.12.117-ci1'
	check $? "amdgpu-dkms: a version without a known series is refused with a message (rc $rc)"
	before=$(snapshot "$dr")
	t "$overlay" amdgpu-dkms --root "$dr" --kver "$kver" --base linux-6.12 --dry-run
	[ "$rc" = 0 ] && has 'applies in order' && has 'would run: dkms add amdgpu-amdqp/6.12.117-ci1' &&
		[ "$(snapshot "$dr")" = "$before" ] && tmp_empty
	check $? "amdgpu-dkms --dry-run: series applies (-p4 layout), nothing written (rc $rc)"

	if command -v dkms >/dev/null; then
		# As amdgpu-dkms's postinst would have left it.
		t dkms add amdgpu/6.12.117-ci1 "${dkms_opts[@]}"
		t dkms install amdgpu/6.12.117-ci1 -k "$kver" "${dkms_opts[@]}"
		[ "$rc" = 0 ] && [ "$(installed_qctl)" = no ]
		check $? "stand-in amdgpu/6.12.117-ci1 installed with DKMS (rc $rc)"
		t "$overlay" amdgpu-dkms --root "$dr" --kver "$kver" --base linux-6.12
		[ "$rc" = 0 ] && [ "$(installed_qctl)" = yes ] &&
			registered amdgpu-amdqp 6.12.117-ci1 && ! registered amdgpu 6.12.117-ci1
		check $? "amdgpu-dkms: amdgpu-amdqp installed, amdgpu unregistered (rc $rc)"
		# amdgpu-dkms upgrade: its postinst registers and installs the new
		# version next to our overlay.
		fake_amdgpu 6.12.117-ci2
		dkms add amdgpu/6.12.117-ci2 "${dkms_opts[@]}" >"$tmp/out" 2>&1
		dkms install amdgpu/6.12.117-ci2 -k "$kver" "${dkms_opts[@]}" >>"$tmp/out" 2>&1
		t "$overlay" verify --root "$dr" --kver "$kver" --base linux-6.12
		[ "$rc" = 0 ] && [ "$(installed_qctl)" = yes ] &&
			registered amdgpu-amdqp 6.12.117-ci2 && ! registered amdgpu-amdqp 6.12.117-ci1 &&
			! registered amdgpu 6.12.117-ci2 && [ ! -e "$dr/usr/src/amdgpu-amdqp-6.12.117-ci1" ]
		check $? "verify: after an amdgpu-dkms upgrade the overlay is rebuilt on the new version (rc $rc)"
		t "$overlay" revert-dkms --root "$dr" --kver "$kver"
		[ "$rc" = 0 ] && [ "$(installed_qctl)" = no ] && registered amdgpu 6.12.117-ci2 &&
			! registered amdgpu-amdqp 6.12.117-ci2 && [ ! -e "$dr/etc/dpkg/dpkg.cfg.d/amdqp-overlay" ]
		check $? "revert-dkms: the stock amdgpu is back, overlay and hook gone (rc $rc)"
		t "$overlay" amdgpu-dkms --root "$dr" --kver "$kver" --base linux-6.12
		# An upgrade the series does not fit.
		fake_amdgpu 6.12.117-ci3
		: >"$dr/usr/src/amdgpu-6.12.117-ci3/amd/amdkfd/kfd_priv.h"
		dkms add amdgpu/6.12.117-ci3 "${dkms_opts[@]}" >"$tmp/out" 2>&1
		dkms install amdgpu/6.12.117-ci3 -k "$kver" "${dkms_opts[@]}" >>"$tmp/out" 2>&1
		t "$overlay" verify --root "$dr" --kver "$kver" --base linux-6.12
		[ "$rc" = 1 ] && has REMOVED && [ "$(installed_qctl)" = no ] &&
			registered amdgpu 6.12.117-ci3 &&
			[ -z "$(find "$dr/var/lib/dkms/amdgpu-amdqp" -mindepth 1 -maxdepth 1 2>/dev/null)" ]
		check $? "verify: an amdgpu-dkms the series does not fit gets the stock amdgpu back, loudly (rc $rc)"
	else
		not_ok "dkms is installed (scripts/deps.sh)"
	fi
else
	not_ok "extract amd/amdkfd, amd/include from $tarball"
fi

# --- dkms build of amdqp ----------------------------------------------------------
ver=$(tr -d '[:space:]' <VERSION)
for k in "$kver" "$AMDQP_KVER_OLD"; do
	tr_=$tmp/dkms-amdqp-$k
	start=$(date +%s)
	t nice bash scripts/install-dkms.sh --tree "$tr_" --build-only -k "$k"
	m=$(find "$tr_/dkms/amdqp/$ver/$k" -name 'amdqp.ko*' -print -quit 2>/dev/null)
	[ "$rc" = 0 ] && [ -n "$m" ] && [ "$(modinfo -F vermagic "$m" | cut -d' ' -f1)" = "$k" ] &&
		[ -n "$(find "$tr_/dkms/amdqp/$ver/$k" -name 'amdqp_sim.ko*' -print -quit)" ]
	check $? "dkms build amdqp/$ver (version from VERSION) for $k ($(($(date +%s) - start)) s, rc $rc)"
done
t bash scripts/install-dkms.sh --tree "$tmp/dkms-amdqp-$kver" --uninstall
[ "$rc" = 0 ] && [ ! -e "$tmp/dkms-amdqp-$kver/dkms/amdqp/$ver" ] &&
	[ -z "$(find "$tmp/dkms-amdqp-$kver/src" -mindepth 1 -print -quit)" ]
check $? "install-dkms.sh --uninstall removes amdqp from DKMS (rc $rc)"

# --- hw-validate: the HIP half ------------------------------------------------------
if command -v hipcc >/dev/null; then
	t tools/hw-validate/hw-validate.sh --build-only --offload-arch gfx90a,gfx940 --out "$tmp/hwv"
	b=$tmp/hwv/bin/hwv_load
	[ "$rc" = 0 ] && [ -x "$b" ] &&
		grep -aq 'amdgcn-amd-amdhsa--gfx90a' "$b" && grep -aq 'amdgcn-amd-amdhsa--gfx940' "$b"
	check $? "hw-validate: hwv_load.hip compiled by $(hipcc --version 2>/dev/null | head -n 1) for gfx90a and gfx940 (rc $rc)"
else
	rc=1
	: >"$tmp/out"
	not_ok "hipcc is installed (scripts/deps.sh)"
fi

tmp_empty
check $? "no temporary files left behind in TMPDIR"
echo "1..$n"
exit $failed

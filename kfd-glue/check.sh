#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kfd-glue checks, TAP on stdout (diagnostics on stderr):
#  - the patch series applies to the pristine linux-source-6.12 tree and is
#    checkpatch --strict clean, and so is the kfd backend;
#  - the patch series' amdkfd_qctl.h is the one kmod/kfd builds against;
#  - the patched amdgpu.ko builds (or is reused from the cache);
#  - in the VM: stock DRM deps + patched amdgpu.ko + kmod/amdqp.ko load,
#    /dev/kfd appears, amdqp binds the kfd backend, bad requests are
#    rejected, both load/unload orders work (kfd-glue/vmtest/guest.sh);
#  - in the same VM run: Debian's real libhsa-runtime64 (ROCr 5.2.3) starts
#    on that CPU-only /dev/kfd, loads the tools libraries named in
#    HSA_TOOLS_LIB and calls their OnLoad with its API table
#    (libuser/testing/rocr-smoke), and the tagging layer
#    (libamdqp-preload.so) loaded that way keeps the program working
#    (kfd-glue/vmtest/rocr.sh).
#
# Expects kmod/amdqp.ko to be built already (make modules). Builds the
# userspace programs it needs in $AMDQP_USER_BUILD (default build/user,
# the tree scripts/check.sh's ctest stage builds).
# Exit status: 0 when every test passed.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
cd "$repo" || exit 1
# shellcheck source=/dev/null
. scripts/versions.env

work=$repo/build/kfd-glue
mkdir -p "$work"
tmp=$(mktemp -d "$work/check.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

results=()
pass() { results+=("ok - $1"); echo "kfd-glue: ok - $1" >&2; }
fail() { results+=("not ok - $1"); echo "kfd-glue: NOT OK - $1" >&2; }
result() { if [ "$1" = 0 ]; then pass "$2"; else fail "$2"; fi; }
finish() {
	local i=0 failed=0 line
	echo "TAP version 13"
	echo "1..${#results[@]}"
	for line in "${results[@]}"; do
		i=$((i + 1))
		case "$line" in
		"not ok"*) failed=1; echo "not ok $i ${line#not ok - }" ;;
		*) echo "ok $i ${line#ok - }" ;;
		esac
	done
	exit $failed
}

series=$AMDQP_KSRC_SERIES
tarball=/usr/src/linux-source-$series.tar.xz

# --- the series applies to the pristine tree -----------------------------
log=$tmp/apply.log
if [ -f "$tarball" ] &&
   tar -C "$tmp" -xJf "$tarball" "linux-source-$series/drivers/gpu/drm/amd/amdkfd" \
	"linux-source-$series/drivers/gpu/drm/amd/include/kgd_kfd_interface.h" \
	"linux-source-$series/scripts/checkpatch.pl" \
	"linux-source-$series/scripts/spelling.txt" \
	"linux-source-$series/scripts/const_structs.checkpatch" 2>"$log"; then
	src=$tmp/linux-source-$series
	ok=0
	for p in "$here"/patches/linux-6.12/*.patch; do
		patch -d "$src" -p1 --forward --batch --quiet <"$p" >>"$log" 2>&1 ||
			{ ok=1; echo "${p##*/} failed" >>"$log"; }
	done
	[ "$ok" = 0 ] || cat "$log" >&2
	result $ok "patch series applies to linux-source-$series $AMDQP_KPKGVER"
	cmp -s "$src/drivers/gpu/drm/amd/include/amdkfd_qctl.h" \
		"$here/include/amdkfd_qctl.h"
	result $? "amdkfd_qctl.h: the patch's and kfd-glue/include's are identical"

	# checkpatch: only the MAINTAINERS reminder for new files is accepted
	# (drivers/gpu/drm/amd/ is already covered by the AMD KFD entry).
	ok=0
	for p in "$here"/patches/linux-6.12/*.patch; do
		perl "$src/scripts/checkpatch.pl" --strict --no-tree -q "$p" \
			>"$tmp/cp.log" 2>&1
		bad=$(grep -E '^(ERROR|WARNING|CHECK):' "$tmp/cp.log" |
		      grep -vc 'does MAINTAINERS need updating')
		if [ "$bad" != 0 ]; then
			ok=1
			cat "$tmp/cp.log" >&2
		fi
	done
	result $ok "checkpatch --strict clean: kfd-glue/patches/linux-6.12"
	ok=0
	for f in kmod/kfd/*.c kfd-glue/include/*.h; do
		perl "$src/scripts/checkpatch.pl" --strict --no-tree -q \
			--ignore FILE_PATH_CHANGES,NEW_TYPEDEFS -f "$f" >"$tmp/cp.log" 2>&1 ||
			{ ok=1; cat "$tmp/cp.log" >&2; }
	done
	result $ok "checkpatch --strict clean: kmod/kfd, kfd-glue/include"
else
	cat "$log" >&2
	fail "extract $tarball (install linux-source-$series=$AMDQP_KPKGVER)"
fi

# --- patched amdgpu ------------------------------------------------------
start=$(date +%s)
if ko=$("$here/build-amdgpu.sh" | tail -n 1) && [ -s "$ko" ]; then
	pass "patched amdgpu.ko built ($(($(date +%s) - start)) s): $ko"
else
	fail "patched amdgpu.ko builds (kfd-glue/build-amdgpu.sh)"
	ko=
fi
if [ -n "$ko" ]; then
	n=$(nm "$ko" 2>/dev/null | grep -c ' __ksymtab_kfd_qctl_')
	ns=$(strings -a "$ko" | grep -cx AMDKFD_QCTL)
	[ "$n" -ge 10 ] && [ "$ns" -ge "$n" ]
	result $? "amdgpu.ko exports the kfd_qctl_* API in namespace AMDKFD_QCTL ($n symbols)"
	# grep -c, not -q: an early exit would fail the pipe (pipefail).
	n=$(nm "$ko" 2>/dev/null | grep -c ' __ksymtab_kfd_qctl_set_cu_mask$')
	[ "$n" = 1 ]
	result $? "amdgpu.ko exports kfd_qctl_set_cu_mask (patch 0005: CONFINE through kfd)"
fi

# --- amdqp.ko ------------------------------------------------------------
amdqp=$repo/kmod/amdqp.ko
if [ -s "$amdqp" ]; then
	ns=$(modinfo -F import_ns "$amdqp")
	deps=$(modinfo -F depends "$amdqp")
	echo "$ns" | grep -qx AMDKFD_QCTL && ! echo "$deps" | grep -qw amdgpu
	result $? "amdqp.ko imports AMDKFD_QCTL and has no link-time dependency on amdgpu"
else
	fail "kmod/amdqp.ko exists (run make modules first)"
fi

# --- VM test ------------------------------------------------------------
kfdtest=$work/kfdtest
if gcc -static -O2 -Wall -Wextra -Werror -I"$repo/uapi" -o "$kfdtest" \
	"$here/vmtest/kfdtest.c" 2>"$tmp/cc.log"; then
	pass "build static vmtest/kfdtest"
else
	cat "$tmp/cc.log" >&2
	fail "build static vmtest/kfdtest"
	kfdtest=
fi

# --- ROCr smoke programs and the tagging layer (dynamic: run-vm.sh --dyn) --
# Configured every time: a cache from before rocr-smoke existed would not
# pick the folder up. The env file names what was built.
userbuild=${AMDQP_USER_BUILD:-$repo/build/user}
rocr_env=$userbuild/rocr-smoke.env
rocr_vm=()
rocr_runs=0
rm -f "$rocr_env"
ROCR_SMOKE='' ROCR_SMOKE_TOOL='' ROCR_SMOKE_PRELOAD=''
# shellcheck source=/dev/null
if cmake -S "$repo" -B "$userbuild" -DAMDQP_WERROR=ON >"$tmp/cmake.log" 2>&1 &&
   [ -f "$rocr_env" ] && . "$rocr_env" &&
   cmake --build "$userbuild" -j"$(nproc)" \
	--target amdqp-rocr-smoke amdqp-rocr-smoke-tool >>"$tmp/cmake.log" 2>&1; then
	# Which runtime the VM gets: ldd's answer is what --dyn carries.
	rt=$(readlink -f "$(ldd "$ROCR_SMOKE" | awk '/libhsa-runtime64/ { print $3 }')")
	pkg=$(dpkg -S "$rt" 2>/dev/null | cut -d: -f1)
	[ -z "$pkg" ] || pkg="$pkg $(dpkg-query -W -f='${Version}' "$pkg")"
	pass "build rocr-smoke, linked to $rt (${pkg:-no Debian package})"
	g=/opt/amdqp-rocr
	rocr_vm=(--dyn "$ROCR_SMOKE:$g/amdqp-rocr-smoke"
		--dyn "$ROCR_SMOKE_TOOL:$g/libamdqp-rocr-smoke-tool.so"
		--file "$here/vmtest/rocr.sh:/files/rocr.sh"
		--env "ROCR_SMOKE=$g/amdqp-rocr-smoke"
		--env "ROCR_SMOKE_TOOL=$g/libamdqp-rocr-smoke-tool.so"
		--out-optional "/results/rocr.jsonl:$work/rocr.jsonl")
	rocr_runs=3
	if [ -z "$ROCR_SMOKE_PRELOAD" ]; then
		pass "build libamdqp-preload.so # SKIP not part of the build (libuser/preload)"
	elif cmake --build "$userbuild" -j"$(nproc)" --target amdqp-preload \
		>>"$tmp/cmake.log" 2>&1; then
		pass "build libamdqp-preload.so"
		rocr_vm+=(--dyn "$ROCR_SMOKE_PRELOAD:$g/libamdqp-preload.so"
			--env "ROCR_SMOKE_PRELOAD=$g/libamdqp-preload.so")
		rocr_runs=7
	else
		tail -30 "$tmp/cmake.log" >&2
		fail "build libamdqp-preload.so (cmake --build $userbuild --target amdqp-preload)"
	fi
else
	tail -30 "$tmp/cmake.log" >&2
	fail "build rocr-smoke in $userbuild (log above; needs libhsa-runtime-dev, nlohmann-json3-dev)"
fi
rm -f "$work/rocr.jsonl"

if [ -n "$ko" ] && [ -s "$amdqp" ] && [ -n "$kfdtest" ]; then
	vmstart=$(date +%s)
	selftests/vm/run-vm.sh --mem 2048 --timeout "${AMDQP_KFD_VM_TIMEOUT:-900}" \
		--stock-deps amdgpu \
		--module-file "$ko" --module-file "$amdqp" \
		--file "$kfdtest:/files/kfdtest" \
		--file "$here/vmtest/guest.sh:/files/guest.sh" \
		"${rocr_vm[@]}" \
		--out "/results/kfd.tap:$tmp/kfd.tap" \
		--dmesg "$work/vm-dmesg.txt" \
		-- sh /files/guest.sh /results/kfd.tap >"$work/vm-console.txt" 2>&1
	rc=$?
	if [ -s "$tmp/kfd.tap" ]; then
		while IFS= read -r line; do
			case "$line" in
			"ok - "*) results+=("ok - vm: ${line#ok - }") ;;
			"not ok - "*) results+=("not ok - vm: ${line#not ok - }") ;;
			esac
		done <"$tmp/kfd.tap"
	else
		tail -40 "$work/vm-console.txt" >&2
		fail "vm: guest produced results (run-vm.sh exit $rc)"
	fi
	if [ "$rocr_runs" != 0 ]; then
		n=$(grep -c '^{' "$work/rocr.jsonl" 2>/dev/null)
		[ "${n:-0}" = "$rocr_runs" ]
		result $? "vm: rocr.sh: all $rocr_runs ROCr programs reported (${n:-0}; build/kfd-glue/rocr.jsonl)"
	fi
	[ "$rc" = 0 ] || tail -60 "$work/vm-console.txt" >&2
	result "$rc" "vm: run clean, no oops/BUG/WARNING in dmesg (run-vm.sh exit $rc, $(($(date +%s) - vmstart)) s; log build/kfd-glue/vm-console.txt)"
else
	fail "vm: prerequisites (amdgpu.ko, kmod/amdqp.ko, kfdtest)"
fi

finish

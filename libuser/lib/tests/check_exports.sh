#!/bin/sh
# SPDX-License-Identifier: MIT
# libamdqp.so exports its API and nothing else: C functions amdqp_*, C++
# symbols in namespace amdqp, and the template instances and typeinfo the
# C++ API needs. Usage: check_exports.sh LIBRARY
set -eu
lib=$1
bad=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBR]$/ {print $3}' |
	grep -v -E '^amdqp_|^_ZN5amdqp|^_ZNK5amdqp|^_ZT[ISV]N5amdqp|^_ZThn[0-9]+_N5amdqp' || true)
if [ -n "$bad" ]; then
	echo "symbols exported outside the API:" >&2
	echo "$bad" >&2
	exit 1
fi
for sym in amdqp_open amdqp_get_queues amdqp_suspend_below amdqp_events_read amdqp_strerror; do
	nm -D --defined-only "$lib" | grep -q " T $sym\$" || { echo "missing $sym" >&2; exit 1; }
done
# Every function of amdqp/activity.hpp with no body in the header (those
# with one are compiled into the caller and need no export).
exported=$(nm -DC --defined-only "$lib")
for fn in 'activity::runtime_dir' 'activity::socket_path(' 'activity::untrusted_dir_reason(' \
	'activity::daemon_status(' 'activity::Page::adopt(' 'activity::problem_name(' \
	'activity::scan(' 'activity::Snapshot::group' 'activity::PageError::PageError(' \
	'activity::Page::open(' 'activity::Page::open_path(' 'activity::Page::liveness() const' \
	'activity::Page::snapshot() const' 'activity::Page::read_index(' \
	'activity::Page::read_indexes(' \
	'activity::Page::send_coop(' 'activity::Page::wait_coop(' \
	'activity::Page::request_coop(' 'activity::Page::renew_lease(' \
	'activity::Page::Page(amdqp::activity::Page&&)' 'activity::Page::~Page()' \
	'activity::Page::operator=('; do
	printf '%s\n' "$exported" | grep -qF " T amdqp::$fn" || { echo "missing amdqp::$fn" >&2; exit 1; }
done
soname=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = "libamdqp.so.$2" ] || { echo "SONAME is '$soname', want libamdqp.so.$2" >&2; exit 1; }
echo "exports ok, SONAME $soname"

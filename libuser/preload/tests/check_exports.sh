#!/bin/sh
# SPDX-License-Identifier: MIT
# The tagging layer's libraries export their entry points and nothing else:
# above all no hsa_* name (a lookup of the runtime's own functions must never
# land in the layer) and no libamdqp or C++ runtime symbol.
# Usage: check_exports.sh LIBAMDQP_PRELOAD LIBAMDQP_ROCPROFILER
set -eu
check() {
	lib=$1
	shift
	got=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[A-Za-z]$/ && $2 != "A" {print $3}' | sort)
	want=$(printf '%s\n' "$@" | sort)
	if [ "$got" != "$want" ]; then
		echo "$lib exports:" >&2
		echo "$got" >&2
		echo "expected exactly:" >&2
		echo "$want" >&2
		exit 1
	fi
	if nm -D --defined-only "$lib" | grep -q ' hsa_'; then
		echo "$lib exports an hsa_* name" >&2
		exit 1
	fi
}
check "$1" OnLoad OnUnload amdqp_preload_v1_instance ioctl
check "$2" amdqp_preload_v1_instance rocprofiler_configure
echo "exports ok"

#!/bin/sh
# SPDX-License-Identifier: MIT
# The stand-in exports exactly the names of its export list, all in ROCr's
# version node ROCR_1, and nothing else (no C++ or helper symbols).
# usage: check_exports.sh LIBRARY EXPORTS_MAP
set -eu
lib=$1
map=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

grep -E '^ +hsa_[a-z0-9_]+;' "$map" | tr -d ' ;' | sort >"$tmp/want"
# Defined dynamic symbols: value not 0, or section not *UND*.
objdump -T "$lib" | awk '$0 ~ /^[0-9a-f]+ / && $0 !~ /\*UND\*/ {print $(NF-1), $NF}' |
	grep -v '^ROCR_1 ROCR_1$' >"$tmp/have.ver" || true
awk '{print $2}' "$tmp/have.ver" | sort >"$tmp/have"
if ! diff -u "$tmp/want" "$tmp/have"; then
	echo "check_exports: exported names differ from $map" >&2
	exit 1
fi
if awk '$1 != "ROCR_1" {bad=1} END {exit !bad}' "$tmp/have.ver"; then
	echo "check_exports: symbols outside ROCR_1:" >&2
	awk '$1 != "ROCR_1"' "$tmp/have.ver" >&2
	exit 1
fi
soname=$(objdump -p "$lib" | awk '$1 == "SONAME" {print $2}')
if [ "$soname" != "libhsa-runtime64.so.1" ]; then
	echo "check_exports: SONAME is '$soname'" >&2
	exit 1
fi
echo "check_exports: $(wc -l <"$tmp/have") names, all ROCR_1, SONAME $soname"

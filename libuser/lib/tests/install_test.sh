#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs libamdqp into a temporary prefix with `cmake --install`, then
# builds and runs programs against it the two ways users do: pkg-config and
# find_package(amdqp). Nothing may come from the source or build tree.
# Usage: install_test.sh BUILD_DIR WORK_DIR CONSUMER_SRC VERSION CC CXX
set -eu
build=$1 work=$2 src=$3 version=$4 cc=$5 cxx=$6
major=${version%%.*}
prefix=$work/prefix

rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$prefix" --component amdqp >"$work/install.log"

so=$(find "$prefix" -name "libamdqp.so.$major" | head -n1)
[ -n "$so" ] || { echo "libamdqp.so.$major not installed" >&2; exit 1; }
libdir=$(dirname "$so")
for f in "$libdir/libamdqp.so" "$libdir/libamdqp.a" "$libdir/pkgconfig/amdqp.pc" \
	"$libdir/cmake/amdqp/amdqpConfig.cmake" "$libdir/cmake/amdqp/amdqpConfigVersion.cmake" \
	"$prefix/include/amdqp/amdqp.h" "$prefix/include/amdqp/amdqp.hpp" \
	"$prefix/include/amdqp/hint.h" "$prefix/include/amdqp/uapi/linux/amdqp.h"; do
	[ -e "$f" ] || { echo "not installed: $f" >&2; exit 1; }
done

export AMDQP_DEVICE=/nonexistent/amdqp
export PKG_CONFIG_PATH="$libdir/pkgconfig"
[ "$(pkg-config --modversion amdqp)" = "$version" ] || { echo "amdqp.pc version" >&2; exit 1; }
flags=$(pkg-config --cflags --libs amdqp)
case "$flags" in *"$prefix"*) ;; *) echo "amdqp.pc does not point into $prefix: $flags" >&2; exit 1;; esac

# shellcheck disable=SC2086 # flags are words
"$cc" -std=c11 -Wall -Werror -o "$work/c_prog" "$src/main.c" $flags
LD_LIBRARY_PATH=$libdir "$work/c_prog" "$version"
# shellcheck disable=SC2086
"$cxx" -std=c++20 -Wall -Werror -o "$work/cxx_prog" "$src/main.cpp" $flags
LD_LIBRARY_PATH=$libdir "$work/cxx_prog" "$version"

cmake -S "$src" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$prefix" \
	-DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
	-DAMDQP_EXPECT_VERSION="$version" >"$work/consumer.log"
cmake --build "$work/consumer" >>"$work/consumer.log"
"$work/consumer/consumer_c" "$version"
"$work/consumer/consumer_cxx" "$version"
"$work/consumer/consumer_static" "$version"
if readelf -d "$work/consumer/consumer_static" | grep -q 'libamdqp\.so'; then
	echo "consumer_static links libamdqp.so" >&2
	exit 1
fi
echo "install test ok"

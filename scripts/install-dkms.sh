#!/bin/bash
# Register, build and install amdqp with DKMS for the running kernel.
set -euo pipefail
cd "$(dirname "$0")/.."
ver=$(cat VERSION)
if [[ $EUID -ne 0 ]]; then
	echo "error: run as root (dkms installs into /usr/src and /lib/modules)" >&2
	exit 1
fi
command -v dkms >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y dkms
src=/usr/src/amdqp-$ver
rm -rf "$src"
mkdir -p "$src"
mkdir -p "$src/kfd-glue"
cp -r Kbuild Makefile dkms.conf VERSION kmod uapi scripts "$src"/
cp -r kfd-glue/include "$src/kfd-glue/"
dkms remove -m amdqp -v "$ver" --all >/dev/null 2>&1 || true
dkms add -m amdqp -v "$ver"
dkms build -m amdqp -v "$ver"
dkms install -m amdqp -v "$ver"
echo "amdqp $ver installed; load with: modprobe amdqp"

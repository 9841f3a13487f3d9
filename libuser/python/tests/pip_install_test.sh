#!/bin/sh
# SPDX-License-Identifier: MIT
# The package installs offline into a venv the way the README says, and the
# installed copy finds libamdqp by its soname.
# Usage: pip_install_test.sh PYTHON PACKAGE_SRC WORK_DIR LIBAMDQP_DIR
set -eu
python=$1 src=$2 work=$3 libdir=$4

if ! "$python" -c 'import setuptools, wheel' 2>/dev/null; then
	echo "SKIP: $python lacks setuptools or wheel (apt-get install python3-setuptools python3-wheel)"
	exit 77
fi
rm -rf "$work"
mkdir -p "$work"
# A copy, so that the in-tree build leaves nothing in the source folder.
cp -r "$src" "$work/src"
rm -rf "$work/src/tests" "$work/src/build" "$work/src"/*.egg-info
"$python" -m venv --system-site-packages "$work/venv"
"$work/venv/bin/python" -m pip install --no-index --no-build-isolation --no-cache-dir \
	--disable-pip-version-check --quiet "$work/src"

cd "$work"
unset AMDQP_LIBRARY PYTHONPATH
LD_LIBRARY_PATH=$libdir AMDQP_DEVICE=/nonexistent/amdqp "$work/venv/bin/python" - "$work/venv" <<'PY'
import sys
import amdqp

assert amdqp.__file__.startswith(sys.argv[1]), amdqp.__file__
assert amdqp.library_version() == amdqp.__version__
with amdqp.busy():
    pass
try:
    amdqp.list_queues()
except amdqp.NoModuleError as e:
    assert "modprobe amdqp" in str(e), str(e)
    print("pip install ok:", e)
else:
    raise SystemExit("list_queues() did not fail without /dev/amdqp")
PY

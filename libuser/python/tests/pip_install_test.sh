#!/bin/sh
# SPDX-License-Identifier: MIT
# The README's own Python install lines, run exactly as written (taken from
# README.md, not retyped here) in a fresh venv without network: only what
# Debian's python3-venv puts in a new venv (pip, setuptools, no wheel) and
# Debian's wheel file (python3-wheel-whl), which the README installs.
# Then the installed copy finds libamdqp by its soname.
# Usage: pip_install_test.sh REPO_ROOT WORK_DIR LIBAMDQP_DIR
set -eu
root=$(readlink -f "$1") work=$2 libdir=$(readlink -f "$3")
clean_path=/usr/local/bin:/usr/bin:/bin

if ! env -i PATH=$clean_path python3 -c 'import ensurepip, venv; assert ensurepip.version()' 2>/dev/null; then
	echo "SKIP: python3 in $clean_path cannot make a venv (apt-get install python3-venv)"
	exit 77
fi
if ! ls /usr/share/python-wheels/wheel-*.whl >/dev/null 2>&1; then
	echo "SKIP: no Debian wheel file in /usr/share/python-wheels (apt-get install python3-wheel-whl)"
	[ "${CI:-}" = true ] && exit 1
	exit 77
fi
rm -rf "$work"
mkdir -p "$work/libuser"
# A copy, so that the build leaves nothing in the source folder.
cp -r "$root/libuser/python" "$work/libuser/python"
rm -rf "$work/libuser/python/tests" "$work/libuser/python/build" \
	"$work/libuser/python"/*.egg-info

# The README's lines: the ```sh block under "Python bindings", comments
# and blank lines dropped.
# shellcheck disable=SC2016  # backquotes of the Markdown, not the shell
sed -n '/^## Python bindings/,/^## /p' "$root/README.md" |
	sed -n '/^```sh$/,/^```$/p' | sed '/^```/d; s/[[:space:]]*#.*$//; /^[[:space:]]*$/d' \
	>"$work/readme-lines.sh"
echo "README lines:"
sed 's/^/  /' "$work/readme-lines.sh"
grep -q 'pip install .*\./libuser/python' "$work/readme-lines.sh" || {
	echo "FAIL: no 'pip install ... ./libuser/python' line in README.md's Python bindings block"
	exit 1
}

# A fresh machine: the venv the README makes (under HOME), no index, no
# cache, no user configuration, Debian's python3 first in PATH.
cd "$work"
mkdir -p "$work/home"
cp "$work/readme-lines.sh" "$work/run.sh"
# shellcheck disable=SC2016  # expanded by the shell that runs run.sh
echo 'python -c "import sys; print(sys.prefix)" >"$PREFIX_OUT"' >>"$work/run.sh"
env -i PATH=$clean_path HOME="$work/home" PREFIX_OUT="$work/prefix" \
	PIP_NO_INDEX=1 PIP_NO_CACHE_DIR=1 PIP_CONFIG_FILE=/dev/null \
	PIP_DISABLE_PIP_VERSION_CHECK=1 \
	bash -eux "$work/run.sh"
venv=$(cat "$work/prefix")
case "$venv" in
"$work"/home/*) ;;
*) echo "FAIL: the README's lines left no venv active under HOME (python is $venv)"; exit 1 ;;
esac

unset AMDQP_LIBRARY PYTHONPATH
LD_LIBRARY_PATH=$libdir AMDQP_DEVICE=/nonexistent/amdqp "$venv/bin/python" - "$venv" <<'PY'
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

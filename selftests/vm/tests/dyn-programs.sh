#!/bin/bash
# Dynamically linked programs in the test VM (run-vm.sh --dyn, --dyn-dir,
# --python): builds a small C++ program with a private shared library, a
# dlopen()ed plugin and a build-tree-like folder, boots the VM once and
# checks that each runs there. Output is TAP; exit status 0 when all pass.
#
#   selftests/vm/tests/dyn-programs.sh        (needs g++, qemu, the pinned kernel)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
runvm="$here/../run-vm.sh"
cxx="${CXX:-g++}"
command -v "$cxx" >/dev/null || { echo "1..0 # SKIP no C++ compiler ($cxx)"; exit 0; }

w="$(mktemp -d "${TMPDIR:-/tmp}/amdqp-dyn-test.XXXXXX")"
trap 'rm -rf "$w"' EXIT
mkdir -p "$w/lib" "$w/plug" "$w/tree/bin" "$w/tree/lib" "$w/gone"

# A private library found through a RUNPATH under /tmp on the host: the
# guest hides /tmp, so it must arrive through /etc/ld.so.cache.
cat >"$w/greet.cpp" <<'CPP'
#include <string>
std::string greet(int n) { return "hello " + std::to_string(n * 6) + " from libgreet"; }
CPP
cat >"$w/hello.cpp" <<'CPP'
#include <dlfcn.h>
#include <iostream>
#include <string>
std::string greet(int n);
int main(int argc, char **argv) {
    std::cout << "hello: " << greet(7) << std::endl;
    if (argc < 2) return 0;
    void *h = dlopen(argv[1], RTLD_NOW);
    if (!h) { std::cout << "plugin: " << dlerror() << std::endl; return 3; }
    auto fn = reinterpret_cast<double (*)(double)>(dlsym(h, "plug_root"));
    if (!fn) return 4;
    std::cout << "plugin: root " << fn(1764.0) << std::endl;
    return 0;
}
CPP
cat >"$w/plug.cpp" <<'CPP'
#include <cmath>
#include <vector>
extern "C" double plug_root(double x) {
    volatile double v = x;
    std::vector<double> r{std::sqrt(v)};
    return r.at(0);
}
CPP
cat >"$w/tree.cpp" <<'CPP'
#include <iostream>
#include <string>
std::string tree_name();
int main() { std::cout << "tree: " << tree_name() << std::endl; }
CPP
cat >"$w/treelib.cpp" <<'CPP'
#include <string>
std::string tree_name() { return std::string("lib") + "tree"; }
CPP
cat >"$w/gonelib.cpp" <<'CPP'
int gone() { return 1; }
CPP
cat >"$w/usegone.cpp" <<'CPP'
int gone();
int main() { return gone(); }
CPP
cat >"$w/guest.sh" <<'SH'
/opt/dyn/hello /opt/plug/libplug.so; echo "status: hello $?"
/opt/tree/bin/tprog; echo "status: tree $?"
if [ -x /usr/bin/python3 ]; then
	python3 -c 'import ctypes, hashlib, json, ssl, subprocess
libc = ctypes.CDLL(None)
print("python:", json.dumps({"pid_ok": libc.getpid() > 0, "sha": hashlib.sha256(b"amdqp").hexdigest()[:8]}))'
	echo "status: python $?"
fi
SH

cc() { "$cxx" -std=c++20 -O1 -Wall -Wextra -Werror "$@"; }
cc -shared -fPIC -o "$w/lib/libgreet.so" "$w/greet.cpp"
cc -o "$w/hello" "$w/hello.cpp" -L"$w/lib" -Wl,-rpath,"$w/lib" -lgreet -ldl
cc -shared -fPIC -o "$w/plug/libplug.so" "$w/plug.cpp" -Wl,--no-as-needed -lm
cc -shared -fPIC -o "$w/tree/lib/libtree.so" "$w/treelib.cpp"
# shellcheck disable=SC2016  # $ORIGIN is the loader's, not the shell's
cc -o "$w/tree/bin/tprog" "$w/tree.cpp" -L"$w/tree/lib" -Wl,-rpath,'$ORIGIN/../lib' -ltree
cc -shared -fPIC -o "$w/gone/libgone.so" "$w/gonelib.cpp"
cc -o "$w/usegone" "$w/usegone.cpp" -L"$w/gone" -lgone
rm "$w/gone/libgone.so"

py=()
have_py=0
if [ -x "${AMDQP_VM_PYTHON:-/usr/bin/python3}" ]; then
	py=(--python)
	have_py=1
fi

echo "1..5"
n=0
ok() { # ok CONDITION-STATUS DESCRIPTION
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi
}
failed=0

# A library ldd cannot find: a harness error before the VM boots.
set +e
out="$(bash "$runvm" --dyn "$w/usegone:/opt/usegone" -- true 2>&1)"
rc=$?
set -e
printf '%s\n' "$out" | sed 's/^/# /'
[ "$rc" = 125 ] && grep -q 'FAIL: --dyn: .*usegone needs libgone.so' <<<"$out"
ok $? "--dyn with a library ldd does not find fails with status 125 naming it"

log="$w/console.log"
set +e
bash "$runvm" --timeout 300 \
	--dyn "$w/hello:/opt/dyn/hello" \
	--dyn "$w/plug/libplug.so:/opt/plug/libplug.so" \
	--dyn-dir "$w/tree:/opt/tree" \
	"${py[@]}" \
	--file "$w/guest.sh:/files/dyn-guest.sh" \
	-- /bin/sh /files/dyn-guest.sh >"$log" 2>&1
rc=$?
set -e
sed 's/^/# /' "$log"
[ "$rc" = 0 ] || echo "# run-vm.sh exited with status $rc"

grep -qx 'hello: hello 42 from libgreet' "$log"
ok $? "C++ program with a private library (host RUNPATH under /tmp) runs"
grep -qx 'plugin: root 42' "$log" && grep -qx 'status: hello 0' "$log"
ok $? "--dyn of a dlopen()ed plugin: it loads with its own dependencies"
grep -qx 'tree: libtree' "$log" && grep -qx 'status: tree 0' "$log"
ok $? "--dyn-dir carries a build tree's programs and libraries"
if [ "$have_py" = 1 ]; then
	want="python: {\"pid_ok\": true, \"sha\": \"$(printf amdqp | sha256sum | cut -c1-8)\"}"
	grep -qxF "$want" "$log" && grep -qx 'status: python 0' "$log"
	ok $? "--python: the interpreter with ctypes, hashlib, ssl, json runs"
else
	n=$((n + 1))
	echo "ok $n - --python # SKIP no ${AMDQP_VM_PYTHON:-/usr/bin/python3} on the host"
fi
exit "$failed"

#!/bin/bash
# amdqpctl in the test VM, as on a host: a dynamically linked build carried
# by run-vm.sh --dyn, first without the module, then with amdqp.ko and the
# sim loaded and two processes holding sim queues (high and low priority).
# Output is TAP (from the guest); exit status 0 when all pass, 77 when the
# VM cannot run here (no QEMU, no cached kernel, no built modules) - a
# failure instead when AMDQP_VM_REQUIRED=1 (CI).
#
#   selftests/vm/tests/amdqpctl-vm.sh [AMDQPCTL]
#
# AMDQPCTL defaults to build/user/tools/amdqpctl/amdqpctl. The modules come
# from $AMDQP_KO_DIR (amdqp.ko and sim/amdqp_sim.ko), default the checked
# build ($AMDQP_BUILDS/build-6.12/kmod), else kmod/ of the tree.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/lib.sh
. "$here/../../../scripts/lib.sh"
runvm="$here/../run-vm.sh"

skip() {
	if [ "${AMDQP_VM_REQUIRED:-0}" = 1 ]; then
		echo "1..1"
		echo "not ok 1 - the VM test has its inputs: $* (AMDQP_VM_REQUIRED=1)"
		exit 1
	fi
	echo "1..0 # SKIP $*"
	exit 77
}

ctl="${1:-$AMDQP_ROOT/build/user/tools/amdqpctl/amdqpctl}"
[ -x "$ctl" ] || skip "no amdqpctl at $ctl (build it first)"
command -v "${AMDQP_VM_QEMU:-qemu-system-x86_64}" >/dev/null || skip "no QEMU"
[ -f "$AMDQP_CACHE/vm-kernel-$(amdqp_ver_path "$AMDQP_KPKGVER")/.complete" ] ||
	skip "the VM kernel is not cached (scripts/fetch-kernel.sh)"
kodir="${AMDQP_KO_DIR:-}"
if [ -z "$kodir" ]; then
	for d in "$AMDQP_BUILDS/build-6.12/kmod" "$AMDQP_ROOT/kmod"; do
		[ -f "$d/amdqp.ko" ] && [ -f "$d/sim/amdqp_sim.ko" ] && { kodir="$d"; break; }
	done
fi
if [ -z "$kodir" ] || [ ! -f "$kodir/amdqp.ko" ] || [ ! -f "$kodir/sim/amdqp_sim.ko" ]; then
	skip "no built amdqp.ko and sim/amdqp_sim.ko (make modules, or set AMDQP_KO_DIR)"
fi
cxx="${CXX:-g++}"
command -v "$cxx" >/dev/null || skip "no C++ compiler ($cxx)"

w="$(mktemp -d "${TMPDIR:-/tmp}/amdqpctl-vm.XXXXXX")"
trap 'rm -rf "$w"' EXIT

# A process that owns one sim queue until it is killed: what amdqpctl
# lists, reprioritises and suspends.
cat >"$w/simq.cpp" <<'CPP'
#include <fcntl.h>
#include <linux/amdqp_sim.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: simq GPU_ID PRIORITY READY_FILE\n");
        return 2;
    }
    int fd = open("/dev/amdqp_sim", O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        std::perror("simq: /dev/amdqp_sim");
        return 1;
    }
    amdqp_sim_create_queue c{};
    c.gpu_id = static_cast<unsigned>(std::atoi(argv[1]));
    c.priority = static_cast<unsigned>(std::atoi(argv[2]));
    if (ioctl(fd, AMDQP_SIM_IOC_CREATE_QUEUE, &c) < 0) {
        std::perror("simq: CREATE_QUEUE");
        return 1;
    }
    if (FILE* f = std::fopen(argv[3], "w")) {
        std::fprintf(f, "%u\n", c.queue_id);
        std::fclose(f);
    }
    for (;;)
        pause();
}
CPP
"$cxx" -std=c++20 -O1 -Wall -Wextra -Werror -I"$AMDQP_ROOT/uapi" -o "$w/simq" "$w/simq.cpp"

cat >"$w/guest.sh" <<'SH'
n=0
fails=0
check() { # check DESCRIPTION COMMAND...
	desc="$1"
	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n - $desc"
	else
		echo "not ok $n - $desc"
		fails=$((fails + 1))
	fi
}
rc_is() { # rc_is STATUS COMMAND...: the command exits with STATUS
	want="$1"
	shift
	"$@" >/tmp/out 2>/tmp/err
	got=$?
	[ "$got" = "$want" ] && return 0
	echo "# exit status $got, wanted $want: $*"
	sed 's/^/# out: /' /tmp/out
	sed 's/^/# err: /' /tmp/err
	return 1
}
has() { grep -q "$1" /tmp/out || { echo "# no '$1' in:"; sed 's/^/# /' /tmp/out; return 1; }; }
has_err() { grep -q "$1" /tmp/err || { echo "# no '$1' on stderr:"; sed 's/^/# /' /tmp/err; return 1; }; }
wait_file() { i=0; while [ ! -s "$1" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done; [ -s "$1" ]; }

echo "1..25"
check "list without the module: status 3" rc_is 3 amdqpctl list
check "the message names the module" has_err 'modprobe amdqp'
check "run passes the exit status through" rc_is 7 amdqpctl run --priority low -- sh -c 'exit 7'

insmod /modules/amdqp.ko && insmod /modules/amdqp_sim.ko &&
	echo "4201 hws" >/sys/kernel/debug/amdqp_sim/new_device || echo "# module setup failed"
check "status with the module: status 0" rc_is 0 amdqpctl status --json
check "status names the sim device and its mechanism" has '"mechanism": "amdqp"'

simq 4201 12 /tmp/high.ready & high=$!
simq 4201 2 /tmp/low.ready & low=$!
wait_file /tmp/high.ready && wait_file /tmp/low.ready || echo "# the queue holders did not start"
check "list --json of the low process: status 0" rc_is 0 amdqpctl list --json --pid "$low"
check "it is listed at priority 2" has '"priority": 2'
check "with the default ceiling (normal)" has '"ceiling": 7'

amdqpctl suspend --below 8 --gpu 4201 >/tmp/hold.out 2>/tmp/hold.err & hold=$!
i=0
until grep -q suspended /tmp/hold.out 2>/dev/null || [ $i -gt 100 ]; do sleep 0.1; i=$((i + 1)); done
amdqpctl list --json --pid "$low" >/tmp/out 2>&1
check "suspend --below 8 takes the low queue off" grep -q '"suspended": true' /tmp/out
amdqpctl list --json --pid "$high" >/tmp/out 2>&1
check "and leaves the high one running" grep -q '"suspended": false' /tmp/out
kill -TERM "$hold"
wait "$hold"
check "suspend exits 0 when interrupted" [ $? = 0 ]
amdqpctl list --json --pid "$low" >/tmp/out 2>&1
check "its exit puts the low queue back" grep -q '"suspended": false' /tmp/out

# Shrink instead of stop (ABI 1.3): the low queue keeps running on 2 CUs.
amdqpctl confine --below 8 --gpu 4201 --cus 2 >/tmp/hold.out 2>/tmp/hold.err & hold=$!
i=0
until grep -q confined /tmp/hold.out 2>/dev/null || [ $i -gt 100 ]; do sleep 0.1; i=$((i + 1)); done
check "confine --below 8 names the low queue" grep -q "confined pid $low " /tmp/hold.out
check "and amdqp.ko shows it confined, not suspended" \
	grep -q "pid $low queue .* running .* CONFINED" /sys/kernel/debug/amdqp/queues
check "the high one is not" sh -c "! grep -q 'pid $high queue .* CONFINED' /sys/kernel/debug/amdqp/queues"
kill -TERM "$hold"
wait "$hold"
check "confine exits 0 when interrupted" [ $? = 0 ]
check "its exit lifts the confinement" sh -c "! grep -q CONFINED /sys/kernel/debug/amdqp/queues"

check "priority lowers a process's queues" rc_is 0 amdqpctl priority "$low" 1
amdqpctl list --json --pid "$low" >/tmp/out 2>&1
check "list shows the new priority" grep -q '"priority": 1' /tmp/out

check "ceiling set grants a uid a level (root)" rc_is 0 amdqpctl ceiling set --uid 4242 high
check "ceiling list shows it" rc_is 0 amdqpctl ceiling list --json
check "with its level" has '"level": 12'
check "ceiling clear removes it" rc_is 0 amdqpctl ceiling clear --uid 4242

# "Every priority" on a kernel that takes 0..15 only: the library adds the
# priority-15 queues by reference.
simq 4201 15 /tmp/top.ready & top=$!
wait_file /tmp/top.ready || echo "# the top queue holder did not start"
amdqpctl suspend --below all --gpu 4201 >/tmp/hold.out 2>/tmp/hold.err & hold=$!
i=0
until grep -q suspended /tmp/hold.out 2>/dev/null || [ $i -gt 100 ]; do sleep 0.1; i=$((i + 1)); done
amdqpctl list --json --pid "$top" >/tmp/out 2>&1
check "suspend --below all takes a priority-15 queue off too" grep -q '"suspended": true' /tmp/out
kill -TERM "$hold"
wait "$hold"
kill -KILL "$top"
wait "$top" 2>/dev/null

amdqpctl watch --json --count 1 --type queue_destroyed >/tmp/watch.out 2>&1 & watcher=$!
sleep 0.5
kill -KILL "$low"
wait "$watcher"
check "watch reports the queue's end as a JSON line" grep -q '"type":"queue_destroyed"' /tmp/watch.out
kill -KILL "$high"
[ "$fails" = 0 ]
SH

log="$w/console.log"
set +e
bash "$runvm" --timeout 300 \
	--module-file "$kodir/amdqp.ko" --module-file "$kodir/sim/amdqp_sim.ko" \
	--dyn "$ctl:/usr/bin/amdqpctl" --dyn "$w/simq:/usr/bin/simq" \
	--file "$w/guest.sh:/files/amdqpctl-guest.sh" \
	-- /bin/sh /files/amdqpctl-guest.sh >"$log" 2>&1
rc=$?
set -e
# The guest's TAP as it is; the rest as comments.
sed -E '/^(1\.\.[0-9]+|(not )?ok [0-9]+ .*)$/!s/^/# /' "$log"
exit "$rc"

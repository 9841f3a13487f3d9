# SPDX-License-Identifier: GPL-2.0
# amdqp top-level Makefile. Kernel modules are built by kbuild (see Kbuild,
# kmod/Kbuild); everything else is driven by scripts/.

include scripts/versions.env

# Modules are built for the machine you are on: the running kernel's
# headers. The test harness (scripts/check.sh, scripts/build-modules.sh)
# passes the pinned Debian headers as KDIR explicitly.
KVER ?= $(shell uname -r)
KDIR ?= /lib/modules/$(KVER)/build
PINNED_KDIR := /usr/src/linux-headers-$(AMDQP_KVER)
PWD := $(CURDIR)

.PHONY: all modules clean check demo demo-mechanism bench bench-trace report install install-dkms uninstall-dkms userspace help

all: modules

help:
	@echo "make modules   build kmod/amdqp.ko and kmod/sim/amdqp_sim.ko for the running"
	@echo "               kernel (KVER=... or KDIR=... for another; the tests use"
	@echo "               scripts/build-modules.sh: the pinned $(AMDQP_KVER) headers)"
	@echo "make check     every test: build, lint, VM selftests, ctest (installs deps)"
	@echo "make demo      the full stack in the VM (amdqpd, tagged HSA programs, sim device)"
	@echo "               -> experiments/out/demo.json"
	@echo "make demo-mechanism  the kernel mechanism alone (amdqp_demo, no daemon)"
	@echo "make bench     control-path benchmark in the VM -> bench/out/control-path.json,"
	@echo "               tagging cost per submission -> bench/out/tagging.json"
	@echo "make report    bench/REPORT.md (+ bench/report/*.png): VM/host benchmarks, the GPU"
	@echo "               measurements of experiments/results, amdqp-sim validation and"
	@echo "               MI308X predictions (scripts/report.sh --help)"
	@echo "make bench-trace  amdqp-trace throughput/memory on a 500 MiB synthetic trace"
	@echo "make install   install the modules into /lib/modules/KVER/extra (default: running kernel)"
	@echo "make install-dkms    register amdqp with DKMS for KVER (rebuilt for new kernels)"
	@echo "make uninstall-dkms  remove amdqp from DKMS"

modules:
	@test -d "$(KDIR)" || { echo "error: kernel headers not found at $(KDIR): install linux-headers-$(KVER), or pass KDIR= (the pinned test headers: scripts/build-modules.sh)" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(PWD) modules

# Objects may come from either headers: clean with whichever exists.
CLEAN_KDIR := $(firstword $(wildcard $(KDIR) $(PINNED_KDIR)))
clean:
	@test -z "$(CLEAN_KDIR)" || $(MAKE) -C $(CLEAN_KDIR) M=$(PWD) clean
	rm -rf build selftests/out experiments/out bench/out

check:
	bash scripts/check.sh

demo:
	bash scripts/demo.sh

# The mechanism alone: experiments/sim-demo's hand-written policy, no daemon.
demo-mechanism:
	bash scripts/demo-mechanism.sh

bench:
	bash scripts/bench.sh

report:
	bash scripts/report.sh

# amdqp-trace throughput and memory on a 500 MiB synthetic ftrace file.
bench-trace:
	cmake -S tools/amdqp-trace -B build/trace-bench -DCMAKE_BUILD_TYPE=Release
	cmake --build build/trace-bench -j2 --target amdqp-trace-bench

install: modules
	$(MAKE) -C $(KDIR) M=$(PWD) modules_install
	depmod -a $(KVER)

install-dkms:
	bash scripts/install-dkms.sh -k $(KVER)

uninstall-dkms:
	bash scripts/install-dkms.sh --uninstall

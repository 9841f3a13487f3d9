# SPDX-License-Identifier: GPL-2.0
# amdqp top-level Makefile. Kernel modules are built by kbuild (see Kbuild,
# kmod/Kbuild); everything else is driven by scripts/.

include scripts/versions.env

KVER ?= $(AMDQP_KVER)
KDIR ?= /usr/src/linux-headers-$(KVER)
PWD := $(CURDIR)

.PHONY: all modules clean check demo bench bench-trace install install-dkms userspace help

all: modules

help:
	@echo "make modules   build kmod/amdqp.ko and kmod/sim/amdqp_sim.ko (KDIR=...)"
	@echo "make check     every test: build, lint, VM selftests, ctest (installs deps)"
	@echo "make demo      boot the VM and show the point of amdqp on the sim device"
	@echo "make bench     control-path benchmark in the VM -> bench/out/control-path.json,"
	@echo "               tagging cost per submission -> bench/out/tagging.json"
	@echo "make bench-trace  amdqp-trace throughput/memory on a 500 MiB synthetic trace"
	@echo "make install   install the modules into /lib/modules/\$$(uname -r)"

modules:
	@test -d "$(KDIR)" || { echo "error: kernel headers not found at $(KDIR); run scripts/deps.sh or pass KDIR=" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(PWD) modules

clean:
	@test ! -d "$(KDIR)" || $(MAKE) -C $(KDIR) M=$(PWD) clean
	rm -rf build selftests/out experiments/out bench/out

check:
	bash scripts/check.sh

demo:
	bash scripts/demo.sh

bench:
	bash scripts/bench.sh

# amdqp-trace throughput and memory on a 500 MiB synthetic ftrace file.
bench-trace:
	cmake -S tools/amdqp-trace -B build/trace-bench -DCMAKE_BUILD_TYPE=Release
	cmake --build build/trace-bench -j2 --target amdqp-trace-bench

install:
	$(MAKE) -C /lib/modules/$(shell uname -r)/build M=$(PWD) modules_install
	depmod -a

install-dkms:
	bash scripts/install-dkms.sh

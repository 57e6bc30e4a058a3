# dma32-demo: build everything from Debian's packages, boot it, measure it.
#
#   make demo    set up the host, build, run the reviewer's demo
#   make test    set up the host, build, run every test (host and guest)
#   make bench   benchmarks (ratios measured in one run)
#   make fuzz    the two fuzzers' long mode (FUZZ_SECONDS=600 each, FUZZ_SEED=)
#   make shell   a busybox shell in the guest
#   make clean   remove build/ (keeps the downloaded QEMU source)
#
#   make test ONLY=REGEX   only the suites whose name (driver/guest/fuzz,
#                          qemu-device/qtest, ...) matches REGEX
#
# Each output knows its real inputs: a second `make test` with nothing
# changed rebuilds nothing; touching a driver file rebuilds the module and
# the initramfs only.

SHELL := /bin/bash
B := build

BZIMAGE   := $(B)/linux/arch/x86/boot/bzImage
QEMU      := $(B)/qemu/build/qemu-system-x86_64
# The same QEMU built with -fsanitize=address,undefined, for the device fuzzer.
QEMU_SAN  := $(B)/qemu/build-san/qemu-system-x86_64
MODULE    := driver/dma32demo.ko
DMA32CTL  := $(B)/guest/dma32ctl
INITRAMFS := $(B)/guest/initramfs.cpio
SETUP     := $(B)/.setup-done
# The debug kernel (KASAN, kmemleak, DMA-API debug, lockdep) that make test
# boots, with the module built against it and its own initramfs.
BZIMAGE_DEBUG   := $(B)/linux-debug/arch/x86/boot/bzImage
MODULE_DEBUG    := $(B)/driver-debug/dma32demo.ko
INITRAMFS_DEBUG := $(B)/guest-debug/initramfs.cpio
# The checkers' test modules, built with the debug kernel, which misbehave
# on purpose (a leak, KASAN reports) for guest-image/tests/host/debug-checkers.sh.
CHECKER_MODULES := $(B)/linux-debug/samples/kmemleak/kmemleak-test.ko \
		   $(B)/linux-debug/mm/kasan/kasan_test_module.ko

REGS_H         := qemu-device/dma32-demo-regs.h
KERNEL_PATCHES := $(sort $(wildcard kernel-patches/*.patch))
QEMU_SOURCES   := $(wildcard qemu-device/*.c qemu-device/*.h) \
		  qemu-device/trace-events qemu-device/graft-into-qemu
DRIVER_SOURCES := $(wildcard driver/*.c driver/*.h driver/uapi/*.h) driver/Kbuild $(REGS_H)
GUEST_FILES    := $(wildcard */tests/guest/*) $(shell find guest-image/rootfs -type f)

.PHONY: all debug setup kernel qemu guest demo test bench fuzz shell clean distclean
.DELETE_ON_ERROR:

# Bad goals and missing checked-in files stop make with one clear line,
# before anything runs.
GOALS := all debug setup kernel qemu guest demo test bench fuzz shell clean distclean
unknown_goals := $(foreach g,$(MAKECMDGOALS),$(if $(findstring /,$(g)),,$(g)))
unknown_goals := $(filter-out $(GOALS),$(unknown_goals))
ifneq ($(unknown_goals),)
$(error unknown target '$(firstword $(unknown_goals))': use one of $(GOALS))
endif
CHECKED_IN := $(REGS_H) $(QEMU_SOURCES) driver/dma32demo.c driver/dma32ctl.c \
	driver/uapi/dma32demo.h driver/Kbuild guest-image/kernel.config \
	guest-image/kernel-debug.config guest-image/init guest-image/build-initramfs \
	$(addprefix scripts/,setup-host lib.sh build-kernel build-qemu build-driver \
	run-guest run-tests demo bench fuzz)
missing := $(filter-out $(wildcard $(CHECKED_IN)),$(CHECKED_IN))
ifneq ($(missing),)
$(error checked-in file '$(firstword $(missing))' is missing: 'git checkout -- $(firstword $(missing))' restores it)
endif

all: $(BZIMAGE) $(QEMU) $(INITRAMFS)
debug: $(BZIMAGE_DEBUG) $(INITRAMFS_DEBUG) $(QEMU_SAN)
setup: $(SETUP)
kernel: $(BZIMAGE)
qemu: $(QEMU)
guest: $(INITRAMFS)

$(SETUP): scripts/setup-host
	@mkdir -p $(B)
	@scripts/setup-host
	@touch $@

$(BZIMAGE): $(KERNEL_PATCHES) guest-image/kernel.config scripts/build-kernel scripts/lib.sh | $(SETUP)
	@scripts/build-kernel
	@touch $@

$(BZIMAGE_DEBUG): $(KERNEL_PATCHES) guest-image/kernel.config guest-image/kernel-debug.config \
		  scripts/build-kernel scripts/lib.sh | $(SETUP)
	@scripts/build-kernel --debug
	@touch $@

$(QEMU): $(QEMU_SOURCES) scripts/build-qemu scripts/lib.sh | $(SETUP)
	@scripts/build-qemu
	@touch $@

# After $(QEMU): both share the extracted, grafted tree.
$(QEMU_SAN): $(QEMU_SOURCES) scripts/build-qemu scripts/lib.sh $(QEMU) | $(SETUP)
	@scripts/build-qemu --sanitizers
	@touch $@

# One recipe makes both the module and the tool (a grouped target).
$(MODULE) $(DMA32CTL) &: $(DRIVER_SOURCES) driver/dma32ctl.c $(BZIMAGE) scripts/build-driver
	@scripts/build-driver
	@touch $(MODULE) $(DMA32CTL)

$(MODULE_DEBUG): $(DRIVER_SOURCES) $(BZIMAGE_DEBUG) scripts/build-driver
	@scripts/build-driver --debug
	@touch $@

$(INITRAMFS): $(MODULE) $(DMA32CTL) guest-image/init guest-image/build-initramfs $(GUEST_FILES) | $(SETUP)
	@echo "==> initramfs ($@)"
	@mkdir -p $(@D)
	@guest-image/build-initramfs $@ --module $(MODULE) --tool $(DMA32CTL)

$(INITRAMFS_DEBUG): $(MODULE_DEBUG) $(DMA32CTL) $(BZIMAGE_DEBUG) guest-image/init \
		    guest-image/build-initramfs $(GUEST_FILES) | $(SETUP)
	@echo "==> initramfs for the debug kernel ($@)"
	@mkdir -p $(@D)
	@guest-image/build-initramfs $@ --module $(MODULE_DEBUG) --tool $(DMA32CTL) \
		$(addprefix --extra-module ,$(CHECKER_MODULES))

demo: all
	@scripts/demo

test: all debug
	@scripts/run-tests $${ONLY:+--only "$$ONLY"}

bench: all
	@scripts/bench

fuzz: debug
	@scripts/fuzz $${FUZZ_SECONDS:+--seconds "$$FUZZ_SECONDS"} $${FUZZ_SEED:+--seed "$$FUZZ_SEED"}

shell: all
	@scripts/run-guest --interactive

clean:
	rm -rf $(filter-out $(B)/qemu-src,$(wildcard $(B)/* $(B)/.[!.]*))
	rm -f driver/*.o driver/*.ko driver/*.mod driver/*.mod.c driver/.*.cmd \
		driver/Module.symvers driver/modules.order

distclean: clean
	rm -rf $(B)

# dma32-demo: build everything from Debian's packages, boot it, measure it.
#
#   make demo    set up the host, build, run the reviewer's demo (ONLY=REGEX:
#                only the scenarios whose name matches); the headline rows
#                run on both guest kernels
#   make report  re-render build/report/ from the last demo's guest results
#   make test    set up the host, build, run every test (host and guest)
#   make check   the host suites that need no kernel or QEMU build (quick)
#   make bench   benchmarks (ratios measured in one run)
#   make fuzz    the two fuzzers' long mode (FUZZ_SECONDS=600 each, FUZZ_SEED=)
#   make mutate  put each fixed driver bug back in turn, run the suites that
#                cover it (ONLY=REGEX: only the mutations whose name matches)
#   make shell   a busybox shell in the guest
#   make clean   remove build/ (keeps the downloaded QEMU source)
#
#   make test ONLY=REGEX   only the suites whose name (driver/guest/fuzz,
#                          qemu-device/qtest, ...) matches REGEX
#   KERNEL=6.12            boot the guest kernel from linux-source-6.12 (and
#                          kernel-patches/6.12/) instead of 6.1, the default:
#                          make test KERNEL=6.12 runs every plain-kernel suite
#                          there (the debug kernel stays 6.1); plain make test
#                          runs the series' suites and the driver's strategy
#                          suite on 6.12 as well
#
# Each output knows its real inputs: a second `make test` with nothing
# changed rebuilds nothing; touching a driver file rebuilds the module and
# the initramfs only.

SHELL := /bin/bash
B := build

# The guest kernels, one per Debian linux-source package, each with its own
# series (kernel-patches/<version>/), tree, module and initramfs: build/linux,
# build/driver, build/guest for 6.1; the same with -6.12 for 6.12 (the
# suffix scripts/lib.sh's kernel_dirs gives).
KERNELS := $(shell sed -e '/^\#/d' scripts/kernel-versions)
DEFAULT_KERNEL := $(firstword $(KERNELS))
KERNEL  ?= $(DEFAULT_KERNEL)
$(if $(filter-out 1,$(words $(KERNEL)))$(filter-out $(KERNELS),$(KERNEL)),\
  $(error KERNEL=$(KERNEL) is not one of: $(KERNELS)))
export DMA32_KERNEL := $(KERNEL)
kernel_suffix = $(if $(filter $(DEFAULT_KERNEL),$(1)),,-$(1))
$(foreach k,$(KERNELS),$(eval BZIMAGE_$(k) := $(B)/linux$(call kernel_suffix,$(k))/arch/x86/boot/bzImage))
$(foreach k,$(KERNELS),$(eval MODULE_$(k) := $(B)/driver$(call kernel_suffix,$(k))/dma32demo.ko))
$(foreach k,$(KERNELS),$(eval INITRAMFS_$(k) := $(B)/guest$(call kernel_suffix,$(k))/initramfs.cpio))
# The one the demo, bench and shell boot.
BZIMAGE   := $(BZIMAGE_$(KERNEL))
MODULE    := $(MODULE_$(KERNEL))
INITRAMFS := $(INITRAMFS_$(KERNEL))
QEMU      := $(B)/qemu/build/qemu-system-x86_64
# The same QEMU built with -fsanitize=address,undefined, for the device fuzzer.
QEMU_SAN  := $(B)/qemu/build-san/qemu-system-x86_64
DMA32CTL  := $(B)/guest/dma32ctl
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
QEMU_SOURCES   := $(wildcard qemu-device/*.c qemu-device/*.h) \
		  qemu-device/trace-events qemu-device/devices.mak qemu-device/graft-into-qemu
# The module's sources, as driver/Kbuild lists them (the tool's are its
# own: DMA32CTL_SOURCES).
UAPI_HEADERS   := driver/uapi/dma32demo.h driver/uapi/dma32demo-stats.h
DRIVER_SOURCES := $(shell scripts/driver-sources) driver/Kbuild $(UAPI_HEADERS) $(REGS_H)
USER_HEADERS   := driver/dma32demo-user.h $(UAPI_HEADERS) $(REGS_H)
DMA32CTL_SOURCES := driver/dma32ctl.c $(USER_HEADERS)
# The driver's test programs (ioctl self-test, fuzzer, stress, register reader), static for
# the guest like the tool.
DRIVER_TESTS   := $(addprefix $(B)/guest/,dma32demo-ioctls dma32demo-fuzz dma32demo-stress \
		  dma32demo-regs dma32demo-ioctls-m32)
# The demo's aging and pressure tool, static for the guest.
PRESSURE       := $(B)/guest/dma32-pressure
# The kernel's own DMA mapping benchmark (tools/testing/selftests/dma/,
# CONFIG_DMA_MAP_BENCHMARK), static, from the default kernel's tree: the
# series' swiotlb-too-big suite maps more than a segment with it (the
# driver never does), and scripts/bench measures with it.
DMA_MAP_BENCHMARK := $(B)/guest/dma_map_benchmark
# What every initramfs carries besides its module.
GUEST_TOOLS    := $(DMA32CTL) $(DRIVER_TESTS) $(PRESSURE) $(DMA_MAP_BENCHMARK)
USER_CFLAGS    := -static -O2 -Wall -Wextra -Werror -I driver -I driver/uapi -I qemu-device
GUEST_FILES    := $(wildcard */tests/guest/*) scripts/ktap_helpers.sh scripts/jget.sh \
		  $(shell find guest-image/rootfs -type f)

# The demo: guest results (raw/), judged into results.json, rendered into
# report.md, the plot and one memory map per boot; make bench's bench.md
# joins report.md when it exists.
REPORT      := $(B)/report
RESULTS     := $(REPORT)/results.json
REPORT_MD   := $(REPORT)/report.md
# No bytecode: nothing of the demo is written outside build/.
DEMO        := PYTHONDONTWRITEBYTECODE=1 python3 -m demo

.PHONY: all kernels debug setup kernel qemu guest demo report check test bench fuzz shell clean distclean
.DELETE_ON_ERROR:

all: $(BZIMAGE) $(QEMU) $(INITRAMFS)
# Both guest kernels: make test and make demo boot each.
kernels: $(foreach k,$(KERNELS),$(BZIMAGE_$(k)) $(INITRAMFS_$(k)))
debug: $(BZIMAGE_DEBUG) $(INITRAMFS_DEBUG) $(QEMU_SAN)
setup: $(SETUP)
kernel: $(BZIMAGE)
qemu: $(QEMU)
guest: $(INITRAMFS)

$(SETUP): scripts/setup-host
	@mkdir -p $(B)
	@scripts/setup-host
	@touch $@

# guest_kernel VERSION: the rules for one guest kernel, its module and its
# initramfs.
define guest_kernel
$(BZIMAGE_$(1)): $(wildcard kernel-patches/$(1)/*.patch) guest-image/kernel.config \
		 $(wildcard guest-image/kernel-$(1).config) scripts/build-kernel scripts/lib.sh | $(SETUP)
	@scripts/build-kernel --version $(1)
	@touch $$@

$(MODULE_$(1)): $(DRIVER_SOURCES) $(BZIMAGE_$(1)) scripts/build-driver scripts/driver-sources scripts/lib.sh
	@scripts/build-driver --version $(1)
	@touch $$@

$(INITRAMFS_$(1)): $(MODULE_$(1)) $(GUEST_TOOLS) guest-image/init guest-image/build-initramfs \
		   $(GUEST_FILES) | $(SETUP)
	@echo "==> initramfs for the $(1) kernel ($$@)"
	@mkdir -p $$(@D)
	@guest-image/build-initramfs $$@ --module $(MODULE_$(1)) $(addprefix --tool ,$(GUEST_TOOLS))
endef
$(foreach k,$(KERNELS),$(eval $(call guest_kernel,$(k))))

$(BZIMAGE_DEBUG): $(wildcard kernel-patches/$(DEFAULT_KERNEL)/*.patch guest-image/kernel-debug-patches/*.patch) \
		  guest-image/kernel.config $(wildcard guest-image/kernel-$(DEFAULT_KERNEL).config) guest-image/kernel-debug.config \
		  scripts/build-kernel scripts/lib.sh | $(SETUP)
	@scripts/build-kernel --debug --version $(DEFAULT_KERNEL)
	@touch $@

$(QEMU): $(QEMU_SOURCES) scripts/build-qemu scripts/lib.sh | $(SETUP)
	@scripts/build-qemu
	@touch $@

# After $(QEMU): both share the extracted, grafted tree.
$(QEMU_SAN): $(QEMU_SOURCES) scripts/build-qemu scripts/lib.sh $(QEMU) | $(SETUP)
	@scripts/build-qemu --sanitizers
	@touch $@

# The user tool and the test programs, static for the guest: they need no
# kernel tree.
$(DMA32CTL): $(DMA32CTL_SOURCES) | $(SETUP)
	@echo "==> dma32ctl (static)"
	@mkdir -p $(@D)
	@gcc $(USER_CFLAGS) -o $@ driver/dma32ctl.c

# They use the kernel's kselftest harness from the 6.1 tree (as a system
# header: its own code is not held to -Wextra): the extracted tree is
# enough, so make debug does not build the plain kernel.
KSELFTEST := $(B)/linux/tools/testing/selftests
$(KSELFTEST)/kselftest_harness.h: | $(SETUP)
	@scripts/build-kernel --version $(DEFAULT_KERNEL) --extract-only
# One build-kernel at a time in that tree, even under make -j.
$(BZIMAGE_$(DEFAULT_KERNEL)): | $(KSELFTEST)/kselftest_harness.h
$(B)/guest/%: driver/tests/%.c driver/tests/dma32demo-guarded.h $(USER_HEADERS) \
	      | $(SETUP) $(KSELFTEST)/kselftest_harness.h
	@echo "==> $* (static)"
	@mkdir -p $(@D)
	@gcc $(USER_CFLAGS) -isystem $(KSELFTEST) -o $@ $<

# The ioctl self-test once more as an i386 program (gcc -m32 -static), for
# the driver's compat_ioctl and the UAPI's one layout under -m32 and -m64
# (driver/tests/guest/ioctls-m32.sh). It needs the i386 C library and
# libgcc (gcc-multilib, which setup-host installs): without them, one line
# says what is missing instead of the linker's page of errors.
$(B)/guest/dma32demo-ioctls-m32: driver/tests/dma32demo-ioctls.c $(USER_HEADERS) \
				 | $(SETUP) $(KSELFTEST)/kselftest_harness.h
	@echo "==> dma32demo-ioctls-m32 (static, i386)"
	@for f in "$$(gcc -m32 -print-file-name=libc.a)" "$$(gcc -m32 -print-libgcc-file-name)"; do \
		[ -f "$$f" ] || { echo "make: cannot build $@: gcc -m32 finds no $${f##*/}" \
			"(the i386 C library and libgcc: install gcc-multilib, or run scripts/setup-host)" >&2; \
			exit 1; }; \
	done
	@mkdir -p $(@D)
	@gcc -m32 $(USER_CFLAGS) -isystem $(KSELFTEST) -o $@ $<

$(PRESSURE): guest-image/dma32-pressure.c | $(SETUP)
	@echo "==> dma32-pressure (static)"
	@mkdir -p $(@D)
	@gcc $(USER_CFLAGS) -o $@ $<

# Its header is include/linux/map_benchmark.h (not uapi in 6.1): copied
# alone next to the system's uapi headers.
$(DMA_MAP_BENCHMARK): $(BZIMAGE_$(DEFAULT_KERNEL))
	@echo "==> dma_map_benchmark (static, from $(B)/linux)"
	@mkdir -p $(B)/guest/include/linux
	@cp $(B)/linux/include/linux/map_benchmark.h $(B)/guest/include/linux/
	@gcc -static -O2 -Wall -Wno-unused-variable -I $(B)/guest/include -o $@ \
		$(B)/linux/tools/testing/selftests/dma/dma_map_benchmark.c

$(MODULE_DEBUG): $(DRIVER_SOURCES) $(BZIMAGE_DEBUG) scripts/build-driver scripts/driver-sources scripts/lib.sh
	@scripts/build-driver --debug --version $(DEFAULT_KERNEL)
	@touch $@

$(INITRAMFS_DEBUG): $(MODULE_DEBUG) $(GUEST_TOOLS) $(BZIMAGE_DEBUG) guest-image/init \
		    guest-image/build-initramfs $(GUEST_FILES) | $(SETUP)
	@echo "==> initramfs for the debug kernel ($@)"
	@mkdir -p $(@D)
	@guest-image/build-initramfs $@ --module $(MODULE_DEBUG) \
		$(addprefix --tool ,$(GUEST_TOOLS)) \
		$(addprefix --extra-module ,$(CHECKER_MODULES))

# The guests run every time; judging and rendering only when their inputs
# changed. Exits non-zero after printing everything when a guest failed or
# a scenario was not as expected.
demo: all kernels
	@$(DEMO) collect --kernel-version $(KERNEL) $${ONLY:+--only "$$ONLY"}
	@$(MAKE) --no-print-directory report
	@$(DEMO) verdict

# raw/manifest.json is collect's (make demo); without it there is nothing
# to judge. judge refuses a run the table's requests no longer describe.
$(REPORT)/raw/manifest.json:
	@echo "make: no demo run to report on ($@ missing): run 'make demo' first" >&2; exit 1

# The KERNEL= the results were judged for, rewritten only when it changes:
# make report KERNEL=6.12 after a 6.1 run judges again, and judge refuses.
$(REPORT)/judged-for: FORCE
	@mkdir -p $(@D); [ "$$(cat $@ 2>/dev/null)" = "$(KERNEL)" ] || echo "$(KERNEL)" >$@
FORCE:

$(RESULTS): $(REPORT)/raw/manifest.json $(REPORT)/judged-for demo/judge.py demo/records.py demo/collect.py \
	    demo/table.py demo/expect.py demo/nodes.py demo/identity.py
	@$(DEMO) judge --kernel-version $(KERNEL)

$(REPORT_MD): $(RESULTS) demo/render.py demo/render_nodes.py demo/memmap.py demo/table.py demo/expect.py demo/nodes.py \
	      demo/identity.py demo/report.md.in \
	      $(wildcard $(REPORT)/bench.md $(REPORT)/bench-manifest.json)
	@$(DEMO) render

report: $(REPORT_MD)

# make check: the host suites that need no kernel or QEMU build (shellcheck,
# the set-up fixtures, the demo's report and mutation tests, the KTAP
# helpers read by kunit.py, the failure paths of the scripts and the Makefile, less those that boot a guest or
# build against its kernel, which report SKIP there, and the driver's
# checkpatch), with kunit.py's parser and each version's checkpatch
# extracted alone from the kernel source tarballs that set-up installs
# (build/kernel-tools-<version>/). (The series' checkpatch suites also
# build the touched files, W=1 and CONFIG_DEBUG_FS=n: make test runs them.)
CHECK_SUITES := ^(scripts/(shellcheck|apt-sources|failure-paths|ktap-helpers)|demo/.*|driver/checkpatch)$$
KERNEL_TOOLS    = $(B)/kernel-tools-$(1)
KUNIT_ONLY      := $(call KERNEL_TOOLS,$(DEFAULT_KERNEL))/tools/testing/kunit
CHECKPATCH_ONLY := $(foreach k,$(KERNELS),$(call KERNEL_TOOLS,$(k))/scripts/checkpatch.pl)
$(B)/kernel-tools-%/scripts/checkpatch.pl: | $(SETUP)
	@echo "==> checkpatch.pl$(if $(filter $*,$(DEFAULT_KERNEL)), kunit.py and kselftest_harness.h,) from linux-source-$* (alone)"
	@rm -rf $(B)/kernel-tools-$* && mkdir -p $(B)/kernel-tools-$*
	@tar -xJf /usr/src/linux-source-$*.tar.xz -C $(B)/kernel-tools-$* --strip-components=1 \
		$(addprefix linux-source-$*/,scripts/checkpatch.pl scripts/spelling.txt \
			scripts/const_structs.checkpatch $(if $(filter $*,$(DEFAULT_KERNEL)),tools/testing/kunit \
			tools/testing/selftests/kselftest_harness.h tools/testing/selftests/kselftest.h))
	@touch $@

check: $(CHECKPATCH_ONLY)
	@DMA32_KUNIT=$(KUNIT_ONLY) scripts/run-tests --only '$(CHECK_SUITES)'

# TEST_DEADLINE_AT (seconds since the epoch, as .ci/run sets it): run-tests
# stops what still runs then, counts it as failed and prints its summary.
test: all kernels debug
	@scripts/run-tests $${ONLY:+--only "$$ONLY"} \
		$${TEST_DEADLINE_AT:+--deadline "$$((TEST_DEADLINE_AT - $$(date +%s)))"}

bench: all
	@scripts/bench
	@if [ -f $(RESULTS) ]; then $(MAKE) --no-print-directory report; fi

fuzz: debug
	@scripts/fuzz $${FUZZ_SECONDS:+--seconds "$$FUZZ_SECONDS"} $${FUZZ_SEED:+--seed "$$FUZZ_SEED"}

# The driver's mutations (driver/tests/mutate): the covering suites first
# on the driver as it is, then each fixed bug put back, one at a time.
.PHONY: mutate
mutate: all
	@driver/tests/mutate --baseline --kernel-version $(KERNEL) $${ONLY:+--only "$$ONLY"}

shell: all
	@scripts/run-guest --interactive

clean:
	rm -rf $(filter-out $(B)/qemu-src,$(wildcard $(B)/* $(B)/.[!.]*))

distclean: clean
	rm -rf $(B)

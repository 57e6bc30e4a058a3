#!/usr/bin/env bash
# The device fuzzer (the qtest's randomized loop: registers, descriptors,
# doorbells, DMA aimed at the whole guest-physical map; the device on the
# root bus, behind a pcie-root-port, behind a pci-bridge, behind a
# translating intel-iommu with page tables in RAM (its fault records
# checked), and two devices DMAing into each other's registers;
# invariants checked after every operation) for
# 1,000,000 operations with a fixed seed, on QEMU built with
# -fsanitize=address,undefined (scripts/build-qemu --sanitizers). Any
# sanitizer report, crash, hang or broken invariant fails it.
#
# Environment: DMA32_DEMO_FUZZ_OPS (default 1000000), DMA32_DEMO_FUZZ_SEED,
# DMA32_DEMO_FUZZ_SECONDS (keep going at least that long: the long mode).
set -euo pipefail
build=${DMA32_BUILD:-$(cd "$(dirname "$0")/../../.." && pwd)/build}/qemu/build-san
[[ -x $build/tests/qtest/dma32-demo-test ]] ||
	{ echo "Bail out! $build/tests/qtest/dma32-demo-test not built (run make debug)"; exit 1; }
cd "$build"
export DMA32_DEMO_FUZZ_OPS=${DMA32_DEMO_FUZZ_OPS:-1000000}
# QEMU itself leaks at exit in ways unrelated to the device; everything
# else a sanitizer finds stops the run.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# glib's --tap output has no version line; the KTAP parser needs one.
echo "TAP version 13"
echo "# fuzzing dma32-demo: $DMA32_DEMO_FUZZ_OPS operations, sanitizers on"
# With the guard regions and register invariants: 3,810 operations per
# second over 60,000 on the quiet 2-core build host (2026-12-06), so 1M
# take about 4.5 minutes (the old loop, loaded: 2,346 per second, 426 s).
# With the two-device run and the VT-d fault checks (2026-12-06, the host
# loaded by four other builds, load average 8 to 15): 661 s, against
# 760 s for the loop before them under the same kind of load.
# The long mode adds its own seconds.
seconds=${DMA32_DEMO_FUZZ_SECONDS:-0}
[[ $seconds =~ ^[0-9]+$ ]] || { echo "Bail out! DMA32_DEMO_FUZZ_SECONDS='$seconds' is not a number of seconds"; exit 1; }
QTEST_QEMU_BINARY=./qemu-system-x86_64 timeout $((3600 + seconds)) ./tests/qtest/dma32-demo-test --tap -p /x86_64/dma32-demo/random

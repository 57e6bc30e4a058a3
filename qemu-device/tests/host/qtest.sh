#!/usr/bin/env bash
# The device's qtest (QEMU's own way: libqtest, q35 with 6 GiB so RAM exists
# above 4 GiB), built in the grafted tree by scripts/build-qemu. TAP output.
set -euo pipefail
build=${DMA32_BUILD:-$(cd "$(dirname "$0")/../../.." && pwd)/build}/qemu/build
[[ -x $build/tests/qtest/dma32-demo-test ]] ||
	{ echo "Bail out! $build/tests/qtest/dma32-demo-test not built (run make qemu)"; exit 1; }
cd "$build"
# glib's --tap output has a plan but no version line, which the KTAP
# parser that counts the results needs before it.
echo "TAP version 13"
QTEST_QEMU_BINARY=./qemu-system-x86_64 exec ./tests/qtest/dma32-demo-test --tap -k

#!/usr/bin/env bash
# QEMU's scripts/checkpatch.pl on our sources, run inside the grafted tree
# (checkpatch accepts glib test asserts only in files under tests/).
set -euo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
tree=${DMA32_BUILD:-$top/build}/qemu
files=(hw/misc/dma32-demo.c include/hw/misc/dma32-demo-regs.h
	tests/qtest/dma32-demo-test.h tests/qtest/dma32-demo-test.c
	tests/qtest/dma32-demo-test-{regs,dma,unplug,migrate,fuzz,guard,bench}.c
	"$top/qemu-device/trace-events")
# shellcheck source=scripts/ktap_helpers.sh
. "$top/scripts/ktap_helpers.sh"
for f in "${files[@]}"; do
	if out=$(cd "$tree" && scripts/checkpatch.pl --no-tree -f "$f" 2>&1); then
		ktap_test_pass "QEMU checkpatch ${f#"$top"/}"
	else
		ktap_print_lines <<<"$out"
		ktap_test_fail "QEMU checkpatch ${f#"$top"/}"
	fi
done
ktap_finished

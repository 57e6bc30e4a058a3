#!/usr/bin/env bash
# QEMU's scripts/checkpatch.pl on our sources, run inside the grafted tree
# (checkpatch accepts glib test asserts only in files under tests/).
set -euo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
tree=${DMA32_BUILD:-$top/build}/qemu
files=(hw/misc/dma32-demo.c include/hw/misc/dma32-demo-regs.h tests/qtest/dma32-demo-test.c
	"$top/qemu-device/trace-events")
echo "KTAP version 1"
echo "1..${#files[@]}"
n=0
for f in "${files[@]}"; do
	n=$((n + 1))
	if out=$(cd "$tree" && scripts/checkpatch.pl --no-tree -f "$f" 2>&1); then
		echo "ok $n QEMU checkpatch ${f#"$top"/}"
	else
		echo "not ok $n QEMU checkpatch ${f#"$top"/}"
		while IFS= read -r line; do echo "# $line"; done <<<"$out"
	fi
done

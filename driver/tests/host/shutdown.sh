#!/usr/bin/env bash
# The driver's .shutdown, seen from the device: a guest reboots while a
# long request keeps the DMA engine busy, and QEMU's trace of the device
# (trace-events: dma32_demo_*) must show the engine stopped (CTRL reset,
# written by d32_shutdown()) after DMA began, and then not one more DMA
# access, descriptor or interrupt until QEMU exits (run-guest's -no-reboot
# turns the reboot into an exit). Without .shutdown the device goes on
# writing into memory that the next kernel (kexec) or the firmware owns:
# with .shutdown taken out of the driver, this trace showed DMA up to
# QEMU's exit and no CTRL reset after the one at probe.
set -euo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# shellcheck source=scripts/ktap_helpers.sh
. "$top/scripts/ktap_helpers.sh"

trace=$scratch/trace.log
# 256 MiB checksums (64 x 4 MiB, about 2.5 s each under TCG) one after the
# other; reboot -f comes 4 s into them (the trace shows DMA under way).
rc=0
"$top/scripts/run-guest" --log driver-shutdown --timeout 240 \
	--qemu-args "-trace enable=dma32_demo_* -D $trace" \
	--run 'while :; do dma32ctl run --strategy streaming-dma32 --op checksum --size 4M --count 64 --runs 0; done >/tmp/run.out 2>&1 &
	       sleep 4; echo rebooting; reboot -f; sleep 30' >"$scratch/out" 2>"$scratch/err" || rc=$?

# The guest never finishes its command: it reboots, QEMU exits (-no-reboot).
if grep -q 'the guest stopped before the command finished' "$scratch/err"; then
	ktap_test_pass "the guest rebooted in the middle of the command"
else
	ktap_test_fail "the guest rebooted in the middle of the command" "run-guest exit $rc"
	ktap_print_lines <"$scratch/err"
fi

# The engine's CTRL register (0x020), reset bit (1 << 31): the last write
# of it is d32_shutdown()'s; probe wrote the one before any DMA.
stop=$(grep -n 'dma32_demo_mmio_write addr 0x20 val 0x80000000' "$trace" | tail -n 1 | cut -d: -f1 || true)
dma_before=$(head -n "${stop:-0}" "$trace" | grep -c 'dma32_demo_dma ' || true)
if [[ -n $stop ]] && ((dma_before > 0)); then
	ktap_test_pass "shutdown stopped the engine while it was moving data ($dma_before DMA accesses before)"
else
	ktap_test_fail "shutdown stopped the engine while it was moving data" \
		"last CTRL reset at trace line ${stop:-none} of $(wc -l <"$trace"), DMA accesses before it: $dma_before"
fi
after=$(sed -n "$((${stop:-0} + 1)),\$p" "$trace" | grep -cE 'dma32_demo_(dma|desc|bh|irq) ' || true)
if [[ -n $stop ]] && ((after == 0)); then
	ktap_test_pass "after the engine stopped: no DMA, descriptor or interrupt"
else
	ktap_test_fail "after the engine stopped: no DMA, descriptor or interrupt" "$after such trace lines"
	sed -n "$((${stop:-0} + 1)),\$p" "$trace" | grep -E 'dma32_demo_(dma|desc|bh|irq) ' | head -n 5 |
		ktap_print_lines
fi
ktap_finished

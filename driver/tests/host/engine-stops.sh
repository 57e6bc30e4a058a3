#!/usr/bin/env bash
# The engine stops when the kernel says so, seen from the device: QEMU
# traces the device (trace-events: dma32_demo_*) while back-to-back 256 MiB
# checksums (64 x 4 MiB, about 2.5 s each under TCG) keep it busy.
# - Reboot (.shutdown): the guest reboots 4 s into them. The engine must be
#   stopped (CTRL reset, written by d32_shutdown()) after DMA began, and
#   then not one more DMA access, descriptor or interrupt until QEMU exits
#   (run-guest's -no-reboot turns the reboot into an exit). Without
#   .shutdown the device goes on writing into memory that the next kernel
#   (kexec) or the firmware owns: with .shutdown taken out of the driver,
#   this trace showed DMA up to QEMU's exit and no CTRL reset after the one
#   at probe.
# - System sleep (dev_pm_ops): 4 s into them the guest suspends (s2idle,
#   /sys/power/pm_test=devices: 5 s between the suspend and the resume
#   callbacks). Between suspend's stop (d32_hw_stop(): INT_MASK 0, then
#   CTRL reset) and resume's enable (CTRL 1), nothing may move; before it
#   the engine was moving data, after it the requests the freezer ended
#   run again.
set -euo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
scratch=$(mktemp -d)
# shellcheck disable=SC2317 # called by ktap_helpers.sh at exit
ktap_cleanup() { rm -rf "$scratch"; }
# shellcheck source=scripts/ktap_helpers.sh
. "$top/scripts/ktap_helpers.sh"

CHECKSUMS='while :; do dma32ctl run --strategy streaming-dma32 --op checksum --size 4M --count 64 --runs 0; done >/tmp/run.out 2>&1 &'
# MOVING: wait (up to 10 minutes, however slow the host) until the first of
# those requests has ended and counted its transfers, so the loop has moved data and goes on moving
# it; a fixed sleep would race a slow host's first request. (Expanded in
# the guest.)
# shellcheck disable=SC2016
MOVING='s=$(readlink -f /sys/class/misc/dma32demo0/device)/stats/transfers; i=0
	while [ "$(cat "$s")" = 0 ] && [ $i -lt 3000 ]; do sleep 0.2; i=$((i + 1)); done;'
MOVED='dma32_demo_(dma|desc|bh|irq) '
STOP='dma32_demo_mmio_write addr 0x2c val 0x0$'  # INT_MASK 0: d32_hw_stop() only
RESET='dma32_demo_mmio_write addr 0x20 val 0x80000000$'
ENABLE='dma32_demo_mmio_write addr 0x20 val 0x1$'
UNMASK='dma32_demo_mmio_write addr 0x2c val 0x[1-9a-f][0-9a-f]*$'  # INT_MASK, not 0

# traced_guest NAME COMMAND: boot with the device traced into $scratch/NAME.trace
traced_guest() {
	rc=0
	"$top/scripts/run-guest" --log "driver-$1" --timeout 900 \
		--qemu-args "-trace enable=dma32_demo_* -D $scratch/$1.trace" \
		--run "$2" >"$scratch/$1.out" 2>"$scratch/$1.err" || rc=$?
}
# moved TRACE FROM TO: DMA, descriptor, BH and interrupt lines FROM..TO
moved() { sed -n "$2,$3p" "$1" | grep -cE "$MOVED" || true; }
# show_moved TRACE FROM TO: the first five of them, as diagnostics
show_moved() { sed -n "$2,$3p" "$1" | grep -E "$MOVED" | head -n 5 | ktap_print_lines; }
# judge DESCRIPTION DETAIL CONDITION [FROM TO]: a result, ok when the
# arithmetic CONDITION holds; when it does not, DETAIL and (given FROM and
# TO) the first trace lines of work between them say what was seen
judge() {
	if (($3)); then
		ktap_test_pass "$1"
	else
		(($# < 5)) || show_moved "$trace" "$4" "$5"
		ktap_test_fail "$1" "$2"
	fi
}

# 1. Reboot
traced_guest shutdown "$CHECKSUMS $MOVING echo rebooting; reboot -f; sleep 30"
trace=$scratch/shutdown.trace
# The guest never finishes its command: it reboots, QEMU exits (-no-reboot).
if grep -q 'the guest stopped before the command finished' "$scratch/shutdown.err"; then
	ktap_test_pass "the guest rebooted in the middle of the command"
else
	ktap_print_lines <"$scratch/shutdown.err"
	ktap_test_fail "the guest rebooted in the middle of the command" "run-guest exit $rc"
fi
# Shutdown's stop is the last d32_hw_stop() (INT_MASK 0, then CTRL reset);
# probe wrote the one before any DMA. Nothing may enable the engine or
# unmask its interrupts after it. (A request whose wait shutdown cut short
# resets the device on its way out, and d32_hw_init() leaves a gone device
# alone; the reboot rarely lets that request run again before QEMU exits,
# so going-away.sh checks it after an unbind, which ends the same way.)
stop=$(grep -nE "$STOP" "$trace" | tail -n 1 | cut -d: -f1 || true)
stop=${stop:-0}
before=$(moved "$trace" 1 "$stop")
judge "shutdown stopped the engine while it was moving data ($before trace lines of work before)" \
	"last INT_MASK 0 at trace line $stop of $(wc -l <"$trace")" "stop > 0 && before > 0"
after=$(moved "$trace" "$((stop + 1))" '$')
judge "after shutdown's stop: no DMA, descriptor or interrupt" "$after such trace lines" \
	"stop > 0 && after == 0" "$((stop + 1))" '$'
rearmed=$(sed -n "$((stop + 1)),\$p" "$trace" | grep -cE "$ENABLE|$UNMASK" || true)
if ((stop > 0 && rearmed == 0)); then
	ktap_test_pass "after shutdown's stop the engine stays disabled and its interrupts masked"
else
	sed -n "$((stop + 1)),\$p" "$trace" | grep -E "$ENABLE|$UNMASK" | head -n 5 | ktap_print_lines
	ktap_test_fail "after shutdown's stop the engine stays disabled and its interrupts masked" \
		"$rearmed CTRL enable or INT_MASK writes after trace line $stop"
fi

# 2. System sleep
traced_guest suspend "$CHECKSUMS $MOVING echo devices >/sys/power/pm_test
	if echo freeze >/sys/power/state; then echo 'suspend: ok'; fi; sleep 4"
trace=$scratch/suspend.trace
if ((rc == 0)) && grep -q '^suspend: ok' "$scratch/suspend.out"; then
	ktap_test_pass "the guest suspended and resumed in the middle of the checksums"
else
	ktap_print_lines <"$scratch/suspend.out"
	ktap_print_lines <"$scratch/suspend.err"
	ktap_test_fail "the guest suspended and resumed in the middle of the checksums" "run-guest exit $rc"
fi
# Suspend's stop: the last INT_MASK 0 followed by CTRL reset that an enable
# follows (remove, at the end of the run, stops the engine for good).
stop=0 resume=0
while IFS=: read -r n _; do
	sed -n "$((n + 1))p" "$trace" | grep -qE "$RESET" || continue
	e=$(sed -n "$((n + 2)),\$p" "$trace" | grep -nE "$ENABLE" | head -n 1 | cut -d: -f1 || true)
	[[ -n $e ]] && stop=$n resume=$((n + 1 + e))
done < <(grep -nE "$STOP" "$trace" || true)
before=$(moved "$trace" 1 "$stop")
judge "suspend stopped the engine while it was moving data ($before trace lines of work before)" \
	"suspend's stop at trace line $stop of $(wc -l <"$trace")" "stop > 0 && before > 0"
asleep=$(moved "$trace" "$((stop + 1))" "$resume")
judge "from suspend's stop to resume's enable (trace lines $stop..$resume): no DMA, descriptor or interrupt" \
	"$asleep such trace lines" "stop > 0 && asleep == 0" "$((stop + 1))" "$resume"
again=$(moved "$trace" "$((resume + 1))" '$')
judge "after resume the engine moves data again ($again trace lines of work)" \
	"after trace line $resume" "stop > 0 && again > 0"
ktap_finished

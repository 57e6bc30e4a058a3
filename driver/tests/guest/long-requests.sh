#!/bin/sh
# run-guest: --append 'dma32demo.unsafe_fault_injection=1' --smp 2 --timeout 400
#
# dma32demo with a long request in flight:
# - INFO, STATS and RESET_STATS answer while a RUN holds the device (they
#   take no request lock): the request is still in flight when they
#   return, where they used to wait for the whole request;
# - SIGKILL ends a request: a stalled one (the device never completes;
#   timeout_ms set to 60 s, which an uninterruptible wait would sit out,
#   counting a timeout) and a 1 GiB verified checksum (allocation, DMA and
#   a CPU CRC of every byte; ended by the kill, it counts as an error); the
#   device is reset before anything is unmapped, nothing stays held or
#   mapped, and the next request verifies; and a stalled streaming request
#   killed while its buffers above 4 GiB hold swiotlb bounce slots: the
#   slots in use (debugfs io_tlb_used) go back to their count before;
# None of this depends on the host's speed: the suite waits for each
# request to be inside the driver (wait_until, in_ioctl) and judges by the
# driver's counters, not by a clock; the times are diagnostics.
# - a 1 GiB checksum with --verify runs to the end with no soft-lockup or
#   RCU-stall report (the CRC loop reschedules; run-guest fails the run on
#   either report in the console).
# shellcheck source=driver/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"
check_cpus 2

require_device
sysdir=$(readlink -f /sys/class/misc/dma32demo0/device)/stats
param=/sys/module/dma32demo/parameters/timeout_ms
tlb_used=/sys/kernel/debug/swiotlb/io_tlb_used
WAIT_S=300      # for a request to be inside the driver: no working guest needs it
GIB="--strategy streaming-dma32 --op checksum --size 64M --count 16 --verify"

# request_in_flight PID WHAT: wait until PID's request is inside the driver
request_in_flight() {
	wait_until $WAIT_S in_ioctl "$1"
	ktap_test_status "$2 is inside the driver" $? "pid $1 not in an ioctl after $WAIT_S s"
}

# read_only_during PID WHAT: INFO, STATS and RESET_STATS while PID's request
# runs; they must answer with that request still running (PID alive: it
# exits as soon as its request ends)
read_only_during() {
	bad=
	for cmd in info stats reset; do
		t0=$(now_cs)
		msg=$(dma32ctl $cmd 2>&1)
		rc=$?
		dt=$(($(now_cs) - t0))
		ktap_print_msg "$2: dma32ctl $cmd took $((dt * 10)) ms"
		[ $rc = 0 ] || bad="$bad $cmd:rc=$rc($msg)"
		alive "$1" || bad="$bad $cmd: returned after the request ended"
	done
	[ -z "$bad" ]
	ktap_test_status "info, stats and reset answer while $2 still runs" $? "$bad"
}

# kill_after PID WHAT: SIGKILL PID, in the middle of its request, and wait
# for it to exit (the time is a diagnostic)
kill_after() {
	t0=$(now_cs)
	kill -9 "$1"
	wait "$1" 2>/dev/null
	dt=$(($(now_cs) - t0))
	ktap_print_msg "$2: SIGKILL to exit $((dt * 10)) ms"
}

# after_kill WHAT: the device is usable and nothing is left over
after_kill() {
	j=$(dma32ctl run --strategy streaming-dma32 --op checksum --size 1M --count 2 --verify --json 2>&1)
	rc=$?
	[ $rc = 0 ] && [ "$(jget buffers_verified "$j")" = 2 ]
	ktap_test_status "after $1: the next request verifies" $? "rc=$rc $j"
	check_only_ring_held
	if [ -r $tlb_used ]; then
		used=$(cat $tlb_used)
		[ "$used" = 0 ]
		ktap_test_status "after $1: no swiotlb slot left mapped" $? "io_tlb_used=$used"
	else
		ktap_test_skip "after $1: no swiotlb slot left mapped" "no $tlb_used"
	fi
}

# 1. A stalled request, the wait long: only a kill can end it early
echo 60000 >$param
dma32ctl run --strategy coherent --op fill --size 64K --inject stall >/dev/null 2>&1 &
p=$!
request_in_flight $p "a stalled request (timeout_ms 60000)"
read_only_during $p "a stalled request"
# (after RESET_STATS above, which zeroes the counters)
r0=$(cat "$sysdir/resets") to0=$(cat "$sysdir/timeouts")
kill_after $p "a stalled request (timeout_ms 60000)"
r1=$(cat "$sysdir/resets") to1=$(cat "$sysdir/timeouts")
# An uninterruptible wait would have sat out the 60 s and counted a timeout.
[ "$to1" = "$to0" ]
ktap_test_status "SIGKILL ends a stalled request before its timeout (no timeout counted)" $? "timeouts $to0 -> $to1"
[ $((r1 - r0)) = 1 ]
ktap_test_status "the killed request reset the device once" $? "resets $r0 -> $r1"
echo 5000 >$param
after_kill "the killed stall"

# 2. A stalled streaming request killed while its bounce slots are mapped:
# its pages above 4 GiB reach the 32-bit device through swiotlb, and the
# kill must unmap every one of them (the stall above is coherent memory,
# which never bounces). io_tlb_used back to its value before.
# tlb_above N: more than N swiotlb slots are in use
# shellcheck disable=SC2317 # called through wait_until
tlb_above() { [ "$(cat "$tlb_used")" -gt "$1" ]; }
if [ -r $tlb_used ]; then
	echo 60000 >$param
	used0=$(cat $tlb_used)
	dma32ctl run --strategy streaming --op fill --size 64K --count 16 --inject stall >/dev/null 2>&1 &
	p=$!
	request_in_flight $p "a stalled streaming request"
	wait_until $WAIT_S tlb_above "$used0"
	ktap_test_status "its bounced buffers hold swiotlb slots while it waits" $? \
		"io_tlb_used $used0 -> $(cat $tlb_used)"
	used1=$(cat $tlb_used)
	kill_after $p "a stalled streaming request, bounced"
	used2=$(cat $tlb_used)
	[ "$used2" = "$used0" ]
	ktap_test_status "the kill unmapped its bounce slots (io_tlb_used back to $used0)" $? \
		"io_tlb_used $used0 -> $used1 -> $used2"
	echo 5000 >$param
	after_kill "the killed bounced stall"
else
	for what in "its bounced buffers hold swiotlb slots while it waits" \
		"the kill unmapped its bounce slots"; do
		ktap_test_skip "$what" "no $tlb_used"
	done
fi

# 3. 1 GiB verified: allocation, DMA, CPU CRC; killed wherever it is
dma32ctl reset
# shellcheck disable=SC2086 # $GIB is a list of options
dma32ctl run $GIB >/dev/null 2>&1 &
p=$!
request_in_flight $p "a 1 GiB verified checksum"
read_only_during $p "a 1 GiB verified checksum"
e0=$(cat "$sysdir/errors") b0=$(cat "$sysdir/bytes")
kill_after $p "a 1 GiB verified checksum"
e1=$(cat "$sysdir/errors") b1=$(cat "$sysdir/bytes")
# A request the kill did not end would have run to the end without an
# error. The bytes moved are only a diagnostic: on a fast guest all the
# DMA is done and the kill lands in the CPU's verification.
ktap_print_msg "the killed 1 GiB request moved $((b1 - b0)) bytes before it ended"
[ $((e1 - e0)) = 1 ]
ktap_test_status "SIGKILL ends a 1 GiB verified checksum before it completes (one error counted)" $? \
	"errors $e0 -> $e1, bytes $b0 -> $b1"
after_kill "the killed 1 GiB request"

# 4. The same 1 GiB to the end: no soft lockup, no RCU stall
dma32ctl reset
t0=$(now_cs)
# shellcheck disable=SC2086 # $GIB is a list of options
j=$(dma32ctl run $GIB --json 2>&1)
rc=$?
dt=$(($(now_cs) - t0))
ktap_print_msg "1 GiB checksum with --verify: $((dt / 100)).$((dt % 100)) s: $j"
[ $rc = 0 ] && [ "$(jget buffers_verified "$j")" = 16 ] && [ "$(jget bytes "$j")" = 1073741824 ]
ktap_test_status "1 GiB checksum with --verify completes" $? "rc=$rc $j"
hits=$(dmesg | grep -E 'soft lockup|rcu: INFO: .*detected stall' | head -n 2)
[ -z "$hits" ]
ktap_test_status "no soft-lockup or RCU-stall report" $? "$hits"

ktap_finished

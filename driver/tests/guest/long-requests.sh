#!/bin/sh
# run-guest: --smp 2 --timeout 400
#
# dma32demo with a long request in flight:
# - INFO, STATS and RESET_STATS answer at once while a RUN holds the
#   device (they take no request lock): under a second, where they used to
#   wait for the whole request;
# - SIGKILL ends a request within a few seconds: a stalled one (the device
#   never completes; timeout_ms set to 60 s, which an uninterruptible wait
#   would sit out) and a 1 GiB verified checksum (allocation, DMA and a CPU
#   CRC of every byte); the device is reset before anything is unmapped,
#   nothing stays held or mapped, and the next request verifies;
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
LIMIT_CS=100    # a read-only ioctl: 1 s
KILL_CS=500     # SIGKILL to exit: 5 s
GIB="--strategy streaming-dma32 --op checksum --size 64M --count 16 --verify"

# read_only_during WHAT: time INFO, STATS and RESET_STATS while a request runs
read_only_during() {
	bad=
	for cmd in info stats reset; do
		t0=$(now_cs)
		msg=$(dma32ctl $cmd 2>&1)
		rc=$?
		dt=$(($(now_cs) - t0))
		diag "$1: dma32ctl $cmd took $((dt * 10)) ms"
		[ $rc = 0 ] && [ $dt -lt $LIMIT_CS ] || bad="$bad $cmd:rc=$rc,$((dt * 10))ms($msg)"
	done
	[ -z "$bad" ]
	check "info, stats and reset answer within 1 s during $1" $? "$bad"
}

# kill_after PID WHAT: SIGKILL PID (still running: the request is long),
# time how long it takes to exit
kill_after() {
	if ! kill -0 "$1" 2>/dev/null; then
		nok "SIGKILL ends $2 within $((KILL_CS / 100)) s" "the request ended before the kill"
		return
	fi
	t0=$(now_cs)
	kill -9 "$1"
	wait "$1" 2>/dev/null
	dt=$(($(now_cs) - t0))
	diag "$2: SIGKILL to exit $((dt * 10)) ms"
	[ $dt -lt $KILL_CS ]
	check "SIGKILL ends $2 within $((KILL_CS / 100)) s ($((dt * 10)) ms)" $? "$((dt * 10)) ms"
}

# after_kill WHAT: the device is usable and nothing is left over
after_kill() {
	j=$(dma32ctl run --strategy streaming-dma32 --op checksum --size 1M --count 2 --verify --json 2>&1)
	rc=$?
	[ $rc = 0 ] && [ "$(jget buffers_verified "$j")" = 2 ]
	check "after $1: the next request verifies" $? "rc=$rc $j"
	check_only_ring_held
	used=$(cat $tlb_used 2>/dev/null || echo 0)
	[ "$used" = 0 ]
	check "after $1: no swiotlb slot left mapped" $? "io_tlb_used=$used"
}

# 1. A stalled request, the wait long: only a kill can end it early
echo 60000 >$param
dma32ctl run --strategy coherent --op fill --size 64K --inject stall >/dev/null 2>&1 &
p=$!
sleep 2
read_only_during "a stalled request"
# (after RESET_STATS above, which zeroes the counter)
r0=$(cat "$sysdir/resets")
kill_after $p "a stalled request (timeout_ms 60000)"
r1=$(cat "$sysdir/resets")
[ $((r1 - r0)) = 1 ]
check "the killed request reset the device once" $? "resets $r0 -> $r1"
echo 5000 >$param
after_kill "the killed stall"

# 2. 1 GiB verified: allocation, DMA, CPU CRC; killed wherever it is
dma32ctl reset
# shellcheck disable=SC2086 # $GIB is a list of options
dma32ctl run $GIB >/dev/null 2>&1 &
p=$!
sleep 3
read_only_during "a 1 GiB verified checksum"
kill_after $p "a 1 GiB verified checksum"
after_kill "the killed 1 GiB request"

# 3. The same 1 GiB to the end: no soft lockup, no RCU stall
dma32ctl reset
t0=$(now_cs)
# shellcheck disable=SC2086 # $GIB is a list of options
j=$(dma32ctl run $GIB --json 2>&1)
rc=$?
dt=$(($(now_cs) - t0))
diag "1 GiB checksum with --verify: $((dt / 100)).$((dt % 100)) s: $j"
[ $rc = 0 ] && [ "$(jget buffers_verified "$j")" = 16 ] && [ "$(jget bytes "$j")" = 1073741824 ]
check "1 GiB checksum with --verify completes" $? "rc=$rc $j"
hits=$(dmesg | grep -E 'soft lockup|rcu: INFO: .*detected stall' | head -n 2)
[ -z "$hits" ]
check "no soft-lockup or RCU-stall report" $? "$hits"

finish

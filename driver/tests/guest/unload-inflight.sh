#!/bin/sh
# run-guest: --smp 2 --append 'dma32demo.timeout_ms=1000 dma32demo.unsafe_fault_injection=1' --timeout 240
#
# dma32demo: module unload and device unbind while requests are in flight.
# Two 'dma32demo-stress' processes hammer the device (verified requests,
# all strategies). rmmod is refused while their files are open (the
# kernel says EAGAIN/EWOULDBLOCK for a module in use, or EBUSY) and they
# carry on undisturbed; killed in the middle of requests, they exit at
# once (the kill ends the request it lands in) and rmmod succeeds. Then,
# with them running again plus a stalled request waiting for its
# timeout, the device is unbound through sysfs: the unbind does not wait
# for the stall, which ends with ENODEV (or ETIMEDOUT and a reset, if its
# 1 s timeout came first), the others' next
# requests fail cleanly with ENODEV, no byte mismatches (run-guest fails
# the run on any WARN/BUG in the console). insmod again: all verifies.
# shellcheck source=driver/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"
# On two vCPUs: the requests, the IRQ handler and the readers really race.
check_cpus 2
ko=/lib/modules/dma32demo.ko
loaded() { grep -q '^dma32demo ' /proc/modules; }

require_device
bdf=$(basename "$(readlink -f /sys/class/misc/dma32demo0/device)")
sysdir=/sys/bus/pci/devices/$bdf/stats

# Round 1: rmmod while requests run, then kill the processes mid-request
dma32demo-stress --seconds 600 --seed 11 >/tmp/a.json 2>/tmp/a.err &
pa=$!
dma32demo-stress --seconds 600 --seed 12 >/tmp/b.json 2>/tmp/b.err &
pb=$!
# Both running requests (the counter moves at each request's end); the
# bound is one no working guest needs.
wait_until 300 sh -c "[ \$(cat $sysdir/requests) -ge 2 ]"
ktap_test_status "the two processes run requests" $? "requests: $(cat "$sysdir"/requests)"
r0=$(cat "$sysdir"/requests)
refused=0 reasons=
for _ in 1 2 3 4 5; do
	if err=$(rmmod dma32demo 2>&1); then
		break
	fi
	refused=$((refused + 1))
	reasons=$err
	sleep 1
done
loaded && [ $refused = 5 ]
ktap_test_status "rmmod refused 5 times while two processes have the device open" $? "refused $refused: $reasons"
ktap_print_msg "rmmod said: $reasons"
case $reasons in
*"temporarily unavailable"* | *"busy"* | *"in use"*) ktap_test_pass "the refusal is EAGAIN/EBUSY (module in use)" ;;
*) ktap_test_fail "the refusal is EAGAIN/EBUSY (module in use)" "$reasons" ;;
esac
wait_until 300 sh -c "[ \$(cat $sysdir/requests) -gt $r0 ]"
r1=$(cat "$sysdir"/requests)
alive $pa && alive $pb && [ "$r1" -gt "$r0" ]
ktap_test_status "requests carry on during the refused rmmods ($r0 -> $r1)" $? "processes gone or stuck"
kill $pa $pb
# (no "Terminated" job messages in the KTAP output)
wait $pa $pb 2>/dev/null
# Killed: no summary. A kill ends the request it lands in (EINTR, counted
# as an error: at most one per process); nothing may have failed to verify.
e=$(cat "$sysdir"/errors)
[ "$e" -le 2 ] && ! dmesg | grep -q 'verification failed'
ktap_test_status "processes killed in the middle: only their last request ended ($e errors), none failed to verify" $? \
	"errors=$e; $(dmesg | grep 'verification failed' | head -n 1)"
rmmod dma32demo
ktap_test_status "rmmod succeeds once they exited" $? "rmmod failed"
! loaded && [ ! -e /dev/dma32demo0 ]
ktap_test_status "module and /dev/dma32demo0 are gone" $? "still there"

# Round 2: unbind while requests run and one waits on a stalled device
insmod $ko timeout_ms=1000 unsafe_fault_injection=1
ktap_test_status "insmod again" $? "insmod failed"
dma32demo-stress --seconds 600 --seed 21 >/tmp/a.json 2>/tmp/a.err &
pa=$!
dma32demo-stress --seconds 600 --seed 22 >/tmp/b.json 2>/tmp/b.err &
pb=$!
r0=$(cat "$sysdir"/requests)
wait_until 300 sh -c "[ \$(cat $sysdir/requests) -ge $((r0 + 2)) ]"
ktap_test_status "the two processes run requests again" $? "requests: $r0 -> $(cat "$sysdir"/requests)"
dma32ctl run --strategy coherent --op fill --size 64K --inject stall --json >/tmp/stall.json 2>/dev/null &
ps=$!
# In the driver: stalled, or queued behind a stress request
wait_until 300 in_ioctl $ps
ktap_test_status "the stalled request is inside the driver" $? "pid $ps not in an ioctl"
t0=$(date +%s)
urc=0
echo "$bdf" >/sys/bus/pci/drivers/dma32demo/unbind || urc=1
t1=$(date +%s)
[ $urc = 0 ] && [ ! -e /dev/dma32demo0 ]
ktap_test_status "unbind with requests in flight returns ($((t1 - t0)) s) and removes /dev/dma32demo0" $? "rc=$urc"
wait $pa
ra=$?
wait $pb
rb=$?
wait $ps
j=$(cat /tmp/stall.json)
ja=$(cat /tmp/a.json)
jb=$(cat /tmp/b.json)
ktap_print_msg "process 1: $ja"
ktap_print_msg "process 2: $jb"
ktap_print_msg "stalled request: $j"
[ $ra = 0 ] && [ $rb = 0 ] && [ "$(jget gone "$ja")" = true ] && [ "$(jget gone "$jb")" = true ]
ktap_test_status "both processes stop on ENODEV, no request failed before" $? "rc $ra $rb; $(cat /tmp/a.err /tmp/b.err | head -n 3)"
# From both summaries, or a SKIP: a missing one would add up to 0 (the
# check above has failed for it already).
ma=$(jget mismatched_bytes "$ja") mb=$(jget mismatched_bytes "$jb")
ca=$(jget canary_violations "$ja") cb=$(jget canary_violations "$jb")
if [ -n "$ma" ] && [ -n "$mb" ] && [ -n "$ca" ] && [ -n "$cb" ]; then
	[ $((ma + mb)) = 0 ] && [ $((ca + cb)) = 0 ]
	ktap_test_status "0 mismatched bytes, 0 canary violations in $(($(jget requests "$ja") + $(jget requests "$jb"))) requests" $? \
		"mismatched=$ma+$mb canary=$ca+$cb"
else
	ktap_test_skip "0 mismatched bytes, 0 canary violations" "no summary from a process: '$ja' '$jb'"
fi
# In flight or queued behind the stress requests, the unbind ends it with
# ENODEV; only if its 1 s timeout came first may it end in ETIMEDOUT
e=$(jget errno "$j")
ktap_print_msg "the stalled request ended with ${e:-no result}"
if [ "$e" = ETIMEDOUT ]; then
	[ "$(jget resets "$j")" = 1 ]
	ktap_test_status "the stalled request ends with ETIMEDOUT and a reset, or ENODEV" $? "$j"
else
	[ "$e" = ENODEV ]
	ktap_test_status "the stalled request ends with ETIMEDOUT and a reset, or ENODEV" $? "no result: $j"
fi
dmesg | grep -qE 'WARNING|BUG|Oops'
ktap_test_status "no WARN, BUG or Oops" $((!$?)) "$(dmesg | grep -E 'WARNING|BUG|Oops' | head -n 2)"

rmmod dma32demo
ktap_test_status "rmmod after the unbind" $? "rmmod failed"
insmod $ko
ktap_test_status "insmod after unbind and rmmod" $? "insmod failed"
check_every_strategy_verifies "every strategy x op verifies on the fresh module" 128K 2

ktap_finished

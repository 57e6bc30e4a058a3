#!/bin/sh
# run-guest: --smp 2 --append 'dma32demo.unsafe_fault_injection=1' --timeout 400
#
# dma32demo going away with a request in flight. The device's state is
# read from its own registers (dma32demo-regs maps BAR0 through sysfs).
# - timeout_ms is bounded: 0, past the maximum and junk are refused with a
#   log line and leave the value as it was; the maximum is accepted.
# - Unbind during a stalled request with timeout_ms at its maximum: the
#   unbind returns within a quarter of that timeout (measured: well under
#   a second on a 2-vCPU TCG guest; remove used to take the request lock
#   first and so sat out the whole timeout in D state), the request ends
#   with ENODEV and no timeout or reset, the engine is stopped with
#   interrupts masked, and the rebound device works.
# The bound is relative to the timeout the old code had to wait for, not
# a wall-clock constant: a slow host stretches both alike.
# shellcheck source=driver/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"
check_cpus 2

require_device
dev=$(readlink -f /sys/class/misc/dma32demo0/device)
bdf=${dev##*/}
param=/sys/module/dma32demo/parameters/timeout_ms
drv=/sys/bus/pci/drivers/dma32demo
WAIT_S=300      # bounded waits for what must happen at once: no working guest needs them

# 1. timeout_ms is bounded
old=$(cat $param)
bad=""
for v in 0 120001 4294967295 banana; do
	if echo "$v" >$param 2>/dev/null; then
		bad="$bad $v accepted;"
	fi
	[ "$(cat $param)" = "$old" ] || bad="$bad $v changed it to $(cat $param);"
	dmesg | grep -q "timeout_ms=$v refused: must be 1\.\.120000" ||
		bad="$bad no log line for $v;"
done
[ -z "$bad" ]
ktap_test_status "timeout_ms refuses 0, 120001, 4294967295 and junk, with a log line each" $? "$bad"
echo 120000 >$param && [ "$(cat $param)" = 120000 ]
ktap_test_status "timeout_ms accepts its maximum, 120000" $? "reads $(cat $param)"
tmo_cs=$(($(cat $param) / 10))

# 2. Unbind during a stall that would take timeout_ms to time out
# shellcheck disable=SC2317 # called through wait_until
busy() { dma32demo-regs "$bdf" | grep -q ' busy$'; }
dma32ctl run --strategy coherent --op fill --size 64K --inject stall --json >/tmp/going.json 2>/tmp/going.err &
p=$!
wait_until $WAIT_S busy && wait_until $WAIT_S in_ioctl $p
ktap_test_status "a stalled request is in flight (the device is busy)" $? "$(dma32demo-regs "$bdf")"
# Counted before and after: suites sharing the boot leave their own lines
ntmo=$(dmesg | grep -c "$bdf: no completion for")
t0=$(now_cs)
urc=0
echo "$bdf" >$drv/unbind || urc=1
dt=$(($(now_cs) - t0))
ktap_print_msg "unbind took $((dt * 10)) ms with timeout_ms $((tmo_cs * 10))"
[ $urc = 0 ] && [ $dt -lt $((tmo_cs / 4)) ]
ktap_test_status "unbind returns within a quarter of the stalled request's timeout_ms" $? \
	"rc=$urc, $((dt * 10)) ms of a $((tmo_cs * 10)) ms timeout"
# shellcheck disable=SC2317 # called through wait_until
ended() { ! alive "$1"; }
wait_until $WAIT_S ended $p
ktap_test_status "the stalled request ends at the unbind" $? "pid $p still running"
wait $p
rc=$?
j=$(cat /tmp/going.json)
ktap_print_msg "rc=$rc $j $(cat /tmp/going.err)"
[ $rc = 1 ] && [ "$(jget errno "$j")" = ENODEV ]
ktap_test_status "the stalled request fails with ENODEV, not its timeout" $? "rc=$rc $j"
regs=$(dma32demo-regs "$bdf")
ktap_print_msg "after the unbind: $regs"
echo "$regs" | grep -q 'int_mask=0 .* stopped '
ktap_test_status "after the unbind the engine is stopped, interrupts masked (device registers)" $? "$regs"
dmesg | grep -q "$bdf: device going away: request ended with descriptors in flight"
ktap_test_status "the log says the request ended because the device went away" $? "no such line"
[ "$(dmesg | grep -c "$bdf: no completion for")" = "$ntmo" ]
ktap_test_status "the request did not time out (no timeout in the log)" $? "$(dmesg | grep "no completion for" | tail -n 1)"

echo "$old" >$param
echo "$bdf" >$drv/bind
wait_until $WAIT_S test -c /dev/dma32demo0
ktap_test_status "the device binds again" $? "no /dev/dma32demo0"
check_every_strategy_verifies "after the unbind and bind, every strategy x op verifies" 64K 2
ktap_finished

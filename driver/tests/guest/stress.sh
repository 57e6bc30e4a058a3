#!/bin/sh
# run-guest: --smp 2 --timeout 300
#
# dma32demo under load: two processes run verified requests for 30 s each
# (guest time), rotating through coherent, streaming, streaming-dma32 and
# user with random ops and sizes ('dma32demo-stress'), while a third reads
# the statistics. No request may fail, no byte may mismatch (the driver
# verifies every request; for user buffers the tool also compares copies
# and checks that sources were not written, and checks canaries and guard
# pages around the buffers), and afterwards the sysfs counters must equal
# the sums the two processes report.
# shellcheck source=driver/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"
# On two vCPUs: the requests, the IRQ handler and the readers really race.
check_cpus 2
SECONDS_EACH=30
# The tool runs a little longer than required: it times itself, and the
# guest's wall clock, which this script reads, can lag it by a second.
RUN_SECONDS=$((SECONDS_EACH + 2))

require_device
sysdir=$(readlink -f /sys/class/misc/dma32demo0/device)/stats
dma32ctl reset
tlb=/sys/kernel/debug/swiotlb/io_tlb_bounced
tlb0=$(cat $tlb 2>/dev/null)

t0=$(date +%s)
dma32demo-stress --seconds $RUN_SECONDS --seed 1 >/tmp/s1.json 2>/tmp/s1.err &
p1=$!
dma32demo-stress --seconds $RUN_SECONDS --seed 2 >/tmp/s2.json 2>/tmp/s2.err &
p2=$!
# A reader of the counters at the same time
reads=0
while kill -0 $p1 2>/dev/null || kill -0 $p2 2>/dev/null; do
	cat "$sysdir"/* >/dev/null || break
	dma32ctl stats --json >/dev/null || break
	reads=$((reads + 1))
	sleep 1
done
wait $p1
r1=$?
wait $p2
r2=$?
t1=$(date +%s)
j1=$(cat /tmp/s1.json)
j2=$(cat /tmp/s2.json)
ktap_print_msg "process 1: $j1"
ktap_print_msg "process 2: $j2"
errs=$(cat /tmp/s1.err /tmp/s2.err | head -n 5)
[ -z "$errs" ] || ktap_print_msg "$errs"
ktap_print_msg "$reads reads of the counters while they ran, $((t1 - t0)) s in all"

[ $r1 = 0 ] && [ $r2 = 0 ] && [ "$(jget failed "$j1")" = 0 ] && [ "$(jget failed "$j2")" = 0 ]
ktap_test_status "two processes, $SECONDS_EACH s each: $(($(jget requests "$j1") + $(jget requests "$j2"))) requests, none failed" $? "rc $r1 $r2"
mism=$(($(jget mismatched_bytes "$j1") + $(jget mismatched_bytes "$j2")))
[ "$mism" = 0 ]
ktap_test_status "0 mismatched bytes in $(($(jget bytes "$j1") + $(jget bytes "$j2"))) bytes moved" $? "mismatched=$mism"
can=$(($(jget canary_violations "$j1") + $(jget canary_violations "$j2")))
[ "$can" = 0 ]
ktap_test_status "0 canary violations around user buffers" $? "canary=$can"
bad=
for s in coherent streaming streaming-dma32 user; do
	c=$(($(jget "$s" "$j1") + $(jget "$s" "$j2")))
	[ "$c" -gt 0 ] || bad="$bad $s"
	ktap_print_msg "$s: $c requests"
done
[ -z "$bad" ] && [ $((t1 - t0)) -ge $SECONDS_EACH ]
ktap_test_status "every strategy ran, for at least $SECONDS_EACH s" $? "none of:$bad; $((t1 - t0)) s"

sums=
for f in requests errors transfers bytes mappings bounced_mappings bounced_bytes \
	device_faults alloc_failures timeouts resets map_failures; do
	sums="$sums $f:$(($(jget $f "$j1") + $(jget $f "$j2")))"
done
# shellcheck disable=SC2086 # one NAME:SUM word each
mism=$(stats_mismatch $sums)
[ -z "$mism" ]
ktap_test_status "sysfs counters == the sums the two processes report" $? "$mism"
if [ -n "$tlb0" ]; then
	b=$(($(jget bounced_mappings "$j1") + $(jget bounced_mappings "$j2")))
	tlb1=$(cat $tlb)
	[ $((tlb1 - tlb0)) = "$b" ]
	ktap_test_status "swiotlb's io_tlb_bounced grew by the $b bounced mappings reported" $? "$tlb0 -> $tlb1"
else
	ktap_test_pass "swiotlb's io_tlb_bounced grew by the bounced mappings reported # SKIP no $tlb"
fi
check_only_ring_held

ktap_finished

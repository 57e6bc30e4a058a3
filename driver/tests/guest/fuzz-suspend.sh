#!/bin/sh
# run-guest: --smp 2 --append 'dma32demo.allow_unsafe=1 dma32demo.unsafe_fault_injection=1 dma32demo.timeout_ms=300' --timeout 600
#
# The fuzzer across system sleep: the first calls of fuzz.sh's sequence
# (same boot, same parameters, same seed: 2000 calls, 400 on the debug
# kernel) while the system goes through s2idle cycles with
# /sys/power/pm_test set to "devices", as suspend.sh does them, one after
# another for as long as the fuzzer runs (at most 8). The freezer stops
# the fuzzer wherever it is: in a request (the PM notifier aborts it and
# runs it again after resume), in a sysfs write, between calls. Each
# cycle waits pm_test_delay=1 s between the devices' suspend and resume
# callbacks, not the default 5 s, and without the sync before it
# (/sys/power/sync_on_suspend 0; all three restored afterwards); each
# begins, if it can, while the fuzzer waits for the device.
# Checked: every suspend and resume succeeds and no task refuses to
# freeze; at least three came while the fuzzer ran; the fuzzer sees every
# errno as predicted, no canary violation, no mismatch, nothing
# unexpected (its own checks include STATS == what it counted and, at the
# end, sysfs == STATS and only the ring held); afterwards every strategy x
# op verifies, the counters are the sums of those requests' results and
# STATS == sysfs, only the ring is held, no swiotlb slot is mapped and the
# parameters the fuzzer wrote are back. How many of the fuzzer's requests
# a suspend aborted is a diagnostic (its RESET_STATS calls may zero the
# count in between).
# shellcheck source=driver/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"
ktap_set_plan 12
check_cpus 2
require_device
sysdir=$(readlink -f /sys/class/misc/dma32demo0/device)/stats
SEED=${DMA32_FUZZ_SEED:-20261203}
CALLS=2000 CYCLES=8
debug_kernel && CALLS=400

delay=/sys/module/suspend/parameters/pm_test_delay
pm_test0=$(sed -n 's/.*\[\([a-z]*\)\].*/\1/p' /sys/power/pm_test)
delay0=$(cat $delay)
sync0=$(cat /sys/power/sync_on_suspend)
# shellcheck disable=SC2317 # called by ktap_helpers.sh at exit
ktap_cleanup() {
	echo "${delay0:-5}" >$delay
	echo "${pm_test0:-none}" >/sys/power/pm_test
	echo "${sync0:-1}" >/sys/power/sync_on_suspend
}
rc=0
{ echo devices >/sys/power/pm_test && echo 1 >$delay && echo 0 >/sys/power/sync_on_suspend; } 2>/tmp/err || rc=1
ktap_test_status "pm_test 'devices', pm_test_delay 1 s, no sync (were '$pm_test0', $delay0 s, $sync0)" $rc "$(cat /tmp/err)"

t0=$(now_cs)
dma32demo-fuzz --seed "$SEED" --calls $CALLS >/tmp/fuzz-suspend.out 2>/tmp/fuzz-suspend.err &
fz=$!
# in_request: the fuzzer sleeps in an ioctl (a request waiting for the
# device) and still does 50 ms later: most of its requests are over in
# less than a suspend takes to reach the driver's notifier, which aborts
# only one that still waits (an injected stall waits 300 ms). Looked at
# without a pause (the shell's read, no fork) for up to 2 s (a count of
# looks took 30 s a cycle on the debug kernel)
in_request() {
	end=$(($(now_cs) + 200))
	while [ "$(now_cs)" -lt $end ]; do
		{ read -r nr _ <"/proc/$fz/syscall"; } 2>/dev/null || return 1
		if [ "$nr" = 16 ]; then
			sleep 0.05
			{ read -r nr _ <"/proc/$fz/syscall"; } 2>/dev/null && [ "$nr" = 16 ] && return 0
		fi
	done
	return 1
}
# Suspend while the fuzzer runs, each time as soon as it is in a request
# (or after 2 s): a short pause first, so that it makes calls
# between the cycles too
n=0 during=0 failed=0 inreq=0 aborted=0 unknown=0 times=''
dmesg -c >/dev/null
while [ $n -lt $CYCLES ] && alive $fz; do
	sleep 0.2
	n=$((n + 1))
	ab0=$(cat "$sysdir/aborted")
	in_request && inreq=$((inreq + 1))
	c0=$(now_cs)
	echo freeze >/sys/power/state 2>/tmp/err || {
		failed=$((failed + 1))
		ktap_print_msg "suspend $n: $(cat /tmp/err)"
	}
	times="$times $((($(now_cs) - c0) * 10))"
	ab1=$(cat "$sysdir/aborted")
	if [ "$ab1" -ge "$ab0" ]; then
		aborted=$((aborted + ab1 - ab0))
	else
		unknown=$((unknown + 1))
	fi
	alive $fz && during=$((during + 1))
done
wait $fz
frc=$?
secs=$((($(now_cs) - t0) / 100))
refused=$(dmesg | grep -E 'Freezing .*failed|refusing to freeze' | head -n 2)
ktap_print_msg "$n suspend cycles in $secs s (ms each:$times), $during with the fuzzer still running after them, $inreq begun with it in a request; requests aborted: $aborted (the count reset by the fuzzer in $unknown cycles)"
[ $failed = 0 ] && [ -z "$refused" ] && [ $n -gt 0 ]
ktap_test_status "$n suspends and resumes succeed while the fuzzer runs, no task refuses to freeze" $? \
	"$failed failed $refused"
[ $during -ge 3 ]
ktap_test_status "at least 3 of them while the fuzzer ran ($during)" $? "the fuzzer ended after $n cycles"

sum=$(grep '^fuzz: seed' /tmp/fuzz-suspend.out)
ktap_print_msg "$sum"
head -n 20 /tmp/fuzz-suspend.err | ktap_print_lines
calls=$(echo "$sum" | sed -n 's/.* calls \([0-9]*\) .*/\1/p')
[ $frc = 0 ] && [ "${calls:-0}" -ge $CALLS ]
ktap_test_status "fuzz across the suspends: ${calls:-0} calls, seed $SEED, every errno as predicted" $? "rc=$frc"
echo "$sum" | grep -q 'canary_violations 0 mismatches 0 unexpected 0$'
ktap_test_status "fuzz across the suspends: 0 canary violations, 0 mismatches, 0 unexpected results" $? "$sum"
ktap_cleanup

# The counters against the results of one request per strategy x op
dma32ctl reset
bad='' want_requests=0
set -- 0 0 0 0 0
for strat in coherent streaming streaming-dma32 user; do
	for op in fill checksum copy; do
		j=$(dma32ctl run --strategy $strat --op $op --size 96K --count 3 --verify --json 2>&1) ||
			bad="$bad $strat/$op: $j"
		[ "$(jget buffers_verified "$j")" = 3 ] || bad="$bad $strat/$op: $j"
		want_requests=$((want_requests + 1))
		set -- $(($1 + $(jget transfers "$j"))) $(($2 + $(jget bytes "$j"))) \
			$(($3 + $(jget mappings "$j"))) $(($4 + $(jget bounced "$j"))) \
			$(($5 + $(jget bounced_bytes "$j")))
	done
done
[ -z "$bad" ]
ktap_test_status "after the suspends, every strategy x op verifies" $? "$bad"
mism=$(stats_mismatch requests:$want_requests errors:0 transfers:"$1" bytes:"$2" mappings:"$3" \
	bounced_mappings:"$4" bounced_bytes:"$5" resets:0 timeouts:0 aborted:0)
[ -z "$mism" ]
ktap_test_status "the counters are the sums of those $want_requests results" $? "$mism"
st=$(dma32ctl stats --json)
mism=''
for f in "$sysdir"/*; do
	[ "$(jget "${f##*/}" "$st")" = "$(cat "$f")" ] || mism="$mism ${f##*/}=$(cat "$f")(STATS $(jget "${f##*/}" "$st"))"
done
[ -z "$mism" ]
ktap_test_status "STATS == sysfs" $? "$mism"

check_only_ring_held
used=$(cat /sys/kernel/debug/swiotlb/io_tlb_used 2>&1)
[ "$used" = 0 ]
ktap_test_status "no swiotlb slot left mapped" $? "io_tlb_used=$used"
[ "$(cat /sys/module/dma32demo/parameters/timeout_ms)" = 300 ] &&
	[ "$(cat /sys/module/dma32demo/parameters/max_request_mb)" = 1024 ]
ktap_test_status "module parameters restored after the random writes" $? \
	"timeout_ms $(cat /sys/module/dma32demo/parameters/timeout_ms), max_request_mb $(cat /sys/module/dma32demo/parameters/max_request_mb)"

ktap_finished

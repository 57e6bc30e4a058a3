#!/bin/sh
# run-guest: --append 'dma32demo.unsafe_fault_injection=1' --smp 2 --timeout 600
#
# dma32demo across system sleep: s2idle with /sys/power/pm_test set to
# "devices" (the freezer stops user space, every device's suspend callback
# runs, 5 s pass, every resume callback runs; nothing loses power).
# - An idle device: suspend resets the engine, which clears its ring
#   registers; resume programs the ring again. Afterwards every strategy x op
#   verifies, on the ring probe allocated, which is all that is held.
# - A stalled request in flight (timeout_ms 60 s), in a killable wait the
#   freezer cannot end: the driver's PM notifier, which runs before the
#   freezer, aborts it, and the suspend succeeds within seconds. Without
#   that the freezer would give up after 20 s, and the write to
#   /sys/power/state fail with EBUSY.
# - A 1 GiB verified checksum in flight and a second one waiting for the
#   device: the driver runs both again after resume, and both verify all
#   16 buffers; neither sees EINTR.
# - The counters count what the callers saw: across the suspend that
#   aborted the running request, requests +2, errors, resets and timeouts
#   +0 and aborted +1 (the aborted run of it), and transfers and bytes are
#   the sums of the two results.
# - A request under a 5 ms timer whose handler has no SA_RESTART, across
#   three suspends that abort it: the thawed caller's signals, which come
#   before the driver hears of the resume, do not end it with EINTR.
# - The driver's counters and held memory are what they were.
# shellcheck source=driver/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"
check_cpus 2

require_device
sysdir=$(readlink -f /sys/class/misc/dma32demo0/device)/stats
param=/sys/module/dma32demo/parameters/timeout_ms
GIB="--strategy streaming-dma32 --op checksum --size 64M --count 16 --verify --json"

rc=0
echo devices >/sys/power/pm_test 2>/tmp/err || rc=1
ktap_test_status "pm_test accepts 'devices' (CONFIG_PM_DEBUG)" $rc "$(cat /tmp/err)"

# sleep_cycle WHAT: one s2idle cycle; ok when the write succeeds and the
# kernel logged no freezer failure (a wait the freezer cannot end makes the
# write fail with EBUSY: that, not the time, tells; the time is a diagnostic)
sleep_cycle() {
	dmesg -c >/dev/null
	t0=$(now_cs)
	rc=0
	echo freeze >/sys/power/state 2>/tmp/err || rc=1
	dt=$(($(now_cs) - t0))
	ktap_print_msg "$1: suspend and resume took $((dt * 10)) ms"
	refused=$(dmesg | grep -E 'Freezing .*failed|refusing to freeze' | head -n 2)
	[ $rc = 0 ] && [ -z "$refused" ]
	ktap_test_status "$1: suspend and resume succeed ($((dt * 10)) ms)" $? \
		"rc=$rc $(cat /tmp/err) $refused"
}

# 1. Idle
ring0=$(jget ring_dma "$(dma32ctl info --json)")
dma32ctl run --strategy coherent --op fill --size 64K --count 2 --verify >/dev/null
req0=$(cat "$sysdir/requests")
sleep_cycle "an idle device"
check_every_strategy_verifies "after resume: every strategy x op verifies (the ring was programmed again)" 64K 2
ring1=$(jget ring_dma "$(dma32ctl info --json)")
[ -n "$ring0" ] && [ "$ring0" = "$ring1" ]
ktap_test_status "after resume: the ring is the one probe allocated ($ring1)" $? "before $ring0, after $ring1"
check_only_ring_held
req1=$(cat "$sysdir/requests")
[ "$req1" -gt "$req0" ]
ktap_test_status "the counters survive (requests: $req0 before, $req1 after)" $? "requests $req0 -> $req1"

# 2. A stalled request in flight: only system sleep ends it before 60 s
echo 60000 >$param
dma32ctl run --strategy coherent --op fill --size 64K --inject stall >/tmp/stall.out 2>&1 &
p=$!
wait_until 300 in_ioctl $p
ktap_test_status "the stalled request is inside the driver" $? "pid $p not in an ioctl"
sleep_cycle "a stalled request in flight"
# The request runs again after resume and stalls again: end it.
kill -9 $p 2>/dev/null
wait $p 2>/dev/null
echo 5000 >$param
j=$(dma32ctl run --strategy streaming-dma32 --op checksum --size 1M --count 2 --verify --json 2>&1)
rc=$?
[ $rc = 0 ] && [ "$(jget buffers_verified "$j")" = 2 ]
ktap_test_status "after the stalled request: the next request verifies" $? "rc=$rc $j"

# stats NAME...: the driver's sysfs counters NAME, one line
stats() {
	for st; do
		printf '%s=%s ' "$st" "$(cat "$sysdir/$st")"
	done
}
COUNTED="requests errors resets timeouts transfers bytes aborted"

# 3. One request running, one queued behind it
# shellcheck disable=SC2086 # $COUNTED is a list of names
before=$(stats $COUNTED)
# shellcheck disable=SC2086 # $GIB is a list of options
dma32ctl run $GIB >/tmp/a.json 2>/tmp/a.err &
pa=$!
wait_until 300 in_driver $pa
# shellcheck disable=SC2086
dma32ctl run $GIB >/tmp/b.json 2>/tmp/b.err &
pb=$!
wait_until 300 in_driver $pb
running=0
alive $pa && alive $pb && running=1
sleep_cycle "a 1 GiB request in flight, another queued"
wait $pa
ra=$?
wait $pb
rb=$?
[ $running = 1 ]
ktap_test_status "both requests were still running at the suspend" $? "the first ended too early"
for x in a:$ra b:$rb; do
	f=/tmp/${x%%:*}
	[ "${x#*:}" = 0 ] && [ "$(jget buffers_verified "$(cat "$f.json")")" = 16 ]
	ktap_test_status "request ${x%%:*}: run again after resume, all 16 buffers verified" $? \
		"rc=${x#*:} $(cat "$f.json" "$f.err")"
done
# shellcheck disable=SC2086
after=$(stats $COUNTED)
ktap_print_msg "counters before: $before"
ktap_print_msg "counters after:  $after"
# delta NAME: how much counter NAME grew from $before to $after
delta() {
	b=$(echo "$before" | grep -o "$1=[0-9]*" | cut -d= -f2)
	a=$(echo "$after" | grep -o "$1=[0-9]*" | cut -d= -f2)
	echo $((a - b))
}
ja=$(cat /tmp/a.json) jb=$(cat /tmp/b.json)
sum_t=$(($(jget transfers "$ja") + $(jget transfers "$jb")))
sum_b=$(($(jget bytes "$ja") + $(jget bytes "$jb")))
[ "$(delta requests)" = 2 ] && [ "$(delta errors)" = 0 ] &&
	[ "$(delta resets)" = 0 ] && [ "$(delta timeouts)" = 0 ]
ktap_test_status "counted once: requests +2, errors, resets and timeouts +0 for two requests that succeeded" $? \
	"requests +$(delta requests), errors +$(delta errors), resets +$(delta resets), timeouts +$(delta timeouts)"
[ "$(delta aborted)" = 1 ]
ktap_test_status "the aborted run is counted in aborted (+1)" $? "aborted +$(delta aborted)"
[ "$(delta transfers)" = "$sum_t" ] && [ "$(delta bytes)" = "$sum_b" ]
ktap_test_status "transfers and bytes are the sums of the two results ($sum_t, $sum_b)" $? \
	"transfers +$(delta transfers), bytes +$(delta bytes)"

# 4. Periodic signals without SA_RESTART, across suspends that abort the
# request: thawed before the driver hears of the resume, the caller takes
# its signals while the aborted request waits to run again
ab0=$(cat "$sysdir/aborted")
dma32demo-ioctls --signals-across-sleep >/tmp/sig.out 2>&1 &
ps=$!
wait_until 300 in_driver $ps
ktap_test_status "the request under a 5 ms timer is inside the driver" $? "$(cat /tmp/sig.out)"
n=0
while [ $n -lt 3 ] && alive $ps; do
	n=$((n + 1))
	sleep_cycle "signals without SA_RESTART, suspend $n"
done
wait $ps
rs=$?
ab=$(($(cat "$sysdir/aborted") - ab0))
ktap_print_msg "$(cat /tmp/sig.out)"
[ "$ab" -ge 1 ]
ktap_test_status "the suspends aborted the request ($ab times): the test saw a suspend" $? "aborted +$ab"
[ $rs = 0 ]
ktap_test_status "periodic signals without SA_RESTART across the suspends: no EINTR, verified" $? \
	"rc=$rs $(cat /tmp/sig.out)"
check_only_ring_held

ktap_finished

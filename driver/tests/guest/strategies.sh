#!/bin/sh
# run-guest: --append 'dma32demo.allow_unsafe=1'
#
# dma32demo: every strategy x op with verified data on the default device
# (dma-bits=32, 6 GiB guest: ordinary pages mostly above 4 GiB), where the
# bounces are, unsafe-raw faulting cleanly above 4 GiB, the sysfs counters
# against the sum of the requests, and two processes at once.
# shellcheck source=driver/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"

dev=/dev/dma32demo0
if [ ! -c $dev ]; then
	ktap_test_fail "probe creates $dev" "missing; dmesg: $(dmesg | grep -i dma32 | tail -n 3 | tr '\n' ' ')"
	ktap_finished
fi
ktap_test_pass "probe creates $dev"
sysdir=$(readlink -f /sys/class/misc/dma32demo0/device)/stats
ktap_print_msg "$(dma32ctl info --json)"
dma32ctl reset
# swiotlb's own count of bounced mappings, where the kernel has it
# (kernel-patches 6.1/0006, 6.12/0003); nothing else in the guest does DMA.
tlb=/sys/kernel/debug/swiotlb/io_tlb_bounced
tlb0=$(cat $tlb 2>/dev/null)

# Sums of what the requests reported, for the sysfs check
s_transfers=0 s_bytes=0 s_mappings=0 s_bounced=0 s_bbytes=0 s_faults=0 s_req=0
add() {
	s_req=$((s_req + 1))
	s_transfers=$((s_transfers + $(jget transfers "$1")))
	s_bytes=$((s_bytes + $(jget bytes "$1")))
	s_mappings=$((s_mappings + $(jget mappings "$1")))
	s_bounced=$((s_bounced + $(jget bounced "$1")))
	s_bbytes=$((s_bbytes + $(jget bounced_bytes "$1")))
	s_faults=$((s_faults + $(jget device_faults "$1")))
}

for strat in coherent streaming streaming-dma32 user; do
	bounced=0 maps=0 above=0 pages_hi=0
	for op in fill checksum copy; do
		j=$(dma32ctl run --strategy $strat --op $op --size 192K --count 3 --verify --json 2>&1)
		rc=$?
		add "$j"
		if [ $rc = 0 ] && [ "$(jget ok "$j")" = true ] &&
			[ "$(jget verify_errors "$j")" = 0 ] &&
			[ "$(jget buffers_verified "$j")" = 3 ] &&
			[ "$(jget bytes "$j")" = $((3 * 192 * 1024)) ]; then
			ktap_test_pass "$strat $op verified"
		else
			ktap_test_fail "$strat $op verified" "rc=$rc $j"
		fi
		bounced=$((bounced + $(jget bounced "$j")))
		maps=$((maps + $(jget mappings "$j")))
		above=$((above + $(jget mappings_above_4g "$j")))
		pages_hi=$((pages_hi + $(jget pages_above_4g "$j")))
	done
	ktap_print_msg "$strat: $maps mappings, $above above 4 GiB, $bounced bounced, $pages_hi pages above 4 GiB"
	case $strat in
	coherent | streaming-dma32)
		[ $bounced = 0 ] && [ $above = 0 ]
		ktap_test_status "$strat: 0 bounced, 0 mappings above 4 GiB" $? "bounced=$bounced above=$above"
		;;
	streaming | user)
		[ $bounced = $above ] && [ $above -gt 0 ]
		ktap_test_status "$strat: bounced == mappings above 4 GiB (> 0)" $? "bounced=$bounced above=$above of $maps"
		;;
	esac
done

# unsafe-raw: the device gets CPU physical addresses above its 32-bit reach
for op in fill checksum copy; do
	j=$(dma32ctl run --strategy unsafe-raw --op $op --size 64K --count 2 --verify --json 2>/dev/null)
	rc=$?
	add "$j"
	fa=$(jget fault_addr "$j")
	faults=$(jget device_faults "$j")
	above=$(jget mappings_above_4g "$j")
	if [ "$above" = 0 ]; then
		ktap_test_pass "unsafe-raw $op above 4 GiB faults with the fault address # SKIP no page above 4 GiB"
		continue
	fi
	want=$above
	[ $op = copy ] || [ "$faults" = "$want" ] || want=bad
	if [ $rc != 0 ] && [ "$(jget errno "$j")" = EIO ] && [ "$faults" -gt 0 ] &&
		[ "$want" != bad ] && [ "${fa:-0}" -ge 4294967296 ] &&
		[ "$(jget latched_fault_addr "$j")" -ge 4294967296 ]; then
		ktap_test_pass "unsafe-raw $op above 4 GiB fails with EIO and fault address $(printf '%#x' "$fa")"
	else
		ktap_test_fail "unsafe-raw $op above 4 GiB fails with EIO and the fault address" "rc=$rc $j"
	fi
done

j=$(dma32ctl run --strategy coherent --op copy --size 64K --count 2 --verify --json 2>&1)
rc=$?
add "$j"
ktap_test_status "a request after device faults works" $rc "$j"

# The sysfs counters are the sum of the requests
mism=$(stats_mismatch requests:$s_req transfers:$s_transfers bytes:$s_bytes mappings:$s_mappings \
	bounced_mappings:$s_bounced bounced_bytes:$s_bbytes device_faults:$s_faults)
[ -z "$mism" ]
ktap_test_status "sysfs stats == sum of the $s_req requests" $? "$mism"
ktap_print_msg "sysfs: transfers=$s_transfers bytes=$s_bytes mappings=$s_mappings bounced=$s_bounced bounced_bytes=$s_bbytes faults=$s_faults"

if [ -n "$tlb0" ]; then
	tlb1=$(cat $tlb)
	[ $((tlb1 - tlb0)) = "$s_bounced" ]
	ktap_test_status "swiotlb's io_tlb_bounced grew by the $s_bounced bounced mappings reported" $? \
		"io_tlb_bounced $tlb0 -> $tlb1"
else
	ktap_test_pass "swiotlb's io_tlb_bounced grew by the bounced mappings reported # SKIP no $tlb"
fi

st=$(dma32ctl stats --json)
[ "$(jget transfers "$st")" = "$(cat "$sysdir/transfers")" ] &&
	[ "$(jget bounced_bytes "$st")" = "$(cat "$sysdir/bounced_bytes")" ] &&
	[ "$(jget alloc_failures "$st")" = "$(cat "$sysdir/alloc_failures")" ]
ktap_test_status "STATS ioctl agrees with sysfs" $? "$st"

check_only_ring_held

# Two processes at once, different strategies, both verified
dma32ctl run --strategy streaming --op copy --size 512K --count 4 --verify --json >/tmp/a.json 2>&1 &
pa=$!
dma32ctl run --strategy user --op checksum --size 512K --count 4 --verify --json >/tmp/b.json 2>&1 &
pb=$!
dma32ctl run --strategy coherent --op fill --size 512K --count 4 --verify --json >/tmp/c.json 2>&1
rc=$?
wait $pa
ra=$?
wait $pb
rb=$?
[ $ra = 0 ] && [ $rb = 0 ] && [ $rc = 0 ] &&
	grep -q '"ok":true' /tmp/a.json && grep -q '"ok":true' /tmp/b.json
ktap_test_status "three processes at once all verify" $? "rc $ra $rb $rc: $(cat /tmp/a.json /tmp/b.json /tmp/c.json)"

ktap_finished

#!/bin/sh
# run-guest: --append 'dma32demo.timeout_ms=1000'
#
# dma32demo error paths (the ioctls' own errnos: ioctls.sh): dma32ctl's exit
# codes and usage errors, unsafe-raw is refused without allow_unsafe, a hung
# device gives ETIMEDOUT and a reset, a bus error gives EIO with the fault
# address, a full swiotlb gives ENOMEM without a warning (a dynamic one
# grows instead), and after each
# the next request works and nothing is held.
# shellcheck source=driver/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"
works() {
	j=$(dma32ctl run --strategy streaming --op copy --size 128K --count 2 --verify --json 2>&1)
	ktap_test_status "the next request works ($1)" $? "$j"
}

require_device
sysdir=$(readlink -f /sys/class/misc/dma32demo0/device)/stats

err=$(dma32ctl run --strategy unsafe-raw --op fill --size 4K 2>&1 >/dev/null)
rc=$?
[ $rc = 1 ] && echo "$err" | grep -q EPERM
ktap_test_status "dma32ctl: unsafe-raw without allow_unsafe exits 1 naming EPERM" $? "rc=$rc: $err"

err=$(dma32ctl run --strategy coherent --op fill --size 0 2>&1 >/dev/null)
rc=$?
[ $rc = 1 ] && echo "$err" | grep -q EINVAL
ktap_test_status "dma32ctl: size 0 exits 1 naming EINVAL" $? "rc=$rc: $err"

err=$(dma32ctl run --strategy bogus --op fill --size 4K 2>&1 >/dev/null)
rc=$?
[ $rc = 2 ] && [ "$(echo "$err" | wc -l)" = 1 ]
ktap_test_status "dma32ctl: unknown strategy is a one-line usage error" $? "rc=$rc: $err"

# Sizes: a digit must start them and a suffix must not shift bits out
bad=
for v in ' 4K' '	4K' '+4K' '-1' 17179869184G 16777216T 18446744073709551616 4X 4iB 4Ki ''; do
	err=$(dma32ctl run --strategy coherent --op fill --size "$v" 2>&1 >/dev/null)
	rc=$?
	[ $rc = 2 ] && echo "$err" | grep -q "bad --size" || bad="$bad [$v]:rc=$rc"
done
err=$(dma32ctl run --strategy coherent --op fill --size 4K --count ' 2' 2>&1 >/dev/null)
rc=$?
[ $rc = 2 ] && echo "$err" | grep -q "bad --count" || bad="$bad [count ' 2']:rc=$rc"
[ -z "$bad" ]
ktap_test_status "dma32ctl: sizes with white space, a sign, an overflowing suffix or iB without K, M or G are usage errors" $? "$bad"
# --counter: up to 32 files (the demo reads more than 16), the 33rd a usage error
cdir=$(mktemp -d)
set --
i=0
while [ $i -lt 33 ]; do
	echo $i >"$cdir/c$i"
	[ $i -lt 32 ] && set -- "$@" --counter "$cdir/c$i"
	i=$((i + 1))
done
j=$(dma32ctl run --strategy coherent --op fill --size 4K "$@" --json 2>&1)
rc=$?
[ $rc = 0 ] && echo "$j" | grep -q "\"$cdir/c0\":{\"before\":0,\"after\":0}" &&
	echo "$j" | grep -q "\"$cdir/c31\":{\"before\":31,\"after\":31}"
ktap_test_status "dma32ctl: 32 --counter files are read" $? "rc=$rc: $j"
err=$(dma32ctl run --strategy coherent --op fill --size 4K "$@" --counter "$cdir/c32" 2>&1 >/dev/null)
rc=$?
[ $rc = 2 ] && [ "$(echo "$err" | wc -l)" = 1 ] && echo "$err" | grep -q "at most 32 --counter files"
ktap_test_status "dma32ctl: a 33rd --counter file is a one-line usage error" $? "rc=$rc: $err"
err=$(dma32ctl run --strategy coherent --op fill --size 4K --counter "$cdir/c0" --counter "$cdir/c0" 2>&1 >/dev/null)
rc=$?
[ $rc = 2 ] && [ "$(echo "$err" | wc -l)" = 1 ] && echo "$err" | grep -q "given twice"
ktap_test_status "dma32ctl: a --counter file given twice is a one-line usage error (one JSON key each)" $? "rc=$rc: $err"
set --
rm -r "$cdir"

bad=
for v in 4K 4KiB 4096 0x1000 4kB 1M; do
	dma32ctl run --strategy coherent --op fill --size "$v" --verify >/dev/null 2>&1 || bad="$bad $v"
done
[ -z "$bad" ]
ktap_test_status "dma32ctl: 4K, 4KiB, 4096, 0x1000, 4kB and 1M are accepted" $? "refused:$bad"

# Fault injection is a test interface: refused until the module allows it
fi=/sys/module/dma32demo/parameters/unsafe_fault_injection
j=$(dma32ctl run --strategy coherent --op fill --size 4K --inject stall --json 2>/dev/null)
rc=$?
[ $rc = 1 ] && [ "$(jget errno "$j")" = EPERM ] && [ "$(cat $fi)" = N ] &&
	dmesg | grep -q 'fault injection refused: it needs the module parameter unsafe_fault_injection=1'
ktap_test_status "--inject without unsafe_fault_injection=1 is refused (EPERM, one log line)" $? "rc=$rc $j"
echo 1 >$fi
[ "$(jget fault_injection "$(dma32ctl info --json)")" = true ]
ktap_test_status "unsafe_fault_injection=1 is reported by INFO" $? "$(dma32ctl info --json)"

# A device that never completes
t0=$(date +%s)
j=$(dma32ctl run --strategy coherent --op fill --size 64K --count 2 --inject stall --json 2>/dev/null)
rc=$?
t1=$(date +%s)
[ $rc = 1 ] && [ "$(jget errno "$j")" = ETIMEDOUT ] && [ "$(jget timeouts "$j")" = 1 ] &&
	[ "$(jget resets "$j")" = 1 ] && [ "$(jget transfers "$j")" = 0 ]
ktap_test_status "stalled device gives ETIMEDOUT and a reset (took $((t1 - t0)) s)" $? "rc=$rc $j"
works "after a timeout"
[ "$(cat "$sysdir/timeouts")" = 1 ] && [ "$(cat "$sysdir/resets")" = 1 ]
ktap_test_status "sysfs counts the timeout and the reset" $? "timeouts=$(cat "$sysdir/timeouts") resets=$(cat "$sysdir/resets")"

# A bus error on the first transfer
j=$(dma32ctl run --strategy streaming-dma32 --op checksum --size 64K --count 2 --inject bus-error --verify --json 2>/dev/null)
rc=$?
fa=$(jget fault_addr "$j")
[ $rc = 1 ] && [ "$(jget errno "$j")" = EIO ] && [ "$(jget device_faults "$j")" = 1 ] &&
	[ "$(jget dev_status "$j")" = 3 ] && [ "${fa:-0}" -gt 0 ] &&
	[ "$fa" = "$(jget latched_fault_addr "$j")" ]
ktap_test_status "bus error gives EIO with the fault address $(printf '%#x' "${fa:-0}")" $? "rc=$rc $j"
works "after a bus error"

# swiotlb full: 96 MiB of buffers above 4 GiB, mapped at once, need more
# bounce space than the 64 MiB pool. With CONFIG_SWIOTLB_DYNAMIC (the 6.12
# guests) a mapping that finds no slot gets a pool of its own instead, and
# the request succeeds: the driver's ENOMEM path is then shown on the
# other kernels, and kernel-patches' swiotlb-full shows the pool growing.
nslabs=$(cat /sys/kernel/debug/swiotlb/io_tlb_nslabs 2>/dev/null)
ktap_print_msg "swiotlb: $nslabs slabs ($((${nslabs:-0} * 2048 / 1048576)) MiB)"
full0=$(cat /sys/kernel/debug/swiotlb/io_tlb_full 2>/dev/null)
j=$(dma32ctl run --strategy streaming --op fill --size 1M --count 96 --json 2>/dev/null)
rc=$?
full1=$(cat /sys/kernel/debug/swiotlb/io_tlb_full 2>/dev/null)
if [ -e /sys/kernel/debug/swiotlb/io_tlb_transient_nslabs ]; then
	[ $rc = 0 ] && [ "$(jget bounced "$j")" -gt 0 ] && [ "$full1" = "$full0" ]
	ktap_test_status "dynamic swiotlb: 96 MiB through the 64 MiB pool succeeds, nothing refused ($(jget bounced_bytes "$j") bytes bounced)" $? "rc=$rc io_tlb_full $full0 -> $full1 $j"
	ktap_test_skip "swiotlb's io_tlb_full counted exactly that one refusal" "CONFIG_SWIOTLB_DYNAMIC: nothing is refused"
else
	[ $rc = 1 ] && [ "$(jget errno "$j")" = ENOMEM ] && [ "$(jget alloc_failures "$j")" = 1 ] &&
		[ "$(jget bounced "$j")" -gt 0 ]
	ktap_test_status "swiotlb full gives ENOMEM ($(jget bounced_bytes "$j") bytes bounced before)" $? "rc=$rc $j"
	if [ -n "$full0" ]; then
		[ $((full1 - full0)) = 1 ]
		ktap_test_status "swiotlb's io_tlb_full counted exactly that one refusal" $? "$full0 -> $full1"
	else
		ktap_test_skip "swiotlb's io_tlb_full counted exactly that one refusal" "no io_tlb_full"
	fi
fi
! dmesg | grep -q "swiotlb buffer is full"
ktap_test_status "no 'swiotlb buffer is full' warning" $? "$(dmesg | grep swiotlb | tail -n 2)"
used=$(cat /sys/kernel/debug/swiotlb/io_tlb_used 2>&1)
[ "$used" = 0 ]
ktap_test_status "swiotlb slots all released" $? "io_tlb_used=$used"
works "after swiotlb ran out"

check_only_ring_held

ktap_finished

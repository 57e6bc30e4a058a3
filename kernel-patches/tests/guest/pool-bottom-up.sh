#!/bin/sh
# kernel-patches: swiotlb_bottom_up takes the swiotlb pool from the bottom of
# the memory below 4 GiB, as 2.6.14's alloc_bootmem_low_pages_limit(bytes,
# 0x100000000) did, where a 31-bit device reaches it; without it the pool
# lies just below 4 GiB, where it does not. pc with 6 GiB: 3 GiB below
# 4 GiB, so there is a pool, and today's top-down one would lie near
# 3 GiB, out of a 31-bit device's reach. The device's coherent mask is
# forced to 24 bits: once ZONE_DMA is used up, the model's step (c) gets
# pool slots above 16 MiB, beyond that mask, where 2.6.14 panicked
# ("allocated memory is out of range for device"): the allocation fails
# and dma_direct/coherent_2614_would_panic counts it.
# run-guest: --machine pc --mem 6G
# run-guest: --append 'swiotlb_bottom_up dma_coherent_model=2.6.14 dma32=off dma32demo.force_coherent_bits=24'
# shellcheck source=kernel-patches/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"

ktap_test_result "swiotlb_bottom_up on the command line" grep -q swiotlb_bottom_up /proc/cmdline
# "software IO TLB: mapped [mem 0x0000000001c06000-0x0000000005c06000] (64MB)"
line=$(grep -o 'software IO TLB: mapped \[mem 0x[0-9a-f]*-0x[0-9a-f]*\]' /tmp/boot.dmesg | tail -n 1)
ktap_print_msg "boot log: $line"
range=${line##*\[mem }
range=${range%\]}
start=$((${range%-*}))
end=$((${range#*-}))
ktap_test_result "the boot log gives the pool's place" test -n "$line"
ktap_test_result "the pool is 64 MiB: $start..$end" eq $((end - start)) 67108864
ktap_test_result "the pool lies in the lowest 256 MiB, above the kernel (16 MiB)" \
	sh -c "[ $start -ge 16777216 ] && [ $end -le 268435456 ]"
ktap_test_result "the pool lies below 2 GiB: a 31-bit device reaches it" test "$end" -le 2147483648
ktap_test_result "its slots agree with io_tlb_nslabs" eq "$(c io_tlb_nslabs)" $(((end - start) / 2048))
f=/sys/kernel/debug/dma_direct/coherent_2614_would_panic
ktap_test_result "dma_direct/coherent_2614_would_panic exists and starts at 0" eq "$(cat $f 2>/dev/null)" 0
if command -v dma32ctl >/dev/null 2>&1; then
	# 16 MiB of 256 KiB buffers: more than ZONE_DMA holds, so step (c)
	# is reached and its pool slots lie beyond the 24-bit mask
	runj --strategy coherent --op fill --size 256K --count 64
	n=$(cat $f)
	ktap_print_msg "$(jget buffers "$j") buffers from ZONE_DMA, then $(jget errno "$j"); coherent_2614_would_panic $n"
	ktap_test_result "pool slots beyond a 24-bit coherent mask: ENOMEM, coherent_2614_would_panic 1" \
		eq "$(jget errno "$j") $n" "ENOMEM 1"
	ktap_test_result "no pool buffer held after (io_tlb_coherent_held)" eq "$(c io_tlb_coherent_held)" 0
else
	ktap_test_skip "pool slots beyond a 24-bit coherent mask: ENOMEM, coherent_2614_would_panic 1" "dma32ctl not available"
	ktap_test_skip "no pool buffer held after (io_tlb_coherent_held)" "dma32ctl not available"
fi
ktap_test_result "coherent_2614_would_panic: echo 0 resets it to 0" sh -c "echo 0 >$f && [ \$(cat $f) = 0 ]"
check_refused "coherent_2614_would_panic: echo 5 fails" "$f" 5
ktap_finished

#!/bin/sh
# kernel-patches: with a tiny swiotlb pool (swiotlb=128,1: 128 slabs of 2 KiB in one area,
# the minimum, one segment) a streaming request larger than the pool fails
# and io_tlb_full counts the refused mappings (the driver never maps more
# than a segment, so neither io_tlb_too_big nor io_tlb_align_fail moves);
# nothing stays mapped. With CONFIG_SWIOTLB_DYNAMIC (the 6.12 guests) it
# shows the other behaviour: the request succeeds and the pool grows.
# run-guest: --mem 6G --append 'swiotlb=128,1'
# shellcheck source=kernel-patches/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"

ktap_test_result "pool is 128 slabs" eq "$(c io_tlb_nslabs)" 128
# The counters count from boot, and another suite of the same boot may
# have moved them (faults fills this pool too): this suite judges their
# changes from here. What it needs is an empty pool.
full0=$(c io_tlb_full) too_big0=$(c io_tlb_too_big) align0=$(c io_tlb_align_fail)
ktap_test_result "nothing mapped at the start (io_tlb_used 0)" eq "$(c io_tlb_used)" 0
if ! command -v dma32ctl >/dev/null 2>&1; then
	ktap_test_skip "oversized streaming request fails and io_tlb_full rises" "dma32ctl not available"
	ktap_test_skip "the refusals are counted as a full pool, not another cause" "dma32ctl not available"
	ktap_test_skip "nothing left mapped, high-water mark within the pool" "dma32ctl not available"
	ktap_test_skip "a request that fits still works" "dma32ctl not available"
	ktap_finished
fi
# CONFIG_SWIOTLB_DYNAMIC (the 6.12 guests): no refusal. A mapping that finds
# no slot gets a transient pool of its own (GFP_NOWAIT, below the device's
# mask) and schedules swiotlb_dyn_alloc(), which adds another default-sized
# pool: the growth that dma_coherent_model=2.6.14's step (c) must not cause
# (model-2g checks that), shown here to happen for streaming mappings.
if [ -e "$D/io_tlb_transient_nslabs" ]; then
	grow0=$(c io_tlb_grow)
	ktap_test_result "dynamic swiotlb: a 4 MiB streaming request through the 128-slab pool verifies" \
		ctl run --strategy streaming --op fill --size 4194304 --verify --json
	# counted when scheduled: model-2g relies on this to see at once that
	# its misses scheduled none
	ktap_test_result "dynamic swiotlb: the misses scheduled pool growth at once (io_tlb_grow $grow0 -> $(c io_tlb_grow))" \
		test "$(c io_tlb_grow)" -gt "$grow0"
	# swiotlb_dyn_alloc() runs from the system workqueue some time after
	# the miss: wait for the growth itself (up to a minute, far beyond
	# what a working machine needs), not a fixed time.
	waited=0
	while [ "$(c io_tlb_nslabs)" -le 128 ] && [ $waited -lt 600 ]; do
		sleep 0.1
		waited=$((waited + 1))
	done
	n=$(c io_tlb_nslabs)
	ktap_test_result "dynamic swiotlb: the misses grew the default pool: $n slabs, more than 128" test "$n" -gt 128
	ktap_test_result "dynamic swiotlb: nothing refused (io_tlb_full +0)" eq "$(($(c io_tlb_full) - full0))" 0
	ktap_test_result "dynamic swiotlb: nothing left mapped, the transient pools gone" \
		eq "$(c io_tlb_used) $(c io_tlb_transient_nslabs)" "0 0"
	ktap_finished
fi
full=0
for size in 1048576 2097152 4194304 8388608; do
	ctl run --strategy streaming --op fill --size $size --json
	full=$(($(c io_tlb_full) - full0))
	[ "$full" -gt 0 ] && break
done
ktap_test_result "oversized streaming request fails and io_tlb_full rises" test "$full" -gt 0
ktap_test_result "the refusals are counted as a full pool, not another cause" \
	eq "$(($(c io_tlb_too_big) - too_big0)) $(($(c io_tlb_align_fail) - align0))" "0 0"
ktap_test_result "nothing left mapped, high-water mark within the pool" \
	sh -c "[ $(c io_tlb_used) = 0 ] && [ $(c io_tlb_used_hiwater) -le 128 ]"
ktap_test_result "a request that fits still works" \
	ctl run --strategy streaming --op fill --size 4096 --verify --json
ktap_finished

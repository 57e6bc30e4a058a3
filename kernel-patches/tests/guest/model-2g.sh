#!/bin/sh
# kernel-patches: dma_coherent_model=2.6.14 with dma32=off on q35 with
# 6 GiB (2 GiB below 4 GiB, 4 GiB above, so there is a swiotlb pool).
# 32-bit coherent buffers of 256 KiB (one pool segment) come as in 2.6.14:
# (a) an ordinary page if it lies below 4 GiB, (b) else ZONE_DMA,
# (c) else the swiotlb pool; ENOMEM when all three fail. A fresh buddy
# allocator hands ZONE_NORMAL out from 16 MiB up, so (a) serves the first
# buffers; then dma32-pressure takes anonymous memory, from the bottom up,
# until 2 GiB are left free, all of it above 4 GiB (the debug kernel's
# KASAN shadow takes some of the memory above 4 GiB, so "all but the 4 GiB
# above" would not do), and (a) meets pages above 4 GiB. It then meets
# the same one again and again: the unreachable page it frees is the next
# one the allocator hands out, as it was for 2.6.14's free_pages() in
# dma_alloc_coherent(). Each request holds all its buffers until it ends.
# The pool's coherent counters go back to 0 after a request and after an
# unbind in the middle of one; a streaming request still bounces and
# verifies afterwards. With CONFIG_SWIOTLB_DYNAMIC (the 6.12 guests), (c)
# grows no pool.
# run-guest: --mem 6G --append 'dma_coherent_model=2.6.14 dma32=off'
# run-guest: --timeout 600
# shellcheck source=kernel-patches/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"

ktap_test_result "dma_coherent_model=2.6.14 dma32=off on the command line" \
	sh -c 'grep -q "dma_coherent_model=2.6.14" /proc/cmdline && grep -q "dma32=off" /proc/cmdline'
ktap_test_result "boot log says the model is in force" \
	logged "dma-direct: coherent memory as in 2.6.14: an ordinary page, else ZONE_DMA, else the swiotlb pool"
ktap_test_result "no warning about a populated ZONE_DMA32 under dma32=off" \
	not_logged "with ZONE_DMA32 populated"
ktap_test_result "ZONE_DMA32 is empty" eq "$(zf DMA32 present)" 0
nslabs=$(c io_tlb_nslabs 2>&1)
ktap_test_result "there is a swiotlb pool (RAM above 4 GiB): $nslabs slots" test "$nslabs" -gt 0
ktap_test_result "the pool's coherent counters start at 0 (held, bytes, allocs, full)" \
	eq "$(c io_tlb_coherent_held) $(c io_tlb_coherent_bytes) $(c io_tlb_coherent_allocs) $(c io_tlb_coherent_full)" "0 0 0 0"

if ! command -v dma32ctl >/dev/null 2>&1; then
	for t in "step (a) first" "memory below 4 GiB taken" \
		"256 KiB x 2048 ends in ENOMEM" "no page above 4 GiB" "pages outside ZONE_DMA" \
		"step (b)" "step (c)" "io_tlb_coherent_full +1" "would have panicked +1" \
		"nothing held after" "dynamic swiotlb: no pool grown" \
		"verified request through all steps" "the driver sees the pool buffers" \
		"held during a stalled request" "unbind during the stall" \
		"nothing held after the unbind" "rebind" "a streaming request verifies"; do
		ktap_test_skip "$t" "dma32ctl not available"
	done
	ktap_finished
fi

# (a) while there is free memory below 4 GiB
a0=$(c io_tlb_coherent_allocs) f0=$(fallbacks)
runj --strategy coherent --op fill --size 256K --count 16 --verify
ktap_test_result "(a) first: 16 x 256 KiB verified, all ordinary pages below 4 GiB (Normal, no ZONE_DMA, no pool)" \
	sh -c "[ '$(jget ok "$j")' = true ] && [ '$(jget pages_above_4g "$j") $(jget DMA "$j") $(jget Normal "$j")' = '0 0 1024' ] && [ $(($(c io_tlb_coherent_allocs) - a0)) = 0 ] && [ $(($(fallbacks) - f0)) = 0 ]"

# Take the rest of the memory below 4 GiB: leave 2 GiB free, all above it
dma32-pressure --leave 2048 >/tmp/pressure.out 2>&1 &
ppid=$!
while kill -0 $ppid 2>/dev/null && ! grep -q pressure: /tmp/pressure.out; do sleep 1; done
ktap_print_lines </tmp/pressure.out
ktap_test_result "dma32-pressure holds all but 2 GiB of free memory" kill -0 $ppid

# Exhaustion: far more than the three steps can give
seg=$((nslabs / 128))
f0=$(fallbacks) a0=$(c io_tlb_coherent_allocs) full0=$(c io_tlb_coherent_full)
panic0=$(panics)
# io_tlb_grow (6.12 series) counts the misses that scheduled another pool
grow0=$(c io_tlb_grow 2>/dev/null || echo none)
runj --strategy coherent --op fill --size 256K --count 2048
ktap_test_result "256 KiB x 2048 coherent request ends in ENOMEM" eq "$(jget errno "$j")" ENOMEM
bufs=$(jget buffers "$j")
b=$(($(jget DMA "$j") / 64))
cc=$(($(c io_tlb_coherent_allocs) - a0))
a=$((bufs - b - cc))
ktap_print_msg "before ENOMEM: $bufs buffers = $((bufs / 4)) MiB; (a) ordinary $a = $((a / 4)) MiB," \
	"(b) ZONE_DMA $b = $((b / 4)) MiB, (c) swiotlb pool $cc = $((cc / 4)) MiB"
ktap_test_result "no page above 4 GiB" eq "$(jget pages_above_4g "$j")" 0
ktap_test_result "the $a from (a) and the $cc from the pool are ZONE_NORMAL pages, the rest ZONE_DMA" \
	eq "$(jget Normal "$j")" $(((a + cc) * 64))
ktap_test_result "(b) $b buffers came from ZONE_DMA, zone_dma_fallbacks +$b" \
	sh -c "[ $b -gt 0 ] && [ $(($(fallbacks) - f0)) = $b ]"
ktap_test_result "(c) $cc buffers came from the pool: all its $seg segments" eq "$cc" "$seg"
ktap_test_result "the refusal that ended the request counted: io_tlb_coherent_full +1" \
	eq "$(($(c io_tlb_coherent_full) - full0))" 1
ktap_test_result "2.6.14 would have panicked at that refusal (256 KiB > 32 KiB): coherent_2614_would_panic +1" \
	eq "$(($(panics) - panic0))" 1
ktap_test_result "after the request nothing is held in the pool (held, bytes, io_tlb_used)" \
	eq "$(c io_tlb_coherent_held) $(c io_tlb_coherent_bytes) $(c io_tlb_used)" "0 0 0"
# With CONFIG_SWIOTLB_DYNAMIC (the 6.12 guests) a miss in the pools
# would schedule swiotlb_dyn_alloc() for another default pool and make a
# transient one, both with __GFP_DMA32: ZONE_DMA under dma32=off. (c)
# searches only the pools that exist, as 2.6.14's fixed pool was: the
# misses above must have grown nothing, nor tried to. io_tlb_grow counts
# a growth when the search schedules it, before it returns, so this needs
# no wait for the worker; swiotlb-full shows a streaming miss moving it.
if [ -e "$D/io_tlb_transient_nslabs" ]; then
	# shellcheck disable=SC2317 # called through ktap_test_result
	no_growth() {
		eq "$(c io_tlb_grow) $(c io_tlb_nslabs) $(c io_tlb_transient_nslabs)" "$grow0 $nslabs 0" &&
			not_logged "Failed to allocate new pool"
	}
	ktap_test_result "dynamic swiotlb: (c)'s misses scheduled no pool (io_tlb_grow still $grow0), still $nslabs slots, no transient one" \
		no_growth
else
	ktap_test_skip "dynamic swiotlb: (c)'s misses grew no pool" "no CONFIG_SWIOTLB_DYNAMIC in this kernel"
fi

# Within what (b) and (c) can give even if (a) never succeeds: it must
# work, and the device's writes must reach buffers of every step
a0=$(c io_tlb_coherent_allocs)
runj --strategy coherent --op fill --size 256K --count 256 --verify
cc=$(($(c io_tlb_coherent_allocs) - a0))
b=$(($(jget DMA "$j") / 64))
ktap_print_msg "verified request: (a) $((256 - b - cc)), (b) $b, (c) $cc buffers"
ktap_test_result "256 x 256 KiB verified, from ZONE_DMA and the pool too" \
	sh -c "[ '$(jget ok "$j")' = true ] && [ '$(jget buffers_verified "$j")' = 256 ] && [ $b -gt 0 ] && [ $cc -gt 0 ]"
# The driver counts a coherent buffer whose handle lies in the pool: as
# "bounced" (a mapping in swiotlb), or, in newer drivers, in
# coherent_swiotlb_bytes (held there, never copied)
csb=$(jget coherent_swiotlb_bytes "$j")
if [ -n "$csb" ]; then
	ktap_test_result "the driver sees them in the pool: coherent_swiotlb_bytes $csb >= $cc x 256 KiB" \
		test "$csb" -ge $((cc * 262144))
else
	ktap_test_result "the driver sees them in the pool: bounced == $cc" eq "$(jget bounced "$j")" "$cc"
fi

# Held while a stalled request waits for the device, then the device is
# unbound under it: everything goes back
echo 6000 >/sys/module/dma32demo/parameters/timeout_ms
echo 1 >/sys/module/dma32demo/parameters/unsafe_fault_injection
dev=$(bdf)
dma32ctl run --strategy coherent --op fill --size 256K --count 300 --inject stall --json \
	>/tmp/stall.json 2>&1 &
pid=$!
prev=-1 held=0 i=0
while [ $i -lt 50 ]; do
	sleep 0.2
	held=$(c io_tlb_coherent_held)
	[ "$held" -gt 0 ] && [ "$held" = "$prev" ] && break
	prev=$held i=$((i + 1))
done
bytes=$(c io_tlb_coherent_bytes) used=$(c io_tlb_used)
ktap_print_msg "stalled request holds $held pool buffers, $bytes bytes; io_tlb_used $used slots"
ktap_test_result "held during a stalled request: $held buffers x 256 KiB == io_tlb_coherent_bytes == io_tlb_used slots" \
	sh -c "[ $held -gt 0 ] && [ $bytes = $((held * 262144)) ] && [ $used = $((bytes / 2048)) ]"
ktap_test_result "unbind during the stall returns" sh -c "echo $dev >/sys/bus/pci/drivers/dma32demo/unbind"
wait $pid
ktap_print_lines </tmp/stall.json
ktap_test_result "after the unbind nothing is held in the pool (held, bytes, io_tlb_used)" \
	eq "$(c io_tlb_coherent_held) $(c io_tlb_coherent_bytes) $(c io_tlb_used)" "0 0 0"
echo "$dev" >/sys/bus/pci/drivers/dma32demo/bind
ktap_test_result "rebind: /dev/dma32demo0 is back" test -c /dev/dma32demo0
runj --strategy streaming --op fill --size 1M --count 8 --verify
ktap_test_result "a streaming request still bounces through the pool and verifies" \
	sh -c "[ '$(jget ok "$j")' = true ] && [ $(jget bounced "$j") -gt 0 ] && [ $(c io_tlb_used) = $(($(c io_tlb_coherent_bytes) / 2048)) ]"
kill $ppid
wait $ppid
ktap_finished

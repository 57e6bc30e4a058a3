#!/bin/sh
# kernel-patches: dma_coherent_model=2.6.14 dma32=off on q35 with 6 GiB and
# a K8 northbridge: coherent memory as 2.6.14's dma_alloc_coherent()
# (arch/x86_64/kernel/pci-gart.c) got it on a machine with the GART.
# For the 32-bit device: (a) an ordinary page if it lies below 4 GiB,
# else that page mapped through the aperture, held until it is freed,
# else nothing: no ZONE_DMA retry for a full 32-bit mask, and no swiotlb
# pool beside the GART. A fresh buddy allocator hands ZONE_NORMAL out
# from 16 MiB up, so dma32-pressure first takes the memory below 4 GiB
# (it leaves 2 GiB free, all above 4 GiB; the debug kernel's KASAN
# shadow takes some of the memory above 4 GiB). Then every buffer is
# mapped through the aperture: the aperture pages it holds equal the
# driver's pages above 4 GiB, and a request larger than the aperture
# ends in ENOMEM with one refusal counted and no ZONE_DMA page.
# run-guest: --gart --mem 6G
# run-guest: --append 'dma_coherent_model=2.6.14 dma32=off'
# run-guest: --timeout 600
# shellcheck source=kernel-patches/tests/guest/ktap.sh.inc
. "$(dirname "$0")/ktap.sh.inc"

ktap_test_result "the kernel's GART driver is in use" logged "PCI-DMA: using GART IOMMU"
ktap_test_result "boot log says the model is in force" \
	logged "dma-direct: coherent memory as in 2.6.14"
ktap_test_result "ZONE_DMA32 is empty" eq "$(zf DMA32 present)" 0
ktap_test_result "the GART's counters exist" test -e "$G/aperture_coherent"
pages=$(g aperture_pages)
ktap_print_msg "aperture: $pages pages ($((pages / 256)) MiB)"

if ! command -v dma32ctl >/dev/null 2>&1; then
	for t in "memory below 4 GiB taken" "buffers held in the aperture" \
		"aperture pages equal the driver's" "aperture_used includes them" \
		"given back after the request" "ENOMEM at the aperture's size" \
		"only once the aperture is nearly full" \
		"one refusal counted" "no ZONE_DMA page" "nothing held after"; do
		ktap_test_skip "$t" "dma32ctl not available"
	done
	ktap_finished
fi

# Take the memory below 4 GiB: leave 2 GiB free, all above it
dma32-pressure --leave 2048 >/tmp/pressure.out 2>&1 &
ppid=$!
while kill -0 $ppid 2>/dev/null && ! grep -q pressure: /tmp/pressure.out; do sleep 1; done
ktap_print_lines </tmp/pressure.out
ktap_test_result "dma32-pressure holds all but 2 GiB of free memory" kill -0 $ppid

# A stalled request holds its coherent buffers: their pages above 4 GiB
# are in the aperture until the request frees them
u0=$(g aperture_used) c0=$(g aperture_coherent)
stalled_request aperture_coherent --strategy coherent --op fill --size 256K --count 32
held=$steady
used=$(g aperture_used)
wait $pid
ktap_print_lines </tmp/gart-stall.json
j=$(grep '^{' /tmp/gart-stall.json | tail -n 1)
p=$(jget pages_above_4g "$j")
ktap_print_msg "stalled request: aperture_coherent +$((held - c0)), aperture_used +$((used - u0)), driver: $p pages above 4 GiB"
ktap_test_result "32-bit coherent buffers held in the aperture during a stalled request" test "$((held - c0))" -gt 0
ktap_test_result "aperture pages held = the driver's $p coherent pages above 4 GiB" eq "$((held - c0))" "$p"
ktap_test_result "aperture_used includes them" eq "$((used - u0))" "$((held - c0))"
ktap_test_result "given back after the request (aperture_coherent, aperture_used)" \
	eq "$(g aperture_coherent) $(g aperture_used)" "$c0 $u0"
echo 5000 >/sys/module/dma32demo/parameters/timeout_ms

# Far more than the aperture: 2.6.14 gave a 32-bit device no ZONE_DMA
# retry on a GART machine, so the aperture's size is the limit
f0=$(g aperture_full) fb0=$(fallbacks)
runj --strategy coherent --op fill --size 256K --count 2048
bufs=$(jget buffers "$j")
ktap_print_msg "before ENOMEM: $bufs buffers of 256 KiB = $((bufs / 4)) MiB," \
	"$(jget pages_above_4g "$j") pages above 4 GiB; aperture $((pages / 256)) MiB"
ktap_test_result "256 KiB x 2048 ends in ENOMEM within the aperture's size" \
	sh -c "[ '$(jget errno "$j")' = ENOMEM ] && [ $(jget pages_above_4g "$j") -le $pages ]"
# and not before the aperture is nearly full: what it held before the
# request ($u0 pages) aside, at most two buffers' worth (128 pages) of it
# may go unused (a buffer needs 64 contiguous aperture pages)
min=$((pages - u0 - 128))
ktap_test_result "... and only once the aperture is nearly full: at least $min pages mapped" \
	test "$(jget pages_above_4g "$j")" -ge "$min"
ktap_test_result "the refusal that ended it is counted: aperture_full +1" \
	eq "$(($(g aperture_full) - f0))" 1
ktap_test_result "no ZONE_DMA page, no ZONE_DMA fallback" \
	eq "$(jget DMA "$j") $(($(fallbacks) - fb0))" "0 0"
ktap_test_result "nothing held after (aperture_coherent, aperture_used)" \
	eq "$(g aperture_coherent) $(g aperture_used)" "$c0 $u0"
kill $ppid
wait $ppid
ktap_finished
